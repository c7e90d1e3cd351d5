"""What the family tests share: record a small kernel, run it on the host reference, and (given the
disasm fixture) hold its bytes to render_kernel's text and have tileiras assemble them."""

import pytest

import tileir as ti
from tileir import TileirError
from tileir.assemble import assemble
from tileir.ref import run_host
from tileir.render import normalise


def run_and_read_back(body, params, args, grid=(1,), disasm=None, targets=("sm_90",), version=None):
    """(the lowered Kernel, the host interpreter after the run)."""
    prog = ti.trace_kernel("k", params, body)
    it = run_host(prog, args, grid)
    k = ti.lower(prog)
    if disasm is not None:
        data = ti.encode_kernel(k, version)
        assert normalise(disasm(data)) == normalise(ti.render_kernel(k))
        for t in targets:
            assert assemble(data, t, kernel="k", program=k)[:4] == b"\x7fELF"
    return k, it


def refused(body, params) -> TileirError:
    """The recording's refusal of ``body``, held to naming the kernel, the op and the fix."""
    with pytest.raises(TileirError) as e:
        ti.trace_kernel("k", params, body)
    msg = str(e.value)
    assert msg.startswith("kernel 'k', op "), msg
    assert e.value.op is not None and e.value.fix, msg
    return e.value
