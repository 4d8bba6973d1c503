"""`lax.fori_loop`, `lax.map` and `lax.associative_scan` (`_src/lax/control_flow/library.py`):
values against NumPy and Python loops (the programs JAX recorded are
`test_control_flow_programs.py`'s), gradients against finite differences, vmap against loops over
examples, and JAX's errors.
"""
from __future__ import annotations


import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.test_util import check_grads
from tests.harness import assert_close, lower_to_module, run_reference, stack_per_example

# ---------------------------------------------------------------------------------------------
# associative_scan

def _prefix(op, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """The sequential inclusive scan of `x` along `axis` with a binary NumPy `op`."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, 0)
    if reverse:
        x = x[::-1]
    out = [x[0]]
    for row in x[1:]:
        out.append(op(out[-1], row))
    out = np.stack(out)
    if reverse:
        out = out[::-1]
    return np.moveaxis(out, 0, axis)


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_add_matches_cumsum(length: int, reverse: bool) -> None:
    x = np.random.default_rng(length).normal(size=(length, 3)).astype(np.float32)
    got = lax.associative_scan(jnp.add, x, reverse=reverse)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert_close(got, _prefix(np.add, x, 0, reverse), 1e-5)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_axes(axis: int, reverse: bool) -> None:
    x = np.random.default_rng(3).normal(size=(5, 6, 3)).astype(np.float32)
    got = lax.associative_scan(jnp.maximum, jnp.asarray(x), reverse=reverse, axis=axis)
    assert_close(got, _prefix(np.maximum, x, axis, reverse), 0)


def test_reverse_negative_axis_follows_the_documentation() -> None:
    """JAX 0.10.2 raises from `rev` here; the documented result is the reverse scan along
    the last axis (JAX 0.10.2 reverses before normalizing the axis, so it raises from `rev`;
    its documentation says the scan runs along `axis`, which justjax does)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = lax.associative_scan(jnp.add, x, reverse=True, axis=-1)
    assert_close(got, np.cumsum(x[:, ::-1], axis=1)[:, ::-1], 0)


def test_associative_scan_noncommutative_order() -> None:
    """Matrix products keep their order: element k is m0 @ m1 @ ... @ mk (reversed: the
    product from the last matrix down to k, combined as fn(later, earlier))."""
    mats = np.random.default_rng(0).normal(size=(6, 2, 2)).astype(np.float32)
    got = lax.associative_scan(jnp.matmul, mats)
    want = _prefix(np.matmul, mats, 0, False)
    assert_close(got, want, 1e-4)
    got_reverse = lax.associative_scan(jnp.matmul, mats, reverse=True)
    assert_close(got_reverse, _prefix(np.matmul, mats, 0, True), 1e-4)


def test_associative_scan_pytree_linear_recurrence() -> None:
    """h_t = a_t h_{t-1} + b_t as a scan over (a, b) pairs, against the Python loop."""
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, size=9).astype(np.float32)
    b = rng.normal(size=9).astype(np.float32)
    _, h = lax.associative_scan(lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1]), (a, b))
    want, state = [], 0.0
    for at, bt in zip(a.astype(np.float64), b.astype(np.float64), strict=True):
        state = at * state + bt
        want.append(state)
    assert_close(h, np.array(want), 1e-5)


def test_associative_scan_dict_and_bool_and_int() -> None:
    tree = {"x": jnp.arange(5.0), "y": jnp.ones(5, jnp.int32)}
    out = lax.associative_scan(lambda p, q: {"x": p["x"] + q["x"], "y": p["y"] * 2 + q["y"]},
                               tree)
    assert set(out) == {"x", "y"} and out["y"].dtype == np.int32
    assert_close(out["x"], np.cumsum(np.arange(5.0)), 0)
    flags = jnp.array([False, False, True, False, False])
    seen = lax.associative_scan(jnp.logical_or, flags)
    assert seen.dtype == np.bool_
    np.testing.assert_array_equal(seen, [False, False, True, True, True])
    text = str(jax.make_jaxpr(lambda f: lax.associative_scan(jnp.logical_or, f))(flags))
    assert " or " in text and " add " not in text and "False:bool[]" in text


