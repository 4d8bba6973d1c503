"""`lax.scan` and the `scan` primitive (forward parts): the API's pytrees, lengths, errors and
weak carries; eager vs jit vs a Python loop;
`reverse`, `unroll`, length 0; jvp against finite differences; vmap against a Python loop;
dead-code elimination; lowering to `stablehlo.while` run on the reference backend.

Reverse mode (partial eval, transpose) is tested in `test_scan_ad.py`; the
programs JAX recorded (printing, values, errors, StableHLO) are `test_control_flow_programs.py`'s.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.core import core
from justjax._src.interpreters import partial_eval as pe
from justjax._src.test_util import check_grads
from tests.harness import assert_close, lower_to_module, run_reference

# ---------------------------------------------------------------------------------------------
# A NumPy reference: the Python loop scan stands for.

def _numpy_scan(f: Callable, init: Any, xs: Any, length: int, reverse: bool) -> tuple:
    carry = init
    ys = []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = jax.tree_util.tree_map(lambda v: v[i], xs)
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, jax.tree_util.tree_map(lambda *v: np.stack(v), *ys)


def _body(c: Any, x: Any) -> tuple:
    h, n = c
    h = jnp.tanh(h * 0.9 + x["a"]) * x["b"]
    return (h, n + 1), (h.sum(), h * 2.0)


def _xs(length: int) -> dict:
    rng = np.random.default_rng(length)
    return {"a": rng.normal(size=(length, 3)).astype(np.float32),
            "b": rng.normal(size=(length, 3)).astype(np.float32)}


def _init() -> tuple:
    return (jnp.asarray(np.linspace(-1, 1, 3, dtype=np.float32)), jnp.int32(0))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 3, 5, 7, 0, True, False])
@pytest.mark.parametrize("length", [0, 1, 5])
def test_matches_python_loop(length: int, unroll: Any, reverse: bool) -> None:
    """Eagerly and under jit, for every unroll (dividing the length or not, larger than it,
    0 and bools), forwards and backwards, including length 0."""
    xs = _xs(length)
    want = _numpy_scan(_body, _init(), xs, length, reverse) if length else None

    def run(init: Any, xs: Any) -> Any:
        return lax.scan(_body, init, xs, reverse=reverse, unroll=unroll)

    for got in (run(_init(), xs), jax.jit(run)(_init(), xs)):
        (h, n), (s, h2) = got
        assert n.dtype == np.int32 and int(n) == length
        assert s.shape == (length,) and h2.shape == (length, 3)
        if length:
            assert_close(h, want[0][0], 1e-5)
            assert_close(s, want[1][0], 1e-5)
            assert_close(h2, want[1][1], 1e-5)
        else:
            assert_close(h, _init()[0], 0)


def test_xs_none_with_length() -> None:
    carry, ys = lax.scan(lambda c, _: (c * 2.0, c), jnp.float32(1.0), None, length=4)
    assert float(carry) == 16.0
    assert_close(ys, np.array([1, 2, 4, 8], np.float32), 0)


def test_unroll_param_canonicalized() -> None:
    """`unroll=True` becomes the length, `False` 1, as JAX records them."""
    for unroll, want in [(True, 5), (False, 1), (3, 3), (0, 0)]:
        closed = jax.make_jaxpr(
            lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, unroll=unroll))(jnp.ones(5))
        assert closed.jaxpr.eqns[0].params["unroll"] == want


def test_params_are_jax_params() -> None:
    closed = jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs))(jnp.ones(3))
    eqn = closed.jaxpr.eqns[0]
    assert eqn.primitive is lax.scan_p
    assert sorted(eqn.params) == ["jaxpr", "length", "num_carry", "num_consts", "reverse",
                                  "unroll"]


def test_forwarding_as_jax() -> None:
    """A carry passed through unchanged becomes a const, and a y that is an x slice is the
    xs themselves, as in JAX."""
    text = str(jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c, x), 0.0, xs))(jnp.ones(3)))
    assert text == ("{ lambda ; a:f32[3]. let\n"
                    "    scan[\n"
                    "      jaxpr={ lambda ; b:f32[] c:f32[]. let  in () }\n"
                    "      length=3\n      num_carry=0\n      num_consts=1\n"
                    "      reverse=False\n      unroll=1\n"
                    "    ] 0.0:f32[] a\n"
                    "  in (0.0:f32[], a) }")
    carry, ys = lax.scan(lambda c, x: (c, x), 0.0, jnp.arange(3.0))
    assert float(carry) == 0.0
    assert_close(ys, np.arange(3.0, dtype=np.float32), 0)


def test_weak_carries() -> None:
    """A weak initial carry keeps the body's dtype: promoted when the dtypes differ, kept
    (and the result strong) when only weakness differs."""
    c, ys = lax.scan(lambda c, x: (c + x, c), 0, jnp.ones(3, jnp.float16))
    assert c.dtype == np.float16 and ys.dtype == np.float16 and not c.weak_type
    c, ys = lax.scan(lambda c, x: (c * 2, c), 1, None, length=3)
    assert c.dtype == np.int32 and c.weak_type and int(c) == 8


def test_disable_jit_runs_a_python_loop() -> None:
    calls = []

    def body(c: Any, x: Any) -> tuple:
        calls.append(x)
        return c + x, c

    with jax.disable_jit():
        c, ys = lax.scan(body, jnp.float32(0.0), jnp.arange(3.0), reverse=True)
        assert len(calls) == 3 and all(not isinstance(x, core.Tracer) for x in calls)
        assert float(c) == 3.0
        assert_close(ys, np.array([3.0, 2.0, 0.0], np.float32), 0)
        with pytest.raises(ValueError, match="zero-length scan is not supported"):
            lax.scan(body, 0.0, None, length=0)


@pytest.mark.parametrize("call, error, message", [
    (lambda: lax.scan(3, 0.0, jnp.ones(3)), TypeError,
     "lax.scan: f argument should be a callable."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, 3.0), ValueError,
     "scan got value with no leading axis to scan over: 3.0."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), unroll=-1), ValueError,
     "`unroll` must be a `bool` or a non-negative `int`."),
    (lambda: lax.scan(lambda c, x: (c, x, x), 0.0, jnp.ones(3)), TypeError,
     "scan body output must be a pair, got (ShapedArray(float32[], weak_type=True), "
     "ShapedArray(float32[]), ShapedArray(float32[]))."),
    (lambda: lax.scan(lambda c, x: ((c, c), x), 0.0, jnp.ones(3)), TypeError,
     "scan body function carry input and carry output must have the same pytree structure"),
])
def test_errors(call: Callable, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message)


def test_dict_body_output_is_a_pair() -> None:
    """JAX takes any two-child pytree as the (carry, y) pair."""
    c, y = lax.scan(lambda c, x: [c + x, x * 2.0], 0.0, jnp.arange(3.0))
    assert float(c) == 3.0
    assert_close(y, np.array([0.0, 2.0, 4.0], np.float32), 0)


# ---------------------------------------------------------------------------------------------
# jvp against finite differences.

def _rnn(w: Any, h0: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple:
        h = jnp.tanh(w @ h + x)
        return h, jnp.sin(h).sum()
    h, ys = lax.scan(step, h0, xs)
    return h, ys


def _args() -> tuple:
    rng = np.random.default_rng(0)
    return (jnp.asarray(rng.normal(size=(3, 3)).astype(np.float32) * 0.5),
            jnp.asarray(rng.normal(size=(3,)).astype(np.float32)),
            jnp.asarray(rng.normal(size=(4, 3)).astype(np.float32)))


def test_jvp_finite_differences() -> None:
    check_grads(_rnn, _args(), order=2, modes=["fwd"], atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2])
def test_jvp_reverse_unroll(reverse: bool, unroll: int) -> None:
    def f(a: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (c * a + jnp.cos(x), c * x), jnp.float32(0.5), xs,
                        reverse=reverse, unroll=unroll)
    check_grads(f, (jnp.float32(0.7), jnp.linspace(-1.0, 1.0, 5)), order=1, modes=["fwd"],
                atol=1e-2, rtol=1e-2)


def test_jvp_carry_tangent_fixpoint() -> None:
    """A carry with a zero initial tangent gets one from a const's tangent (the fixpoint);
    an integer carry keeps a zero (float0) tangent."""
    def f(a: Any) -> Any:
        return lax.scan(lambda c, _: ((c[0] * 2.0 + a, c[1] + 1), c[0]),
                        (jnp.float32(1.0), jnp.int32(0)), None, length=3)

    (c, n), ys = f(jnp.float32(0.5))
    primals, tangents = jax.jvp(f, (jnp.float32(0.5),), (jnp.float32(1.0),))
    (dc, dn), dys = tangents
    assert float(dc) == 7.0  # d/da of 8 + 7a
    assert dn.dtype == jax.dtypes.float0
    assert_close(dys, np.array([0.0, 1.0, 3.0], np.float32), 0)
    assert_close(primals[0][0], c, 0)


def test_jvp_zero_tangents_print_no_tangent_carry() -> None:
    """Only nonzero tangents enter the jvp scan."""
    closed = jax.make_jaxpr(lambda a, xs: jax.jvp(
        lambda a: lax.scan(lambda c, x: (c + x, c * a), 0.0, xs), (a,), (1.0,)))(
        1.0, jnp.ones(3))
    eqn = closed.jaxpr.eqns[-1]
    assert eqn.primitive is lax.scan_p
    assert eqn.params["num_carry"] == 1  # the carry has no tangent: it does not read `a`
    assert len(eqn.outvars) == 3


# ---------------------------------------------------------------------------------------------
# vmap against a Python loop.

def _stack_loop(f: Callable, in_axes: tuple, *args: Any) -> Any:
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [f(*[a if ax is None else np.take(np.asarray(a), i, axis=ax)
                for a, ax in zip(args, in_axes)]) for i in range(size)]
    return jax.tree_util.tree_map(lambda *v: np.stack(v), *outs)


@pytest.mark.parametrize("in_axes", [(None, 0, None), (None, None, 0), (None, None, 1),
                                     (0, None, None), (0, 0, 1), (None, 0, 0)])
def test_vmap_matches_loop(in_axes: tuple) -> None:
    """Batched carry only, batched xs only (axis 0 and 1), batched consts only, and all."""
    w, h0, xs = _args()
    args = [w, h0, xs]
    for i, ax in enumerate(in_axes):
        if ax is not None:
            args[i] = jnp.stack([args[i] * (1.0 + 0.1 * k) for k in range(2)], axis=ax)
    want = _stack_loop(_rnn, in_axes, *args)
    for fun in (jax.vmap(_rnn, in_axes), jax.jit(jax.vmap(_rnn, in_axes))):
        got = fun(*args)
        for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert_close(g, e, 1e-5)


def test_vmap_keeps_unbatched_consts_unbatched() -> None:
    w, h0, xs = _args()
    closed = jax.make_jaxpr(jax.vmap(_rnn, (None, 0, None)))(w, jnp.stack([h0, h0]), xs)
    scan_eqn = next(e for e in closed.jaxpr.eqns if e.primitive is lax.scan_p)
    body = scan_eqn.params["jaxpr"]
    assert body.in_avals[0].shape == (3, 3)  # w
    assert body.in_avals[1].shape == (2, 3)  # the batched carry
    assert body.in_avals[2].shape == (3,)    # the unbatched x slice


def test_vmap_carry_batched_by_body_fixpoint() -> None:
    """An unbatched initial carry becomes batched when the body mixes in a batched x."""
    f = jax.vmap(lambda xs: lax.scan(lambda c, x: (c + x, c), jnp.float32(0.0), xs))
    xs = jnp.arange(6.0).reshape(2, 3)
    c, ys = f(xs)
    assert_close(c, np.array([3.0, 12.0], np.float32), 0)
    assert_close(ys, np.array([[0.0, 0.0, 1.0], [0.0, 3.0, 7.0]], np.float32), 0)


def test_vmap_of_jvp_and_jvp_of_vmap() -> None:
    w, h0, xs = _args()
    hs = jnp.stack([h0, -h0])

    def jvp_rnn(h: Any) -> Any:
        return jax.jvp(lambda h: _rnn(w, h, xs), (h,), (jnp.ones_like(h),))

    got = jax.vmap(jvp_rnn)(hs)
    want = _stack_loop(jvp_rnn, (0,), hs)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert_close(g, e, 1e-5)


# ---------------------------------------------------------------------------------------------
# Dead-code elimination.

def _dce(fun: Callable, *args: Any, used: list[bool]) -> Any:
    closed = jax.make_jaxpr(fun)(*args)
    jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, used)
    return jaxpr


def test_dce_drops_unused_ys_and_carries() -> None:
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: ((c[0] + x, c[1] * x), (jnp.sin(x), c[0])),
                        (jnp.float32(0.0), jnp.float32(1.0)), xs)

    jaxpr = _dce(f, jnp.ones(3), used=[True, False, False, False])
    (eqn,) = jaxpr.eqns
    assert eqn.params["num_carry"] == 1 and len(eqn.outvars) == 1
    assert len(eqn.params["jaxpr"].jaxpr.eqns) == 1  # only `add`


def test_dce_keeps_carries_the_body_reads() -> None:
    """An unused carry the used y reads stays (the fixpoint), its output dropped as `_`."""
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: ((c[0] + x, c[1] * 2.0), c[0] * c[1]), (0.0, 1.0), xs)

    jaxpr = _dce(f, jnp.ones(3), used=[False, False, True])
    (eqn,) = jaxpr.eqns
    assert eqn.params["num_carry"] == 2
    assert str(jaxpr).startswith("{ lambda ; a:f32[3]. let\n    _:f32[] _:f32[] b:f32[3] = scan[")


def test_dce_removes_unused_scan_and_consts() -> None:
    def f(w: Any, xs: Any) -> Any:
        c, ys = lax.scan(lambda c, x: (c + x, x * w), 0.0, xs)
        return c, ys

    jaxpr = _dce(f, 2.0, jnp.ones(3), used=[True, False])
    (eqn,) = jaxpr.eqns
    assert eqn.params["num_consts"] == 0 and len(eqn.invars) == 2
    assert _dce(f, 2.0, jnp.ones(3), used=[False, False]).eqns == []


def test_vmap_of_dce_pruned_output_has_dropvar() -> None:
    """JAX's `vmap/scan_in_axes1`: the unused carry shows as `_` after DCE of the jit."""
    f = jax.jit(lambda xs: lax.scan(lambda c, x: (c * x, c), jnp.float32(1.0), xs)[1])
    assert_close(f(jnp.arange(1.0, 4.0)), np.array([1.0, 1.0, 2.0], np.float32), 0)


