"""Linear algebra on structured matrices: `tridiagonal_p` (reduction of a Hermitian matrix to
tridiagonal form), `tridiagonal_solve_p`, `cholesky_update_p` (rank-1 update of a Cholesky
factor), `symmetric_product_p` (`alpha A A^T + beta C`) and `ormqr_p` (products with the `Q`
of a compact QR factorization).

On CPU, as in JAX: `tridiagonal`, `tridiagonal_solve` and `ormqr` lower to LAPACK custom
calls (`lapack_?sytrd_ffi` / `hetrd`, `lapack_?gtsv_ffi`, `lapack_?ormqr_ffi` / `unmqr`);
`cholesky_update` and `symmetric_product` lower to their definitions written with lax.
`tridiagonal_solve` is linear in its right-hand side (it has a transpose rule) and
differentiable in the diagonals; the others have no derivative in JAX.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.core.avals import ShapedArray
from justjax._src.core import core
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import dot, elementwise, selection, structural
from justjax._src.lax import linalg_common as lc
from justjax._src.lax.control_flow.conditionals import cond
from justjax._src.core import dtypes

__all__ = ["cholesky_update", "cholesky_update_p", "ormqr", "ormqr_p", "symmetric_product",
           "symmetric_product_p", "tridiagonal", "tridiagonal_p", "tridiagonal_solve",
           "tridiagonal_solve_p"]

FLOAT = (tuple(dtypes.FLOAT_TYPES), "floating")


def _info_aval(batch: Sequence[int]) -> ShapedArray:
    return ShapedArray(tuple(batch), np.dtype(np.int32))


def _real_dtype(dt: np.dtype) -> np.dtype:
    return dtypes.real_dtype(dt) if dtypes.is_complex(dt) else np.dtype(dt)


# ---------------------------------------------------------------------------------------------
# tridiagonal

def _tridiagonal_shape_rule(shape: tuple[int, ...], **_: Any) -> tuple[tuple[int, ...], ...]:
    if shape[0] != shape[1] or shape[1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {shape}.")
    n = shape[0]
    return shape, (n,), (n - 1,), (n - 1,)


def _tridiagonal_dtype_rule(dt: np.dtype, **_: Any) -> tuple[np.dtype, ...]:
    real = _real_dtype(dt)
    return dt, real, real, dt


tridiagonal_p = lc.linalg_primitive("tridiagonal", _tridiagonal_dtype_rule,
                                    (lc.FLOAT_OR_COMPLEX,), (2,), _tridiagonal_shape_rule,
                                    multiple_results=True)


def tridiagonal(a: Any, *, lower: bool = True) -> list[Any]:
    """Reduces Hermitian (symmetric if real) matrices to tridiagonal form.

    Lowers to `stablehlo.custom_call @lapack_?sytrd_ffi` (`hetrd` for complex).

    Args:
      a: `[..., n, n]` matrices (n >= 1); only the triangle `lower` names is read.
      lower: which triangle of `a` to use.
    Returns:
      `[a, d, e, taus]`: the reduced matrix with the Householder reflectors beyond the first
      sub- (super-) diagonal, its real diagonal `d` and off-diagonal `e`, and the reflectors'
      scale factors `taus`.
    """
    return tridiagonal_p.bind(a, lower=lower)


def _tridiagonal_lowering(ctx: lowering.LoweringRuleContext, a: ir.Value, *, lower: bool
                          ) -> list[ir.Value]:
    a_aval, = ctx.avals_in
    batch = a_aval.shape[:-2]
    routine = "hetrd_ffi" if dtypes.is_complex(a_aval.dtype) else "sytrd_ffi"
    avals = [*ctx.avals_out, _info_aval(batch)]
    *values, info = lc.ffi_call(ctx, lc.lapack_target(routine, a_aval.dtype), [a], avals,
                                {0: 0}, {"uplo": lc.char("L" if lower else "U")})
    b = ctx.builder
    ok = lc.info_ok(b, info)
    return [lc.replace_not_ok_with_nan(b, batch, ok, v, aval)
            for v, aval in zip(values, ctx.avals_out, strict=True)]


lowering.register_lowering(tridiagonal_p, _tridiagonal_lowering)


# ---------------------------------------------------------------------------------------------
# tridiagonal_solve

def _tridiagonal_solve_shape_rule(dl: tuple[int, ...], d: tuple[int, ...],
                                  du: tuple[int, ...], b: tuple[int, ...], **_: Any
                                  ) -> tuple[int, ...]:
    if dl != d or dl != du:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                        "shape.")
    if dl != b[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        "equal the dimensions of the diagonal arguments.")
    return b


tridiagonal_solve_p = lc.linalg_primitive(
    "tridiagonal_solve", lambda *ds, **_: ds[0], (lc.FLOAT_OR_COMPLEX,) * 4, (1, 1, 1, 2),
    _tridiagonal_solve_shape_rule)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Any:
    """Solves the tridiagonal system `A X = B`.

    Lowers to `stablehlo.custom_call @lapack_?gtsv_ffi` (LU with partial pivoting;
    `tridiagonal_solve_perturbed_ffi` with `perturb_singular`).

    Args:
      dl: `[..., m]` lower diagonal, `dl[i] = A[i, i-1]` (`dl[0]` is 0).
      d: `[..., m]` diagonal.
      du: `[..., m]` upper diagonal, `du[i] = A[i, i+1]` (`du[m-1]` is 0).
      b: `[..., m, n]` right-hand sides.
      perturb_singular: whether tiny pivots are perturbed (by about eps * max|U|) so that
        singular systems get a finite solution.
    Returns:
      `X`, of `b`'s shape; NaNs where the matrix is singular (without `perturb_singular`).
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)


