"""The ``tileir`` command: list, show and run the library's kernels and your own, and the demo.

    tileir kernels
    tileir show NAME --emit mlir|bytecode|cubin|args|prog|calls|owners [--arch sm_90] [--size N|MxN|MxNxK] [-o FILE]
    tileir show FILE.py:KERNEL [--config key=value ...] [--emit ...]
    tileir run NAME [--host|--device] [--size ...] [--seed S]
    tileir run FILE.py:NAME [--host|--device]     (NAME a Case the file registers)
    tileir check NAME|FILE.py:KERNEL [--size ...] [--config k=v ...] [--arg name=value ...] [--judge ...]
    tileir demo
    tileir cache info | clear [--tune]
    tileir ledger [--quiet]
    tileir diff run --out FILE [--families a,b] [--mutants]   (python -m tileir.diff)
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import numpy as np

from .errors import TileirError

SIZE_HELP = ("the problem size a library case is run at (for show, the size whose tuned tiles it records: the "
             "kernels read their sizes off the arrays): N, MxN, MxNxK or BxHxSxD in positive ints, as many numbers "
             "as the case's default has (`tileir kernels` lists them); library kernels only")
EMIT_HELP = ("what to print or write: mlir (the Tile IR text, what tileirdisasm prints for our bytes; the default), "
             "bytecode (-o FILE), cubin (-o FILE; tileiras for --arch), args (the tileiras arguments for --arch), "
             "prog (the recorded program), calls (the kernel's calls with their source lines), owners (which call "
             "made each instruction)")
TARGET_HELP = ("a library kernel (`tileir kernels` lists them), or FILE.py:NAME for a kernel of your own "
               "(a @tileir.kernel in that file)")
CONFIG_HELP = ("the kernel's configuration (its keyword-only parameters) as key=value, e.g. --config n=4096 "
               "tile=256 fmt=f16; values read as Python literals, else as strings. For a library kernel they "
               "override what --size implies")


def _format_size(size) -> str:
    return "x".join(str(n) for n in size) if isinstance(size, tuple) else str(size)


def _size(text, default, name: str = "the kernel"):
    """--size as the case reads it (an int, or a tuple as long as the default), or a one-line error."""
    if text is None:
        return default
    want = len(default) if isinstance(default, tuple) else 1
    example = _format_size(default)
    try:
        parts = [int(x) for x in text.lower().split("x")]
    except ValueError:
        parts = []
    if not parts or any(n <= 0 for n in parts) or len(parts) != want:
        raise TileirError(f"--size {text}: {name} takes {want} positive int{'s' if want > 1 else ''}"
                          f"{' joined by x' if want > 1 else ''}", fix=f"--size {example} (its default)")
    return parts[0] if want == 1 else tuple(parts)


def _config(pairs) -> dict:
    """--config key=value ... as a dict, each value a Python literal where it reads as one."""
    out = {}
    for pair in pairs or ():
        key, eq, text = pair.partition("=")
        if not eq or not key.isidentifier():
            raise TileirError(f"--config {pair}: configuration is key=value", fix="--config n=4096 tile=256")
        try:
            out[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[key] = text  # a format name (f16), a word
    return out


def _case(name):
    from .kernels import CASES

    if name not in CASES:
        raise TileirError(f"no library kernel {name!r}; `tileir kernels` lists them: {', '.join(CASES)}",
                          fix="a name from that list, or FILE.py:NAME for a kernel of your own")
    return CASES[name]


def _is_file_target(name: str) -> bool:
    path, colon, attr = name.rpartition(":")
    return bool(colon) and path.endswith(".py") and bool(attr)


def load_file_target(target: str):
    """FILE.py:NAME -> (the object NAME in that file, the module). The file is imported as a module
    of its own, with its folder first on sys.path so that it can import its neighbours."""
    import importlib.util

    path_text, _, attr = target.rpartition(":")
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise TileirError(f"{target}: there is no file {path_text}", fix="FILE.py:NAME with a path to your file")
    module_name = f"tileir_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:  # a file Python has no loader for (not .py)
        raise TileirError(f"{target}: Python cannot import {path_text}", fix="FILE.py:NAME with a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    if not hasattr(module, attr):
        from .kernel import KernelFn

        kernels = [n for n, v in vars(module).items() if isinstance(v, KernelFn)]
        raise TileirError(f"{target}: {path.name} has no {attr!r}; its kernels: {', '.join(kernels) or 'none'}",
                          fix=f"{path_text}:{kernels[0]}" if kernels else "decorate a function with @tileir.kernel")
    return getattr(module, attr), module


def _user_kernel(target: str):
    from .kernel import KernelFn

    obj, _ = load_file_target(target)
    if not isinstance(obj, KernelFn):
        raise TileirError(f"{target} is not a kernel (its type is {type(obj).__name__})",
                          fix="decorate it with @tileir.kernel, or name a kernel of that file")
    return obj


def _kernel_and_config(args):
    """(the kernel, its configuration) for show: a library case at --size, or the user's kernel."""
    user = _config(args.config)
    if _is_file_target(args.name):
        if args.size is not None:
            raise TileirError(f"--size is for the library's cases; {args.name} takes its configuration directly",
                              fix="--config key=value for each keyword-only parameter")
        return _user_kernel(args.name), user
    case = _case(args.name)
    return case.kernel, {**_case_config(case, _size(args.size, case.default_size, case.name)), **user}