# ---------------------------------------------------------------------------------------------
# Lowering: the structure JAX emits, run on the reference backend.

def _ops(module: Any) -> list[str]:
    return [op.opcode for op in module.walk()]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 4])
def test_lowering_runs_on_reference(unroll: int, reverse: bool) -> None:
    w, h0, xs = _args()

    def f(w: Any, h0: Any, xs: Any) -> Any:
        return lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), h0, xs,
                        reverse=reverse, unroll=unroll)

    module = lower_to_module(f, w, h0, xs)
    ops = _ops(module)
    assert ("stablehlo.while" in ops) == (unroll != 4)  # 4 steps in one trip: no loop
    if unroll != 4:
        names = {fn.name for fn in module.functions}
        assert {"dynamic_index_in_dim", "closed_call", "dynamic_update_index_in_dim"} <= names
        assert "stablehlo.dynamic_slice" in ops and "stablehlo.dynamic_update_slice" in ops
    got = run_reference(module, w, h0, xs)
    want = jax.tree_util.tree_leaves(
        _numpy_scan(lambda h, x: (np.tanh(np.asarray(w) @ h + x), h.sum()),
                    np.asarray(h0), np.asarray(xs), 4, reverse))
    for g, e in zip(got, want, strict=True):
        assert_close(g, e, 1e-5)


