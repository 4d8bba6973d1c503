"""Structured control flow checked from one table (DESIGN.md "Habits", issue #6).

Each `FlowRecord` is one use of `cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map` or
`associative_scan` (or a nesting of them), with a NumPy / Python-loop reference. The columns:
- eager against the reference (dtypes and values);
- jit against eager (avals, weak types included, and values);
- jvp against finite differences (`check_grads`, forward, in float64);
- grad against finite differences (`check_grads`, reverse, in float64), or, for `while_loop`
  and a `fori_loop` with traced bounds, JAX's ValueError;
- vmap against a Python loop over the examples, for every `in_axes` of the record (batched
  predicates, batched trip counts, batched and unbatched operands);
- the lowered StableHLO run on the reference backend against eager.
Then the four realistic programs of the issue (an RNN over 100 steps with grad, an RK4
integrator with grad with respect to a parameter, Newton iteration in while_loop under vmap,
k-means in scan) against plain NumPy, and (needs_jax) against real JAX.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import (assert_close, lower_to_module, run_reference, stack_per_example,
                           x64_mode)

# Reverse mode through a loop whose trip count is not known while tracing (JAX's text).
WHILE_GRAD_ERROR = ("Reverse-mode differentiation does not work for lax.while_loop or "
                    "lax.fori_loop with dynamic start/stop values.")
BATCH = 4


@dataclass(frozen=True)
class FlowRecord:
    """One control-flow use under test.

    Attributes:
      name: the test id.
      fun: the justjax function of array arguments (pytrees are built inside).
      reference: the same computation in NumPy and Python loops, on NumPy arguments; returns
        the same pytree, each leaf with the dtype justjax must give.
      make_args: one example's arguments (NumPy arrays, float32 floats) from a generator.
      diff: positions of the float arguments the derivative columns differentiate.
      reverse: whether reverse mode works; False (a while_loop, a traced fori_loop) means
        grad must raise JAX's ValueError.
      vmap_axes: the `in_axes` tuples the vmap column tries.
      tol: tolerance of float comparisons (relative and absolute).
    """

    name: str
    fun: Callable[..., Any]
    reference: Callable[..., Any]
    make_args: Callable[[np.random.Generator], tuple]
    diff: tuple[int, ...] = ()
    reverse: bool = True
    vmap_axes: tuple[tuple, ...] = ()
    tol: float = 2e-5


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.normal(size=shape).astype(np.float32)


def _i32(value: int) -> np.ndarray:
    return np.asarray(value, np.int32)


# ---------------------------------------------------------------------------------------------
# cond and switch.

def _cond_bool(p, x, y):
    return lax.cond(p, lambda a, b: jnp.sin(a) * b, lambda a, b: a - jnp.cos(b), x, y)


def _cond_bool_ref(p, x, y):
    return np.sin(x) * y if p else x - np.cos(y)


def _cond_int(i, x):
    return lax.cond(i, lambda x: x * 2.0 + 1.0, jnp.tanh, x)


def _cond_int_ref(i, x):
    return x * np.float32(2.0) + np.float32(1.0) if i != 0 else np.tanh(x)


def _cond_pytree(p, x, y):
    """Pytree operand and output; one branch ignores an operand."""
    return lax.cond(p, lambda d: {"s": jnp.sum(d["x"] * d["y"]), "v": d["x"] + 1.0},
                    lambda d: {"s": jnp.max(d["x"]), "v": d["x"] * 3.0}, {"x": x, "y": y})


def _cond_pytree_ref(p, x, y):
    if p:
        return {"s": np.sum(x * y), "v": x + np.float32(1.0)}
    return {"s": np.max(x), "v": x * np.float32(3.0)}


def _cond_data_pred(x):
    """The predicate is computed from the operand (batched along with it under vmap)."""
    return lax.cond(jnp.sum(x) > 0.0, lambda x: x * x, lambda x: jnp.exp(x) - 1.0, x)


def _cond_data_pred_ref(x):
    return x * x if np.sum(x) > 0 else np.exp(x) - np.float32(1.0)


_BRANCHES = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: jnp.sin(x) - y]
_BRANCHES_REF = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: np.sin(x) - y]


def _switch(i, x, y):
    return lax.switch(i, _BRANCHES, x, y)


def _switch_ref(i, x, y):
    # The index is clamped into range, as in JAX.
    return _BRANCHES_REF[int(np.clip(i, 0, len(_BRANCHES_REF) - 1))](x, y)


# ---------------------------------------------------------------------------------------------
# while_loop and fori_loop.

def _while_counted(n, x):
    """A traced trip count `n`; the counter is a weakly typed int."""
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1]) + 0.5 * c[1]),
                          (0, x))


def _while_counted_ref(n, x):
    i = 0
    while i < n:
        i, x = i + 1, np.sin(x) + np.float32(0.5) * x
    return np.int32(i), x


def _while_data_pred(x):
    """The predicate reads the carry: lanes of a vmap finish after different trip counts."""
    return lax.while_loop(lambda x: jnp.sum(x) < 10.0, lambda x: x * 1.5 + 0.25, x)


def _while_data_pred_ref(x):
    while np.sum(x) < 10.0:
        x = x * np.float32(1.5) + np.float32(0.25)
    return x


def _fori_concrete(x):
    return lax.fori_loop(0, 5, lambda i, c: c * 0.5 + jnp.sin(c) * i, x)


def _fori_concrete_ref(x):
    for i in range(5):
        x = x * np.float32(0.5) + np.sin(x) * np.float32(i)
    return x


def _fori_tuple(x, y):
    """Nonzero start, tuple carry."""
    return lax.fori_loop(2, 6, lambda i, c: (c[0] + c[1] * i, c[1] * 0.9), (x, y))


def _fori_tuple_ref(x, y):
    for i in range(2, 6):
        x, y = x + y * np.float32(i), y * np.float32(0.9)
    return x, y


# The trip count is a jit argument, so it is traced: the loop is a while, not a scan.
_fori_traced = jax.jit(lambda n, x: lax.fori_loop(0, n, lambda i, c: jnp.cos(c) + i, x))


def _fori_traced_ref(n, x):
    for i in range(int(n)):
        x = np.cos(x) + np.float32(i)
    return x


# ---------------------------------------------------------------------------------------------
# scan.

def _scan_body(c, x):
    return c * 0.8 + jnp.sin(x), c * x


def _scan_ref(c, xs, reverse=False):
    ys = [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        c, ys[t] = c * np.float32(0.8) + np.sin(xs[t]), c * xs[t]
    return c, np.stack(ys)


def _scan(c, xs):
    return lax.scan(_scan_body, c, xs)


def _scan_reverse(c, xs):
    return lax.scan(_scan_body, c, xs, reverse=True)


def _scan_unroll2(c, xs):
    return lax.scan(_scan_body, c, xs, unroll=2)


def _scan_unroll_true(c, xs):
    return lax.scan(_scan_body, c, xs, unroll=True)


def _scan_xs_none(c):
    return lax.scan(lambda c, _: (c * 0.9 + 1.0, jnp.sum(c * c)), c, None, length=4)


def _scan_xs_none_ref(c):
    ys = []
    for _ in range(4):
        ys.append(np.sum(c * c))
        c = c * np.float32(0.9) + np.float32(1.0)
    return c, np.stack(ys)


def _scan_pytree(h, s, a, b):
    """Dict carry, tuple xs, dict ys: stacked leaf by leaf."""
    def body(carry, x):
        a_t, b_t = x
        h = jnp.tanh(carry["h"] * a_t + carry["s"])
        return {"h": h, "s": carry["s"] + b_t}, {"p": h * b_t, "q": jnp.sum(a_t)}
    return lax.scan(body, {"h": h, "s": s}, (a, b))


def _scan_pytree_ref(h, s, a, b):
    ps, qs = [], []
    for a_t, b_t in zip(a, b, strict=True):
        h = np.tanh(h * a_t + s)
        s = s + b_t
        ps.append(h * b_t)
        qs.append(np.sum(a_t))
    return {"h": h, "s": s}, {"p": np.stack(ps), "q": np.stack(qs)}


# ---------------------------------------------------------------------------------------------
# map and associative_scan.

def _map_row(r):
    return jnp.sin(r) * jnp.sum(r)


def _map_ref(xs):
    return np.stack([np.sin(r) * np.sum(r) for r in xs])


def _assoc_linear(a, b):
    """The linear recurrence h_t = a_t h_{t-1} + b_t as an associative scan over pairs."""
    op = lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1])  # noqa: E731
    return lax.associative_scan(op, (a, b))[1]


def _assoc_linear_ref(a, b):
    h, out = np.float32(0.0), []
    for a_t, b_t in zip(a, b, strict=True):
        h = a_t * h + b_t
        out.append(h)
    return np.stack(out).astype(np.float32)


def _cummax_axis1_ref(x):
    return np.maximum.accumulate(x, axis=1)


def _cumsum_reverse_ref(x):
    return np.cumsum(x[::-1])[::-1]


# ---------------------------------------------------------------------------------------------
# Nestings: the "scan inside cond inside vmap inside grad", and the other orders.

def _scan_in_cond(p, x):
    """A scan over the rows of x in the true branch, a reduction in the false one."""
    return lax.cond(p, lambda x: lax.scan(lambda c, r: (c * r + 1.0, c), jnp.ones_like(x[0]),
                                          x)[0],
                    lambda x: jnp.cos(x[0]) * jnp.sum(x), x)


def _scan_in_cond_ref(p, x):
    if not p:
        return np.cos(x[0]) * np.sum(x)
    c = np.ones_like(x[0])
    for r in x:
        c = c * r + np.float32(1.0)
    return c


def _vmap_cond_scan(p, x):
    return jnp.sum(jax.vmap(_scan_in_cond)(p, x))


def _vmap_cond_scan_ref(p, x):
    return np.sum(np.stack([_scan_in_cond_ref(pi, xi) for pi, xi in zip(p, x, strict=True)]))


def _vmap_grad_cond_scan(p, x):
    return jax.vmap(jax.grad(lambda p, x: jnp.sum(_scan_in_cond(p, x)), argnums=1))(p, x)


def _scan_of_vmapped_cond(c, xs):
    """A scan whose body maps a cond with a data-dependent predicate over a vector."""
    def body(c, x):
        picked = jax.vmap(lambda a: lax.cond(a > 0.0, jnp.sin, jnp.cos, a))(x * c)
        return c + picked, jnp.sum(picked)
    return lax.scan(body, c, xs)


def _scan_of_vmapped_cond_ref(c, xs):
    ys = []
    for x in xs:
        z = x * c
        picked = np.where(z > 0, np.sin(z), np.cos(z))
        c = c + picked
        ys.append(np.sum(picked))
    return c, np.stack(ys)


def _cond_of_vmapped_while(p, x):
    """A cond whose branch maps a while loop with per-lane trip counts."""
    return lax.cond(p, lambda x: jax.vmap(_while_data_pred)(x), lambda x: -x, x)


def _cond_of_vmapped_while_ref(p, x):
    return np.stack([_while_data_pred_ref(r) for r in x]) if p else -x


def _grad_fori_in_scan(xs):
    """Per row, the gradient of a concrete fori_loop: reverse mode inside a scan body."""
    def body(c, x):
        g = jax.grad(lambda x: jnp.sum(lax.fori_loop(0, 3, lambda i, v: jnp.sin(v) * x, x)))(x)
        return c + g, g
    return lax.scan(body, jnp.zeros_like(xs[0]), xs)


def _grad_fori_in_scan_ref(xs):
    def g(x):
        # d/dx of v3 where v_{k+1} = sin(v_k) * x, v_0 = x (forward-mode by hand).
        v, dv = x, np.ones_like(x)
        for _ in range(3):
            v, dv = np.sin(v) * x, np.cos(v) * dv * x + np.sin(v)
        return dv
    gs = np.stack([g(x) for x in xs])
    return np.sum(gs, axis=0), gs


def _vmap_grad_cond_scan_by_differences(p, x):
    """Reference of the vmapped gradient: central differences of the NumPy function in
    float64, per example and element."""
    out = np.zeros(x.shape, np.float64)
    eps = 1e-6
    for b in range(x.shape[0]):
        for idx in np.ndindex(*x.shape[1:]):
            up, down = x[b].astype(np.float64), x[b].astype(np.float64)
            up[idx] += eps
            down[idx] -= eps
            out[(b,) + idx] = (np.sum(_scan_in_cond_ref(p[b], up))
                               - np.sum(_scan_in_cond_ref(p[b], down))) / (2 * eps)
    return out.astype(np.float32)



# ---------------------------------------------------------------------------------------------
# The table.

def _bool(rng):
    return np.bool_(rng.random() < 0.5)


RECORDS = [
    FlowRecord("cond_bool", _cond_bool, _cond_bool_ref,
               lambda r: (_bool(r), _f32(r, 3), _f32(r, 3)), diff=(1, 2),
               vmap_axes=((0, 0, 0), (None, 0, 0), (0, None, None), (0, None, 0))),
    FlowRecord("cond_int_pred", _cond_int, _cond_int_ref,
               lambda r: (_i32(r.integers(-2, 3)), _f32(r, 3)), diff=(1,),
               vmap_axes=((0, 0), (0, None), (None, 0))),
    FlowRecord("cond_pytree", _cond_pytree, _cond_pytree_ref,
               lambda r: (_bool(r), _f32(r, 3), _f32(r, 3)), diff=(1, 2),
               vmap_axes=((0, 0, 0), (0, None, None))),
    FlowRecord("cond_data_pred", _cond_data_pred, _cond_data_pred_ref,
               lambda r: (_f32(r, 3),), diff=(0,), vmap_axes=((0,), (1,))),
    FlowRecord("switch", _switch, _switch_ref,
               lambda r: (_i32(r.integers(-2, 5)), _f32(r, 3), _f32(r, 3)), diff=(1, 2),
               vmap_axes=((0, 0, 0), (0, None, None), (None, 0, 0))),
    FlowRecord("while_counted", _while_counted, _while_counted_ref,
               lambda r: (_i32(r.integers(0, 5)), _f32(r, 3)), diff=(1,), reverse=False,
               vmap_axes=((0, 0), (0, None), (None, 0))),
    FlowRecord("while_data_pred", _while_data_pred, _while_data_pred_ref,
               lambda r: (np.abs(_f32(r, 3)) + np.float32(0.1),), diff=(0,), reverse=False,
               vmap_axes=((0,),)),
    FlowRecord("fori_concrete", _fori_concrete, _fori_concrete_ref,
               lambda r: (_f32(r, 3),), diff=(0,), vmap_axes=((0,),)),
    FlowRecord("fori_tuple", _fori_tuple, _fori_tuple_ref,
               lambda r: (_f32(r, 2), _f32(r, 2)), diff=(0, 1),
               vmap_axes=((0, 0), (None, 0))),
    FlowRecord("fori_traced", _fori_traced, _fori_traced_ref,
               lambda r: (_i32(r.integers(0, 5)), _f32(r, 3)), diff=(1,), reverse=False,
               vmap_axes=((0, 0), (0, None), (None, 0))),
    FlowRecord("scan", _scan, _scan_ref, lambda r: (_f32(r, 3), _f32(r, 5, 3)), diff=(0, 1),
               vmap_axes=((0, 0), (None, 0), (0, None), (None, 1))),
    FlowRecord("scan_reverse", _scan_reverse, lambda c, xs: _scan_ref(c, xs, reverse=True),
               lambda r: (_f32(r, 3), _f32(r, 5, 3)), diff=(0, 1),
               vmap_axes=((0, 0), (None, 1))),
    FlowRecord("scan_unroll2", _scan_unroll2, _scan_ref,
               lambda r: (_f32(r, 3), _f32(r, 5, 3)), diff=(0, 1), vmap_axes=((0, 0),)),
    FlowRecord("scan_unroll_true", _scan_unroll_true, _scan_ref,
               lambda r: (_f32(r, 3), _f32(r, 5, 3)), diff=(0, 1), vmap_axes=((0, None),)),
    FlowRecord("scan_xs_none", _scan_xs_none, _scan_xs_none_ref, lambda r: (_f32(r, 2),),
               diff=(0,), vmap_axes=((0,),)),
    FlowRecord("scan_pytree", _scan_pytree, _scan_pytree_ref,
               lambda r: (_f32(r, 2), _f32(r), _f32(r, 4, 2), _f32(r, 4)), diff=(0, 1, 2, 3),
               vmap_axes=((0, 0, 0, 0), (None, 0, None, 1))),
    FlowRecord("map", lambda xs: lax.map(_map_row, xs), _map_ref, lambda r: (_f32(r, 5, 3),),
               diff=(0,), vmap_axes=((0,), (1,))),
    FlowRecord("map_batch_size", lambda xs: lax.map(_map_row, xs, batch_size=2), _map_ref,
               lambda r: (_f32(r, 5, 3),), diff=(0,), vmap_axes=((0,),)),
    FlowRecord("assoc_cumsum_reverse", lambda x: lax.associative_scan(jnp.add, x, reverse=True),
               _cumsum_reverse_ref, lambda r: (_f32(r, 7),), diff=(0,), vmap_axes=((0,),)),
    FlowRecord("assoc_cummax_axis1",
               lambda x: lax.associative_scan(jnp.maximum, x, axis=1), _cummax_axis1_ref,
               lambda r: (_f32(r, 3, 6),), diff=(0,), vmap_axes=((0,), (2,))),
    FlowRecord("assoc_linear_recurrence", _assoc_linear, _assoc_linear_ref,
               lambda r: (_f32(r, 8) * np.float32(0.5), _f32(r, 8)), diff=(0, 1),
               vmap_axes=((0, 0), (None, 0))),
    FlowRecord("nested_scan_in_cond", _scan_in_cond, _scan_in_cond_ref,
               lambda r: (_bool(r), _f32(r, 4, 3)), diff=(1,),
               vmap_axes=((0, 0), (0, None))),
    FlowRecord("nested_scan_in_cond_in_vmap", _vmap_cond_scan, _vmap_cond_scan_ref,
               lambda r: (r.random(4) < 0.5, _f32(r, 4, 4, 3)), diff=(1,)),
    FlowRecord("nested_vmap_of_grad_of_scan_in_cond", _vmap_grad_cond_scan,
               _vmap_grad_cond_scan_by_differences,
               lambda r: (np.array([True, False, True]), _f32(r, 3, 4, 3)), diff=(1,),
               tol=2e-3),
    FlowRecord("nested_vmapped_cond_in_scan", _scan_of_vmapped_cond, _scan_of_vmapped_cond_ref,
               lambda r: (_f32(r, 3), _f32(r, 5, 3)), diff=(0, 1), vmap_axes=((0, 0),)),
    FlowRecord("nested_vmapped_while_in_cond", _cond_of_vmapped_while,
               _cond_of_vmapped_while_ref,
               lambda r: (_bool(r), np.abs(_f32(r, 3, 2)) + np.float32(0.1)), diff=(1,),
               reverse=False, vmap_axes=((0, 0),)),
    FlowRecord("nested_grad_fori_in_scan", _grad_fori_in_scan, _grad_fori_in_scan_ref,
               lambda r: (_f32(r, 4, 2),), diff=(0,), vmap_axes=((0,),), tol=1e-4),
]


def _args(record: FlowRecord, salt: str = "") -> tuple:
    rng = np.random.default_rng(zlib.crc32(f"{salt}{record.name}".encode()))
    return record.make_args(rng)


def _params(records: list[FlowRecord] = RECORDS) -> list:
    return [pytest.param(r, id=r.name) for r in records]


def _leaves(tree: Any) -> list:
    return jax.tree_util.tree_leaves(tree)


def _assert_tree_close(got: Any, want: Any, tol: float, context: str) -> None:
    """Same pytree structure, and per leaf the same dtype (when `want`'s leaf has one), shape
    and values (integers and bools exactly)."""
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, f"{context}: structure {got_tree} != {want_tree}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"{context} leaf {i}: dtype {g.dtype} != {w.dtype}"
        assert_close(g, w, 0 if g.dtype.kind in "biu" else tol, context=f"{context} leaf {i}")


@pytest.mark.parametrize("record", _params())
def test_eager_matches_reference(record: FlowRecord) -> None:
    """Eager evaluation gives the NumPy / Python-loop result, with its dtypes."""
    args = _args(record)
    got = record.fun(*[jnp.asarray(a) for a in args])
    _assert_tree_close(got, record.reference(*args), record.tol, record.name)


@pytest.mark.parametrize("record", _params())
def test_jit_matches_eager(record: FlowRecord) -> None:
    """`jit(f)` gives the eager result: avals (weak types too) and values."""
    args = [jnp.asarray(a) for a in _args(record)]
    eager = record.fun(*args)
    jitted = jax.jit(record.fun)(*args)
    for got, want in zip(_leaves(jitted), _leaves(eager), strict=True):
        assert got.aval == want.aval, (got.aval, want.aval)
    _assert_tree_close(jitted, eager, record.tol, record.name)


def _float_outputs(record: FlowRecord, args: tuple) -> Callable[..., tuple]:
    """`record.fun` as a function of its `diff` arguments (the others held at `args`),
    returning only its float leaves (integer counters have no derivative to check)."""
    def fun(*diff_args):
        full = list(args)
        for position, value in zip(record.diff, diff_args, strict=True):
            full[position] = value
        return tuple(leaf for leaf in _leaves(record.fun(*full))
                     if jnp.issubdtype(leaf.dtype, jnp.floating))
    return fun


def _wide_args(record: FlowRecord) -> tuple:
    """The record's arguments with the differentiated ones in float64."""
    return tuple(np.asarray(a, np.float64) if i in record.diff else a
                 for i, a in enumerate(_args(record)))


@pytest.mark.parametrize("record", _params([r for r in RECORDS if r.diff]))
def test_jvp_matches_finite_differences(record: FlowRecord) -> None:
    """Forward mode against central differences, in float64."""
    with x64_mode(True):
        args = _wide_args(record)
        check_grads(_float_outputs(record, args), [args[i] for i in record.diff], order=1,
                    modes=("fwd",))


@pytest.mark.parametrize("record", _params([r for r in RECORDS if r.diff]))
def test_grad_matches_finite_differences(record: FlowRecord) -> None:
    """Reverse mode against central differences, in float64; a loop with a trip count not
    known at trace time raises JAX's ValueError instead."""
    with x64_mode(True):
        args = _wide_args(record)
        fun = _float_outputs(record, args)
        diff_args = [args[i] for i in record.diff]
        if record.reverse:
            check_grads(fun, diff_args, order=1, modes=("rev",))
            return
        with pytest.raises(ValueError, match=WHILE_GRAD_ERROR.replace(".", r"\.")):
            jax.grad(lambda *xs: sum(jnp.sum(y) for y in fun(*xs)),
                     argnums=tuple(range(len(diff_args))))(*diff_args)


def _vmap_cases() -> list:
    return [pytest.param(r, axes, id=f"{r.name}-{'_'.join(str(a) for a in axes)}")
            for r in RECORDS for axes in r.vmap_axes]


@pytest.mark.parametrize("record,in_axes", _vmap_cases())
def test_vmap_matches_loop(record: FlowRecord, in_axes: tuple) -> None:
    """`vmap(f, in_axes)` equals `f` applied example by example, results stacked: batched
    predicates and indices, batched trip counts, batched and unbatched operands."""
    rng = np.random.default_rng(zlib.crc32(f"vmap{record.name}{in_axes}".encode()))
    examples = [record.make_args(rng) for _ in range(BATCH)]
    batched = tuple(examples[0][i] if axis is None else
                    np.stack([np.asarray(e[i]) for e in examples], axis=axis)
                    for i, axis in enumerate(in_axes))
    got = jax.vmap(record.fun, in_axes=in_axes)(*[jnp.asarray(a) for a in batched])
    want = stack_per_example(lambda *xs: record.fun(*[jnp.asarray(x) for x in xs]), *batched,
                             in_axes=in_axes)
    _assert_tree_close(got, want, record.tol, f"{record.name} vmap {in_axes}")


@pytest.mark.parametrize("record", _params())
def test_lowering_runs_on_reference_backend(record: FlowRecord) -> None:
    """The StableHLO of `f` (stablehlo.case / stablehlo.while), run by the reference
    backend, gives the eager result."""
    args = _args(record)
    module = lower_to_module(record.fun, *args)
    got = run_reference(module, *args)
    want = [np.asarray(leaf) for leaf in _leaves(record.fun(*[jnp.asarray(a) for a in args]))]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        assert_close(g, w, 0 if g.dtype.kind in "biu" else record.tol,
                     context=f"{record.name} result {i}")


def test_record_names_are_unique() -> None:
    names = [r.name for r in RECORDS]
    assert len(names) == len(set(names))


def test_every_primitive_kind_has_a_record() -> None:
    """The table binds cond, while and scan (the three control-flow primitives)."""
    seen = set()
    for record in RECORDS:
        closed = jax.make_jaxpr(record.fun)(*[jnp.asarray(a) for a in _args(record)])
        seen |= _primitive_names(closed.jaxpr)
    assert {"cond", "while", "scan"} <= seen, seen


def _primitive_names(jaxpr: Any) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    names |= _primitive_names(inner)
    return names


# ---------------------------------------------------------------------------------------------
# The realistic programs. Each builder takes the `jax`, `jnp` and `lax` modules, so the
# needs_jax test runs the same source on real JAX.

def rnn_program(jax: Any, jnp: Any, lax: Any) -> Callable[..., Any]:
    """The mean squared error of a tanh RNN over the sequence, and its gradient with respect
    to the parameters: `(params, xs, target) -> (loss, grads)`."""
    def loss(params, xs, target):
        def cell(h, x):
            h = jnp.tanh(params["Wh"] @ h + params["Wx"] @ x + params["b"])
            return h, params["Wo"] @ h
        _, ys = lax.scan(cell, jnp.zeros(params["b"].shape, xs.dtype), xs)
        return jnp.mean((ys - target) ** 2)
    return jax.value_and_grad(loss)


def _rnn_loss_ref(params: dict, xs: np.ndarray, target: np.ndarray) -> float:
    h = np.zeros(params["b"].shape)
    ys = []
    for x in xs:
        h = np.tanh(params["Wh"] @ h + params["Wx"] @ x + params["b"])
        ys.append(params["Wo"] @ h)
    return float(np.mean((np.stack(ys) - target) ** 2))


def _rnn_args() -> tuple:
    rng = np.random.default_rng(6)
    params = {"Wh": rng.normal(size=(4, 4)) * 0.4, "Wx": rng.normal(size=(4, 3)),
              "b": rng.normal(size=4) * 0.1, "Wo": rng.normal(size=(2, 4))}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    xs = np.sin(np.arange(300) * 0.1).reshape(100, 3).astype(np.float32)
    target = np.cos(np.arange(200) * 0.05).reshape(100, 2).astype(np.float32)
    return params, xs, target


def _central_differences(fun: Callable[[dict], float], params: dict, eps: float = 1e-6
                         ) -> dict:
    """The gradient of a float64 NumPy function of a dict of arrays, by central differences."""
    grads = {}
    for key, value in params.items():
        grad = np.zeros(value.shape)
        for idx in np.ndindex(*value.shape):
            up = {k: v.astype(np.float64).copy() for k, v in params.items()}
            down = {k: v.astype(np.float64).copy() for k, v in params.items()}
            up[key][idx] += eps
            down[key][idx] -= eps
            grad[idx] = (fun(up) - fun(down)) / (2 * eps)
        grads[key] = grad
    return grads


def rk4_program(jax: Any, jnp: Any, lax: Any) -> Callable[..., Any]:
    """A damped oscillator y'' = -k y - 0.1 y' integrated by RK4 over 50 steps of a scan; the
    loss (final position squared plus a trajectory penalty) and its derivative in `k`."""
    def rhs(y, k):
        return jnp.stack([y[1], -k * y[0] - 0.1 * y[1]])

    def loss(k, y0, dt=0.05):
        def step(y, _):
            k1 = rhs(y, k)
            k2 = rhs(y + dt / 2 * k1, k)
            k3 = rhs(y + dt / 2 * k2, k)
            k4 = rhs(y + dt * k3, k)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y[0]
        y_final, trajectory = lax.scan(step, y0, None, length=50)
        return y_final[0] ** 2 + 0.01 * jnp.sum(trajectory ** 2)
    return jax.value_and_grad(loss)


def _rk4_loss_ref(k: float, y0: np.ndarray, dt: float = 0.05) -> float:
    def rhs(y):
        return np.array([y[1], -k * y[0] - 0.1 * y[1]])
    y, trajectory = np.asarray(y0, np.float64), []
    for _ in range(50):
        k1 = rhs(y)
        k2 = rhs(y + dt / 2 * k1)
        k3 = rhs(y + dt / 2 * k2)
        k4 = rhs(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        trajectory.append(y[0])
    return float(y[0] ** 2 + 0.01 * np.sum(np.square(trajectory)))


def newton_program(jax: Any, jnp: Any, lax: Any) -> Callable[..., Any]:
    """Square roots by Newton's iteration in a while_loop, vmapped: each lane stops on its
    own tolerance, so the lanes run different trip counts. Returns (roots, iterations)."""
    def newton_sqrt(a):
        def cond(c):
            x, i = c
            return (jnp.abs(x * x - a) > 1e-5 * a) & (i < 50)

        def body(c):
            x, i = c
            return x - (x * x - a) / (2 * x), i + 1
        return lax.while_loop(cond, body, (jnp.maximum(a, 1.0), 0))
    return jax.vmap(newton_sqrt)


def _newton_ref(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    roots, counts = [], []
    for value in a.astype(np.float32):
        x, i = np.maximum(value, np.float32(1.0)), 0
        while np.abs(x * x - value) > np.float32(1e-5) * value and i < 50:
            x, i = x - (x * x - value) / (np.float32(2) * x), i + 1
        roots.append(x)
        counts.append(i)
    return np.array(roots, np.float32), np.array(counts, np.int32)


def kmeans_program(jax: Any, jnp: Any, lax: Any) -> Callable[..., Any]:
    """Six Lloyd iterations of k-means in a scan: (final centers, inertia per iteration)."""
    def kmeans(points, centers):
        def step(c, _):
            d = jnp.sum((points[:, None, :] - c[None, :, :]) ** 2, axis=-1)
            onehot = jax.nn.one_hot(jnp.argmin(d, axis=1), c.shape[0])
            counts = jnp.sum(onehot, axis=0)
            sums = onehot.T @ points
            c = jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1.0)[:, None], c)
            return c, jnp.sum(jnp.min(d, axis=1))
        return lax.scan(step, centers, None, length=6)
    return kmeans


def _kmeans_ref(points: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c, inertia = centers.astype(np.float64), []
    for _ in range(6):
        d = np.sum((points[:, None, :] - c[None, :, :]) ** 2, axis=-1)
        assign = np.argmin(d, axis=1)
        inertia.append(np.sum(np.min(d, axis=1)))
        c = np.stack([points[assign == j].mean(axis=0) if np.any(assign == j) else c[j]
                      for j in range(len(c))])
    return c, np.array(inertia)


def _kmeans_args() -> tuple:
    rng = np.random.default_rng(66)
    blobs = np.array([[0.0, 0.0], [3.0, 1.0], [1.0, 4.0]])
    points = (np.repeat(blobs, 20, axis=0) + rng.normal(scale=0.4, size=(60, 2)))
    return points.astype(np.float32), points[[0, 1, 2]].astype(np.float32)


NEWTON_ARGS = (np.array([0.25, 2.0, 9.0, 1e4, 1.0, 3.0e-3, 57.0], np.float32),)
RK4_ARGS = (np.float32(2.0), np.array([1.0, 0.0], np.float32))


def test_rnn_100_steps_with_grad() -> None:
    """Loss and gradient of an RNN over 100 steps: the loss against NumPy, every gradient
    entry against central differences of the NumPy loss."""
    params, xs, target = _rnn_args()
    loss, grads = rnn_program(jax, jnp, lax)(params, xs, target)
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss, _rnn_loss_ref(params, xs, target), rtol=1e-5)
    want = _central_differences(lambda p: _rnn_loss_ref(p, xs, target), params)
    for key in params:
        assert grads[key].dtype == np.float32
        np.testing.assert_allclose(grads[key], want[key], rtol=1e-3,
                                   atol=1e-4 * np.abs(want[key]).max(), err_msg=key)


def test_rk4_grad_with_respect_to_parameter() -> None:
    """An RK4 integration via scan: loss against NumPy, d loss / d k against differences, and
    jit(value_and_grad) equal to its eager result."""
    k, y0 = RK4_ARGS
    program = rk4_program(jax, jnp, lax)
    loss, dk = program(k, y0)
    np.testing.assert_allclose(loss, _rk4_loss_ref(float(k), y0), rtol=1e-5)
    eps = 1e-6
    want = (_rk4_loss_ref(float(k) + eps, y0) - _rk4_loss_ref(float(k) - eps, y0)) / (2 * eps)
    np.testing.assert_allclose(dk, want, rtol=1e-4)
    jit_loss, jit_dk = jax.jit(program)(k, y0)
    np.testing.assert_allclose([jit_loss, jit_dk], [loss, dk], rtol=1e-5)


def test_newton_while_loop_under_vmap() -> None:
    """Batched Newton iterations: roots against np.sqrt, per-lane iteration counts against a
    float32 Python loop (a batched while predicate must stop each lane on its own)."""
    (a,) = NEWTON_ARGS
    roots, counts = newton_program(jax, jnp, lax)(a)
    want_roots, want_counts = _newton_ref(a)
    np.testing.assert_allclose(roots, np.sqrt(a.astype(np.float64)), rtol=1e-5)
    np.testing.assert_allclose(roots, want_roots, rtol=1e-6)
    np.testing.assert_array_equal(counts, want_counts)
    jit_roots, jit_counts = jax.jit(newton_program(jax, jnp, lax))(a)
    np.testing.assert_array_equal(jit_counts, counts)
    np.testing.assert_allclose(jit_roots, roots, rtol=1e-6)


def test_kmeans_iterations_in_scan() -> None:
    """Six k-means iterations in a scan: centers and per-iteration inertia against NumPy's
    Lloyd iterations, eager and under jit."""
    points, centers = _kmeans_args()
    want_centers, want_inertia = _kmeans_ref(points, centers)
    program = kmeans_program(jax, jnp, lax)
    for got_centers, got_inertia in (program(points, centers),
                                     jax.jit(program)(points, centers)):
        np.testing.assert_allclose(got_centers, want_centers, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got_inertia, want_inertia, rtol=1e-5)


REALISTIC = {
    "rnn": (rnn_program, _rnn_args),
    "rk4": (rk4_program, lambda: RK4_ARGS),
    "newton": (newton_program, lambda: NEWTON_ARGS),
    "kmeans": (kmeans_program, _kmeans_args),
}


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(REALISTIC))
def test_realistic_program_matches_jax(name: str) -> None:
    """The same program source on real JAX gives the same results (dtypes and values)."""
    real_jax = pytest.importorskip("jax")
    build, make_args = REALISTIC[name]
    args = make_args()
    ours = build(jax, jnp, lax)(*args)
    theirs = build(real_jax, real_jax.numpy, real_jax.lax)(*args)
    theirs = real_jax.tree_util.tree_map(np.asarray, theirs)
    _assert_tree_close(jax.tree_util.tree_map(np.asarray, ours), theirs, 2e-5, name)


