"""Vectorization: the BatchTrace behind `vmap`.

A `BatchTracer` stands for a whole batch of values: its `val` carries the extra axis
`batch_dim` (or `None`, "not mapped": the same value for every example). Each primitive has a
batching rule in `primitive_batchers`, registered beside its definition in `_src/lax`:

    rule(axis_data, vals, dims, **params) -> (out, out_dim)      (lists for multiple_results)

Rules run with the parent trace current and see at least one mapped operand, except the
rules of collectives over named axes (`axis_primitives`), which run whenever the trace's
axis is named. The helpers `defvectorized`, `defbroadcasting` and `defreducer` cover the
common shapes of rule; `moveaxis`, `broadcast`, `bdim_at_front` and `matchaxis` move the
batch axis around.
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import source_info_util
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core, leaks
from justjax._src.core.avals import ShapedArray, mapped_aval, unmapped_aval
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from justjax._src.interpreters import ad, staging

NotMapped = type(None)
not_mapped = None

primitive_batchers: dict[core.Primitive, Callable] = {}
# Collectives: their rules run even when no operand is mapped (`psum(1, 'i')` is the axis
# size), and pass names of other axes on to the parent trace.
axis_primitives: set[core.Primitive] = set()


class _NoAxisName:
    """The name of an axis `vmap` was not given a name for; collectives never match it."""

    def __repr__(self) -> str:
        return "no_axis_name"


no_axis_name = _NoAxisName()


@dataclasses.dataclass(frozen=True)
class AxisData:
    """The axis a BatchTrace maps over: its name (for collectives), size and SPMD names."""

    name: Any
    size: int
    spmd_name: tuple[Any, ...] | None = None


# JAX's older registration forms, which libraries still use: writing a rule there stores it
# in `primitive_batchers` adapted to the full signature.

class _ShortRuleTable:
    """`batching.primitive_batchers` as JAX's extension API offers it: a rule
    `rule(args, dims, **params) -> (out, out_dim)` without the axis."""

    def __setitem__(self, primitive: core.Primitive, rule: Callable) -> None:
        def full(axis_data: AxisData, vals: Sequence[Any], dims: Sequence[int | None],
                 **params: Any) -> Any:
            return rule(tuple(vals), tuple(dims), **params)  # JAX passes tuples
        primitive_batchers[primitive] = full

    def __delitem__(self, primitive: core.Primitive) -> None:
        del primitive_batchers[primitive]


class _AxisRuleTable:
    """`batching.axis_primitive_batchers`: a rule
    `rule(axis_size, axis_name, trace_type, args, dims, **params) -> (out, out_dim)`."""

    def __setitem__(self, primitive: core.Primitive, rule: Callable) -> None:
        def full(axis_data: AxisData, vals: Sequence[Any], dims: Sequence[int | None],
                 **params: Any) -> Any:
            return rule(axis_data.size, axis_data.name, None, tuple(vals), tuple(dims),
                        **params)
        primitive_batchers[primitive] = full


short_rule_table = _ShortRuleTable()
axis_rule_table = _AxisRuleTable()


# ---------------------------------------------------------------------------------------------
# Operations on the batch axis. The transforms layer may not import lax, so lax registers the
# few primitives these need (`register_array_ops`), as it does for `ad.zeros_builder`.

@dataclasses.dataclass
class _ArrayOps:
    transpose: Callable[[Any, tuple[int, ...]], Any] | None = None
    broadcast_in_dim: Callable[[Any, tuple[int, ...], tuple[int, ...]], Any] | None = None
    reduce_sum: Callable[[Any, tuple[int, ...]], Any] | None = None


array_ops = _ArrayOps()


def register_array_ops(**ops: Callable) -> None:
    for name, op in ops.items():
        setattr(array_ops, name, op)


def canonicalize_axis(axis: int, ndim: int) -> int:
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """`x` with its axis `src` moved to position `dst` (a `transpose` unless src == dst)."""
    ndim = np.ndim(x)
    src, dst = canonicalize_axis(src, ndim), canonicalize_axis(dst, ndim)
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return array_ops.transpose(x, tuple(perm))


def broadcast(x: Any, size: int, axis: int) -> Any:
    """`x` repeated `size` times along a new axis at position `axis`."""
    shape = list(np.shape(x))
    shape.insert(axis, size)
    if ad.is_float0(x) and not isinstance(x, core.Tracer):
        # float0 values (integer inputs' tangents) are NumPy zeros, never device arrays.
        return np.zeros(shape, x.dtype)
    # NumPy integers, as JAX's rule builds them: they show in printed jaxprs.
    dims = tuple(np.delete(np.arange(len(shape)), axis))
    return array_ops.broadcast_in_dim(x, tuple(shape), dims)


def bdim_at_front(x: Any, bdim: int | None, size: int) -> Any:
    """`x` with its batch axis first, broadcast to `size` if it is not mapped."""
    return move_stacked_axis(x, bdim, 0, size)


def move_stacked_axis(x: Any, bdim: int | None, dst: int, size: int) -> Any:
    """`x` with its batch axis at `dst`, broadcast there if it is not mapped."""
    if bdim is None:
        return broadcast(x, size, dst)
    return moveaxis(x, bdim, dst)


class SpecMatchError(Exception):
    """An output mapped along `src` cannot be given the out_axes spec `dst`."""

    def __init__(self, leaf_index: int | None, src: Any, dst: Any) -> None:
        super().__init__(leaf_index, src, dst)
        self.leaf_index = leaf_index
        self.src = src
        self.dst = dst


def matchaxis(axis_data: AxisData, src: int | None, dst: int | None, x: Any,
              sum_match: bool = False) -> Any:
    """`x`, batched along `src`, batched along `dst` instead (None: not mapped; with
    `sum_match` a mapped value asked to be unmapped is summed over its batch axis)."""
    if not core.valid_jaxtype(x):
        raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a "
                        "valid JAX type")
    if src == dst:
        return x
    if src is not None and dst is not None:
        return moveaxis(x, src, dst)
    if src is None:
        return broadcast(x, axis_data.size, canonicalize_axis(dst, np.ndim(x) + 1))
    if sum_match:
        return array_ops.reduce_sum(x, (src,))
    if axis_data.name is not no_axis_name:
        raise ValueError(f"vmap has mapped output (axis_name={axis_data.name}) but out_axes "
                         f"is {dst}")
    raise SpecMatchError(None, src, dst)


# ---------------------------------------------------------------------------------------------
# Rule helpers.

def defvectorized(primitive: core.Primitive) -> None:
    """The primitive maps each element (or row) independently of the batch axis: a single
    operand whose batch axis passes straight through (unary elementwise ops, copy)."""
    def rule(axis_data: AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, Any]:
        dim = next(d for d in dims if d is not None)
        vals = [v if d == dim else move_stacked_axis(v, d, dim, axis_data.size)
                for v, d in zip(vals, dims, strict=True)]
        out = primitive.bind(*vals, **params)
        if primitive.multiple_results:
            return out, [dim] * len(out)
        return out, dim

    primitive_batchers[primitive] = rule


def defbroadcasting(primitive: core.Primitive) -> None:
    """An elementwise primitive with lax's implicit broadcasting of size-1 and rank-0
    operands: operands batched alike go straight through; otherwise the batch axes move to
    the front and unmapped operands get a size-1 axis there, which the primitive broadcasts."""
    primitive_batchers[primitive] = lambda axis_data, vals, dims, **params: \
        broadcast_batcher(primitive, vals, dims, **params)


def broadcast_batcher(primitive: core.Primitive, vals: Sequence[Any],
                      dims: Sequence[int | None], **params: Any) -> tuple[Any, Any]:
    shape, dim = next((np.shape(x), d) for x, d in zip(vals, dims) if d is not None)
    if all(np.shape(x) == shape and d == dim
           for x, d in zip(vals, dims, strict=True) if np.ndim(x)):
        out = primitive.bind(*vals, **params)
        return (out, [dim] * len(out)) if primitive.multiple_results else (out, dim)
    vals = [bdim_at_front(x, d, 1) if np.ndim(x) else x for x, d in zip(vals, dims, strict=True)]
    ndim = max(np.ndim(x) for x in vals)
    vals = [_expand_trailing(x, ndim) if d is not None and np.ndim(x) != ndim else x
            for x, d in zip(vals, dims, strict=True)]
    out = primitive.bind(*vals, **params)
    return (out, [0] * len(out)) if primitive.multiple_results else (out, 0)


def _expand_trailing(x: Any, ndim: int) -> Any:
    # A batched scalar [B] among rank-n operands becomes [B, 1, ..., 1] (lax.expand_dims).
    shape = tuple(np.shape(x)) + (1,) * (ndim - np.ndim(x))
    return array_ops.broadcast_in_dim(x, shape, tuple(range(np.ndim(x))))


def defreducer(primitive: core.Primitive) -> None:
    """A reduction over `axes` of one operand: the batch axis is kept and the reduced axes
    renumbered around it."""
    def rule(axis_data: AxisData, vals: Sequence[Any], dims: Sequence[int | None], *,
             axes: tuple[int, ...], **params: Any) -> tuple[Any, int]:
        operand, = vals
        bdim, = dims
        axes = tuple(np.where(np.less(axes, bdim), axes, np.add(axes, 1)))
        kept = [i for i in range(np.ndim(operand)) if i not in axes]
        return primitive.bind(operand, axes=axes, **params), kept.index(bdim)

    primitive_batchers[primitive] = rule


# ---------------------------------------------------------------------------------------------
# The trace.

def _user_frame() -> tuple[Any, int, int] | None:
    """Where user code created a value: the code object, instruction and line of the
    innermost frame outside justjax (the column is worked out only if an error needs it)."""
    frame = source_info_util.user_frame(2)
    if frame is None:
        return None
    return frame.f_code, frame.f_lasti, frame.f_lineno


def _describe_frame(code: Any, lasti: int, line: int) -> str:
    column = 0
    positions = list(code.co_positions())
    index = lasti // 2
    if 0 <= index < len(positions) and positions[index][0] is not None:
        line, column = positions[index][0], positions[index][2] or 0
    return f"{code.co_filename}:{line}:{column} ({code.co_name})"


class BatchTracer(core.Tracer):
    """A batch of values: `val` with the batch along `batch_dim`."""

    __slots__ = ("val", "batch_dim", "_aval", "source")

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: int, source: Any = None
                 ) -> None:
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval = remove_axis(core.get_aval(val), batch_dim)
        self.source = source

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def __repr__(self) -> str:
        full = core.get_aval(self.val)
        return (f"VmapTracer(aval={self._aval.str_short(short_dtypes=False)}, "
                f"batched={full.str_short(short_dtypes=False)})")

    def _origin_msg(self) -> str:
        if self.source is None:
            return ""
        return (f"This BatchTracer with object id {id(self)} was created on line:\n"
                f"  {_describe_frame(*self.source)}")


class BatchTrace(core.Trace):
    """Vectorization along one axis (one application of `vmap`)."""

    tracer_name = "VmapTracer"

    def __init__(self, parent_trace: core.Trace, tag: core.TraceTag, axis_data: AxisData
                 ) -> None:
        super().__init__()
        self.parent_trace = parent_trace
        self.tag = tag
        self.axis_data = axis_data

    def to_batch_info(self, value: Any) -> tuple[Any, int | None]:
        if isinstance(value, BatchTracer) and value._trace.tag is self.tag:
            if not value._trace.is_valid():
                raise core.escaped_tracer_error(value)
            return value.val, value.batch_dim
        return value, None

    def new_tracer(self, val: Any, dim: int | None) -> Any:
        if dim is None:
            return val
        return BatchTracer(self, val, dim, _user_frame())

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict
                          ) -> Any:
        vals, dims = [], []
        for arg in args:
            val, dim = self.to_batch_info(arg)
            vals.append(val)
            dims.append(dim)
        if primitive not in axis_primitives and all(d is None for d in dims):
            with core.set_current_trace(self.parent_trace):
                return primitive.bind(*vals, **params)
        rule = primitive_batchers.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        with core.set_current_trace(self.parent_trace):
            out, out_dim = rule(self.axis_data, vals, dims, **params)
        if primitive.multiple_results:
            return [self.new_tracer(v, d) for v, d in zip(out, out_dim, strict=True)]
        return self.new_tracer(out, out_dim)

    def process_custom_jvp_call(self, primitive: core.Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Batches the function and its rule (they may close over this trace's tracers);
        the parent decides which of them runs, and its outputs' batch dims hold for both."""
        vals, dims = zip(*[self.to_batch_info(a) for a in args]) if args else ((), ())
        call = _BatchedCall(self.tag, self.axis_data, list(dims))
        outs = primitive.bind_with_trace(self.parent_trace, _BatchedFun(fun, call),
                                         _BatchedJVP(jvp, call), list(vals),
                                         symbolic_zeros=symbolic_zeros)
        return [self.new_tracer(v, d) for v, d in zip(outs, call.out_dims, strict=True)]

    def process_custom_vjp_call(self, primitive: core.Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        """Batches the function, its fwd and its bwd, whose cotangents come back batched as
        their inputs were (summed over the batch where an input was not mapped)."""
        vals, dims = zip(*[self.to_batch_info(a) for a in args]) if args else ((), ())
        call = _BatchedCall(self.tag, self.axis_data, list(dims))
        outs = primitive.bind_with_trace(self.parent_trace, _BatchedFun(fun, call),
                                         _BatchedFwd(fwd, call), _BatchedBwd(bwd, call),
                                         list(vals), symbolic_zeros=symbolic_zeros)
        return [self.new_tracer(v, d) for v, d in zip(outs, call.out_dims, strict=True)]


# ---------------------------------------------------------------------------------------------
# Batching functions: vmap's core, and the batched versions of custom rules.

def batch_flat(fun: Callable[..., Sequence[Any]], axis_data: AxisData,
               in_dims: Sequence[int | None], out_dims: Sequence[Any] | Callable[[int], Any],
               args: Sequence[Any]) -> list[Any]:
    """Calls the flat function `fun` on `args` batched along `in_dims` (canonical axes or
    None) and returns its outputs batched along `out_dims` (a list, or a function of the
    number of outputs giving one). Collectives over `axis_data.name` see this axis."""
    parent = core.current_trace()
    trace = BatchTrace(parent, core.TraceTag(), axis_data)
    source = _user_frame()
    try:
        results = _run_batched(trace, parent, fun, axis_data, in_dims, out_dims, args, source)
    finally:
        trace.invalidate()
    if config.read("jax_check_tracer_leaks"):
        trace_ref = weakref.ref(trace)
        del trace
        leaks.check_no_leaks(trace_ref)
    return results


def _run_batched(trace: BatchTrace, parent: core.Trace, fun: Callable[..., Sequence[Any]],
                 axis_data: AxisData, in_dims: Sequence[int | None],
                 out_dims: Sequence[Any] | Callable[[int], Any], args: Sequence[Any],
                 source: Any) -> list[Any]:
    in_tracers = [a if d is None else BatchTracer(trace, a, d, source)
                  for a, d in zip(args, in_dims, strict=True)]
    with core.set_current_trace(trace), core.extend_axis_env(axis_data.name, axis_data.size):
        outs = list(fun(*in_tracers))
        if callable(out_dims):
            out_dims = out_dims(len(outs))
        results = []
        for index, (out, dst) in enumerate(zip(outs, out_dims, strict=True)):
            val, src = trace.to_batch_info(out)
            with core.set_current_trace(parent):
                try:
                    results.append(matchaxis(axis_data, src, dst, val))
                except SpecMatchError:
                    raise SpecMatchError(index, src, dst) from None
    return results


def vmap_positional(fun: Callable[..., Any], in_axes: Sequence[int | None]
                    ) -> Callable[..., Any]:
    """`vmap(fun, in_axes)` for layers below the api: positional array arguments mapped along
    `in_axes` (ints or None), every output leaf (of any pytree) batched at axis 0.

    Args:
      fun: the function of one example.
      in_axes: one entry per positional argument (at least one not None).

    Returns:
      The batched function.
    """
    def batched(*args: Any) -> Any:
        size = next(core.get_aval(a).shape[ax]
                    for a, ax in zip(args, in_axes, strict=True) if ax is not None)
        axis_data = AxisData(no_axis_name, size)
        out_tree: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            leaves, tree = tree_util.tree_flatten(fun(*xs))
            out_tree.append(tree)
            return leaves

        outs = batch_flat(flat_fun, axis_data, list(in_axes), lambda count: [0] * count,
                          list(args))
        return tree_util.tree_unflatten(out_tree[0], outs)

    return batched


def batch_subtrace(fun: Callable, axis_data: AxisData, in_dims: Sequence[int | None],
                   args: Sequence[Any]) -> tuple[list[Any], list[int | None]]:
    """`fun(*args)` batched along `in_dims` under a fresh trace: its outputs and the batch
    axis each ended up with (None: unbatched), as the rule of a batched primitive needs
    when it vmaps a function of its own (JAX's `batch_subtrace`)."""
    return _run_subtrace(fun, core.TraceTag(), axis_data, in_dims, args)


def _run_subtrace(fun: Callable, tag: core.TraceTag, axis_data: AxisData,
                  in_dims: Sequence[int | None], args: Sequence[Any]
                  ) -> tuple[list[Any], list[int | None]]:
    # Runs on the current (parent) trace's values; the tag is the outer BatchTrace's, so
    # tracers the function closes over are recognized as batched.
    trace = BatchTrace(core.current_trace(), tag, axis_data)
    in_tracers = [a if d is None or type(a) is ad.Zero else BatchTracer(trace, a, d)
                  for a, d in zip(args, in_dims, strict=True)]
    with core.set_current_trace(trace):
        outs = fun(*in_tracers)
    pairs = [(o, None) if type(o) is ad.Zero else trace.to_batch_info(o) for o in outs]
    return [v for v, _ in pairs], [d for _, d in pairs]


def _batched_zero(zero: ad.Zero, dim: int | None, size: int) -> ad.Zero:
    return zero if dim is None else ad.Zero(unmapped_aval(size, dim, zero.aval))


def _unbatched_zero(zero: ad.Zero, dim: int | None) -> ad.Zero:
    return zero if dim is None else ad.Zero(remove_axis(zero.aval, dim))


class _BatchedCall:
    """What the batched versions of one custom-derivative call share: the inputs' batch
    dims, and the outputs' (and residuals') batch dims, fixed by whichever runs first so
    that the function and its rules agree however the parent trace uses them."""

    def __init__(self, tag: core.TraceTag, axis_data: AxisData, in_dims: list[int | None]
                 ) -> None:
        self.tag = tag
        self.axis_data = axis_data
        self.in_dims = in_dims
        self.out_dims: list[int | None] | None = None
        self.residual_dims: list[int | None] | None = None

    def run(self, fun: Callable, in_dims: Sequence[int | None], args: Sequence[Any]
            ) -> tuple[list[Any], list[int | None]]:
        return _run_subtrace(fun, self.tag, self.axis_data, in_dims, args)

    def settle(self, outs: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
        """The outputs batched along the call's output dims (these dims on the first run)."""
        if self.out_dims is None:
            self.out_dims = list(dims)
            return list(outs)
        return [self.match(v, src, dst) for v, src, dst in
                zip(outs, dims, self.out_dims, strict=True)]

    def match(self, value: Any, src: int | None, dst: int | None) -> Any:
        if type(value) is ad.Zero:
            return _batched_zero(_unbatched_zero(value, src), dst, self.axis_data.size)
        return matchaxis(self.axis_data, src, dst, value)


class _BatchedFun:
    """`fun` batched over the call's input dims."""

    def __init__(self, fun: Callable, call: _BatchedCall) -> None:
        self.fun = fun
        self.call = call
        self.name = getattr(fun, "name", None) or getattr(fun, "__name__", "fun")

    @property
    def debug_info(self) -> Any:
        return getattr(self.fun, "debug_info", None)

    def __call__(self, *args: Any) -> list[Any]:
        outs, dims = self.call.run(self.fun, self.call.in_dims, args)
        return self.call.settle(outs, dims)


class _BatchedJVP(_BatchedFun):
    """A custom JVP rule batched: tangents share their primals' dims; each primal output and
    its tangent leave batched alike (along the batched one's dim when only one is)."""

    def __call__(self, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
        call = self.call
        n = len(primals)
        tangent_dims = [None if type(t) is ad.Zero else d
                        for t, d in zip(tangents, call.in_dims, strict=True)]
        tangents = [_unbatched_zero(t, d) if type(t) is ad.Zero else t
                    for t, d in zip(tangents, call.in_dims, strict=True)]

        def flat(*values: Any) -> list[Any]:
            primal_out, tangent_out = self.fun(list(values[:n]), list(values[n:]))
            return [*primal_out, *tangent_out]

        outs, dims = call.run(flat, [*call.in_dims, *tangent_dims], [*primals, *tangents])
        half = len(outs) // 2
        if call.out_dims is None:
            call.out_dims = [p if p is not None else t for p, t in zip(dims[:half], dims[half:])]
        primal_out = [call.match(v, src, dst) for v, src, dst in
                      zip(outs[:half], dims[:half], call.out_dims, strict=True)]
        tangent_out = [call.match(v, src, dst) for v, src, dst in
                       zip(outs[half:], dims[half:], call.out_dims, strict=True)]
        return primal_out, tangent_out


class _BatchedFwd(_BatchedFun):
    """A custom VJP fwd rule batched: its residuals keep the dims they come out with."""

    def __call__(self, primals: Sequence[Any], which_linear: Sequence[bool]
                 ) -> tuple[list, list]:
        count: list[int] = []

        def flat(*values: Any) -> list[Any]:
            residuals, outs = self.fun(list(values), which_linear)
            count.append(len(residuals))
            return [*residuals, *outs]

        outs, dims = self.call.run(flat, self.call.in_dims, primals)
        self.call.residual_dims = dims[:count[0]]
        return outs[:count[0]], self.call.settle(outs[count[0]:], dims[count[0]:])


class _BatchedBwd(_BatchedFun):
    """A custom VJP bwd rule batched: residuals and cotangents arrive batched as fwd left
    them; the input cotangents leave batched as the inputs were, summed over the batch
    where an input was not mapped."""

    def __call__(self, residuals: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        call = self.call
        n = len(residuals)
        ct_dims = [None if type(c) is ad.Zero else d for c, d in zip(cts, call.out_dims)]
        cts = [_unbatched_zero(c, d) if type(c) is ad.Zero else c
               for c, d in zip(cts, call.out_dims, strict=True)]

        def flat(*values: Any) -> list[Any]:
            return list(self.fun(list(values[:n]), list(values[n:])))

        outs, dims = call.run(flat, [*call.residual_dims, *ct_dims], [*residuals, *cts])
        results = []
        for out, src, dst in zip(outs, dims, call.in_dims, strict=True):
            if type(out) is ad.Zero:
                # A symbolic zero has the per-example type; give it the input's batching.
                results.append(_batched_zero(out, dst, call.axis_data.size))
            else:
                results.append(matchaxis(call.axis_data, src, dst, out, sum_match=True))
        return results


def remove_axis(aval: ShapedArray, axis: int) -> ShapedArray:
    """`aval` without its axis `axis` (one example of a batch along it)."""
    return mapped_aval(aval.shape[axis], axis, aval)


class _ZeroIfMapped:
    def __repr__(self) -> str:
        return "zero_if_mapped"


# An output destination for `batch_jaxpr`: axis 0 if the output is mapped, else unmapped.
zero_if_mapped = _ZeroIfMapped()


def batch_jaxpr(closed: ClosedJaxpr, axis_data: AxisData, in_dims: Sequence[int | None],
                out_dims: Sequence[Any] | None = None
                ) -> tuple[ClosedJaxpr, list[int | None]]:
    """The jaxpr computing `closed` on inputs batched along `in_dims`, and its outputs' batch
    dims. `out_dims` forces them: an int moves or broadcasts an output there, None requires
    it unmapped, `zero_if_mapped` moves a mapped output to axis 0."""
    in_avals = [aval if d is None else unmapped_aval(axis_data.size, d, aval)
                for aval, d in zip(closed.in_avals, in_dims, strict=True)]
    found: list[list[int | None]] = []
    tag = core.TraceTag()

    def batched(*args: Any) -> list[Any]:
        outs, dims = _run_subtrace(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                   tag, axis_data, in_dims, args)
        if out_dims is not None:
            targets = [(None if src is None else 0) if dst is zero_if_mapped else dst
                       for src, dst in zip(dims, out_dims, strict=True)]
            outs = [matchaxis(axis_data, src, dst, v)
                    for v, src, dst in zip(outs, dims, targets, strict=True)]
            dims = targets
        found.append(list(dims))
        return outs

    jaxpr = staging.trace_to_jaxpr(batched, in_avals, closed.jaxpr.debug_info)
    return jaxpr, found[0]


# ---------------------------------------------------------------------------------------------
# Rules for the transforms' own primitives.

def _add_any_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Sequence[int | None]
                     ) -> tuple[Any, int]:
    x, y = vals
    dx, dy = dims
    dim = dx if dy is None else dy
    x = x if dx == dim else move_stacked_axis(x, dx, dim, axis_data.size)
    y = y if dy == dim else move_stacked_axis(y, dy, dim, axis_data.size)
    return ad.add_jaxvals_p.bind(x, y), dim


primitive_batchers[ad.add_jaxvals_p] = _add_any_batcher


def _custom_lin_batcher(axis_data: AxisData, vals: Sequence[Any], dims: Sequence[int | None],
                        **params: Any) -> Any:
    # custom_lin only has meaning when transposed; evaluating it batched is forward mode.
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


primitive_batchers[ad.custom_lin_p] = _custom_lin_batcher