def _tridiagonal_product(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """`A @ b` for the tridiagonal `A` of (dl, d, du)."""
    y = structural.expand_dims(d, (len(lc.shape(d)),)) * b
    y = y.at[..., 1:, :].add(dl[..., 1:, None] * b[..., :-1, :])
    return y.at[..., :-1, :].add(du[..., :-1, None] * b[..., 1:, :])


def _tridiagonal_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                           perturb_singular: bool) -> tuple[Any, Any]:
    """X' = A^-1 (B' - A' X)."""
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is ad.Zero for t in diags_dot):
        rhs = b_dot
    else:
        matvec_dot = _tridiagonal_product(*[ad.instantiate_zeros(t) for t in diags_dot], ans)
        rhs = ad.add_tangents(b_dot, -matvec_dot)
    ans_dot = tridiagonal_solve_p.bind(*diags, ad.instantiate_zeros(rhs),
                                       perturb_singular=perturb_singular)
    return ans, ans_dot


ad.primitive_jvps[tridiagonal_solve_p] = _tridiagonal_solve_jvp


def _tridiagonal_solve_transpose(ct: Any, dl: Any, d: Any, du: Any, b: Any, *,
                                 perturb_singular: bool) -> list[Any]:
    """Linear in `b`: the cotangent solves with `A^T`, whose diagonals are `du` shifted down
    and `dl` shifted up."""
    assert not any(ad.is_undefined_primal(x) for x in (dl, d, du))
    assert ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, None, None, ad.Zero(b.aval)]
    nd = len(lc.shape(du))
    dl_t = structural.concatenate((lc.full_like(du[..., -1:], 0), du[..., :-1]), nd - 1)
    du_t = structural.concatenate((dl[..., 1:], lc.full_like(dl[..., :1], 0)), nd - 1)
    return [None, None, None,
            tridiagonal_solve(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


ad.primitive_transposes[tridiagonal_solve_p] = _tridiagonal_solve_transpose


def _tridiagonal_solve_batch(axis_data: batching.AxisData, vals: Sequence[Any],
                             dims: Sequence[int | None], *, perturb_singular: bool
                             ) -> tuple[Any, int]:
    """With unbatched diagonals the batch of right-hand sides becomes more columns of one
    solve; otherwise every batch axis moves to the front."""
    dl, d, du, b = vals
    if all(dim is None for dim in dims[:3]):
        b = batching.moveaxis(b, dims[3], -2)
        shape = lc.shape(b)
        flat = structural.reshape(b, shape[:-3] + (shape[-3], shape[-2] * shape[-1]))
        out = tridiagonal_solve(dl, d, du, flat, perturb_singular=perturb_singular)
        return structural.reshape(out, shape), len(shape) - 2
    size = next(core.get_aval(x).shape[i] for x, i in zip(vals, dims, strict=True)
                if i is not None)
    dl, d, du, b = [batching.bdim_at_front(x, i, size) for x, i in zip(vals, dims, strict=True)]
    return tridiagonal_solve(dl, d, du, b, perturb_singular=perturb_singular), 0


batching.primitive_batchers[tridiagonal_solve_p] = _tridiagonal_solve_batch


def _tridiagonal_solve_lowering(ctx: lowering.LoweringRuleContext, dl: ir.Value,
                                d: ir.Value, du: ir.Value, b: ir.Value, *,
                                perturb_singular: bool) -> list[ir.Value]:
    b_aval = ctx.avals_in[-1]
    if perturb_singular:
        return lc.ffi_call(ctx, "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], [b_aval],
                           {})
    batch = b_aval.shape[:-2]
    avals = [*ctx.avals_in, _info_aval(batch)]
    *_, x, info = lc.ffi_call(ctx, lc.lapack_target("gtsv_ffi", b_aval.dtype),
                              [dl, d, du, b], avals, {0: 0, 1: 1, 2: 2, 3: 3})
    builder = ctx.builder
    ok = lc.info_ok(builder, info)
    return [lc.replace_not_ok_with_nan(builder, batch, ok, x, b_aval)]


lowering.register_lowering(tridiagonal_solve_p, _tridiagonal_solve_lowering)


# ---------------------------------------------------------------------------------------------
# cholesky_update

def _cholesky_update_shape_rule(r_shape: tuple[int, ...], w_shape: tuple[int, ...]
                                ) -> tuple[int, ...]:
    if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {r_shape} and "
                         f"{w_shape} instead")
    return r_shape


cholesky_update_p = lc.linalg_primitive("cholesky_update", lambda r, w: r, (FLOAT, FLOAT),
                                        (2, 1), _cholesky_update_shape_rule,
                                        supports_batching=False)


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """Rank-1 update of a Cholesky factorization in O(n^2).

    Lowers to a sequence of Givens rotations (one `stablehlo.case` per row).

    Args:
      r_matrix: upper-triangular `R` with `A = R^T R`.
      w_vector: the vector `w`.
    Returns:
      The upper-triangular factor of `A + w w^T`.
    """
    return cholesky_update_p.bind(r_matrix, w_vector)


def _givens(x: Any, y: Any) -> tuple[Any, Any]:
    """Cosine and sine of the rotation that zeroes `y` against `x`, scaled against
    overflow (as BLAS's drotg)."""
    def nonzero(x: Any, y: Any) -> tuple[Any, Any]:
        abs_x = elementwise.abs(x)
        abs_y = elementwise.abs(y)
        scale = selection.select(elementwise.gt(abs_x, abs_y), abs_x, abs_y)
        x = x / scale
        y = y / scale
        rh = 1 / elementwise.sqrt(x * x + y * y)
        return x * rh, -y * rh

    dt = lc.dtype(x)
    return cond(elementwise.eq(y, np.array(0, dt)),
                lambda x, y: (np.array(1, dt), np.array(0, dt)), nonzero, x, y)


def _cholesky_update_fn(r: Any, z: Any) -> Any:
    for k in range(lc.shape(z)[0]):
        c, s = _givens(r[k, k], z[k])
        row = r[k, :]
        row, z = c * row - s * z, c * z + s * row
        r = r.at[k, :].set(row)
    return r


lowering.register_lowering(cholesky_update_p,
                           lowering.lower_fun(_cholesky_update_fn, multiple_results=False))


# ---------------------------------------------------------------------------------------------
# symmetric_product

def _symmetric_product_shape_rule(a_shape: tuple[int, ...], c_shape: tuple[int, ...],
                                  **_: Any) -> tuple[int, ...]:
    if a_shape[0] != c_shape[1] or c_shape[0] != c_shape[1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {a_shape} and {c_shape}.")
    return c_shape


symmetric_product_p = lc.linalg_primitive("symmetric_product", lambda a, c, **_: a,
                                          (FLOAT, FLOAT), (2, 2), _symmetric_product_shape_rule)


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.,
                      beta: float = 0., symmetrize_output: bool = False) -> Any:
    """`alpha * A @ A^T + beta * C` for symmetric `C`.

    Lowers to `dot_general` (at HIGHEST precision) and elementwise ops.

    Args:
      a_matrix: `[..., n, k]` matrices.
      c_matrix: `[..., n, n]` symmetric matrices.
      alpha: the product's scale.
      beta: `C`'s scale.
      symmetrize_output: whether to fill the upper triangle with the transpose of the
        lower one (only the lower triangle is guaranteed otherwise).
    Returns:
      `[..., n, n]` matrices.
    """
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        result = lc.tril(result) + lc.T(lc.tril(result, -1))
    return result


def _symmetric_product_fn(a: Any, c: Any, *, alpha: float, beta: float) -> Any:
    product = dot.batch_matmul(a, lc.T(a), precision=dot.Precision.HIGHEST)
    return alpha * product + beta * c


lowering.register_lowering(symmetric_product_p,
                           lowering.lower_fun(_symmetric_product_fn, multiple_results=False))


# ---------------------------------------------------------------------------------------------
# ormqr

def _ormqr_shape_rule(a_shape: tuple[int, ...], taus_shape: tuple[int, ...],
                      c_shape: tuple[int, ...], *, left: bool, transpose: bool
                      ) -> tuple[int, ...]:
    m = a_shape[0]
    if left and c_shape[0] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {a_shape} and c shape "
                         f"{c_shape}.")
    if not left and c_shape[1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape {a_shape} and c "
                         f"shape {c_shape}.")
    return c_shape