def test_associative_scan_jit_matches_eager() -> None:
    x = jnp.asarray(np.random.default_rng(2).normal(size=(11,)).astype(np.float32))
    f = lambda v: lax.associative_scan(jnp.add, v, reverse=True)  # noqa: E731
    assert_close(jax.jit(f)(x), f(x), 1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_grads(reverse: bool) -> None:
    x = np.random.default_rng(4).uniform(0.5, 1.5, size=(6,)).astype(np.float32)
    check_grads(lambda v: lax.associative_scan(jnp.multiply, v, reverse=reverse), (x,), 2,
                modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


def test_associative_scan_vmap_matches_loop() -> None:
    x = np.random.default_rng(5).normal(size=(4, 7)).astype(np.float32)
    f = lambda v: lax.associative_scan(jnp.add, v)  # noqa: E731
    assert_close(jax.vmap(f)(x), stack_per_example(f, x), 1e-5)
    assert_close(jax.vmap(f, in_axes=1, out_axes=1)(x), np.cumsum(x, axis=0), 1e-5)


def test_associative_scan_errors() -> None:
    with pytest.raises(ValueError, match=r"must have the same first dimension\. "
                                         r"\(saw: \[\(3,\), \(4,\)\]\)"):
        lax.associative_scan(lambda p, q: (p[0] + q[0], p[1] + q[1]),
                             (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(TypeError, match="lax.associative_scan: fn argument should be callable."):
        lax.associative_scan(5, jnp.ones(3))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 1"):
        lax.associative_scan(jnp.add, jnp.ones(3), axis=2)


# ---------------------------------------------------------------------------------------------
# fori_loop

def _python_fori(lower: int, upper: int, body, init):
    val = init
    for i in range(lower, upper):
        val = body(i, val)
    return val


@pytest.mark.parametrize("bounds", [(0, 5), (2, 6), (4, 2), (3, 3), (-2, 3)])
def test_fori_loop_concrete_matches_python(bounds: tuple[int, int]) -> None:
    x = np.linspace(-1, 1, 4).astype(np.float32)
    body = lambda i, c: c * 0.5 + i  # noqa: E731
    got = lax.fori_loop(*bounds, body, jnp.asarray(x))
    assert got.dtype == np.float32
    assert_close(got, _python_fori(*bounds, body, x.astype(np.float64)), 1e-5)


@pytest.mark.parametrize("bounds", [(0, 5), (2, 6), (4, 2)])
def test_fori_loop_traced_bounds_match_python(bounds: tuple[int, int]) -> None:
    x = np.linspace(-1, 1, 4).astype(np.float32)
    body = lambda i, c: c * 0.5 + i  # noqa: E731
    f = jax.jit(lambda lo, hi, c: lax.fori_loop(lo, hi, body, c))
    got = f(jnp.int32(bounds[0]), jnp.int32(bounds[1]), jnp.asarray(x))
    assert_close(got, _python_fori(*bounds, body, x.astype(np.float64)), 1e-5)
    text = str(jax.make_jaxpr(f)(jnp.int32(0), jnp.int32(1), x))
    assert "while[" in text and "scan[" not in text


def test_fori_loop_pytree_carry_and_index_update() -> None:
    def body(i, carry):
        acc, hist = carry
        return acc + i, hist.at[i].set(acc)

    acc, hist = lax.fori_loop(0, 5, body, (0, jnp.zeros(5, jnp.int32)))
    assert int(acc) == 10 and acc.dtype == np.int32
    np.testing.assert_array_equal(hist, [0, 0, 1, 3, 6])


def test_fori_loop_counter_dtypes() -> None:
    """The scan path counts with a weak int32 from the Python int bound; the while path in
    the bounds' dtype (a Python int bound adopting the other bound's integer dtype)."""
    assert float(lax.fori_loop(0.0, 3.0, lambda i, c: c + i, 0.0)) == 3.0
    text = str(jax.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0.0))(
        jnp.int16(3)))
    assert "0:i16[]" in text and "lt" in text
    text = str(jax.make_jaxpr(
        lambda lo, hi: lax.fori_loop(lo, hi, lambda i, c: c + i, 0.0))(
        jnp.float32(0), jnp.float32(3)))
    assert "add d 1.0:f32[]" in text


def test_fori_loop_weak_init_promoted() -> None:
    out = lax.fori_loop(0, 3, lambda i, c: c + 0.5, 1)
    assert out.dtype == np.float32 and float(out) == 2.5


def test_fori_loop_disable_jit() -> None:
    with jax.disable_jit():
        assert float(lax.fori_loop(0, 4, lambda i, c: c + i, 0.0)) == 6.0
        assert lax.fori_loop(3, 3, lambda i, c: c + i, 7) == 7


def test_fori_loop_grad_concrete() -> None:
    def f(x):
        return lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) + c * i, x)

    check_grads(f, (np.float32(0.4),), 2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)

    def g(x):
        return jnp.sum(lax.fori_loop(1, 4, lambda i, c: c * x + i, jnp.ones(3)))

    check_grads(g, (np.array([0.3, -0.7, 1.1], np.float32),), 1, modes=("fwd", "rev"),
                atol=1e-2, rtol=1e-2)