def _case_config(case, size) -> dict:
    try:
        return case.config(size)
    except (TypeError, ValueError, IndexError) as e:
        raise TileirError(f"--size {_format_size(size)} does not fit {case.name} ({e})",
                          fix=f"--size {_format_size(case.default_size)} (its default)") from None


def cmd_kernels(args) -> int:
    from .kernels import CASES

    width = max(len(name) for name in CASES)
    for name, c in CASES.items():
        print(f"{name:{width}s} {_format_size(c.default_size):>12s}  {c.summary}")
    return 0


def cmd_show(args) -> int:
    k, cfg = _kernel_and_config(args)
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


def _run_target(name):
    """The Case `tileir run` runs: a library case, or one FILE.py registers (by NAME, or for NAME's kernel)."""
    if not _is_file_target(name):
        return _case(name)
    from .kernel import KernelFn
    from .kernels.registry import CASES, Case

    obj, _ = load_file_target(name)
    if isinstance(obj, Case):
        return obj
    found = [c for c in CASES.values() if c.kernel is obj or c.name == name.rpartition(":")[2]]
    if found:
        return found[0]
    what = "a kernel" if isinstance(obj, KernelFn) else f"of type {type(obj).__name__}"
    raise TileirError(f"{name} is {what}, with no inputs or answer to run it on: `tileir run` runs a Case "
                      "(tileir.kernels.registry.Case: inputs, the expected answer, the tolerance)",
                      fix="register(Case(...)) in the file, or call it from Python: kern.run_host(*arrays, **config); "
                      "`tileir show` needs no Case")


