"""A bounded in-process cache: a dict that forgets its least recently used entry when full.

tileir keeps what it made per configuration (a recording, a cubin, a prepared launch) so the next
call with that configuration is cheap; a program that sweeps sizes given as configuration (vadd
takes ``n`` so) would otherwise keep every one for the life of the process (9-40 KB each).

The size is ``TILEIR_MEMORY_CACHE_ENTRIES`` (entries per cache) where set, else
``DEFAULT_ENTRIES``; an evicted entry is only made again on its next use.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import MutableMapping

from .errors import TileirError

DEFAULT_ENTRIES = 256  # per cache: a sweep of 256 configurations stays warm; ~10 MB of 40 KB cubins
ENV_ENTRIES = "TILEIR_MEMORY_CACHE_ENTRIES"


def default_entries() -> int:
    """``$TILEIR_MEMORY_CACHE_ENTRIES`` (a positive int) or ``DEFAULT_ENTRIES``."""
    text = os.environ.get(ENV_ENTRIES)
    if not text:
        return DEFAULT_ENTRIES
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise TileirError(f"{ENV_ENTRIES}={text!r} is not a positive number of entries.",
                          fix=f"{ENV_ENTRIES}=512 (or unset it for {DEFAULT_ENTRIES})")
    return n


class LRU(MutableMapping):
    """A mapping of at most ``maxsize`` entries (``default_entries()`` when None); setting a key when
    full drops the least recently read or set one. Reads take no lock (one dict lookup and a move
    under the GIL), writes take one, so it can sit on a launch's fast path and be shared by threads.
    An unhashable key raises TypeError, as a dict does."""

    def __init__(self, maxsize: int | None = None):
        self.maxsize = default_entries() if maxsize is None else int(maxsize)
        if self.maxsize < 1:
            raise TileirError(f"an LRU cache holds at least one entry, not {maxsize!r}.")
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        try:
            value = self._d[key]
            self._d.move_to_end(key)
        except KeyError:  # absent, or dropped by another thread between the two steps
            return default
        return value

    def __getitem__(self, key):
        value = self._d[key]
        try:
            self._d.move_to_end(key)
        except KeyError:
            pass
        return value

    def __setitem__(self, key, value) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def __delitem__(self, key) -> None:
        with self._lock:
            del self._d[key]

    def __contains__(self, key) -> bool:
        return key in self._d

    def __iter__(self):
        return iter(list(self._d))  # a snapshot: another thread may change the cache meanwhile

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __repr__(self) -> str:
        return f"LRU({len(self._d)}/{self.maxsize})"
