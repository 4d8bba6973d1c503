"""The elementwise functions JAX defines with `custom_jvp` (its `lax/other.py` and sinc's
series), used by `ufuncs.logaddexp`, `ufuncs.logaddexp2` and `ufuncs.sinc`.

Their names are the ones JAX's jaxprs print (`custom_jvp_call[name=logaddexp
jvp=_logaddexp_jvp ...]`). The rules keep derivatives finite where the plain formulas give
NaN: at `-inf` inputs of logaddexp and at 0 for every order of sinc.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.transformations.custom_derivatives import custom_jvp
from justjax._src.lax import elementwise as lax
from justjax._src.lax import selection as lax_selection
from justjax._src.numpy import util
from justjax._src.numpy.array_creation import lax_full_like

__all__: list[str] = []

_const = util.const  # JAX's lax._const


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _wrap_between(x: Any, a: float) -> Any:
    """`x` wrapped into [-a, a) (the imaginary part of a complex logaddexp)."""
    rem = lax.rem(lax.add(x, _const(x, a)), _const(x, 2 * a))
    rem = lax_selection.select(lax.lt(rem, _const(x, 0)), lax.add(rem, _const(x, 2 * a)), rem)
    return lax.sub(rem, _const(x, a))


def _logaddexp_body(name: str, x1: Any, x2: Any, exp_fn: Any, scale: float | None,
                    period: float) -> Any:
    amax = lax.max(x1, x2)
    scale_const = None if scale is None else _const(amax, scale)

    def scaled(v: Any) -> Any:
        return v if scale_const is None else lax.mul(scale_const, v)

    dtype = _dtype(x1)
    if dtypes.is_float(dtype):
        delta = lax.sub(x1, x2)
        # A NaN delta means NaN inputs or infinities of one sign: their sum is the answer.
        return lax_selection.select(
            lax.ne(delta, delta), lax.add(x1, x2),
            lax.add(amax, scaled(lax.log1p(exp_fn(lax.neg(lax.abs(delta)))))))
    if dtypes.is_complex(dtype):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, _const(amax, 2)))
        out = lax.add(amax, scaled(lax.log1p(exp_fn(delta))))
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), period))
    raise ValueError(f"{name} requires floating-point or complex inputs; got {dtype}")


def _replace_inf(x: Any) -> Any:
    """`x` with +inf (of the real part) replaced by 0, so `exp(x - out)` stays finite."""
    re_x = lax.real(x) if dtypes.is_complex(_dtype(x)) else x
    return lax_selection.select(lax.eq(re_x, _const(re_x, np.inf)), lax_full_like(x, 0), x)


@custom_jvp
def logaddexp(x1: Any, x2: Any, /) -> Any:
    """`log(exp(x1) + exp(x2))` of two inexact arrays of one dtype, without overflow."""
    return _logaddexp_body("logaddexp", x1, x2, lax.exp, None, np.pi)


@logaddexp.defjvp
def _logaddexp_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x1, x2 = primals
    t1, t2 = tangents
    primal_out = logaddexp(x1, x2)
    tangent_out = lax.add(
        lax.mul(t1, lax.exp(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
        lax.mul(t2, lax.exp(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
    return primal_out, tangent_out


@custom_jvp
def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """`log2(2**x1 + 2**x2)` of two inexact arrays of one dtype, without overflow."""
    return _logaddexp_body("logaddexp2", x1, x2, lax.exp2, 1 / np.log(2), np.pi / np.log(2))


@logaddexp2.defjvp
def _logaddexp2_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    x1, x2 = primals
    t1, t2 = tangents
    primal_out = logaddexp2(x1, x2)
    tangent_out = lax.add(
        lax.mul(t1, lax.exp2(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
        lax.mul(t2, lax.exp2(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
    return primal_out, tangent_out


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k: int, x: Any) -> Any:
    """The k-th derivative of sin(x)/x at 0, as an array like `x`: the constant term of
    sinc's k-th derivative at 0 (the rule gives the next order)."""
    if k % 2:
        return x * 0
    return x * 0 + _const(x, (-1) ** (k // 2) / (k + 1))



@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k: int, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), _sinc_maclaurin(k + 1, x) * t


def sinc_at_zero(pi_x: Any) -> Any:
    """sinc's value at 0 (1, like `pi_x`), with every derivative right there."""
    return _sinc_maclaurin(0, pi_x)