ormqr_p = lc.linalg_primitive("ormqr", lambda a, t, c, **_: c, (lc.FLOAT_OR_COMPLEX,) * 3,
                              (2, 1, 2), _ormqr_shape_rule)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """Multiplies `c` by the `Q` of a compact QR factorization without forming `Q`.

    Lowers to `stablehlo.custom_call @lapack_?ormqr_ffi` (`unmqr` for complex).

    Args:
      a: `[..., m, n]` Householder reflectors (below the diagonal), as `geqrf` returns them.
      taus: `[..., k]` their scale factors.
      c: the matrices to multiply.
      left: `Q @ c` (else `c @ Q`).
      transpose: use `Q^T` (`Q^H` for complex) instead of `Q`.
    Returns:
      The product, of `c`'s shape.
    """
    return ormqr_p.bind(a, taus, c, left=left, transpose=transpose)


def _ormqr_lowering(ctx: lowering.LoweringRuleContext, a: ir.Value, taus: ir.Value,
                    c: ir.Value, *, left: bool, transpose: bool) -> ir.Value:
    dt = ctx.avals_in[0].dtype
    routine = "unmqr_ffi" if dtypes.is_complex(dt) else "ormqr_ffi"
    return lc.ffi_call(ctx, lc.lapack_target(routine, dt), [a, taus, c], list(ctx.avals_out),
                       {2: 0}, {"left": bool(left), "transpose": bool(transpose)})[0]


lowering.register_lowering(ormqr_p, _ormqr_lowering)
