"""A small builder for hand-made Kernels: fresh value numbers, pointer parameters made on demand,
a make_token, regions, and a ``sink`` that stores a value so the assembler cannot drop the
operation that made it (and so must really compile it for the target)."""

from __future__ import annotations

from contextlib import contextmanager

from tileir import ir
from tileir.ir import Arg, Val


def T(shape, elem) -> ir.Tile:
    return ir.tile(shape, elem)


def P(shape, elem) -> ir.Tile:
    """A tile of pointers to ``elem``."""
    return ir.Tile(tuple(shape), ir.PtrTo(elem))


class B:
    def __init__(self, name: str = "k"):
        self.name = name
        self.params: list = []
        self.ptr_params: dict = {}
        self.ops: list = []
        self.top = self.ops
        self.next = 0
        self._tok = None
        self.globals: list = []
        self.hints: tuple = ()
        self.producer = None

    # -- values ----------------------------------------------------------------------------
    def n(self) -> int:
        self.next += 1
        return self.next - 1

    def emit(self, ins):
        self.ops.append(ins)
        return ins

    def param(self, dtype: str, by_ptr: bool = True) -> Arg:
        self.params.append(ir.KParam(dtype, by_ptr))
        return Arg(len(self.params) - 1)

    def ptr(self, dtype: str) -> Arg:
        """The pointer parameter for ``dtype`` (made the first time it is asked for)."""
        if dtype not in self.ptr_params:
            self.ptr_params[dtype] = self.param(dtype)
        return self.ptr_params[dtype]

    def tok(self) -> Val:
        if self._tok is None:
            d = self.n()
            self.top.insert(0, ir.MakeTok(d))
            self._tok = Val(d)
        return self._tok

    def ci(self, ty, v) -> Val:
        ty = ty if isinstance(ty, ir.Tile) else T((), ty)
        d = self.n()
        self.emit(ir.ConstInt(d, ty, v))
        return Val(d)

    def cf(self, ty, v) -> Val:
        ty = ty if isinstance(ty, ir.Tile) else T((), ty)
        d = self.n()
        self.emit(ir.ConstFloat(d, ty, v))
        return Val(d)

    def iota(self, n: int, dtype: str = "i32") -> Val:
        d = self.n()
        self.emit(ir.IotaTile(d, T((n,), dtype)))
        return Val(d)

    def reshape(self, v, from_, to) -> Val:
        d = self.n()
        self.emit(ir.Reshape(d, v, from_, to))
        return Val(d)

    def bcast(self, v, from_, to) -> Val:
        d = self.n()
        self.emit(ir.Broadcast(d, v, from_, to))
        return Val(d)

    def splat(self, v, elem, shape) -> Val:
        """A rank-0 value broadcast to ``shape``."""
        if not shape:
            return v
        one = T((1,) * len(shape), elem)
        r = self.reshape(v, ir.Tile((), elem), one)
        return self.bcast(r, one, ir.Tile(tuple(shape), elem))

    def ptrs(self, dtype: str, shape) -> Val:
        """A tile of pointers (all the parameter's) of ``shape``."""
        return self.splat(self.ptr(dtype), ir.PtrTo(dtype), shape)

    def load(self, ty: ir.Tile) -> Val:
        """A tile of ``ty`` loaded from the parameter of its format."""
        dtype = ty.elem.name
        p = self.ptrs(dtype, ty.shape)
        d, t = self.n(), self.n()
        self.emit(ir.LoadPtr(d, t, p, None, None, self.tok(), P(ty.shape, dtype), None, ty))
        return Val(d)

    def sink(self, v, ty) -> None:
        """Store ``v`` (of type ``ty``) so that it is used."""
        if isinstance(ty, ir.Token):
            return
        if isinstance(ty.elem, ir.PtrTo):
            d = self.n()
            i64 = ir.Tile(ty.shape, ir.Num("i64"))
            self.emit(ir.PtrToIntTile(d, v, ty, i64))
            v, ty = Val(d), i64
        dtype = ty.elem.name
        p = self.ptrs(dtype, ty.shape)
        if dtype == "f4E2M1FN":  # sub-byte stores need provably contiguous pointers: base + iota
            d = self.n()
            self.emit(ir.Offset(d, p, self.iota(ty.shape[0]), P(ty.shape, dtype), T(ty.shape, "i32")))
            p = Val(d)
        self.emit(ir.StorePtr(self.n(), p, v, None, self.tok(), P(ty.shape, dtype), None, ty))

    # -- regions ---------------------------------------------------------------------------
    @contextmanager
    def region(self):
        saved = self.ops
        body: list = []
        self.ops = body
        try:
            yield body
        finally:
            self.ops = saved

    def kernel(self, ret: bool = True) -> ir.Kernel:
        body = list(self.ops)
        if ret:
            body.append(ir.Ret())
        return ir.Kernel(self.name, tuple(self.params), tuple(self.globals), tuple(body), self.hints,
                         self.producer)
