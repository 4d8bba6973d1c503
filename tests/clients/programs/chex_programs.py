"""Chex as its README and API documentation use it: assertions, `chex.dataclass`, variants.

Each public function is one program for `tests/clients/run_programs.py`: written for JAX, it
returns a small dict of results. Run with real JAX they give `tests/clients/records/chex.json`;
under `python -m justjax run` they must give the same.
"""
from __future__ import annotations

import io
import unittest
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np


def _failure(assertion: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    """The exception's type name and message of an assertion expected to fail."""
    try:
        assertion(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error is the result
        return [type(error).__name__, str(error)]
    return ["no error", ""]


def passing_asserts() -> dict:
    """The static and value assertions on inputs that satisfy them (each returns None)."""
    x = jnp.ones((2, 3), jnp.float32)
    tree = {"a": x, "b": (jnp.arange(3), jnp.zeros(()))}
    dims = chex.Dimensions(B=2, T=3)
    checks = [
        chex.assert_shape(x, (2, 3)),
        chex.assert_shape([x, x], (2, None)),
        chex.assert_shape(x, dims["BT"]),
        chex.assert_rank(x, 2),
        chex.assert_rank([x, jnp.zeros(())], [2, 0]),
        chex.assert_rank(x, {1, 2}),
        chex.assert_type(x, float),
        chex.assert_type([x, jnp.arange(2)], [jnp.float32, int]),
        chex.assert_equal_shape([x, x * 2]),
        chex.assert_axis_dimension(x, 1, 3),
        chex.assert_scalar_positive(0.5),
        chex.assert_tree_all_finite(tree),
        chex.assert_trees_all_close(tree, jax.tree_util.tree_map(lambda v: v + 1e-7, tree),
                                    atol=1e-6),
        chex.assert_trees_all_equal(tree, tree),
        chex.assert_trees_all_equal_shapes(tree, tree),
        chex.assert_trees_all_equal_dtypes(tree, tree),
        chex.assert_tree_shape_prefix(tree["a"], (2,)),
        chex.assert_numerical_grads(lambda v: jnp.sum(jnp.sin(v) * v), (jnp.array([0.5, 1.5]),),
                                    order=1, atol=1e-2),
    ]
    return {"results": checks, "dims_shape": list(dims["BTB"])}


def failing_asserts() -> dict:
    """Assertions on inputs that violate them: chex's AssertionError and its message."""
    x = jnp.ones((2, 3), jnp.float32)
    return {
        "shape": _failure(chex.assert_shape, x, (3, 2)),
        "rank": _failure(chex.assert_rank, x, 3),
        "type": _failure(chex.assert_type, x, int),
        "equal_shape": _failure(chex.assert_equal_shape, [x, jnp.ones((3,))]),
        "axis_dimension": _failure(chex.assert_axis_dimension, x, 0, 5),
        "tree_all_finite": _failure(chex.assert_tree_all_finite,
                                    {"w": jnp.array([1.0, jnp.nan])}),
        "trees_all_close": _failure(chex.assert_trees_all_close, {"w": x}, {"w": x + 0.1})[0],
        "trees_all_equal_shapes": _failure(chex.assert_trees_all_equal_shapes, {"w": x},
                                           {"w": x.T}),
        "custom_exception": _failure(chex.assert_tree_all_finite, jnp.array([jnp.inf]),
                                     custom_message="Failed at iteration 3.",
                                     exception_type=ValueError),
    }


def max_traces() -> dict:
    """`@chex.assert_max_traces(n=1)` under `jax.jit`: a second shape retraces and fails."""
    chex.clear_trace_counter()

    @jax.jit
    @chex.assert_max_traces(n=1)
    def fn_sum_jitted(x, y):
        return x + y

    first = fn_sum_jitted(jnp.zeros(3), jnp.ones(3))
    again = fn_sum_jitted(jnp.ones(3), jnp.ones(3))  # same shapes: no retrace
    retrace = _failure(fn_sum_jitted, jnp.zeros([6, 7]), jnp.zeros([6, 7]))
    return {"first": first, "again": again, "retrace_error": retrace[0]}


@chex.dataclass
class _Params:
    w: chex.Array
    b: chex.Array


@chex.dataclass(frozen=True)
class _Frozen:
    scale: chex.Array


def dataclass_pytree() -> dict:
    """`chex.dataclass` as a pytree: tree_map, jit, grad, replace, its mapping face."""
    params = _Params(w=jnp.arange(3.0), b=jnp.array(1.0))
    doubled = jax.tree_util.tree_map(lambda v: 2 * v, params)

    @jax.jit
    def loss(p: _Params, x: jax.Array) -> jax.Array:
        return jnp.sum((x @ p.w + p.b) ** 2)

    x = jnp.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    grads = jax.grad(loss)(params, x)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    rebuilt = jax.tree_util.tree_unflatten(treedef, [leaf + 1 for leaf in leaves])
    frozen = _Frozen(scale=jnp.array(2.0))
    return {
        "doubled_w": doubled.w, "doubled_is_params": isinstance(doubled, _Params),
        "loss": loss(params, x), "grad_w": grads.w, "grad_b": grads.b,
        "num_leaves": len(leaves), "rebuilt_b": rebuilt.b,
        "replaced_b": params.replace(b=jnp.array(5.0)).b,
        "keys": sorted(params.keys()), "as_dict_w": dict(params)["w"],
        "frozen_set": _failure(setattr, frozen, "scale", 3.0)[0],
        "equal_after_roundtrip": bool(jnp.all(rebuilt.w == params.w + 1)),
    }


def _variants_test_case() -> type:
    """The README's variants example (with and without jit, with and without device), plus
    one variant test that fails on purpose and one that asserts a traced shape."""

    def fn(x, y):
        return x + y

    class ExampleTest(chex.TestCase):

        @chex.variants(with_jit=True, without_jit=True)
        def test_add(self):
            var_fn = self.variant(fn)
            self.assertEqual(fn(1, 2), 3)
            self.assertEqual(var_fn(1, 2), fn(1, 2))

        @chex.variants(with_jit=True, without_jit=True, with_device=True, without_device=True)
        def test_decorated(self):
            @self.variant
            def var_fn(x, y):
                chex.assert_shape(x, (3,))
                return jnp.dot(x, y)

            np.testing.assert_allclose(var_fn(jnp.arange(3.0), jnp.ones(3)), 3.0)

        @chex.variants(with_jit=True, without_jit=True)
        def test_fails(self):
            var_fn = self.variant(lambda x: x * 2)
            chex.assert_trees_all_close(var_fn(jnp.ones(2)), jnp.ones(2))

    return ExampleTest


def variants_unittest() -> dict:
    """A `chex.TestCase` with `@chex.variants` run by unittest: each variant is a test."""
    case = _variants_test_case()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    names = sorted(test.id().rsplit(".", 1)[-1] for test in suite)
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    failed = sorted(test.id().rsplit(".", 1)[-1] for test, _ in result.failures)
    errors = [f"{test.id().rsplit('.', 1)[-1]}: {trace.splitlines()[-1]}"
              for test, trace in result.errors]
    return {"tests": names, "run": result.testsRun, "failed": failed, "errors": errors}


def chexify_value_asserts() -> dict:
    """`chex.chexify` makes value assertions work inside a jitted function."""

    @chex.chexify
    @jax.jit
    def logp1_abs_safe(x: chex.Array) -> chex.Array:
        chex.assert_tree_all_finite(x)
        return jnp.log(jnp.abs(x) + 1)

    ok = logp1_abs_safe(jnp.ones(2))
    logp1_abs_safe.wait_checks()
    try:
        logp1_abs_safe(jnp.array([jnp.nan, 3.0]))
        logp1_abs_safe.wait_checks()
        error = "no error"
    except Exception as e:  # noqa: BLE001 - the error is the result
        error = type(e).__name__
    return {"ok": ok, "nan_error": error}


def fakes() -> dict:
    """`chex.fake_pmap` runs a pmapped function as a vmap; `chex.fake_jit` runs a jitted one
    eagerly (a Python side effect then happens at every call)."""
    with chex.fake_pmap():
        @jax.pmap
        def fn(inputs):
            return jnp.sin(inputs) * 2

        pmapped = fn(jnp.arange(8.0).reshape(4, 2))
    traces = []
    with chex.fake_jit():
        @jax.jit
        def g(x):
            traces.append(1)
            return x + 1

        g(jnp.ones(2))
        jitted = g(jnp.ones(2))
    return {"pmapped": pmapped, "jitted": jitted, "python_calls": len(traces)}
