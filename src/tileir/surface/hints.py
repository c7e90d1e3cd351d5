"""Optimization hints: one architecture's hints (for_arch) made of key/value pairs (hint_*).

An entry takes num_cta_in_cga, num_worker_warps_per_cta and occupancy (``@kernel(hints=[...])``);
a load or a store takes latency (``load(..., hints=[...])``). The dialect's own verifier of keys
and ranges is off by default in tileiras (-Wunsupported-hints), so nothing here refuses a value:
a hint changes the bytes and the schedule, never the answer.
"""

from __future__ import annotations

Hint = tuple[str, int]
Hints = list


def for_arch(arch: str, hints) -> tuple:
    """The hints of one architecture (an sm_xx name, or "default") for a hints list."""
    return (arch, tuple(tuple(h) for h in hints))


def hint_num_cta_in_cga(n: int) -> Hint:
    """num_cta_in_cga: CTAs in a CGA (an entry hint; a power of two up to 16; 1 on sm_80-sm_89)."""
    return ("num_cta_in_cga", int(n))


def hint_num_worker_warps_per_cta(n: int) -> Hint:
    """num_worker_warps_per_cta: worker warps a CTA (an entry hint; a power of two up to 32)."""
    return ("num_worker_warps_per_cta", int(n))


def hint_occupancy(n: int) -> Hint:
    """occupancy: blocks to aim to keep resident (an entry hint; 1 to 32)."""
    return ("occupancy", int(n))


def hint_latency(n: int) -> Hint:
    """latency: the latency to assume for a memory operation (a load or store hint; 1 to 10)."""
    return ("latency", int(n))


VIEW_LOAD_LATENCY = "view_load_latency"


def hint_view_load_latency(n: int) -> Hint:
    """An entry hint of this package, not the dialect's: ``latency`` (1 to 10) on every view load of
    the kernel (load_view / load_cell / load_at, which take no hints of their own). The lowering
    moves it off the entry onto each load (``split_view_hints``); 0 names none. Measured on
    the H200 (bench/results/latency_attention_h200.json, latency_h200.json): 1 made attention at head
    dim 64 4-5% faster, and the f16 products 2x slower."""
    return (VIEW_LOAD_LATENCY, int(n))


VIEW_STORE_NO_TMA = "view_store_no_tma"


def hint_view_store_no_tma(on: int = 1) -> Hint:
    """An entry hint of this package, not the dialect's: ``allow_tma = false`` on every view store of
    the kernel (store_view / store_cell), so the warps that hold a tile write it themselves instead of
    staging it in shared memory for a TMA store; 0 names none. Like every hint it changes the schedule,
    never the answer (the lowering's own no-TMA stores, views.py, are the same attribute)."""
    return (VIEW_STORE_NO_TMA, int(on))


def split_view_hints(hints) -> tuple[tuple, tuple, tuple]:
    """(the entry's hints without this package's view hints, the load hints ``view_load_latency``
    stands for: one ``(arch, (("latency", n),))`` per architecture that named it, the last value where
    it named several, and the store hints ``view_store_no_tma`` stands for: ``(arch, (("allow_tma",
    False),))``). 0 or less names none, as the library's configurations write "tileiras decides"."""
    entry, loads, stores = [], {}, {}
    for arch, items in hints:
        keep = tuple(kv for kv in items if kv[0] not in (VIEW_LOAD_LATENCY, VIEW_STORE_NO_TMA))
        for k, v in items:
            if k == VIEW_LOAD_LATENCY and int(v) > 0:
                loads[arch] = (("latency", int(v)),)
            if k == VIEW_STORE_NO_TMA and int(v) > 0:
                stores[arch] = (("allow_tma", False),)
        if keep:
            entry.append((arch, keep))
    return tuple(entry), tuple(loads.items()), tuple(stores.items())


def merge_hints(a, b) -> tuple:
    """Two hints lists as one, per architecture and key: ``b``'s value where both name a key (the
    dialect's dictionaries take each key once)."""
    out: dict = {}
    for arch, items in (*a, *b):
        out.setdefault(arch, {}).update(dict(items))
    return tuple((arch, tuple(kv.items())) for arch, kv in out.items())
