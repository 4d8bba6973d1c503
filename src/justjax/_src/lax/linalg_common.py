"""What the linear-algebra primitives share: their abstract evaluation and batching (leading
batch dimensions), matrix helpers written with lax, and the lowering to LAPACK custom calls.

Every linear-algebra primitive takes matrices with leading batch dimensions (`[..., m, n]`),
so one batching rule serves them all: the batch axis moves to the front. On CPU each lowers,
as in JAX, to `stablehlo.custom_call @lapack_<t><routine>_ffi` (t = s, d, c, z) with the
matrices in column-major layout, an `info` result checked afterwards and results replaced
by NaNs where LAPACK failed.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo import ir
from justjax._src.interpreters import batching, lowering
from justjax._src.lax import dot, elementwise, selection, structural

# The accepted dtype classes, with the names JAX's errors give them.
FLOAT_OR_COMPLEX = (tuple(dtypes.FLOAT_TYPES) + tuple(dtypes.COMPLEX_TYPES),
                    "floating, complexfloating")
INTEGER = (tuple(dtypes.INT_TYPES), "integer")
INT32 = ((np.dtype(np.int32),), "int32")

ShapeRule = Callable[..., Any]
DtypeRule = Callable[..., Any]


# ---------------------------------------------------------------------------------------------
# Abstract evaluation and batching.

def _batch_and_core_shapes(name: str, avals: Sequence[ShapedArray], ranks: Sequence[int],
                           supports_batching: bool
                           ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """JAX's `linalg_shape_rule` checks: each operand has at least its core rank, and all
    have the same number of leading batch dimensions."""
    batch_shapes, core_shapes = [], []
    for i, (rank, aval) in enumerate(zip(ranks, avals, strict=True)):
        shape = aval.shape
        if len(shape) < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={shape}")
        if not supports_batching and len(shape) != rank:
            raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got "
                            f"shape={shape}")
        batch_shapes.append(shape[:len(shape) - rank])
        core_shapes.append(shape[len(shape) - rank:])
    if any(len(b) != len(batch_shapes[0]) for b in batch_shapes):
        raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, "
                        f"but got {[len(b) for b in batch_shapes]} batch dimensions for the "
                        "inputs.")
    return tuple(batch_shapes[0]), core_shapes


def _check_dtypes(name: str, avals: Sequence[ShapedArray],
                  accepted: Sequence[tuple[tuple[np.dtype, ...], str]], require_same: bool
                  ) -> None:
    """JAX's `naryop_dtype_rule` checks, with its messages."""
    for i, (aval, (types, type_names)) in enumerate(zip(avals, accepted, strict=True)):
        if aval.dtype in types:
            continue
        if aval.dtype == dtypes.float0:
            raise TypeError(
                f"Called {name} with a float0 at position {i}. float0s do not support any "
                "operations by design, because they are not compatible with non-trivial "
                "vector spaces. No implicit dtype conversion is done. You can use "
                "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros "
                "array. \nIf you didn't expect to get a float0 you might have accidentally "
                "taken a gradient with respect to an integer argument.")
        raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(aval.dtype)} at "
                        f"position {i}. Accepted dtypes at position {i} are subtypes of "
                        f"{type_names}.")
    if require_same and len({a.dtype for a in avals}) > 1:
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(dtypes.dtype_name(a.dtype) for a in avals)}.")


