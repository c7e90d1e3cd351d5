"""The cubin cache on disk: one file a key in a directory shared between processes, trusted only
after it proves what it is, bounded in size, and one compile a key at a time.

An entry ``<key>.cubin`` is ``ENTRY_MAGIC``, the key it was written under (64 hex digits), the
cubin's sha256 (32 bytes) and the cubin. It is served only when the key inside is the key asked
for (a valid cubin of another kernel copied under this name is not), the digest holds (a truncated
or damaged file is not) and the cubin passes ``elf_problem`` (the assembler's output is held to
the same check before it is written). Anything else is recompiled and rewritten.

The directory is ``$TILEIR_CACHE_DIR`` or ``~/.cache/tileir/cubins``; its entries are kept under
``$TILEIR_CACHE_MAX_MB`` megabytes (``DEFAULT_MAX_MB`` when unset) by dropping the least recently
used (a hit refreshes an entry's modification time). ``tileir cache info`` / ``tileir cache clear``
show and empty it.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import TileirError
from .files import file_lock, write_atomic

ENV_DIR = "TILEIR_CACHE_DIR"
ENV_MAX_MB = "TILEIR_CACHE_MAX_MB"
DEFAULT_MAX_MB = 1024  # ~30,000 cubins of the library's sizes (9-40 KB)
ENTRY_MAGIC = b"tileir-cubin-2\0"
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.cubin")
_TEMP_NAME = re.compile(r"[0-9a-f]{64}\.cubin\.[A-Za-z0-9_]+\.tmp")  # files.write_atomic's, left by a killed writer
_KEY = re.compile(r"[0-9a-f]{64}")
_LOCKS = ".locks"

# ---------------------------------------------------------------------------------------------
# Where, and under what key


def cache_dir() -> Path:
    """``$TILEIR_CACHE_DIR``, or ``~/.cache/tileir/cubins``."""
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else Path.home() / ".cache" / "tileir" / "cubins"


def cache_key(bytecode: bytes, version: str, gpu_name: str, args: list[str]) -> str:
    """The sha256 (hex) of everything that decides the cubin: the bytes, tileiras' version, the
    target and the arguments, each part length-prefixed."""
    h = hashlib.sha256()
    for part in (b"tileir-cubin-1", bytes(bytecode), version.encode(), gpu_name.encode(),
                 "\0".join(args).encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def entry_path(key: str, directory: Path | None = None) -> Path:
    return (directory if directory is not None else cache_dir()) / f"{key}.cubin"


# ---------------------------------------------------------------------------------------------
# What a cubin must be

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190  # e_machine of a CUDA cubin
MAX_CUBIN_BYTES = 1 << 30  # a cubin of a single kernel is KBs to a few MB; more is not one
_EHDR = struct.Struct("<HHIQQQIHHHHHH")  # e_type .. e_shstrndx, after the 16-byte e_ident


def elf_problem(data: bytes) -> str | None:
    """Why ``data`` is not a 64-bit little-endian CUDA ELF whose header tables lie inside it, or
    None. (Not a full ELF check: enough that junk, a truncated file or another machine's ELF is
    never handed to the driver.)"""
    n = len(data)
    if n < 64:
        return f"{n} bytes is shorter than an ELF header (64)"
    if n > MAX_CUBIN_BYTES:
        return f"{n} bytes is more than a cubin of one kernel ({MAX_CUBIN_BYTES})"
    if data[:4] != ELF_MAGIC:
        return f"it starts {data[:8]!r}, not the ELF magic"
    if data[4] != 2 or data[5] != 1 or data[6] != 1:
        return f"ELF class/data/version {data[4]}/{data[5]}/{data[6]}, not 64-bit little-endian version 1"
    (e_type, machine, version, _entry, phoff, shoff, _flags, ehsize, phentsize, phnum, shentsize, shnum,
     shstrndx) = _EHDR.unpack_from(data, 16)
    if machine != EM_CUDA:
        return f"e_machine {machine}, not CUDA ({EM_CUDA})"
    if version != 1 or ehsize != 64 or e_type not in (1, 2):
        return f"an ELF header of version {version}, size {ehsize}, type {e_type} (want 1, 64, REL or EXEC)"
    if shnum == 0:
        return "no section headers"
    if shentsize != 64 or shoff + shnum * shentsize > n or shstrndx >= shnum:
        return f"section headers ({shnum} of {shentsize} bytes at {shoff}) do not fit its {n} bytes"
    if phnum and (phentsize != 56 or phoff + phnum * phentsize > n):
        return f"program headers ({phnum} of {phentsize} bytes at {phoff}) do not fit its {n} bytes"
    return None


# ---------------------------------------------------------------------------------------------
# Entries


def read_entry(path: Path, key: str) -> bytes | None:
    """The cubin of the entry at ``path`` if it was written under ``key`` and is whole, else None.
    A hit refreshes the file's modification time (the eviction's "recently used")."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(ENTRY_MAGIC)
    if data[:head] != ENTRY_MAGIC or data[head:head + 64] != key.encode():
        return None
    digest, cubin = data[head + 64:head + 96], data[head + 96:]
    if hashlib.sha256(cubin).digest() != digest or elf_problem(cubin) is not None:
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return cubin


