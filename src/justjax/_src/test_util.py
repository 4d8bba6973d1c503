"""`check_grads`: derivatives against finite differences, as `jax.test_util.check_grads`.

Forward mode is checked by comparing `jvp` with a central difference along a random
tangent; reverse mode by the dot-product identity <ct, J t> = <J^T ct, t> with the forward
product taken numerically. Higher orders recurse on the derivative functions themselves.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.transformations import autodiff
from justjax._src.pytrees import tree_util
from justjax._src.core import dtypes

EPS = 1e-4

# Read off JAX's public test utilities: tolerances for derivative comparisons.
DEFAULT_GRADIENT_TOLERANCE = {
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _dtype(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if type(x) in dtypes.PYTHON_SCALAR_DTYPES:
        return np.dtype(dtypes.canonicalize_dtype(dtypes.PYTHON_SCALAR_DTYPES[type(x)]))
    return np.asarray(x).dtype


def _tolerance(dtype: np.dtype, tol: Any) -> float:
    if tol is None:
        return DEFAULT_GRADIENT_TOLERANCE.get(np.dtype(dtype), 0.0)
    if isinstance(tol, dict):
        return tol.get(np.dtype(dtype), DEFAULT_GRADIENT_TOLERANCE.get(np.dtype(dtype), 0.0))
    return float(tol)


def _wide(x: Any) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == dtypes.float0:
        return x
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        return x.astype(np.float64)
    return x


def check_close(xs: Any, ys: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Same pytree structure and values within the dtype's gradient tolerance."""
    def check(x: Any, y: Any) -> None:
        x_np, y_np = np.asarray(x), np.asarray(y)
        if x_np.dtype == dtypes.float0 or y_np.dtype == dtypes.float0:
            assert x_np.shape == y_np.shape, err_msg
            return
        a = max(_tolerance(_dtype(x), atol), _tolerance(_dtype(y), atol))
        r = max(_tolerance(_dtype(x), rtol), _tolerance(_dtype(y), rtol))
        np.testing.assert_allclose(_wide(x_np), _wide(y_np), atol=a, rtol=r, err_msg=err_msg)

    tree_util.tree_map(check, xs, ys)


def _inner_product(xs: Any, ys: Any) -> Any:
    def contract(x: Any, y: Any) -> Any:
        x, y = _wide(x), _wide(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            return 0.0
        return np.real(np.sum(np.conj(x) * y))
    return sum(tree_util.tree_leaves(tree_util.tree_map(contract, xs, ys)))


def _conj(tree: Any) -> Any:
    def conj(x: Any) -> Any:
        x = np.asarray(x)
        return np.conj(x) if x.dtype.kind == "c" else x
    return tree_util.tree_map(conj, tree)


def _rand_leaf(rng: np.random.RandomState, x: Any) -> Any:
    dtype = _dtype(x)
    shape = np.shape(x)
    if not dtypes.is_inexact(dtype):
        return np.zeros(shape, dtypes.float0)
    value = rng.randn(*shape)
    if dtypes.is_complex(dtype):
        value = value + 1j * rng.randn(*shape)
    return np.asarray(value).astype(dtype)


def _rand_like(rng: np.random.RandomState, tree: Any) -> Any:
    return tree_util.tree_map(lambda x: _rand_leaf(rng, x), tree)


def numerical_jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
                  eps: float = EPS) -> Any:
    """The central difference (f(x + eps t) - f(x - eps t)) / (2 eps), each output computed
    in its own dtype, as JAX's test utility does."""
    def step(p: Any, t: Any, sign: float) -> Any:
        if np.asarray(t).dtype == dtypes.float0:
            return p
        return (_wide(p) + sign * eps * _wide(t)).astype(_dtype(p))

    plus = f(*tree_util.tree_map(lambda p, t: step(p, t, 1.0), list(primals), list(tangents)))
    minus = f(*tree_util.tree_map(lambda p, t: step(p, t, -1.0), list(primals), list(tangents)))

    def difference(a: Any, b: Any) -> Any:
        dtype = _dtype(a)
        if not dtypes.is_inexact(dtype):
            return np.zeros(np.shape(a), dtypes.float0)
        return ((_wide(a) - _wide(b)) * (0.5 / eps)).astype(dtype)

    return tree_util.tree_map(difference, plus, minus)


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence[Any], atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    rng = np.random.RandomState(0)
    tangent = _rand_like(rng, list(args))
    value, tangent_out = f_jvp(list(args), tangent)
    check_close(value, f(*args), atol=atol, rtol=rtol,
                err_msg=f"{err_msg} primal" if err_msg else "primal")
    expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(tangent_out, expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence[Any], atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    rng = np.random.RandomState(0)
    value, pullback = f_vjp(*args)
    check_close(value, f(*args), atol=atol, rtol=rtol,
                err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = _rand_like(rng, list(args))
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = _rand_like(rng, value)
    # JAX's convention for complex values: the pullback of the conjugate, conjugated.
    cotangent_out = _conj(list(pullback(_conj(cotangent))))
    lhs = _inner_product(tangent_out, cotangent)
    rhs = _inner_product(tangent, cotangent_out)
    dtype = max((_dtype(x) for x in tree_util.tree_leaves(value)), key=lambda d: d.itemsize,
                default=np.dtype(np.float32))
    check_close(np.float64(lhs).astype(dtype) if dtype.kind != "c" else lhs,
                np.float64(rhs).astype(dtype) if dtype.kind != "c" else rhs,
                atol=atol, rtol=rtol,
                err_msg=f"{err_msg} vjp dot-product" if err_msg else "vjp dot-product")


def check_grads(f: Callable, args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: Any = None, rtol: Any = None,
                eps: float | None = None) -> None:
    """Checks `f`'s derivatives up to `order` against finite differences.

    Args:
      f: the function, of positional array arguments.
      args: the point at which to check.
      order: 1 for first derivatives, 2 to also check derivatives of derivatives, ...
      modes: "fwd" checks jvp, "rev" checks vjp.
      atol, rtol: tolerances (numbers or {dtype: tolerance}); JAX's defaults by dtype.
      eps: the finite-difference step (default 1e-4).
    Raises:
      AssertionError when a derivative disagrees.
    """
    eps = eps or EPS
    jvp_check = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    vjp_check = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def check(fun: Callable, point: tuple, remaining: int, err_msg: str = "") -> None:
        if "fwd" in modes:
            label = f"JVP of {err_msg}" if err_msg else "JVP"
            fun_jvp = functools.partial(autodiff.jvp, fun)
            jvp_check(fun, fun_jvp, point, err_msg=label)
            if remaining > 1:
                # As JAX: the second-order check differentiates jvp at (x, t = x).
                check(fun_jvp, (list(point), list(point)), remaining - 1, label)
        if "rev" in modes:
            label = f"VJP of {err_msg}" if err_msg else "VJP"
            fun_vjp = functools.partial(autodiff.vjp, fun)
            vjp_check(fun, fun_vjp, point, err_msg=label)
            if remaining > 1:
                def pullback_of_value(*primals: Any) -> Any:
                    value, pullback = autodiff.vjp(fun, *primals)
                    return pullback(value)

                check(pullback_of_value, point, remaining - 1, label)

    check(f, tuple(args), order)
