"""`lax.custom_linear_solve` (the `custom_linear_solve` primitive) and `lax.custom_root`:
values, jvp/grad to second order, transposition, vmap over every combination of batched
operands, pytrees and aux outputs, JAX's printed jaxpr and StableHLO, and JAX's errors."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import x64_mode

_RNG = np.random.default_rng(7)
A = _RNG.normal(size=(3, 3)) + 3 * np.eye(3)
SPD = A @ A.T + np.eye(3)
B = _RNG.normal(size=3)


def _general_solve(a, b):
    """A non-symmetric solve with an explicit transpose_solve."""
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, x: jnp.linalg.solve(a, x),
                                   lambda vm, x: jnp.linalg.solve(a.T, x))


def _auto_transpose_solve(a, b):
    """transpose_solve is handed the automatically transposed matvec (vecmat)."""
    def transpose_solve(vecmat, x):
        # vecmat(y) = a^T y: solve a^T z = x with the matrix recovered from vecmat.
        at = jax.vmap(vecmat, out_axes=1)(jnp.eye(3, dtype=x.dtype))
        return jnp.linalg.solve(at, x)

    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, x: jnp.linalg.solve(a, x),
                                   transpose_solve)


def _symmetric_solve(a, b):
    a = (a + a.T) / 2
    return lax.custom_linear_solve(lambda x: a @ x, b,
                                   lambda mv, x: jnp.linalg.solve(a, x), symmetric=True)


SOLVES = {"general": _general_solve, "auto_transpose": _auto_transpose_solve,
          "symmetric": _symmetric_solve}


@pytest.mark.parametrize("name", sorted(SOLVES))
def test_values(name: str) -> None:
    x = SOLVES[name](SPD.astype(np.float32), B.astype(np.float32))
    a = SPD if name != "symmetric" else (SPD + SPD.T) / 2
    np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(SOLVES[name])(SPD.astype(np.float32),
                                                     B.astype(np.float32)), x, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(SOLVES))
def test_gradients_second_order(name: str) -> None:
    with x64_mode(True):
        check_grads(SOLVES[name], (SPD, B), order=2, modes=("fwd", "rev"))


def test_gradient_is_implicit() -> None:
    """The solver itself is never differentiated: a while_loop solver (no reverse mode)
    still has a gradient."""
    diag_dominant = SPD + 100 * np.eye(3)

    def jacobi(mv, b):
        d = jnp.diag(jnp.asarray(diag_dominant))
        return lax.fori_loop(0, 200, lambda i, x: x + (b - mv(x)) / d, jnp.zeros_like(b))

    def f(b):
        return lax.custom_linear_solve(lambda x: jnp.asarray(diag_dominant) @ x, b,
                                       lambda mv, x: jacobi(mv, x), symmetric=True).sum()

    with x64_mode(True):
        grad = jax.grad(f)(B)
    np.testing.assert_allclose(grad, np.linalg.solve(diag_dominant, np.ones(3)), rtol=1e-6)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0), (1, 0)])
def test_vmap(in_axes) -> None:
    a = np.stack([SPD, SPD + np.eye(3), 2 * SPD], axis=in_axes[0] or 0) \
        if in_axes[0] is not None else SPD
    b = np.stack([B, 2 * B, -B]) if in_axes[1] is not None else B
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    out = jax.vmap(_general_solve, in_axes)(a, b)
    for i in range(3):
        ai = a if in_axes[0] is None else np.take(a, i, axis=in_axes[0])
        bi = b if in_axes[1] is None else b[i]
        np.testing.assert_allclose(out[i], np.linalg.solve(ai, bi), rtol=1e-4)


def test_vmap_of_grad() -> None:
    def loss(a, b):
        return (_general_solve(a, b) ** 2).sum()

    with x64_mode(True):
        batch = np.stack([SPD, SPD + np.eye(3)])
        grads = jax.vmap(jax.grad(loss), (0, None))(batch, B)
        for i in range(2):
            np.testing.assert_allclose(grads[i], jax.grad(loss)(batch[i], B), rtol=1e-10)


def test_pytree_and_aux() -> None:
    b = {"u": jnp.ones(2), "v": jnp.float32(1.0)}
    x = lax.custom_linear_solve(lambda x: {"u": 2 * x["u"], "v": 3 * x["v"]}, b,
                                lambda mv, x: {"u": x["u"] / 2, "v": x["v"] / 3},
                                symmetric=True)
    np.testing.assert_allclose(x["u"], [0.5, 0.5])
    np.testing.assert_allclose(x["v"], 1 / 3, rtol=1e-6)
    a = SPD.astype(np.float32)
    x, aux = lax.custom_linear_solve(lambda x: a @ x, B.astype(np.float32),
                                     lambda mv, x: (jnp.linalg.solve(a, x), jnp.sum(x)),
                                     lambda vm, x: (jnp.linalg.solve(a.T, x), jnp.sum(x)),
                                     has_aux=True)
    np.testing.assert_allclose(aux, B.sum(), rtol=1e-6)
    grad = jax.grad(lambda b: lax.custom_linear_solve(
        lambda x: a @ x, b, lambda mv, x: (jnp.linalg.solve(a, x), jnp.sum(x)),
        lambda vm, x: (jnp.linalg.solve(a.T, x), jnp.sum(x)), has_aux=True)[0].sum())(
        B.astype(np.float32))
    np.testing.assert_allclose(grad, np.linalg.solve(SPD.T, np.ones(3)), rtol=1e-4)


# Recorded from JAX 0.10.2: make_jaxpr and jit(...).lower(...).as_text() of
# `custom_linear_solve(lambda x: a @ x, b, lambda mv, x: x / 2, symmetric=True)`, a = 2 I.
GOLDEN_JAXPR = """\
let jaxpr = { lambda ; a:f32[2,2] b:f32[2]. let
    c:f32[2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) } in
{ lambda d:f32[2,2]; e:f32[2]. let
    f:f32[2] = custom_linear_solve[
      const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=0, transpose_solve=0)
      jaxprs=_LinearSolveTuple(matvec={ lambda ; a:f32[2,2] b:f32[2]. let
    c:f32[2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }, vecmat={ lambda ; a:f32[2,2] b:f32[2]. let
    c:f32[2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }, solve={ lambda ; a:f32[2]. let b:f32[2] = div a 2.0:f32[] in (b,) }, \
transpose_solve={ lambda ; a:f32[2]. let b:f32[2] = div a 2.0:f32[] in (b,) })
    ] d d e
  in (f,) }"""

GOLDEN_HLO = """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[[2.000000e+00, 0.000000e+00], [0.000000e+00, \
2.000000e+00]]> : tensor<2x2xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %1 = stablehlo.divide %arg0, %0 : tensor<2xf32>
    return %1 : tensor<2xf32>
  }
}
"""


def test_jaxpr_and_stablehlo_are_jaxs() -> None:
    a = np.eye(2, dtype=np.float32) * 2
    f = lambda b: lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, x: x / 2,  # noqa: E731
                                          symmetric=True)
    b = np.ones(2, np.float32)
    assert str(jax.make_jaxpr(f)(b)) == GOLDEN_JAXPR
    assert jax.jit(f).lower(b).as_text() == GOLDEN_HLO


# Recorded from JAX 0.10.2: the same solve vmapped over b only (a batched right-hand side
# batches x; the matrix is not broadcast).
GOLDEN_VMAP_B = """\
let jaxpr = { lambda ; a:f32[2,2] b:f32[3,2]. let
    c:f32[2,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[3,2] = transpose[permutation=(1, 0)] c
  in (d,) } in
{ lambda ; e:f32[2,2] f:f32[3,2]. let
    g:f32[3,2] = custom_linear_solve[
      const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=0, transpose_solve=0)
      jaxprs=_LinearSolveTuple(matvec={ lambda ; a:f32[2,2] b:f32[3,2]. let
    c:f32[2,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[3,2] = transpose[permutation=(1, 0)] c
  in (d,) }, vecmat={ lambda ; a:f32[2,2] b:f32[3,2]. let
    c:f32[2,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[3,2] = transpose[permutation=(1, 0)] c
  in (d,) }, solve={ lambda ; a:f32[3,2]. let b:f32[3,2] = div a 2.0:f32[] in (b,) }, \
transpose_solve={ lambda ; a:f32[3,2]. let b:f32[3,2] = div a 2.0:f32[] in (b,) })
    ] e e f
  in (g,) }"""


def test_vmapped_jaxpr_is_jaxs() -> None:
    a = np.eye(2, dtype=np.float32) * 2

    def f(a, b):
        return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, x: x / 2, symmetric=True)

    jaxpr = jax.make_jaxpr(jax.vmap(f, (None, 0)))(a, np.ones((3, 2), np.float32))
    assert str(jaxpr) == GOLDEN_VMAP_B


ERRORS = [
    (lambda: jax.grad(lambda b: lax.custom_linear_solve(
        lambda x: A @ x, b, lambda mv, x: jnp.linalg.solve(A, x)).sum())(B), TypeError,
     "transpose_solve required for backwards mode automatic differentiation of "
     "custom_linear_solve"),
    (lambda: lax.custom_linear_solve(lambda x: (A @ x)[:1], B,
                                     lambda mv, x: jnp.linalg.solve(A, x)), ValueError,
     "matvec() output shapes must match b, got [(1,)] and [(3,)]"),
    (lambda: lax.custom_linear_solve(lambda x: A @ x, B, lambda mv, x: x[:1]), ValueError,
     "solve() output shapes must match b, got [(1,)] and [(3,)]"),
    (lambda: lax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y),
     TypeError,
     "f() output pytree structure must match initial_guess, got PyTreeDef((*, *)) and "
     "PyTreeDef(*)."),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jaxs(index: int) -> None:
    fun, error, message = ERRORS[index]
    with pytest.raises(error) as info:
        fun()
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# custom_root

def _newton_sqrt(c):
    return lax.custom_root(lambda y: y * y - c, 1.0,
                           lambda f, y0: lax.fori_loop(0, 30, lambda i, y: y - f(y) / (2 * y),
                                                       y0),
                           lambda g, y: y / g(1.0))


def test_custom_root_values_and_gradients() -> None:
    with x64_mode(True):
        np.testing.assert_allclose(_newton_sqrt(2.0), np.sqrt(2.0), rtol=1e-12)
        np.testing.assert_allclose(jax.grad(_newton_sqrt)(2.0), 0.5 / np.sqrt(2.0),
                                   rtol=1e-12)
        check_grads(_newton_sqrt, (2.0,), order=2, modes=("fwd", "rev"))
        np.testing.assert_allclose(jax.vmap(_newton_sqrt)(np.array([4.0, 9.0])), [2.0, 3.0],
                                   rtol=1e-12)
        np.testing.assert_allclose(jax.jit(jax.grad(_newton_sqrt))(4.0), 0.25, rtol=1e-12)


def test_custom_root_of_a_vector_function_with_aux() -> None:
    """The root of A x - b (x = A^-1 b): its derivative in A is -A^-1 dA x."""
    def root(a, b):
        x, aux = lax.custom_root(
            lambda x: a @ x - b, jnp.zeros(3),
            lambda f, x0: (jnp.linalg.solve(a, b), 1.0),
            lambda g, y: jnp.linalg.solve(jax.jacobian(g)(y), y), has_aux=True)
        return x

    with x64_mode(True):
        np.testing.assert_allclose(root(SPD, B), np.linalg.solve(SPD, B), rtol=1e-10)
        check_grads(root, (SPD, B), order=1, modes=("fwd", "rev"))
