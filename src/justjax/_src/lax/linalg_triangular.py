"""Triangular solves and the LU decomposition: `triangular_solve_p`, `lu_p`,
`lu_pivots_to_permutation_p`, and `lu_solve` built on them.

`triangular_solve` is linear in its right-hand side (it has a transpose rule) and
differentiable in the matrix; `lu` returns the packed factors, LAPACK's row swaps
(`pivots`) and the permutation they amount to, with JAX's derivative of the factors (De
Hoog, Anderssen and Lukas). On CPU they lower to `lapack_?trsm_ffi` and `lapack_?getrf_ffi`.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from justjax._src.core.avals import ShapedArray
from justjax._src.config import config
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.compilation.jit import jit
from justjax._src.lax import dot, elementwise, slicing, sorting, structural
from justjax._src.lax import linalg_common as lc
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.solves import custom_linear_solve
from justjax._src.lax.utils import broadcast_shapes

__all__ = ["lu", "lu_p", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "lu_solve",
           "triangular_solve", "triangular_solve_p"]


# ---------------------------------------------------------------------------------------------
# triangular_solve

def _triangular_solve_shape_rule(a_shape: tuple[int, ...], b_shape: tuple[int, ...], *,
                                 left_side: bool = False, **_: Any) -> tuple[int, ...]:
    if a_shape[0] != a_shape[1]:
        raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a_shape}.")
    common_dim = -2 if left_side else -1
    if a_shape[-1] != b_shape[common_dim]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_shape} "
                         f"and {b_shape}.")
    return b_shape


triangular_solve_p = lc.linalg_primitive(
    "triangular_solve", lambda a, b, **_: a, (lc.FLOAT_OR_COMPLEX, lc.FLOAT_OR_COMPLEX), (2, 2),
    _triangular_solve_shape_rule)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """Solves `op(a) @ x = b` (`left_side`) or `x @ op(a) = b` for triangular `a`.

    `op(a)` is `a`, its transpose (`transpose_a`) or conjugate transpose (`transpose_a` and
    `conjugate_a`). Lowers to `stablehlo.custom_call @lapack_?trsm_ffi` (other element types:
    `stablehlo.triangular_solve`).

    Args:
      a: `[..., m, m]` triangular matrices; only the triangle `lower` names is read.
      b: `[..., m, n]` (`left_side`) or `[..., n, m]` matrices, or `[..., m]` vectors.
      left_side: which side of `x` `op(a)` multiplies.
      lower: whether `a` is lower (else upper) triangular.
      transpose_a: whether to transpose `a`.
      conjugate_a: whether to conjugate `a` (complex `a` only).
      unit_diagonal: whether `a`'s diagonal is taken to be ones (and not read).
    Returns:
      `x`, of `b`'s shape and dtype.
    """
    conjugate_a = conjugate_a and lc.is_complex(a)
    singleton = len(lc.shape(b)) == len(lc.shape(a)) - 1
    if singleton:
        b = structural.expand_dims(b, (-1 if left_side else -2,))
    out = triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                  transpose_a=transpose_a, conjugate_a=conjugate_a,
                                  unit_diagonal=unit_diagonal)
    if singleton:
        nd = len(lc.shape(out))
        index = (nd - 1,) if left_side else (nd - 2,)
        out = structural.squeeze(out, index)
    return out


def _triangular_solve_jvp_a(g_a: Any, ans: Any, a: Any, b: Any, *, left_side: bool,
                            lower: bool, transpose_a: bool, conjugate_a: bool,
                            unit_diagonal: bool) -> Any:
    """d x = -op(a)^-1 op(d a) x (left side), ordered so the cheaper product comes first."""
    m, n = lc.shape(b)[-2:]
    k = 1 if unit_diagonal else 0
    g_a = lc.tril(g_a, k=-k) if lower else lc.triu(g_a, k=k)
    g_a = elementwise.neg(g_a)
    g_a = lc.T(g_a) if transpose_a else g_a
    g_a = lc.conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve(a, rhs, left_side=left_side, lower=lower,
                                transpose_a=transpose_a, conjugate_a=conjugate_a,
                                unit_diagonal=unit_diagonal)

    if left_side:
        if m > n:
            return a_inverse(lc.dot_highest(g_a, ans))
        return lc.dot_highest(a_inverse(g_a), ans)
    if m < n:
        return a_inverse(lc.dot_highest(ans, g_a))
    return lc.dot_highest(ans, a_inverse(g_a))


def _triangular_solve_jvp_b(g_b: Any, ans: Any, a: Any, b: Any, **params: Any) -> Any:
    return triangular_solve(a, g_b, **params)


ad.defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, *, left_side: bool, lower: bool,
                                transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                                ) -> list[Any]:
    """Linear in `b` (as `div` in its numerator): the cotangent solves with `op(a)^T`."""
    assert not ad.is_undefined_primal(a) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    ct_b = triangular_solve(a, ct, left_side=left_side, lower=lower,
                            transpose_a=not transpose_a, conjugate_a=conjugate_a,
                            unit_diagonal=unit_diagonal)
    return [None, ct_b]


ad.primitive_transposes[triangular_solve_p] = _triangular_solve_transpose


def _triangular_solve_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                              dims: Sequence[int | None], **params: Any) -> tuple[Any, Any]:
    """JAX's rule: an unbatched `a` solves all right-hand sides at once (the batch folded into
    b's free dimension); otherwise both batch axes move to the front."""
    x, y = vals
    bx, by = dims
    if bx is None and by is None:
        return triangular_solve(x, y, **params), None
    if bx is None:
        if params["left_side"]:
            y = batching.moveaxis(y, by, -1)
            y_shape = lc.shape(y)
            y_flat = structural.reshape(y, y_shape[:-2] + (y_shape[-2] * y_shape[-1],))
            bdim_out = len(y_shape) - 1
        else:
            y = batching.moveaxis(y, by, -2)
            y_shape = lc.shape(y)
            y_flat = structural.reshape(
                y, y_shape[:-3] + (y_shape[-3] * y_shape[-2], y_shape[-1]))
            bdim_out = len(y_shape) - 2
        out_flat = triangular_solve(x, y_flat, **params)
        return structural.reshape(out_flat, lc.shape(y)), bdim_out
    x = batching.bdim_at_front(x, bx, axis_data.size)
    y = batching.bdim_at_front(y, by, axis_data.size)
    return triangular_solve(x, y, **params), 0