def test_lowering_length_zero_has_no_loop() -> None:
    module = lower_to_module(lambda c: lax.scan(lambda c, _: (c + 1.0, c), c, None, length=0),
                             jnp.ones(2))
    assert "stablehlo.while" not in _ops(module)
    got = run_reference(module, np.ones(2, np.float32))
    assert got[1].shape == (0, 2)
    assert_close(got[0], np.ones(2, np.float32), 0)


def test_lowering_reverse_counts_down() -> None:
    text = jax.jit(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True)).lower(
        jnp.ones(4)).as_text()
    # The index is `trips - i - 1`: two subtractions in the loop body.
    assert text.count("stablehlo.subtract") == 2
    assert text.count("stablehlo.while") == 1


def test_eager_is_one_program_per_signature() -> None:
    """Eager scans run compiled (the one-op program cached per avals and params)."""
    body = lambda c, x: (c * x, c)  # noqa: E731
    xs = jnp.arange(1.0, 4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = lax.scan(body, jnp.float32(1.0), xs)
        b = jax.jit(lambda xs: lax.scan(body, jnp.float32(1.0), xs))(xs)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        assert_close(x, y, 0)


@pytest.mark.needs_jax
@pytest.mark.parametrize("unroll, reverse", [(1, False), (3, True), (0, False)])
def test_xla_agrees(unroll: int, reverse: bool) -> None:
    """Real XLA parses the lowered text and computes what justjax computes."""
    pytest.importorskip("jax")
    from tests import xla_check
    w, h0, xs = _args()
    xs = jnp.concatenate([xs, xs * 0.5])  # 8 steps: unroll 3 leaves a remainder

    def f(w: Any, h0: Any, xs: Any) -> Any:
        return lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), h0, xs,
                        reverse=reverse, unroll=unroll)

    text = jax.jit(f).lower(w, h0, xs).as_text()
    xla_check.parse(text)
    got = xla_check.run(text, [np.asarray(a) for a in (w, h0, xs)])
    for g, e in zip(got, jax.tree_util.tree_leaves(f(w, h0, xs)), strict=True):
        assert_close(g, e, 1e-5)