def write_entry(path: Path, key: str, cubin: bytes) -> None:
    """Write the entry atomically, then keep the directory under its bound. Not being able to write
    is not an error (only a slower next run)."""
    data = ENTRY_MAGIC + key.encode() + hashlib.sha256(cubin).digest() + cubin
    if write_atomic(path, data):
        evict(path.parent, max_bytes(), keep=path.name)


# ---------------------------------------------------------------------------------------------
# The size bound


def max_bytes() -> int:
    """``$TILEIR_CACHE_MAX_MB`` (megabytes, > 0) in bytes, or ``DEFAULT_MAX_MB``'s."""
    text = os.environ.get(ENV_MAX_MB)
    if not text:
        return DEFAULT_MAX_MB << 20
    try:
        mb = float(text)
    except ValueError:
        mb = 0.0
    if not mb > 0 or mb != mb or mb == float("inf"):
        raise TileirError(f"{ENV_MAX_MB}={text!r} is not a positive number of megabytes for the cubin cache.",
                          fix=f"{ENV_MAX_MB}=512 (or unset it for {DEFAULT_MAX_MB})")
    return int(mb * (1 << 20))


def entries(directory: Path | None = None) -> list[tuple[Path, int, int]]:
    """(path, bytes, mtime_ns) of every cubin entry of the directory (other files are not ours)."""
    directory = directory if directory is not None else cache_dir()
    out = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if _ENTRY_NAME.fullmatch(e.name):
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    out.append((Path(e.path), st.st_size, st.st_mtime_ns))
    except OSError:
        pass
    return out


def evict(directory: Path, bound: int, keep: str | None = None) -> list[Path]:
    """Remove the least recently used entries until the rest hold at most ``bound`` bytes (``keep``,
    the entry just written, stays); answers what was removed."""
    found = entries(directory)
    total = sum(size for _, size, _ in found)
    removed = []
    for path, size, _ in sorted(found, key=lambda e: e[2]):
        if total <= bound:
            break
        if path.name == keep:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        _unlink_quietly(directory / _LOCKS / (path.stem + ".lock"))
        total -= size
        removed.append(path)
    return removed


def info(directory: Path | None = None) -> dict:
    """What ``tileir cache info`` prints: the directory, its entries and bytes, the bound."""
    directory = directory if directory is not None else cache_dir()
    found = entries(directory)
    return {"directory": str(directory), "entries": len(found), "bytes": sum(s for _, s, _ in found),
            "max_bytes": max_bytes()}


def clear(directory: Path | None = None) -> int:
    """Remove every cubin entry (and its lock file, and temp files left by a killed writer) from the
    directory; other files stay. Answers the number of entries removed."""
    directory = directory if directory is not None else cache_dir()
    n = 0
    for path, _, _ in entries(directory):
        try:
            path.unlink()
            n += 1
        except OSError:
            pass
    try:
        with os.scandir(directory) as it:
            for e in it:
                if _TEMP_NAME.fullmatch(e.name):
                    _unlink_quietly(Path(e.path))
    except OSError:
        pass
    locks = directory / _LOCKS
    if locks.is_dir():
        for p in locks.glob("*.lock"):
            if _KEY.fullmatch(p.stem):
                _unlink_quietly(p)
    return n


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------
# One compile a key at a time

_key_locks: dict[str, list] = {}  # key -> [its lock, how many threads want it]
_key_locks_guard = threading.Lock()


@contextmanager
def compile_lock(key: str, timeout_s: float, directory: Path | None = None) -> Iterator[None]:
    """Hold ``key`` against the other threads of this process, and (through a lock file beside the
    entries) against other processes, so a key is compiled once while the others wait for the
    entry. A lock file that cannot be made, or that another process holds for longer than
    ``timeout_s``, is given up on: the compile then runs anyway (an entry is written atomically, so
    two compiles of one key only cost time)."""
    with _key_locks_guard:
        slot = _key_locks.setdefault(key, [threading.Lock(), 0])
        slot[1] += 1
    try:
        directory = directory if directory is not None else cache_dir()
        with slot[0], file_lock(directory / _LOCKS / f"{key}.lock", timeout_s):
            yield
    finally:
        with _key_locks_guard:
            slot[1] -= 1
            if slot[1] == 0:
                _key_locks.pop(key, None)