batching.primitive_batchers[triangular_solve_p] = _triangular_solve_batcher


def _triangular_solve_lowering(ctx: lowering.LoweringRuleContext, a: ir.Value, b: ir.Value, *,
                               left_side: bool, lower: bool, transpose_a: bool,
                               conjugate_a: bool, unit_diagonal: bool) -> ir.Value:
    """`lapack_?trsm_ffi` (b's buffer reused for x); `stablehlo.triangular_solve` for element
    types LAPACK lacks. A conjugated, untransposed `a` is conjugated first (`chlo.conj`)."""
    builder = ctx.builder
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a:
        a = builder.one("chlo.conj", [a], a.type)
        conjugate_a = False
    if a_aval.dtype in lc._LAPACK_PREFIX:
        target = lc.lapack_target("trsm_ffi", a_aval.dtype)
        trans = ("C" if conjugate_a else "T") if transpose_a else "N"
        config = {"side": lc.char("L" if left_side else "R"),
                  "uplo": lc.char("L" if lower else "U"), "trans_x": lc.char(trans),
                  "diag": lc.char("U" if unit_diagonal else "N")}
        return lc.ffi_call(ctx, target, [a, b], [b_aval], {1: 0}, config)[0]
    transpose = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    return builder.one("stablehlo.triangular_solve", [a, b], lowering.aval_to_type(b_aval),
                       left_side=bool(left_side), lower=bool(lower),
                       transpose_a=ir.Enum("transpose", transpose),
                       unit_diagonal=bool(unit_diagonal))


lowering.register_lowering(triangular_solve_p, _triangular_solve_lowering)


# ---------------------------------------------------------------------------------------------
# lu_pivots_to_permutation

def _pivots_shape_rule(shape: tuple[int, ...], *, permutation_size: int) -> tuple[int, ...]:
    pivots_size, = shape
    if not permutation_size >= pivots_size:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                         f"trailing dimension of the pivots. Got pivots size {pivots_size}")
    return (permutation_size,)


