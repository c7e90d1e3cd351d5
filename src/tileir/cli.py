"""The ``tileir`` command: list, show and run the library's kernels, and the demo.

    tileir kernels
    tileir show NAME --emit mlir|bytecode|cubin|args|prog|calls|owners [--arch sm_90] [--size N|MxN|MxNxK] [-o FILE]
    tileir run NAME [--host|--device] [--size ...] [--seed S]
    tileir demo
    tileir ledger [--quiet]
    tileir diff run --out FILE [--families a,b] [--mutants]   (python -m tileir.diff)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .errors import TileirError


def _size(text, default):
    if text is None:
        return default
    parts = [int(x) for x in text.lower().split("x")]
    return parts[0] if len(parts) == 1 else tuple(parts)


def _case(name):
    from .kernels import CASES

    if name not in CASES:
        raise TileirError(f"no library kernel {name!r}; `tileir kernels` lists them: {', '.join(CASES)}")
    return CASES[name]


def cmd_kernels(args) -> int:
    from .kernels import CASES

    for name, c in CASES.items():
        print(f"{name:14s} {c.summary}")
    return 0


def cmd_show(args) -> int:
    case = _case(args.name)
    cfg = case.config(_size(args.size, case.default_size))
    k = case.kernel
    emit = args.emit
    if emit == "mlir":
        out = k.mlir(**cfg)
    elif emit == "prog":
        out = k.program(**cfg).dump() + "\n"
    elif emit == "calls":
        from .calls import calls_text

        out = calls_text(k.program(**cfg))
    elif emit == "owners":
        from .calls import owners_text

        out = owners_text(k.kernel(**cfg), k.program(**cfg))
    elif emit == "args":
        from .assemble import kernel_args, tileiras_version

        out = " ".join(kernel_args(k.kernel(**cfg), tileiras_version(), args.arch, opt_level=args.opt_level)) + "\n"
    elif emit in ("bytecode", "cubin"):
        data = k.bytecode(version=args.version, **cfg) if emit == "bytecode" else k.cubin(args.arch, args.opt_level,
                                                                                          **cfg)
        if not args.output:
            raise TileirError(f"--emit {emit} writes binary: give -o FILE")
        with open(args.output, "wb") as f:
            f.write(data)
        print(f"wrote {len(data)} bytes to {args.output}")
        return 0
    else:  # pragma: no cover - argparse limits the choices
        raise TileirError(f"unknown --emit {emit}")
    if args.output:
        with open(args.output, "w") as f:
            f.write(out)
    else:
        sys.stdout.write(out)
    return 0


def _device_available() -> bool:
    try:
        from .runtime import available

        return available()
    except Exception:
        return False


def run_case(case, size, where: str, seed=None):
    """Run a library case on fresh random inputs; answers (where it ran, max error, ok)."""
    rng = np.random.default_rng(seed)
    args = case.inputs(size, rng)
    want = case.expected([a.copy() if isinstance(a, np.ndarray) else a for a in args])
    cfg = case.config(size)
    if case.runner is not None and where == "host":  # a case of more than one launch runs itself
        case.runner(args, "host", **cfg)
        got = args[case.output]
    elif where == "host":
        case.kernel.run_host(*args, **cfg)
        got = args[case.output]
    else:
        try:
            import torch

            from .runtime.arrays import numpy_to_torch, torch_to_numpy

            # formats torch lacks (the f8s) stay numpy arrays, staged by the launch
            dev_args = [numpy_to_torch(a, torch) if isinstance(a, np.ndarray)
                        and (a.dtype.kind != "V" or str(a.dtype) == "bfloat16") else a for a in args]
            if case.runner is not None:
                case.runner(dev_args, "device", **cfg)
            else:
                case.kernel(*dev_args, **cfg)
            out = dev_args[case.output]
            got = torch_to_numpy(out) if hasattr(out, "cpu") else out
        except ImportError:
            case.kernel(*args, **cfg)
            got = args[case.output]
    err, ok = case.check(got, want)
    return err, ok


def cmd_run(args) -> int:
    case = _case(args.name)
    size = _size(args.size, case.default_size)
    where = "device" if args.device else "host" if args.host else ("device" if _device_available() else "host")
    err, ok = run_case(case, size, where, args.seed)
    tol = "bit-exact" if case.rtol == 0 and case.atol == 0 else f"rtol={case.rtol:g} atol={case.atol:g}"
    print(f"{case.name} size={size} on the {'GPU' if where == 'device' else 'host reference'}: "
          f"max |error| = {err:.3g} ({tol}) {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def cmd_demo(args) -> int:
    from .kernels import vadd

    n = 1_000_003
    where = "device" if _device_available() else "host"
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    if where == "device":
        vadd(a, b, c, n=n)
        label = "on the GPU (tileiras cubin, launched through the CUDA driver)"
    else:
        vadd.run_host(a, b, c, n=n)
        label = "on the host reference (no GPU here; the same recording, interpreted with numpy)"
    print(f"vadd of {n} f32 elements ran {label}")
    print(f"c[:4] = {c[:4]}")
    exact = np.array_equal(c, a + b)
    print(f"c == a + b bit for bit: {exact}")
    print("the kernel as Tile IR (first lines):")
    print("\n".join(vadd.mlir(n=n).splitlines()[:8]) + "\n  ...")
    return 0 if exact else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tileir", description="Tile IR kernels from Python")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kernels", help="list the library kernels")
    s = sub.add_parser("show", help="print or write a kernel's text, bytes, cubin or tileiras arguments")
    s.add_argument("name")
    s.add_argument("--emit", choices=["mlir", "bytecode", "cubin", "args", "prog", "calls", "owners"], default="mlir")
    s.add_argument("--arch", default="sm_90")
    s.add_argument("--size")
    s.add_argument("--version", help="bytecode version (13.1 .. 13.4; default 13.4)")
    s.add_argument("--opt-level", type=int, dest="opt_level")
    s.add_argument("-o", "--output")
    r = sub.add_parser("run", help="run a kernel on fresh random inputs and compare with numpy")
    r.add_argument("name")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--host", action="store_true")
    g.add_argument("--device", action="store_true")
    r.add_argument("--size")
    r.add_argument("--seed", type=int)
    sub.add_parser("demo", help="run vadd on the GPU if there is one, else on the host reference")
    lg = sub.add_parser("ledger", help="the layer-3 ledger: every dialect operation and attribute, covered or exempt")
    lg.add_argument("--root", default=".", help="the repository (docs/ledger, tests/data/goldens)")
    lg.add_argument("--quiet", action="store_true", help="print the counts only")
    df = sub.add_parser("diff", help="layer 2: the device diff (python -m tileir.diff; `tileir diff run --help`)")
    df.add_argument("rest", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    try:
        if args.cmd == "diff":
            from .diff.__main__ import main as diff_main

            return diff_main(args.rest)
        if args.cmd == "ledger":
            from .ledger import main as ledger_main

            return ledger_main(args.root, args.quiet)
        return {"kernels": cmd_kernels, "show": cmd_show, "run": cmd_run, "demo": cmd_demo}[args.cmd](args)
    except TileirError as e:
        print(f"tileir: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