def linalg_primitive(name: str, dtype_rule: DtypeRule,
                     accepted: Sequence[tuple[tuple[np.dtype, ...], str]], ranks: Sequence[int],
                     shape_rule: ShapeRule, *, multiple_results: bool = False,
                     supports_batching: bool = True, require_same: bool = True) -> Primitive:
    """A primitive on matrices with leading batch dimensions, as JAX's `linalg_primitive`.

    Args:
      name: the primitive's name.
      dtype_rule: `dtype_rule(*dtypes, **params)` gives the result dtype (a tuple of them for
        several results).
      accepted: per operand, the accepted dtypes and their names for errors.
      ranks: per operand, the rank of its core (non-batch) part.
      shape_rule: `shape_rule(*core_shapes, **params)` gives the core shape of the result (a
        tuple of them for several results); the batch shape is prepended.
      multiple_results: whether the primitive has several results.
      supports_batching: whether operands may have batch dimensions (and a batching rule is
        registered).
      require_same: whether all operands must have one dtype.
    Returns:
      The primitive, with its abstract evaluation, eager implementation and batching rule.
    """
    prim = Primitive(name, multiple_results=multiple_results)

    def abstract_eval(*avals: ShapedArray, **params: Any) -> Any:
        batch, core_shapes = _batch_and_core_shapes(name, avals, ranks, supports_batching)
        shapes = shape_rule(*core_shapes, **params)
        _check_dtypes(name, avals, accepted, require_same)
        out_dtypes = dtype_rule(*[a.dtype for a in avals], **params)
        weak = bool(avals) and all(a.weak_type for a in avals)
        if not multiple_results:
            return ShapedArray(batch + tuple(shapes), out_dtypes, weak)
        return [ShapedArray(batch + tuple(s), d, weak)
                for s, d in zip(shapes, out_dtypes, strict=True)]

    prim.def_abstract_eval(abstract_eval)
    dispatch.def_backend_impl(prim)
    if supports_batching:
        batching.primitive_batchers[prim] = _expand_dims_batcher(prim)
    return prim


def _expand_dims_batcher(prim: Primitive) -> Callable[..., Any]:
    """JAX's `expand_dims_batcher`: every operand's batch axis moves to the front (unmapped
    operands are broadcast there), where the primitive takes batch dimensions anyway."""
    def batcher(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
                **params: Any) -> tuple[Any, Any]:
        size = next(core.get_aval(x).shape[d] for x, d in zip(vals, dims, strict=True)
                    if d is not None)
        args = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True)]
        out = prim.bind(*args, **params)
        if prim.multiple_results:
            return out, [0] * len(out)
        return out, 0

    return batcher


def vmap_leading(fun: Callable[..., Any], num_dims: int, in_axes: Sequence[int | None]
                 ) -> Callable[..., Any]:
    """`fun` vmapped `num_dims` times over the leading axis of the arguments whose `in_axes`
    entry is 0 (None: not mapped); outputs batched along their leading axes. The ops layer has
    no `api.vmap`, so this drives `batching.batch_flat` directly."""
    def single(*args: Any) -> Any:
        out = fun(*args)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    batched = single
    for _ in range(num_dims):
        batched = batching.vmap_positional(batched, in_axes)

    def call(*args: Any) -> Any:
        outs = batched(*args)
        return outs[0] if len(outs) == 1 else outs

    return call


# ---------------------------------------------------------------------------------------------
# Matrix helpers, written with lax as JAX's linalg writes them.

def shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def is_complex(x: Any) -> bool:
    return dtypes.is_complex(dtype(x))


def T(x: Any) -> Any:
    """`x` with its last two axes swapped."""
    ndim = len(shape(x))
    return structural.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def H(x: Any) -> Any:
    """The conjugate transpose of the last two axes (just the transpose for real `x`)."""
    return conj(T(x))


def conj(x: Any) -> Any:
    """`x.conj()` as JAX's Array method: a no-op on real arrays."""
    return elementwise.conj(x) if is_complex(x) else x


def real(x: Any) -> Any:
    """`x.real` as JAX's Array method: a no-op on real arrays."""
    return elementwise.real(x) if is_complex(x) else x


def symmetrize(x: Any) -> Any:
    """`(x + x^H) / 2`."""
    return elementwise.div(elementwise.add(x, H(x)), np.array(2, dtype(x)))


def full_like(x: Any, value: Any, dims: Sequence[int] | None = None) -> Any:
    """`lax.full_like(x, value)`: a scalar of `x`'s dtype broadcast to `x`'s shape (or
    `dims`)."""
    fill = structural.convert_element_type(value, dtype(x), False)
    return structural.broadcast(fill, shape(x) if dims is None else tuple(dims))


def broadcast_batch(x: Any, batch: Sequence[int]) -> Any:
    """`lax.broadcast(x, batch)`: leading `batch` dimensions added (nothing when empty)."""
    if not batch:
        return x
    return structural.broadcast(x, tuple(batch))


