"""The recording handler: runs a kernel body once and keeps what it did as a TileProg."""

from __future__ import annotations

from ..dev import handling
from ..ops import FAMILIES
from .core import RecorderCore


class Recorder(*FAMILIES, RecorderCore):
    """The recorder: the core machinery and every operation family."""


def record(name: str, params, body, hints=()):
    """Run ``body()`` under a fresh Recorder and answer the TileProg it recorded. ``params`` are
    KParams (ByPtr / ByValue) or markers (In / Out / Shared / Whole)."""
    rec = Recorder(name, params, hints)
    with handling(rec):
        body()
    return rec.finish()


__all__ = ["Recorder", "record"]
