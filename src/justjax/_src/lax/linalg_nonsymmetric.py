"""Decompositions of general (non-symmetric) square matrices: `eig_p`, `schur_p` and
`hessenberg_p`.

As in JAX they exist on CPU only, where they lower to jaxlib's LAPACK custom calls
(`lapack_?geev_ffi`, `lapack_?gees_ffi`, `lapack_?gehrd_ffi`), failures (`info != 0`)
becoming NaNs. Only `eig` is differentiable (its eigenvalues always; its eigenvectors when
asked for with `enable_eigvec_derivs`, under LAPACK's normalisation).
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from justjax._src.core import dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, lowering
from justjax._src.lax import elementwise, reductions, structural
from justjax._src.lax import linalg_common as lc
from justjax._src.lax.linalg_triangular import solve as _solve

__all__ = ["EigImplementation", "eig", "eig_p", "hessenberg", "hessenberg_p", "schur",
           "schur_p"]


class EigImplementation(enum.Enum):
    """Enum for eigendecomposition algorithm."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _info_aval(batch: Sequence[int]) -> ShapedArray:
    return ShapedArray(tuple(batch), np.dtype(np.int32))


def _is_real(dt: np.dtype) -> bool:
    return np.dtype(dt) in (np.dtype(np.float32), np.dtype(np.float64))


def _nan_where_failed(b: ir.Builder, batch: Sequence[int], info: ir.Value,
                      values: Sequence[ir.Value], avals: Sequence[ShapedArray]
                      ) -> list[ir.Value]:
    ok = lc.info_ok(b, info)
    return [lc.replace_not_ok_with_nan(b, batch, ok, v, a)
            for v, a in zip(values, avals, strict=True)]


# ---------------------------------------------------------------------------------------------
# eig

def _eig_shape_rule(shape: tuple[int, ...], *, compute_left_eigenvectors: bool,
                    compute_right_eigenvectors: bool, **_: Any) -> tuple[tuple[int, ...], ...]:
    if shape[0] != shape[1]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {shape}.")
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return (shape[:-1],) + (shape,) * count


def _eig_dtype_rule(dt: np.dtype, *, compute_left_eigenvectors: bool,
                    compute_right_eigenvectors: bool, **_: Any) -> tuple[np.dtype, ...]:
    complex_dtype = dtypes.to_complex_dtype(dt)
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return (complex_dtype,) * (1 + count)


eig_p = lc.linalg_primitive("eig", _eig_dtype_rule, (lc.FLOAT_OR_COMPLEX,), (2,),
                            _eig_shape_rule, multiple_results=True)


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: EigImplementation | None = None,
        use_magma: bool | None = None) -> list[Any]:
    """Eigendecomposition of general square matrices.

    Lowers to `stablehlo.custom_call @lapack_?geev_ffi`.

    Args:
      x: `[..., n, n]` matrices.
      compute_left_eigenvectors: whether to return the left eigenvectors.
      compute_right_eigenvectors: whether to return the right eigenvectors.
      enable_eigvec_derivs: whether the eigenvectors may be differentiated (valid only for
        distinct eigenvalues; LAPACK's normalisation: unit norm, largest component real).
      implementation: an `EigImplementation` (LAPACK only on CPU).
      use_magma: deprecated; True selects MAGMA, False LAPACK.
    Returns:
      `[w, vl, vr]` (the eigenvector entries only when requested): complex eigenvalues
      `[..., n]` and eigenvectors `[..., n, n]` in columns; NaNs where LAPACK fails.
    """
    if use_magma is not None:
        import warnings
        warnings.warn("use_magma is deprecated, please use implementation=EigImplementation."
                      "MAGMA instead.", DeprecationWarning, stacklevel=2)
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    return eig_p.bind(x, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=compute_right_eigenvectors,
                      enable_eigvec_derivs=enable_eigvec_derivs,
                      implementation=implementation)


def _mat(a: Any, b: Any) -> Any:
    """`a @ b` for matrices with batch dimensions, at HIGHEST precision."""
    return lc.dot_highest(a, b)