def cmd_run(args) -> int:
    case = _run_target(args.name)
    size = _size(args.size, case.default_size, case.name)
    if args.device and not _device_available():
        raise TileirError("--device: there is no usable GPU here (no CUDA driver, no device, or torch without CUDA)",
                          fix=f"tileir run {args.name} --host (the host reference runs the same recording)")
    where = "device" if args.device else "host" if args.host else ("device" if _device_available() else "host")
    _case_config(case, size)
    err, ok = run_case(case, size, where, args.seed)
    tol = "bit-exact" if case.rtol == 0 and case.atol == 0 else f"rtol={case.rtol:g} atol={case.atol:g}"
    print(f"{case.name} size={size} on the {'GPU' if where == 'device' else 'host reference'}: "
          f"max |error| = {err:.3g} ({tol}) {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


CHECK_SIZE_HELP = ("the sizes of the random inputs: for a library kernel as for run (N, MxN, MxNxK ...); for "
                   "a kernel of yours its run-time sizes in the order the kernel names them (64x1000 for a "
                   "kernel on [\"R\", \"C\"]), or by name (R=64,C=1000)")


def _user_sizes(text, names: list, kernel: str) -> dict:
    """--size for a kernel of the user's: AxB... in the order of its run-time sizes, or NAME=N,..."""
    example = "x".join(str(64 * (i + 1)) for i in range(len(names)))
    fix = f"--size {example} ({' x '.join(names)}), or --size " + ",".join(f"{n}=..." for n in names)
    if not names:
        return {}
    if text is None:
        raise TileirError(f"{kernel} reads the run-time size{'s' if len(names) > 1 else ''} {', '.join(names)} off "
                          "its arrays: --size gives the inputs' sizes", fix=fix)
    if "=" in text:
        pairs = [p.partition("=") for p in text.split(",")]
        got = {k.strip(): v for k, _, v in pairs}
        unknown = [k for k in got if k not in names]
        if unknown:
            raise TileirError(f"--size {text}: {kernel} has no run-time size {', '.join(unknown)}; it reads "
                              f"{', '.join(names)}", fix=fix)
    else:
        parts = text.lower().split("x")
        if len(parts) != len(names):
            raise TileirError(f"--size {text}: {kernel} reads {len(names)} run-time size"
                              f"{'s' if len(names) > 1 else ''} ({', '.join(names)})", fix=fix)
        got = dict(zip(names, parts))
    try:
        sizes = {k: int(v) for k, v in got.items()}
    except ValueError:
        raise TileirError(f"--size {text}: sizes are positive ints", fix=fix) from None
    if any(v <= 0 for v in sizes.values()) or set(sizes) != set(names):
        raise TileirError(f"--size {text}: every run-time size ({', '.join(names)}) a positive int", fix=fix)
    return sizes


def _check_device(kern):
    """What check runs as the device for ``kern``: None, the GPU (the tests stand a fake one here)."""
    return None


def cmd_check(args) -> int:
    from .check import random_inputs, size_names
    from .kernel import KernelFn
    from .kernels.registry import Case

    rng = np.random.default_rng(args.seed)
    user = _config(args.config)
    values = _config(args.arg)
    obj = load_file_target(args.name)[0] if _is_file_target(args.name) else _case(args.name)
    if isinstance(obj, Case):
        if obj.runner is not None:
            raise TileirError(f"{obj.name} runs more than one launch; check runs one kernel",
                              fix=f"tileir run {args.name} compares its answer with numpy")
        size = _size(args.size, obj.default_size, obj.name)
        kern, inputs, cfg = obj.kernel, obj.inputs(size, rng), {**_case_config(obj, size), **user}
    elif isinstance(obj, KernelFn):
        kern, cfg = obj, user
        sizes = _user_sizes(args.size, size_names(kern, kern.config(**cfg)), kern.name)
        inputs = random_inputs(kern, sizes, values, rng, **cfg)
    else:
        raise TileirError(f"{args.name} is a {type(obj).__name__}, not a kernel",
                          fix="name a @tileir.kernel of that file, or a Case it registers")
    device = _check_device(kern)
    if device is None and not _device_available():
        raise TileirError("check compares a GPU run with the host reference, and there is no GPU here (no CUDA "
                          "driver, no device, or torch without CUDA)", fix="run it on a machine with a GPU; here, "
                          f"`tileir show {args.name} --emit calls` shows the kernel and kern.run_host(...) runs it "
                          "on the host reference")
    res = kern.check(*inputs, device=device, judge=args.judge, **cfg)
    print(res)
    return 0 if res.ok else 1


def cmd_demo(args) -> int:
    from .kernels import vadd

    n = 1_000_003
    where = "device" if _device_available() else "host"
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    if where == "device":
        vadd(a, b, c)  # the length is read off the arrays
        label = "on the GPU (tileiras cubin, launched through the CUDA driver)"
    else:
        vadd.run_host(a, b, c)
        label = "on the host reference (no GPU here; the same recording, interpreted with numpy)"
    print(f"vadd of {n} f32 elements ran {label}")
    print(f"c[:4] = {c[:4]}")
    exact = np.array_equal(c, a + b)
    print(f"c == a + b bit for bit: {exact}")
    print("the kernel as Tile IR (first lines):")
    print("\n".join(vadd.mlir().splitlines()[:8]) + "\n  ...")
    return 0 if exact else 1


def cmd_cache(args) -> int:
    """``tileir cache info``: where the cubin and tune caches are and what they hold;
    ``tileir cache clear [--tune]``: remove the cubins (and, with --tune, the tuning winners)."""
    from . import cubin_cache
    from .autotune import cache_path, read_cache

    tune = cache_path()
    if args.action == "info":
        i = cubin_cache.info()
        print(f"cubins: {i['directory']}: {i['entries']} entries, {i['bytes'] / 2**20:.1f} MB of at most "
              f"{i['max_bytes'] / 2**20:.0f} MB ({cubin_cache.ENV_MAX_MB}; least recently used dropped first)")
        print(f"tune:   {tune}: {len(read_cache(tune))} entries" if tune.exists() else f"tune:   {tune}: none")
        return 0
    n = cubin_cache.clear()
    print(f"removed {n} cubin entries from {cubin_cache.cache_dir()}")
    if args.tune:
        try:
            tune.unlink()
            print(f"removed the tune cache {tune}")
        except FileNotFoundError:
            print(f"no tune cache at {tune}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tileir", description="Tile IR kernels from Python")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kernels", help="list the library kernels")
    s = sub.add_parser("show", help="print or write a kernel's text, bytes, cubin or tileiras arguments",
                       description="Print or write what tileir makes of a kernel: its Tile IR text, bytecode, "
                       "cubin, the tileiras arguments, the recorded program or its calls.",
                       epilog="examples: tileir show softmax --size 64x1000; tileir show my_kernels.py:scale "
                       "--config n=4096 --emit bytecode -o scale.tileirbc")
    s.add_argument("name", metavar="KERNEL", help=TARGET_HELP)
    s.add_argument("--emit", choices=["mlir", "bytecode", "cubin", "args", "prog", "calls", "owners"], default="mlir",
                   help=EMIT_HELP)
    s.add_argument("--arch", default="sm_90", help="the GPU tileiras assembles for (--emit cubin / args; sm_90)")
    s.add_argument("--size", help=SIZE_HELP)
    s.add_argument("--config", nargs="+", action="extend", metavar="KEY=VALUE", help=CONFIG_HELP)
    s.add_argument("--version", help="bytecode version (13.1 .. 13.4; default 13.4)")
    s.add_argument("--opt-level", type=int, dest="opt_level", help="tileiras' -O level (default: its own, or the "
                   "level a known assembler defect needs: 0 for a while loop, an alloca in a loop or a carry "
                   "passed to another; a level given here wins and risks that defect)")
    s.add_argument("-o", "--output", help="write to this file (needed for bytecode and cubin)")
    r = sub.add_parser("run", help="run a kernel on fresh random inputs and compare with numpy",
                       description="Run a library case (or one a file of yours registers) on fresh random inputs "
                       "and compare the answer with its numpy reference.",
                       epilog="examples: tileir run matmul_bf16 --host --size 200x136x300; tileir run vadd")
    r.add_argument("name", metavar="KERNEL", help="a library kernel, or FILE.py:NAME where the file registers a "
                   "Case of that name (or for that kernel)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--host", action="store_true", help="on the host reference (numpy), no GPU needed")
    g.add_argument("--device", action="store_true", help="on the GPU (the default where there is one)")
    r.add_argument("--size", help=SIZE_HELP)
    r.add_argument("--seed", type=int, help="the inputs' random seed")
    ck = sub.add_parser("check", help="run a kernel on the GPU and on the host reference and compare them lane by "
                        "lane", description="Run a kernel on random inputs on the GPU and on the host reference (the "
                        "same inputs, copied) and judge every array with layer 2's judgements: integers exactly, "
                        "floats within 8 ulp plus 8 epsilons of the array's largest value. Prints which lanes differ "
                        "and by how much; exits 1 if any does, 2 where there is no GPU.",
                        epilog="examples: tileir check softmax --size 64x1000; tileir check my_kernels.py:scale "
                        "--size 4096 --config factor=3.0")
    ck.add_argument("name", metavar="KERNEL", help=TARGET_HELP + ", or FILE.py:NAME of a Case it registers")
    ck.add_argument("--size", help=CHECK_SIZE_HELP)
    ck.add_argument("--config", nargs="+", action="extend", metavar="KEY=VALUE", help=CONFIG_HELP)
    ck.add_argument("--arg", nargs="+", action="extend", metavar="NAME=VALUE",
                    help="a by-value parameter's value (ByValue), e.g. --arg alpha=0.5")
    ck.add_argument("--judge", choices=["exact", "bits", "tol"], help="hold every array to this judgement "
                    "(default: exact for integers, tol for floats)")
    ck.add_argument("--seed", type=int, help="the inputs' random seed")
    sub.add_parser("demo", help="run vadd on the GPU if there is one, else on the host reference")
    lg = sub.add_parser("ledger", help="the layer-3 ledger: every dialect operation and attribute, covered or exempt")
    lg.add_argument("--root", help="a folder holding dialect.txt, exemptions.txt and coverage.txt, or a checkout "
                    "of the repository (default: the files shipped with tileir)")
    lg.add_argument("--quiet", action="store_true", help="print the counts only")
    ca = sub.add_parser("cache", help="show or empty the caches on disk (cubins; tune winners)",
                        description="The cubin cache ($TILEIR_CACHE_DIR or ~/.cache/tileir/cubins, at most "
                        "$TILEIR_CACHE_MAX_MB) and the tune cache (tune.json).")
    ca.add_argument("action", choices=["info", "clear"])
    ca.add_argument("--tune", action="store_true", help="clear: the tune cache's winners too")
    df = sub.add_parser("diff", help="layer 2: the device diff (python -m tileir.diff; `tileir diff run --help`)")
    df.add_argument("rest", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    try:
        if args.cmd == "diff":
            from .diff.__main__ import main as diff_main

            return diff_main(args.rest)
        if args.cmd == "ledger":
            from .diff.ledger import main as ledger_main

            return ledger_main(args.root, args.quiet)
        return {"kernels": cmd_kernels, "show": cmd_show, "run": cmd_run, "check": cmd_check, "demo": cmd_demo,
                "cache": cmd_cache}[args.cmd](args)
    except TileirError as e:
        print(f"tileir: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