def test_fori_loop_jvp_traced_bound() -> None:
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x)  # noqa: E731
    primal, tangent = jax.jvp(lambda x: f(x, jnp.int32(3)), (jnp.float32(1.1),),
                              (jnp.float32(1.0),))
    assert_close(primal, 1.1 ** 4, 1e-5)
    assert_close(tangent, 4 * 1.1 ** 3, 1e-5)


def test_fori_loop_grad_traced_bound_raises() -> None:
    """A traced bound makes a while loop, which reverse mode rejects; a concrete one (eager
    grad, where `n` is an Array) makes a scan, which it differentiates, as in JAX."""
    f = jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))
    assert_close(f(jnp.float32(1.1), jnp.int32(3)), 4 * 1.1 ** 3, 1e-5)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop or lax.fori_loop with dynamic "
                                         "start/stop values"):
        jax.jit(f)(jnp.float32(1.1), jnp.int32(3))


def test_fori_loop_vmap() -> None:
    x = np.linspace(0.5, 2, 4).astype(np.float32)
    n = np.array([1, 0, 3, 2], np.int32)
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c + x, 0.0 * x)  # noqa: E731
    assert_close(jax.vmap(f)(x, n), x * n, 1e-6)
    g = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x + i, x)  # noqa: E731
    assert_close(jax.vmap(g)(x), stack_per_example(lambda v: _python_fori(
        0, 3, lambda i, c: c * v + i, v), x.astype(np.float64)), 1e-5)


def test_fori_loop_errors() -> None:
    with pytest.raises(TypeError, match="lax.fori_loop: body_fun argument should be callable."):
        lax.fori_loop(0, 3, 5, 0.0)
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have "
                                        "equal types, got int16 and int32"):
        lax.fori_loop(jnp.int16(0), jnp.int32(3), lambda i, c: c, 0.0)
    with pytest.raises(ValueError, match="Can only use `unroll` in `fori_loop` if the loop "
                                         "bounds are statically known."):
        jax.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, c: c, 0.0, unroll=2))(3)
    with pytest.raises(TypeError, match=r"(?s)^scan body function carry input .*loop_carry\[1\] "
                                        r"has type int32\[\]"):
        lax.fori_loop(0, 3, lambda i, c: c + 0.5, jnp.int32(1))
    with pytest.raises(TypeError, match=r"(?s)^while_loop body function carry input .*"
                                        r"loop_carry\[2\] has type int32\[\]"):
        jax.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, c: c + 0.5, jnp.int32(1)))(3)


