"""Files the package keeps for itself (the cubin cache, the tuning cache)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temp file beside it and os.replace, so a reader never
    sees half a file. A cache that cannot be written is not an error, only a slower next run:
    answers False instead of raising."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


@contextmanager
def file_lock(path: Path, timeout_s: float) -> Iterator[bool]:
    """Hold the lock file ``path`` (the ``filelock`` library: flock on POSIX) while the block runs,
    against other processes and other threads. Yields whether it is held: False where it could not
    be had (a directory that cannot be written, or another holder past ``timeout_s``), and the
    caller decides whether to go on without it."""
    from filelock import FileLock, Timeout

    lock = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path), timeout=timeout_s)
        lock.acquire()
    except (OSError, Timeout):
        lock = None
    try:
        yield lock is not None
    finally:
        if lock is not None:
            lock.release()
