"""Layer 1 for the library: tileirdisasm of our bytes prints exactly the text render_kernel
gives (whitespace aside), at every bytecode version that admits the kernel, and tileiras
assembles the bytes for every target we claim."""

import pytest

from tileir.assemble import assemble
from tileir.kernels import CASES
from tileir.render import normalise

VERSIONS = ["13.1", "13.2", "13.3", "13.4"]
TARGETS = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
# sizes are read off the arrays, so one size a case names its configuration (the tuned table's
# tiles where this machine has a GPU, else the kernel's defaults)
SIZES = {"vadd": [3000], "saxpy": [100], "softmax": [(4, 1000)], "softmax_bf16": [(2, 9000)],
         "matmul_f16": [(200, 136, 300)], "matmul_bf16": [(100, 100, 100)], "matmul_tf32": [(100, 60, 40)]}


@pytest.mark.parametrize("name,size,version", [(n, s, v) for n, ss in SIZES.items() for s in ss for v in VERSIONS])
def test_disassembly_equals_render(name, size, version, disasm):
    case = CASES[name]
    cfg = case.config(size)
    text = case.kernel.mlir(**cfg)
    assert normalise(disasm(case.kernel.bytecode(version=version, **cfg))) == normalise(text)


@pytest.mark.parametrize("name,target", [(n, t) for n in SIZES for t in TARGETS])
def test_tileiras_assembles_for_every_target(name, target):
    case = CASES[name]
    cfg = case.config(SIZES[name][0])
    cubin = assemble(case.kernel.bytecode(**cfg), target, kernel=name, cache=False)
    assert cubin[:4] == b"\x7fELF"
