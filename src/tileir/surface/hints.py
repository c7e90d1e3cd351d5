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