def tri(rows: int, cols: int, k: int) -> Any:
    """JAX's `lax._tri(bool, (rows, cols), k)`: True at and below the k-th diagonal. The
    offset is a default integer, so with x64 the iotas are int64."""
    index_dtype = dtypes.default_int_dtype()
    row = structural.broadcasted_iota(index_dtype, (rows, cols), 0)
    shifted = elementwise.add(row, np.array(k, index_dtype))
    return elementwise.ge(shifted, structural.broadcasted_iota(index_dtype, (rows, cols), 1))


def eye(dt: Any, n: int, m: int | None = None) -> Any:
    """JAX's `lax._eye(dtype, (n, m))`: ones on the diagonal."""
    m = n if m is None else m
    row = structural.broadcasted_iota(np.int32, (n, m), 0)
    shifted = elementwise.add(row, np.int32(0))
    on_diagonal = elementwise.eq(shifted, structural.broadcasted_iota(np.int32, (n, m), 1))
    return structural.convert_element_type(on_diagonal, dt)


def tril(m: Any, k: int = 0) -> Any:
    """The part of `m` at and below the k-th diagonal, zeros elsewhere."""
    *batch, rows, cols = shape(m)
    mask = tri(rows, cols, k)
    return selection.select(broadcast_batch(mask, batch), m, full_like(m, 0))


def triu(m: Any, k: int = 0) -> Any:
    """The part of `m` at and above the k-th diagonal, zeros elsewhere."""
    *batch, rows, cols = shape(m)
    mask = tri(rows, cols, k - 1)
    return selection.select(broadcast_batch(mask, batch), full_like(m, 0), m)


def extract_diagonal(x: Any) -> Any:
    """`x[..., i, i]` for i < min(m, n): the diagonals of a batch of matrices (a gather)."""
    rows, cols = shape(x)[-2:]
    i = structural.iota(np.int32, min(rows, cols))
    return x[..., i, i]


def construct_diagonal(s: Any) -> Any:
    """Diagonal matrices `[..., n, n]` with `s` (`[..., n]`) on their diagonals (a
    scatter into zeros)."""
    n = shape(s)[-1]
    i = structural.iota(np.int32, n)
    zeros = structural.broadcast(structural.convert_element_type(0, dtype(s)), (*shape(s), n))
    return zeros.at[..., i, i].set(s)


def dot_highest(a: Any, b: Any) -> Any:
    """`lax.dot` (unbatched) or `lax.batch_matmul` at HIGHEST precision, as JAX's rules
    multiply."""
    highest = dot.Precision.HIGHEST
    if len(shape(a)) == 2:
        return dot.dot(a, b, precision=highest)
    return dot.batch_matmul(a, b, precision=highest)


def expand_leading(x: Any, batch_rank: int) -> Any:
    """`lax.expand_dims(x, range(batch_rank))`."""
    return structural.expand_dims(x, tuple(range(batch_rank)))


def take_rows(x: Any, rows: Any) -> Any:
    """`x[rows, :]` for a matrix `x` and an int32 vector `rows`, indexed as jax.numpy
    indexes (negative rows wrap, one `gather`), as JAX's linalg code writes it."""
    return x[rows, :]


# ---------------------------------------------------------------------------------------------
# Lowering to LAPACK custom calls.

_LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                  np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def lapack_target(routine: str, dt: np.dtype) -> str:
    """`lapack_<t><routine>`; JAX's NotImplementedError for element types LAPACK lacks."""
    prefix = _LAPACK_PREFIX.get(np.dtype(dt))
    if prefix is None:
        raise NotImplementedError(KeyError(np.dtype(dt).type), f"Unsupported dtype {dt}.")
    return f"lapack_{prefix}{routine}"


def _column_major(rank: int) -> tuple[int, ...]:
    """The minor-to-major layout of a batch of Fortran-order matrices."""
    return (rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))


def _row_major(rank: int) -> tuple[int, ...]:
    return tuple(range(rank - 1, -1, -1))