def _eig_vec_jvp(w: Any, v: Any, da: Any) -> tuple[Any, Any]:
    """Tangents of the eigenvalues and eigenvectors from first-order perturbation theory
    (distinct eigenvalues), with each eigenvector's free complex scale fixed as LAPACK fixes
    it: unit 2-norm and its largest-magnitude component real."""
    n = lc.shape(w)[-1]
    nd = len(lc.shape(v))
    eye_n = lc.eye(lc.dtype(w), n)
    # 1 / (w_j - w_i) off the diagonal, 0 on it.
    f_mat = elementwise.integer_pow(
        eye_n + w[..., np.newaxis, :] - w[..., np.newaxis], -1) - eye_n
    p = _mat(_solve(v, da), v)
    dw = lc.extract_diagonal(p)
    u = _mat(v, f_mat * p)
    largest = reductions.argmax(elementwise.abs(v), nd - 2, np.int32)
    rows = structural.broadcasted_iota(np.int32, lc.shape(v), nd - 2)
    mask = structural.convert_element_type(
        elementwise.eq(rows, structural.expand_dims(largest, (nd - 2,))), lc.dtype(v))
    re = -elementwise.real(reductions.reduce_sum(elementwise.conj(v) * u, (nd - 2,)))
    im = -(elementwise.imag(reductions.reduce_sum(mask * u, (nd - 2,)))
           / elementwise.real(reductions.reduce_sum(mask * v, (nd - 2,))))
    c = elementwise.complex(re, im)
    return dw, u + v * structural.expand_dims(c, (nd - 2,))


def _eig_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
             compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
             enable_eigvec_derivs: bool, implementation: Any) -> tuple[list[Any], list[Any]]:
    a, = primals
    da, = tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that JAX cannot check (see the enable_eigvec_derivs argument to "
            "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
            "in. See https://github.com/jax-ml/jax/issues/2748 for discussion.")
    outs = eig(a, compute_left_eigenvectors=compute_left_eigenvectors,
               compute_right_eigenvectors=True, enable_eigvec_derivs=enable_eigvec_derivs,
               implementation=implementation)
    w, vr = outs[0], outs[-1]
    da = structural.convert_element_type(da, lc.dtype(vr))
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        dw = reductions.reduce_sum(_solve(vr, da) * lc.T(vr), (len(lc.shape(vr)) - 1,))
        return [w], [dw]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        vl = outs[1]
        _, dvl = _eig_vec_jvp(elementwise.conj(w), vl, lc.H(da))
        primal_out.append(vl)
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


ad.primitive_jvps[eig_p] = _eig_jvp


def _compute_char(compute: bool) -> np.uint8:
    return lc.char("V" if compute else "N")


def _eig_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value, *,
                  compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
                  enable_eigvec_derivs: bool, implementation: Any) -> list[ir.Value]:
    """`lapack_?geev_ffi`: real matrices give the real and imaginary parts of the
    eigenvalues (joined by `stablehlo.complex`), and complex eigenvectors."""
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    operand_aval, = ctx.avals_in
    batch = operand_aval.shape[:-2]
    eigvals_aval = ShapedArray(operand_aval.shape[:-1], operand_aval.dtype)
    eigvecs_aval = ShapedArray(operand_aval.shape, dtypes.to_complex_dtype(operand_aval.dtype))
    avals = [eigvals_aval, eigvecs_aval, eigvecs_aval, _info_aval(batch)]
    real = _is_real(operand_aval.dtype)
    if real:
        avals = [eigvals_aval, *avals]
    config = {"compute_left": _compute_char(compute_left_eigenvectors),
              "compute_right": _compute_char(compute_right_eigenvectors)}
    target = lc.lapack_target("geev_ffi", operand_aval.dtype)
    *w, vl, vr, info = lc.ffi_call(ctx, target, [operand], avals, {}, config)
    b = ctx.builder
    if real:
        w = b.one("stablehlo.complex", [w[0], w[1]], lowering.aval_to_type(ctx.avals_out[0]))
    else:
        w = w[0]
    values = [w]
    if compute_left_eigenvectors:
        values.append(vl)
    if compute_right_eigenvectors:
        values.append(vr)
    return _nan_where_failed(b, batch, info, values, ctx.avals_out)


lowering.register_lowering(eig_p, _eig_lowering)


# ---------------------------------------------------------------------------------------------
# schur

def _schur_shape_rule(shape: tuple[int, ...], *, compute_schur_vectors: bool, **_: Any
                      ) -> tuple[tuple[int, ...], ...]:
    if shape[0] != shape[1]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {shape}.")
    return (shape, shape) if compute_schur_vectors else (shape,)


