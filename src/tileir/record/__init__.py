"""The recording handler: runs a kernel body once and keeps what it did as a TileProg."""

from __future__ import annotations

from ..dev import handling
from ..families import FAMILIES
from .core import RecorderCore


class Recorder(*FAMILIES, RecorderCore):  # type: ignore[misc]  # mypy reads no bases spread from a tuple
    """The recorder: the core machinery and every operation family."""


def record(name: str, params, body, hints=(), sizes=None, div16=()):
    """Run ``body()`` under a fresh Recorder and answer the TileProg it recorded. ``params`` are
    KParams (ByPtr / ByValue) or markers (In / Out / Shared / Whole). ``sizes``: the markers'
    ``tileir.sizes.SizePlan``, whose hidden parameters (run-time sizes and strides) follow
    ``params`` in the entry; ``div16``: per hidden stride, whether to claim it a multiple of 16."""
    rec = Recorder(name, params, hints, sizes=sizes)
    with handling(rec):
        rec.read_hidden(div16)
        body()
    return rec.finish()


__all__ = ["Recorder", "record"]
