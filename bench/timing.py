"""The benchmarks time GPU calls the way the package does (tileir.runtime.timing)."""

from tileir.runtime.timing import median_ms

__all__ = ["median_ms"]
