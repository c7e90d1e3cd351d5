"""The block a cubin names for its kernel (runtime/cubin_info.py), read off real tileiras cubins:
torch's launcher can launch a tileiras kernel only with exactly that block."""

from __future__ import annotations

import pytest

from tileir import kernels as K
from tileir.runtime.cubin_info import required_threads, warps_of


@pytest.fixture(scope="module")
def vadd_cubin():
    return K.vadd.cubin(arch="sm_90")


def test_the_cubins_block_is_read(vadd_cubin):
    """tileiras 13.4 gives the library's vadd 128 threads and block_sum 256 (measured: the driver
    ran vadd with 128 and refused 32, 64 and 256; bench/results/static_launch_h200.json)."""
    assert required_threads(vadd_cubin, "vadd") == (128, 1, 1)
    assert warps_of(vadd_cubin, "vadd") == 4
    assert warps_of(K.block_sum.cubin(arch="sm_90"), "block_sum") == 8


def test_no_block_is_guessed(vadd_cubin):
    """Where the cubin does not say, the answer is None (the launch then takes cuda-bindings' path
    with (1, 1, 1)): another kernel's name, no ELF, the attribute's entry renamed, an entry format
    the reader does not know (the mutants: a default block, reading past an unknown entry)."""
    assert required_threads(vadd_cubin, "other") is None
    assert required_threads(b"not a cubin" * 10, "vadd") is None
    entry = bytes.fromhex("04100c00")  # EIFMT_SVAL, EIATTR_REQNTID, 12 bytes
    assert vadd_cubin.count(entry) == 1
    assert required_threads(vadd_cubin.replace(entry, bytes.fromhex("04ff0c00")), "vadd") is None
    info_start = vadd_cubin.index(bytes.fromhex("04660400"))  # the first entry of .nv.info.vadd
    unknown = vadd_cubin[:info_start] + b"\x09" + vadd_cubin[info_start + 1:]
    assert required_threads(unknown, "vadd") is None