def _sharding_rule(num_batch: int, in_types: Sequence[ir.TensorType],
                   out_types: Sequence[ir.TensorType]) -> ir.ShardingRule:
    """Shardy's rule for a batched custom call: the batch dimensions are shared factors (the
    first ones), every other dimension a factor of its own."""
    sizes: list[int] = list(in_types[0].shape[:num_batch])
    batch = tuple(range(num_batch))

    def factors(t: ir.TensorType) -> tuple[int, ...]:
        own = []
        for size in t.shape[num_batch:]:
            own.append(len(sizes))
            sizes.append(size)
        return batch + tuple(own)

    operands = tuple(factors(t) for t in in_types)
    results = tuple(factors(t) for t in out_types)
    return ir.ShardingRule(operands, results, tuple(sizes))


def ffi_call(ctx: lowering.LoweringRuleContext, target: str, operands: Sequence[ir.Value],
             out_avals: Sequence[ShapedArray], aliases: dict[int, int],
             config: dict[str, Any] | None = None, num_non_batch_dims: int = 2
             ) -> list[ir.Value]:
    """`stablehlo.custom_call @target` as JAX's `_linalg_ffi_lowering` emits it.

    Operands and results of the largest rank are column-major matrices, the others
    row-major; `aliases` maps operand indices to the result indices that may reuse them;
    `config` (characters as uint8) is the handler's attribute dictionary.
    """
    in_types = [v.type for v in operands]
    out_types = [lowering.aval_to_type(a) for a in out_avals]
    max_rank = max(t.rank for t in in_types)

    def layout(t: ir.TensorType) -> ir.IndexArray:
        order = _column_major(t.rank) if t.rank == max_rank else _row_major(t.rank)
        return ir.IndexArray(order)

    num_batch = max_rank - num_non_batch_dims
    single = len(out_types) == 1
    attributes = {
        "call_target_name": target,
        "backend_config": "",
        "mhlo.backend_config": dict(config or {}),
        "mhlo.frontend_attributes": {"num_batch_dims": str(num_batch)},
        "operand_layouts": tuple(layout(t) for t in in_types),
        "result_layouts": tuple(layout(t) for t in out_types),
        "output_operand_aliases": tuple(
            ir.OutputOperandAlias(() if single else (out,), operand)
            for operand, out in sorted(aliases.items())),
        "sdy.sharding_rule": _sharding_rule(num_batch, in_types, out_types),
    }
    op = ctx.builder.op("stablehlo.custom_call", list(operands), out_types, attributes)
    return list(op.results)


def char(c: str) -> np.uint8:
    """A character attribute of a LAPACK handler (`uplo = 76 : ui8`)."""
    return np.uint8(ord(c))


def full_value(b: ir.Builder, value: Any, aval: ShapedArray) -> ir.Value:
    """JAX's `mlir.full_like_aval`: a scalar constant and a `broadcast_in_dim` of it (even to
    a scalar)."""
    scalar = lowering.constant(b, np.array(value, lowering.aval_to_type(aval).dtype))
    return lowering.broadcast_in_dim(b, scalar, aval.shape, ())


def info_ok(b: ir.Builder, info: ir.Value, direction: str = "EQ") -> ir.Value:
    """`info <direction> 0`, LAPACK's success test."""
    zeros = full_value(b, 0, ShapedArray(info.type.shape, np.dtype(np.int32)))
    return lowering.compare(b, info, zeros, direction)


def replace_not_ok_with_nan(b: ir.Builder, batch: Sequence[int], ok: ir.Value, x: ir.Value,
                            aval: ShapedArray) -> ir.Value:
    """`x` where `ok`, NaNs elsewhere (a failed batch element is all NaN)."""
    nb = len(batch)
    select_shape = tuple(batch) + (1,) * (len(aval.shape) - nb)
    which = lowering.broadcast_in_dim(b, ok, select_shape, range(nb))
    nan = np.nan + np.nan * 1j if dtypes.is_complex(aval.dtype) else np.nan
    nans = full_value(b, nan, aval)
    if select_shape != aval.shape:
        which = lowering.broadcast_in_dim(b, which, aval.shape, range(len(aval.shape)))
    return b.one("stablehlo.select", [which, x, nans], lowering.aval_to_type(aval))
