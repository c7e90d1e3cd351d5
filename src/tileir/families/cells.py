"""Cells: the views a parameter's marker gives it, and the block's own index in them.

t_cell_view builds, once per parameter and scope, a partition view over the parameter's whole
row-major tensor cut into its cells and padded as the marker says; the index of this block's cell
takes the block id along each dimension that follows a grid axis, and the kernel's own indices
(load_at) along the FREE ones. A DYN_DIM extent is the grid's blocks along its axis times the
tile (num_blocks * tile) in a program recorded without a size plan; a kernel's run-time sizes and
strides are the hidden parameters the launch passes (tileir.sizes). t_sub_view cuts the same tensor
finer for store_sub; t_retile cuts it another way entirely, read only.
"""

from __future__ import annotations

from ..dtypes import BY_NAME
from ..ir import DYN_DIM, NoPadding, Padding
from .recording import Recording


class CellRecording(Recording):
    def _cells(self, param, what):
        m = self.marker(param)
        if m is None or m.cells is None:
            kind = "a parameter of trace_kernel" if m is None else f"a {m.role}"
            raise self.refuse(f"{what} of parameter {param}, {kind}: it has no cells",
                              "declare it In(fmt, cells(...)) or Out(fmt, cells(...)); or load(p, base, shape) / "
                              "retile(p, extent, tile)")
        return m

    def _extent_idx(self, param, m, d):
        """Dimension d's extent as an index handle: the fixed number, the run-time size the launch
        passes (tileir.sizes), or -- for a program recorded without a size plan (trace_kernel) --
        the grid's blocks along its axis times the tile."""
        plan = self.sizes
        if plan is not None and (param, d) in plan.extent:
            e = plan.extent[(param, d)]
            return self.t_idx_const(e) if isinstance(e, int) else self.hidden_h[e[1]]
        c = m.cells
        if c.extent[d] != DYN_DIM:
            return self.t_idx_const(c.extent[d])
        nb = self.t_num_blocks(c.axis_of(d))
        return nb if c.tile[d] == 1 else self.t_idx_mul(nb, self.t_idx_const(c.tile[d]))

    def _tensor(self, param, m, extent=None):
        """A tensor view over the parameter's array: its run-time extents and strides where the
        launch passes them (tileir.sizes), else row-major over ``extent`` (the marker's by default)."""
        plan = self.sizes
        if extent is None and plan is not None and param in plan.ranks:
            rank = plan.ranks[param]
            shape, dyn_shape, strides, dyn_strides = [], [], [], []
            for d in range(rank):
                e = plan.extent[(param, d)]
                if not isinstance(e, int) and e[1] in self.hidden_exact:
                    e = self.hidden_exact[e[1]]  # an exact size: static in the view's type
                if isinstance(e, int):
                    shape.append(e)
                else:
                    shape.append(DYN_DIM)
                    dyn_shape.append(self.hidden_h[e[1]])
                if d == rank - 1:
                    strides.append(1)
                elif plan.stride[(param, d)] in self.hidden_exact:
                    strides.append(self.hidden_exact[plan.stride[(param, d)]])
                else:
                    strides.append(DYN_DIM)
                    dyn_strides.append(self.hidden_h[plan.stride[(param, d)]])
            self.planned_view = True  # the launch's strides: any layout the plan admits
            try:
                return self.t_tensor_view(param, m.dtype, self.t_idx_const(0), tuple(shape), tuple(strides),
                                          dyn_shape, dyn_strides)
            finally:
                self.planned_view = False
        extent = tuple(m.cells.extent if extent is None else extent)
        rank = len(extent)
        dyn_shape, dyn_strides, strides = [], [], []
        stride_static, stride_h = 1, None  # the running suffix product, static or a handle
        for d in range(rank - 1, -1, -1):
            if stride_h is None:
                strides.append(stride_static)
            else:
                strides.append(DYN_DIM)
                dyn_strides.insert(0, stride_h)
            if d == 0:  # no dimension before this one needs its stride
                if extent[d] == DYN_DIM:
                    dyn_shape.insert(0, self._extent_idx(param, m, d))
            elif extent[d] == DYN_DIM:
                e = self._extent_idx(param, m, d)
                dyn_shape.insert(0, e)
                base = self.t_idx_const(stride_static) if stride_h is None else stride_h
                stride_h = self.t_idx_mul(base, e)
            elif stride_h is not None:
                stride_h = self.t_idx_mul(stride_h, self.t_idx_const(extent[d]))
            else:
                stride_static *= extent[d]
        strides.reverse()
        zero = self.t_idx_const(0)
        return self.t_tensor_view(param, m.dtype, zero, extent, strides, dyn_shape, dyn_strides)

    def t_array_view(self, param, dtype):
        """The tensor view of a parameter's whole declared array (cells' extent, or Shared / Whole
        with a shape), with the run-time extents and strides the launch passes."""
        m = self.marker(param)
        if m is None or m.extent is None:
            raise self.refuse(f"array_view of parameter {param}: it declares no extents",
                              "declare it In/Out(fmt, cells([...], ...)) or Shared/Whole(fmt, [extents])")
        if dtype != m.dtype:
            raise self.refuse(f"parameter {param} is {m.dtype}, not {dtype}")
        return self._cached(("array", param), lambda: self._tensor(param, m))

    def _cached(self, key, make):
        for f in reversed(self.frames):
            if key in f.saved:
                return f.saved[key]
        got = make()
        self.frames[-1].saved[key] = got
        return got

    def t_cell_view(self, param, dtype, free):
        m = self._cells(param, "the cells")
        if dtype != m.dtype:
            raise self.refuse(f"parameter {param} is {m.dtype}, not {dtype}")
        c = m.cells
        free_dims = [d for d in range(c.rank) if c.axis_of(d) is None]
        if len(free) != len(free_dims):
            raise self.refuse(f"parameter {param} has {len(free_dims)} dimensions that follow no grid axis and "
                              f"{len(free)} indices were given for them",
                              "load_cell(p) when every dimension follows an axis; load_at(p, [k, ..]) otherwise")

        def make():
            tv = self._tensor(param, m)
            pv = self.t_partition_view(m.dtype, tv, c.tile, None, c.pad)
            self.prog.views[pv]["cell"] = True
            return pv

        view = self._cached(("cell", param), make)
        it = iter(free)
        idx = [next(it) if c.axis_of(d) is None else self.t_block_id(c.axis_of(d)) for d in range(c.rank)]
        return view, idx

    def t_cell_fill(self, param, value):
        m = self._cells(param, "a fill")
        if not BY_NAME[m.dtype].is_float:
            if float(value) != int(value):
                raise self.refuse(f"fill of an {m.dtype} cell with {value}: an integer cell takes a whole number")
            return self.t_consti(m.dtype, m.cells.tile, int(value))
        return self.t_constf(m.dtype, m.cells.tile, float(value))

    def t_sub_view(self, param, dtype, sub, at):
        m = self._cells(param, "store_sub")
        c = m.cells
        sub, at = tuple(sub), tuple(at)
        if m.role != "Out":
            raise self.refuse(f"store_sub into parameter {param}, an {m.role}: store_sub writes an Out's cell")
        if any(c.axis_of(d) is None for d in range(c.rank)):
            raise self.refuse("store_sub into an Out with a dimension that follows no grid axis: the block's cell "
                              "is not known along it", "an Out whose every dimension follows a grid axis")
        if len(sub) != c.rank or len(at) != c.rank or any(t % s for t, s in zip(c.tile, sub)):
            raise self.refuse(f"store_sub of a {list(sub)} piece into a {list(c.tile)} cell: the piece divides the "
                              "cell in every dimension, and at names it along each")
        for d, (t, s, a) in enumerate(zip(c.tile, sub, at)):
            if not 0 <= a < t // s:
                raise self.refuse(f"store_sub piece {list(at)}: along dimension {d} the cell holds {t // s} pieces, so "
                                  f"{a} would leave the block's own cell", f"an index below {t // s}")

        def make():
            tv = self._tensor(param, m)
            pv = self.t_partition_view(m.dtype, tv, sub, None, NoPadding)
            self.prog.views[pv]["cell"] = True
            return pv

        view = self._cached(("sub", param, sub), make)
        idx = []
        for d, (t, s, a) in enumerate(zip(c.tile, sub, at)):
            i = self.t_idx_mul(self.t_block_id(c.axis_of(d)), self.t_idx_const(t // s))
            idx.append(self.t_idx_add(i, self.t_idx_const(a)) if a else i)
        return view, idx

    def t_retile(self, param, dtype, extent, tile, pad):
        self.prog.dense.add(param)  # row-major over the extent given: dense rows
        m = self.marker(param)
        p = self.prog.params[param]
        if p.dtype != dtype or not p.by_ptr:
            raise self.refuse(f"retile: parameter {param} is not a {dtype} buffer")
        if m is not None and m.role == "Out":
            raise self.refuse(f"retile of parameter {param}, an Out: an Out's writes are its cells, and a retiled "
                              "view is for reading", "store_cell / store_sub")
        pad = pad if isinstance(pad, Padding) else Padding(pad)
        from ..markers import Marker, cells

        fake = Marker(m.role if m else "Whole", dtype, cells(extent, [1] * len(extent), [-1] * len(extent)))
        tv = self._tensor(param, fake, tuple(extent))
        return self.t_partition_view(dtype, tv, tuple(tile), None, pad)

    def t_extent_of(self, param, dim, blocks):
        m = self.marker(param)
        if blocks or m is None or m.extent is None:
            m = self._cells(param, "extent_of" if not blocks else "blocks_of")
        ext = m.extent
        if not 0 <= dim < len(ext):
            raise self.refuse(f"dimension {dim} of a rank-{len(ext)} parameter")
        if not blocks:
            return self._extent_idx(param, m, dim)
        c = m.cells
        if isinstance(ext[dim], int) and ext[dim] != DYN_DIM:
            return self.t_idx_const(-(-ext[dim] // c.tile[dim]))
        if self.sizes is None and c.axis_of(dim) is not None:  # no size plan: the extent is the grid's
            return self.t_num_blocks(c.axis_of(dim))
        # cdiv(extent, tile) on the device -- not the launched grid's count, which a grid function
        # or an explicit grid may make different
        t = c.tile[dim]
        e = self._extent_idx(param, m, dim)
        return e if t == 1 else self.t_binaryi("divi", "i32", [], self.t_idx_add(e, self.t_idx_const(t - 1)),
                                                 self.t_idx_const(t))
