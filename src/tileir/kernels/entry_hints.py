"""The entry hints a library kernel takes as configuration: ``warps`` (num_worker_warps_per_cta),
``occupancy``, ``cga`` (num_cta_in_cga), ``latency`` (the latency of every view load:
surface/hints.py ``hint_view_load_latency``) and ``no_tma_store`` (1: every view store written by the
warps holding the tile, not staged for a TMA store: ``hint_view_store_no_tma``), each 0 for "tileiras
decides".

They are written under the dialect's ``default`` architecture key, which tileiras reads for any
target without an entry of its own: a configuration is tuned per GPU (autotune keys it by sm_XY),
so the hints of the configuration in hand are the ones meant for the target it is assembled for.
A hint never changes an answer (the dialect says so; layer 2 exempts them), only the schedule.
"""

from __future__ import annotations

from ..surface.hints import (
    for_arch,
    hint_num_cta_in_cga,
    hint_num_worker_warps_per_cta,
    hint_occupancy,
    hint_view_load_latency,
    hint_view_store_no_tma,
)


def entry_hints(warps: int = 0, occupancy: int = 0, cga: int = 0, latency: int = 0, no_tma_store: int = 0) -> list:
    """The hints list for ``@kernel(hints=entry_hints)``: empty when every value is 0."""
    hs = []
    if latency:
        hs.append(hint_view_load_latency(latency))
    if no_tma_store:
        hs.append(hint_view_store_no_tma(no_tma_store))
    if warps:
        hs.append(hint_num_worker_warps_per_cta(warps))
    if occupancy:
        hs.append(hint_occupancy(occupancy))
    if cga:
        hs.append(hint_num_cta_in_cga(cga))
    return [for_arch("default", hs)] if hs else []