def _schur_dtype_rule(dt: np.dtype, *, compute_schur_vectors: bool, **_: Any
                      ) -> tuple[np.dtype, ...]:
    return (dt, dt) if compute_schur_vectors else (dt,)


schur_p = lc.linalg_primitive("schur", _schur_dtype_rule, (lc.FLOAT_OR_COMPLEX,), (2,),
                              _schur_shape_rule, multiple_results=True)


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> list[Any]:
    """Schur decomposition `x = Z T Z^H` (`T` quasi-upper-triangular for real `x`: 2x2
    blocks for complex-conjugate eigenvalue pairs).

    Lowers to `stablehlo.custom_call @lapack_?gees_ffi`.

    Args:
      x: `[..., n, n]` matrices.
      compute_schur_vectors: whether to return `Z` too.
      sort_eig_vals: LAPACK's eigenvalue sorting (not implemented, as in JAX).
      select_callable: the sorting's selection function (unused, as in JAX).
    Returns:
      `[T, Z]`, or `[T]` without Schur vectors.
    """
    return schur_p.bind(x, compute_schur_vectors=compute_schur_vectors,
                        sort_eig_vals=sort_eig_vals, select_callable=select_callable)


def _schur_lowering(ctx: lowering.LoweringRuleContext, operand: ir.Value, *,
                    compute_schur_vectors: bool, sort_eig_vals: bool,
                    select_callable: Any) -> list[ir.Value]:
    """`lapack_?gees_ffi` -> (T, Z, eigenvalues (real: two parts), sdim, info)."""
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented.")
    operand_aval, = ctx.avals_in
    batch = operand_aval.shape[:-2]
    eigvals_aval = ShapedArray(operand_aval.shape[:-1], operand_aval.dtype)
    eigvals = [eigvals_aval] * (2 if _is_real(operand_aval.dtype) else 1)
    avals = [operand_aval, operand_aval, *eigvals, _info_aval(batch), _info_aval(batch)]
    config = {"mode": _compute_char(compute_schur_vectors), "sort": lc.char("N")}
    t, z, *_, info = lc.ffi_call(ctx, lc.lapack_target("gees_ffi", operand_aval.dtype),
                                 [operand], avals, {0: 0}, config)
    values = [t, z] if compute_schur_vectors else [t]
    return _nan_where_failed(ctx.builder, batch, info, values, ctx.avals_out)


lowering.register_lowering(schur_p, _schur_lowering)


# ---------------------------------------------------------------------------------------------
# hessenberg

def _hessenberg_shape_rule(shape: tuple[int, ...], **_: Any) -> tuple[tuple[int, ...], ...]:
    if shape[0] != shape[-1]:
        raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {shape}")
    return shape, (shape[-1] - 1,)


hessenberg_p = lc.linalg_primitive("hessenberg", lambda d: (d, d), (lc.FLOAT_OR_COMPLEX,),
                                   (2,), _hessenberg_shape_rule, multiple_results=True)


def hessenberg(a: Any) -> list[Any]:
    """Reduces square matrices to upper Hessenberg form.

    Lowers to `stablehlo.custom_call @lapack_?gehrd_ffi`.

    Args:
      a: `[..., n, n]` matrices.
    Returns:
      `[a, taus]`: the Hessenberg matrix in the upper triangle and first subdiagonal of `a`,
      the Householder reflectors below it, and their `n - 1` scale factors `taus`.
    """
    return hessenberg_p.bind(a)


def _hessenberg_lowering(ctx: lowering.LoweringRuleContext, a: ir.Value) -> list[ir.Value]:
    """`lapack_?gehrd_ffi` over the whole matrix (LAPACK's ilo = 1, ihi = n)."""
    a_aval, = ctx.avals_in
    batch = a_aval.shape[:-2]
    n = a_aval.shape[-1]
    avals = [*ctx.avals_out, _info_aval(batch)]
    h, taus, info = lc.ffi_call(ctx, lc.lapack_target("gehrd_ffi", a_aval.dtype), [a], avals,
                                {0: 0}, {"low": np.int32(1), "high": np.int32(n)})
    return _nan_where_failed(ctx.builder, batch, info, [h, taus], ctx.avals_out)


lowering.register_lowering(hessenberg_p, _hessenberg_lowering)