lu_pivots_to_permutation_p = lc.linalg_primitive(
    "lu_pivots_to_permutation", lambda d, **_: d, (lc.INT32,), (1,), _pivots_shape_rule)
# Integer in, integer out: no tangent flows through it.
ad.defjvp_zero(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that LU's row swaps amount to.

    Args:
      pivots: `[..., k]` int32 row swaps (row i was swapped with row `pivots[i]`, in order).
      permutation_size: the size `m >= k` of the permutation.
    Returns:
      `[..., m]` int32: the original row at each position.
    """
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=permutation_size)


def _swap_rows(i: Any, permutation: Any, swaps: Any) -> Any:
    """One step for one vector: permutation[i] and permutation[swaps[i]] trade places."""
    j = swaps[i]
    x = permutation[i]
    y = permutation[j]
    permutation = permutation.at[i].set(y)
    return permutation.at[j].set(x)


def _swap_step(i: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
    permutation, swaps = carry
    batch_rank = len(lc.shape(swaps)) - 1
    step = lc.vmap_leading(_swap_rows, batch_rank, (None, 0, 0))
    return step(i, permutation, swaps), swaps


def _pivots_to_permutation(swaps: Any, permutation_size: int) -> Any:
    """The swaps applied in order to `iota`, one loop step per swap (JAX's generic
    implementation: a loop is differentiable where row swaps applied to a matrix are not)."""
    *batch, k = lc.shape(swaps)
    m = permutation_size
    permutation = structural.broadcasted_iota(np.int32, (*batch, m), len(batch))
    if m == 0 or k == 0:
        return permutation
    result, _ = fori_loop(np.array(0, np.int32), np.array(k, np.int32), _swap_step,
                          (permutation, swaps))
    return result


lowering.register_lowering(
    lu_pivots_to_permutation_p,
    lowering.lower_fun(_pivots_to_permutation, multiple_results=False))


# ---------------------------------------------------------------------------------------------
# lu

def _lu_shape_rule(shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    m, n = shape
    return shape, (min(m, n),), (m,)


lu_p = lc.linalg_primitive(
    "lu", lambda d, **_: (d, np.dtype(np.int32), np.dtype(np.int32)), (lc.FLOAT_OR_COMPLEX,),
    (2,), _lu_shape_rule, multiple_results=True)


def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting: `P @ x = L @ U`.

    Lowers to `stablehlo.custom_call @lapack_?getrf_ffi`.

    Args:
      x: `[..., m, n]` matrices.
    Returns:
      `(lu, pivots, permutation)`: `L` (unit diagonal not stored) below and `U` on and above
      the diagonal of `lu`; the int32 row swaps `[..., min(m, n)]`; the int32 permutation
      `[..., m]` they amount to (`x[permutation] = L @ U`).
    """
    return tuple(lu_p.bind(x))


def _lu_jvp_inner(lu_: Any, a_dot: Any, permutation: Any) -> Any:
    """L' = L tril(L^-1 P A' U^-1, -1) and U' = triu(L^-1 P A' U^-1) U, for one matrix (De
    Hoog, Anderssen and Lukas)."""
    m, n = lc.shape(a_dot)
    dt = lc.dtype(a_dot)
    k = min(m, n)
    zero = np.array(0, lc.dtype(lu_))
    l_ = slicing.pad(lc.tril(lu_[:, :k], -1), zero, ((0, 0, 0), (0, m - k, 0)))
    l_ = l_ + lc.eye(dt, m)
    u_eye = slicing.pad(lc.eye(dt, n - k), zero, ((k, 0, 0), (k, 0, 0)))
    u_ = slicing.pad(lc.triu(lu_[:k, :]), zero, ((0, n - k, 0), (0, 0, 0))) + u_eye
    la = triangular_solve(l_, a_dot[permutation], left_side=True, transpose_a=False,
                          lower=True, unit_diagonal=True)
    lau = triangular_solve(u_, la, left_side=False, transpose_a=False, lower=False)
    with config.override("jax_default_matmul_precision", "highest"):
        l_dot = l_ @ lc.tril(lau, -1)
        u_dot = lc.triu(lau) @ u_
    return l_dot + u_dot


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    a, = primals
    a_dot, = tangents
    lu_, pivots, permutation = lu_p.bind(a)
    a_dot = ad.instantiate_zeros(a_dot)
    batch_rank = len(lc.shape(a)) - 2
    lu_dot = lc.vmap_leading(_lu_jvp_inner, batch_rank, (0, 0, 0))(lu_, a_dot, permutation)
    return [lu_, pivots, permutation], [lu_dot, ad.Zero.from_primal_value(pivots),
                                        ad.Zero.from_primal_value(permutation)]


ad.primitive_jvps[lu_p] = _lu_jvp


def _lu_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value) -> list[ir.Value]:
    """`lapack_?getrf_ffi`, pivots made 0-based, NaNs where `info < 0`, and the permutation
    computed from the pivots."""
    b = ctx.builder
    operand_aval, = ctx.avals_in
    out_aval, pivot_aval, perm_aval = ctx.avals_out
    batch = operand_aval.shape[:-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    target = lc.lapack_target("getrf_ffi", operand_aval.dtype)
    lu_, pivot, info = lc.ffi_call(ctx, target, [operand], [out_aval, pivot_aval, info_aval],
                                   {0: 0})
    pivot = b.one("stablehlo.subtract", [pivot, lc.full_value(b, 1, pivot_aval)], pivot.type)
    ok = lc.info_ok(b, info, "GE")
    lu_ = lc.replace_not_ok_with_nan(b, batch, ok, lu_, out_aval)
    m = operand_aval.shape[-2]
    sub_ctx = ctx.replace(primitive=None, avals_in=(pivot_aval,), avals_out=(perm_aval,))
    perm_rule = lowering.lower_fun(lambda x: lu_pivots_to_permutation(x, m),
                                   multiple_results=False)
    perm = perm_rule(sub_ctx, pivot)
    return [lu_, pivot, perm]


lowering.register_lowering(lu_p, _lu_lowering)


# ---------------------------------------------------------------------------------------------
# lu_solve

def _lu_solve_core(lu_: Any, permutation: Any, b: Any, trans: int) -> Any:
    m = lc.shape(lu_)[0]
    b_shape = lc.shape(b)
    x = structural.reshape(b, (m, math.prod(b_shape[1:])))
    if trans == 0:
        x = lc.take_rows(x, permutation)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        x = triangular_solve(lu_, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = triangular_solve(lu_, x, left_side=True, lower=False, transpose_a=True,
                             conjugate_a=conj)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                             transpose_a=True, conjugate_a=conj)
        _, inverse = sorting.sort_key_val(permutation, structural.iota(np.int32, m))
        x = lc.take_rows(x, inverse)
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return structural.reshape(x, b_shape)


def _broadcast_batch(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for sizes in zip(*padded, strict=True):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    x_shape = lc.shape(x)
    if x_shape == shape:
        return x
    return structural.broadcast_in_dim(x, shape, tuple(range(len(shape) - len(x_shape),
                                                             len(shape))))


@jit(static_argnums=(3,))
def _lu_solve(lu_: Any, permutation: Any, b: Any, trans: int) -> Any:
    lu_shape, b_shape = lc.shape(lu_), lc.shape(b)
    if len(lu_shape) < 2 or lu_shape[-1] != lu_shape[-2]:
        raise ValueError("last two dimensions of LU decomposition must be equal, got shape "
                         f"{lu_shape}")
    if len(b_shape) < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {b_shape}")
    rhs_vector = len(lu_shape) == len(b_shape) + 1
    if rhs_vector:
        if b_shape[-1] != lu_shape[-1]:
            raise ValueError("When LU decomposition matrix and b have the same number of "
                             "dimensions, last axis of LU decomposition matrix (shape "
                             f"{lu_shape}) and b array (shape {b_shape}) must match")
        b = structural.expand_dims(b, (len(b_shape),))
    elif b_shape[-2] != lu_shape[-1]:
        raise ValueError("When LU decomposition matrix and b different numbers of dimensions, "
                         f"last axis of LU decomposition matrix (shape {lu_shape}) and second "
                         f"to last axis of b array (shape {b_shape}) must match")
    b_shape = lc.shape(b)
    batch = _broadcast_batch([lu_shape[:-2], lc.shape(permutation)[:-1], b_shape[:-2]])
    lu_ = _broadcast_to(lu_, (*batch, *lu_shape[-2:]))
    permutation = _broadcast_to(permutation, (*batch, lc.shape(permutation)[-1]))
    b = _broadcast_to(b, (*batch, *b_shape[-2:]))
    x = lc.vmap_leading(lambda l_, p, y: _lu_solve_core(l_, p, y, trans), len(batch),
                        (0, 0, 0))(lu_, permutation, b)
    if rhs_vector:
        x = structural.squeeze(x, (len(lc.shape(x)) - 1,))
    return x


def lu_solve(lu_: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """Solves `a @ x = b` (trans 0), `a^T @ x = b` (1) or `a^H @ x = b` (2) from `lu(a)`.

    Args:
      lu_, permutation: the first and last results of `lu(a)`.
      b: `[..., m]` vectors (one dimension fewer than `lu_`) or `[..., m, k]` matrices; the
        batch dimensions broadcast.
      trans: 0, 1 or 2.
    Returns:
      `x`, of `b`'s shape (batch dimensions broadcast).
    """
    return _lu_solve(lu_, permutation, b, trans)


# ---------------------------------------------------------------------------------------------
# General solves, differentiated implicitly.

def check_solve_shapes(a: Any, b: Any) -> None:
    """JAX's check of `solve(a, b)`'s shapes: `a` `[..., m, m]`, `b` `[..., m]` or
    `[..., m, k]`."""
    a_shape, b_shape = lc.shape(a), lc.shape(b)
    if not (len(a_shape) >= 2 and len(b_shape) in (len(a_shape), len(a_shape) - 1)
            and a_shape[-1] == a_shape[-2] == b_shape[len(a_shape) - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a_shape} and b={b_shape}")


def broadcasted_matvec(a: Any, b: Any) -> Any:
    """`a @ b` for matrices `a` `[..., n, m]` and vectors `b` `[..., m]` (batch dimensions
    broadcast), one `dot_general` at HIGHEST precision."""
    batch = broadcast_shapes(lc.shape(a)[:-2], lc.shape(b)[:-1])
    a = _broadcast_to(a, (*batch, *lc.shape(a)[-2:]))
    b = _broadcast_to(b, (*batch, lc.shape(b)[-1]))
    nb = len(batch)
    dims = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    return dot.dot_general(a, b, dims, precision=dot.Precision.HIGHEST)


def solve(a: Any, b: Any) -> Any:
    """`a^-1 b` from `lu(a)` through `custom_linear_solve`, so that derivatives reuse the
    factorization (x' = a^-1 (b' - a' x)) instead of differentiating it (JAX's
    `lax.linalg._solve`).

    Args:
      a: `[..., m, m]` matrices.
      b: `[..., m]` vectors or `[..., m, k]` matrices (b's size-1 batch dimensions
        broadcast to a's).
    Returns:
      `x`, of b's (broadcast) shape.
    """
    check_solve_shapes(a, b)
    a_shape, b_shape = lc.shape(a), lc.shape(b)
    out_shape = tuple(d_a if d_b == 1 else d_b
                      for d_a, d_b in zip(a_shape[:-1] + (1,), b_shape, strict=False))
    b = structural.broadcast_in_dim(b, out_shape, tuple(range(len(b_shape))))
    lu_, _, permutation = lu(structural.stop_gradient(a))

    def solve_one(x: Any) -> Any:
        return custom_linear_solve(
            lambda y: broadcasted_matvec(a, y), x,
            solve=lambda _, y: lu_solve(lu_, permutation, y, trans=0),
            transpose_solve=lambda _, y: lu_solve(lu_, permutation, y, trans=1))

    if len(a_shape) == len(out_shape) + 1:
        return solve_one(b)
    # Matrices b: one solve per column, mapped over the last axis.
    column = len(out_shape) - 1
    out = batching.vmap_positional(solve_one, (column,))(b)
    return _moveaxis(out, 0, max(len(a_shape), len(out_shape)) - 1)


def _moveaxis(x: Any, src: int, dst: int) -> Any:
    perm = list(range(len(lc.shape(x))))
    perm.insert(dst, perm.pop(src))
    return structural.transpose(x, tuple(perm))