# ---------------------------------------------------------------------------------------------
# map

@pytest.mark.parametrize("batch_size", [None, 0, 1, 2, 3, 5, 7, 9])
def test_map_matches_python(batch_size: int | None) -> None:
    xs = np.random.default_rng(6).normal(size=(7, 3)).astype(np.float32)
    ys = np.arange(7, dtype=np.int32)

    def f(t):
        x, y = t
        return {"s": jnp.sum(x * x) + y, "v": x * 2.0}

    out = lax.map(f, (jnp.asarray(xs), jnp.asarray(ys)), batch_size=batch_size)
    assert out["s"].shape == (7,) and out["v"].shape == (7, 3)
    assert_close(out["s"], np.sum(xs.astype(np.float64) ** 2, axis=1) + ys, 1e-5)
    assert_close(out["v"], xs * 2.0, 0)


def test_map_batch_size_traces() -> None:
    """A remainder is a second vmapped call of `f`; a multiple of the batch size is not."""
    shapes = []

    def f(x):
        shapes.append(x.shape)
        return x + 1

    lax.map(f, jnp.ones((10, 3, 4)), batch_size=3)
    assert shapes == [(3, 4), (3, 4)]
    shapes.clear()
    lax.map(f, jnp.ones((9, 3, 4)), batch_size=3)
    assert shapes == [(3, 4)]


def test_map_jit_grad_vmap() -> None:
    xs = np.random.default_rng(7).normal(size=(5, 3)).astype(np.float32)
    f = lambda xs: lax.map(lambda x: jnp.sin(x) * x, xs)  # noqa: E731
    assert_close(jax.jit(f)(xs), np.sin(xs) * xs, 1e-6)
    check_grads(lambda v: jnp.sum(f(v)), (xs,), 1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    check_grads(lambda v: jnp.sum(lax.map(jnp.sin, v, batch_size=2)), (xs,), 1,
                modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    batched = np.stack([xs, 2 * xs])
    assert_close(jax.vmap(f)(batched), stack_per_example(f, batched), 1e-6)


def test_map_errors() -> None:
    with pytest.raises(ValueError, match="scan got values with different leading axis sizes: "
                                         "3, 4."):
        lax.map(lambda t: t[0] + t[1][0], (jnp.ones(3), jnp.ones((4, 1))))
    with pytest.raises(TypeError, match="'int' object is not callable"):
        lax.map(5, jnp.ones(3))


# ---------------------------------------------------------------------------------------------
# Lowered programs on the reference backend

LOWERED = {
    "fori_concrete": (lambda x: lax.fori_loop(1, 5, lambda i, c: c * 0.5 + i, x),
                      lambda x: _python_fori(1, 5, lambda i, c: c * 0.5 + i, x)),
    "fori_traced": (lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x),
                    lambda x, n: _python_fori(0, int(n), lambda i, c: c * 0.5 + i, x)),
    "map_batched": (lambda x: lax.map(lambda r: jnp.sum(r) * r, x, batch_size=2),
                    lambda x: np.sum(x, axis=1, keepdims=True) * x),
    "assoc_reverse": (lambda x: lax.associative_scan(jnp.add, x, reverse=True, axis=1),
                      lambda x: np.cumsum(x[:, ::-1], axis=1)[:, ::-1]),
}


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_lowered_runs_on_reference_backend(name: str) -> None:
    fun, reference = LOWERED[name]
    x = np.random.default_rng(8).normal(size=(5, 3)).astype(np.float32)
    args = (x, np.int32(4)) if name == "fori_traced" else (x,)
    (got,) = run_reference(lower_to_module(fun, *args), *args)
    assert_close(got, reference(*[np.asarray(a, np.float64) if a is x else a for a in args]),
                 1e-5)
    assert_close(jax.jit(fun)(*args), got, 1e-6)