# ---------------------------------------------------------------------------------------------
# Errors raised inside a body name the user's function, what it was traced for and the
# parameter the offending value came from, as JAX's messages do (checked against JAX 0.10.2).

def _python_branch(i: Any, c: Any) -> Any:
    if c > 2:
        return c
    return c + 1.0


@pytest.mark.parametrize("call, traced_for", [
    (lambda: lax.fori_loop(0, 3, _python_branch, 0.0), "fori_loop"),
    (lambda: lax.fori_loop(0, jnp.zeros((), jnp.int32) + 3, _python_branch, 0.0), "fori_loop"),
    (lambda: lax.scan(lambda c, x: (_python_branch(0, c), None), 0.0, None, length=3),
     "scan"),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: _python_branch(0, c), 0.0),
     "while_body"),
    (lambda: lax.cond(True, lambda c: _python_branch(0, c), lambda c: c, 0.0), "cond"),
    (lambda: lax.switch(1, [lambda c: c, lambda c: _python_branch(0, c)], 0.0), "switch"),
])
def test_errors_in_bodies_name_the_users_function(call: Callable, traced_for: str) -> None:
    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.jit(call)()
    message = str(info.value)
    assert f"for {traced_for}. " in message
    assert "depends on the value of the argument c." in message
    if traced_for == "fori_loop":
        assert "the function _python_branch at " in message
