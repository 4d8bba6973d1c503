"""`lax.while_loop` and the `while` primitive (`_src/lax/control_flow/while_loop.py`).

- printing and lowering: texts real JAX 0.10.2 printed for programs the corpus of
  `test_control_flow_programs.py` does not hold (below), character for character;
- JAX's errors: carry type and structure changes, a non-boolean or non-scalar predicate,
  reverse-mode differentiation;
- forward mode against finite differences, linearize, checkpoint;
- vmap against a Python loop over the examples: batched trip counts, a batched predicate,
  batched carries only, batched body constants, nested vmaps, other batch axes;
- jit against eager, `disable_jit` as a Python loop, dead-code elimination (as JAX: none
  inside the loop), the lowering's structure and the reference backend running it.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.interpreters import partial_eval as pe
from justjax._src.test_util import check_grads
from tests.harness import assert_close, lower_to_module, run_reference, x64_mode

WHILE_GRAD_ERROR = ("Reverse-mode differentiation does not work for lax.while_loop or "
                    "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                    "using fori_loop with static start/stop.")

# ---------------------------------------------------------------------------------------------
# Texts real JAX 0.10.2 printed.

FWD_CONST = """\
{ lambda ; a:f32[]. let
    b:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:f32[] e:i32[] f:f32[]. let
          g:i32[] = add e 1:i32[]
          h:f32[] = mul f d
        in (g, h) }
      body_nconsts=1
      cond_jaxpr={ lambda ; i:i32[] j:f32[]. let
          k:bool[] = lt i 3:i32[]
        in (k,) }
      cond_nconsts=0
    ] a 0:i32[] a
  in (b, a, c) }"""

LINEARIZE = """\
{ lambda ; a:f32[]. let
    _:i32[] _:f32[] = while[
      body_jaxpr={ lambda ; b:i32[] c:f32[]. let
          d:i32[] = add b 1:i32[]
          e:f32[] = sin c
          f:f32[] = cos c
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
          h:f32[] = mul e g
        in (d, h) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i32[] j:f32[]. let
          k:bool[] = lt i 3:i32[]
        in (k,) }
      cond_nconsts=0
    ] 0:i32[] a
    _:i32[] _:f32[] l:f32[] = while[
      body_jaxpr={ lambda ; m:i32[] n:f32[] o:f32[]. let
          p:i32[] = add m 1:i32[]
          q:f32[] = sin n
          r:f32[] = cos n
          s:f32[] = mul o r
          t:f32[] = convert_element_type[new_dtype=float32 weak_type=False] m
          u:f32[] = mul q t
          v:f32[] = mul s t
        in (p, u, v) }
      body_nconsts=0
      cond_jaxpr={ lambda ; w:i32[] x:f32[] y:f32[]. let
          z:bool[] = lt w 3:i32[]
        in (z,) }
      cond_nconsts=0
    ] 0:i32[] a a
  in (l,) }"""

CHECKPOINT_JVP = """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:i32[] g:f32[] h:f32[] = while[
            body_jaxpr={ lambda ; i:i32[] j:f32[] k:f32[]. let
                l:i32[] = add i 1:i32[]
                m:f32[] = sin j
                n:f32[] = cos j
                o:f32[] = mul k n
              in (l, m, o) }
            body_nconsts=0
            cond_jaxpr={ lambda ; p:i32[] q:f32[] r:f32[]. let
                s:bool[] = lt p 3:i32[]
              in (s,) }
            cond_nconsts=0
          ] 0:i32[] d e
        in (g, h) }
      policy=None
      prevent_cse=True
    ] a a
  in (b, c) }"""

NESTED_VMAP_JAXPR = """\
{ lambda a:f32[3]; b:f32[2]. let
    c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] a
    d:f32[2,3] = while[
      body_jaxpr={ lambda ; e:f32[2] f:f32[2,3]. let
          g:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
          h:f32[2,3] = mul f g
        in (h,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; i:f32[2,3]. let
          j:bool[2,3] = lt i 10.0:f32[]
        in (j,) }
      cond_nconsts=0
    ] b c
  in (d,) }"""

NESTED_VMAP_HLO = """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0) : tensor<2xf32>, tensor<2x3xf32>
    cond {
      %cst_1 = stablehlo.constant dense<1.000000e+01> : tensor<f32>
      %2 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
      %3 = stablehlo.compare LT, %iterArg_0, %2, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
      %c = stablehlo.constant dense<false> : tensor<i1>
      %4 = stablehlo.reduce(%3 init: %c) applies stablehlo.or across dimensions = [0, 1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %2 = stablehlo.broadcast_in_dim %iterArg, dims = [0] : (tensor<2xf32>) -> tensor<2x1xf32>
      %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
      %4 = stablehlo.multiply %iterArg_0, %3 : tensor<2x3xf32>
      %cst_1 = stablehlo.constant dense<1.000000e+01> : tensor<f32>
      %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
      %6 = stablehlo.compare LT, %iterArg_0, %5, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
      %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<2x3xi1>) -> tensor<2x3xi1>
      %8 = stablehlo.select %7, %4, %iterArg_0 : tensor<2x3xi1>, tensor<2x3xf32>
      stablehlo.return %iterArg, %8 : tensor<2xf32>, tensor<2x3xf32>
    }
    return %1#1 : tensor<2x3xf32>
  }
}
"""

NESTED_VMAP_VALUE = [[16.0, 16.0, 12.0], [27.0, 18.0, 27.0]]


def _nested_vmap(y: Any) -> Any:
    """Per outer lane y, a vmap over three starts of a loop multiplying by y until >= 10."""
    return jax.vmap(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * y, x))(
        jnp.array([1.0, 2.0, 3.0]))


def _wl(cond: Callable, body: Callable, init: Any) -> Any:
    return lax.while_loop(cond, body, init)


# ---------------------------------------------------------------------------------------------
# Printing beyond the corpus.

def test_forwarded_carry_becomes_body_const() -> None:
    """A carry the body returns unchanged and the predicate ignores is a body constant."""
    f = lambda x: _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1], c[2] * c[1]), (0, x, x))
    assert str(jax.make_jaxpr(f)(jnp.float32(2.0))) == FWD_CONST
    i, same, prod = f(jnp.float32(2.0))
    assert (int(i), float(same), float(prod)) == (3, 2.0, 16.0)


def test_linearize_prints_known_loop_and_whole_loop() -> None:
    """Partial evaluation: the known carries from a loop over the known body (fresh names),
    the tangent from the whole jvp loop, staged."""
    f = lambda x: _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * c[0]), (0, x))[1]
    g = lambda x: jax.linearize(f, x)[1](x)
    assert str(jax.make_jaxpr(g)(jnp.float32(0.5))) == LINEARIZE


def test_checkpoint_jvp_prints_as_jax() -> None:
    f = jax.checkpoint(lambda x: _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])),
                                     (0, x))[1])
    g = lambda x: jax.jvp(f, (x,), (x,))
    assert str(jax.make_jaxpr(g)(jnp.float32(0.5))) == CHECKPOINT_JVP


def test_nested_vmap_outer_batched_const_prints_and_lowers_as_jax() -> None:
    """The inner vmap batches the predicate (bool[3]); the outer batches a body constant, so
    the carries' outer axis goes after the predicate's: the per-lane select still works."""
    f = jax.vmap(lambda y: _nested_vmap(y))  # a lambda, as JAX's module name says
    y = jnp.array([2.0, 3.0])
    assert str(jax.make_jaxpr(f)(y)) == NESTED_VMAP_JAXPR
    assert jax.jit(f).lower(y).as_text() == NESTED_VMAP_HLO
    np.testing.assert_allclose(np.asarray(f(y)), NESTED_VMAP_VALUE)


# ---------------------------------------------------------------------------------------------
# Errors.

@pytest.mark.parametrize("cond, body, init, message", [
    (lambda c: (c < 3.0, c < 3.0), lambda c: c + 1.0, 1.0,
     "cond_fun must return a boolean scalar, but got pytree PyTreeDef((*, *))."),
    (lambda c: jnp.int32(1), lambda c: c + 1.0, 1.0,
     "cond_fun must return a boolean scalar, but got output type(s) "
     "[ShapedArray(int32[])]."),
    (None, lambda c: c + 1.0, 1.0,
     "lax.while_loop: body_fun and cond_fun arguments should be callable."),
    (lambda c: c[0] < 3.0, lambda c: (c[0] + 1.0, c[1]), [1.0, 1.0],
     "while_loop body function carry input and carry output must have the same pytree "
     "structure, but they differ:\n\nThe input carry c is a <class 'list'> but the "
     "corresponding component of the carry output is a <class 'tuple'>, so their Python "
     "types differ.\n\nRevise the function so that the carry output has the same pytree "
     "structure as the carry input."),
    (lambda c: c[0] < 3.0, lambda c: (c[0] + 1, c[1] + 1.5),
     (jnp.int32(0), jnp.int16(1)),
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\nThe input carry component c[1] has type int16[] but the corresponding output "
     "carry component has type float32[], so the dtypes do not match.\n\nRevise the function "
     "so that all output types match the corresponding input types."),
], ids=["cond_pytree", "cond_int", "not_callable", "list_vs_tuple", "dtype_of_component"])
def test_errors(cond: Any, body: Any, init: Any, message: str) -> None:
    with pytest.raises(TypeError) as info:
        lax.while_loop(cond, body, init)
    assert str(info.value) == message


@pytest.mark.parametrize("how", ["grad", "vjp", "jit_grad"])
def test_reverse_mode_raises(how: str) -> None:
    f = lambda x: _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1]), (0, x))[1]
    x = jnp.array([0.5, -0.25])
    with pytest.raises(ValueError) as info:
        if how == "grad":
            jax.grad(lambda x: f(x).sum())(x)
        elif how == "vjp":
            y, pullback = jax.vjp(f, x)
            pullback(jnp.ones_like(y))
        else:
            jax.jit(jax.grad(lambda x: f(x).sum()))(x)
    assert str(info.value) == WHILE_GRAD_ERROR


def test_grad_through_known_loop_works() -> None:
    """A loop no tangent enters is just evaluated: grad of x * (trip count) is fine."""
    g = jax.grad(lambda x: x * _wl(lambda c: c < 3, lambda c: c + 1, 0))
    assert float(g(jnp.float32(2.0))) == 3.0


# ---------------------------------------------------------------------------------------------
# Forward mode.

def _sin_loop(x: Any) -> Any:
    return _wl(lambda c: c[0] < 4, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.3 + 0.1 * c[1]),
               (0, x))[1]


def _const_tangent_loop(x: Any, y: Any) -> Any:
    """The carry starts with a zero tangent and picks one up from the body constant y."""
    return _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * y + x), (0, 1.0))[1]


def _newton(a: Any) -> Any:
    def body(c):
        x, i = c
        return x - (x * x - a) / (2 * x), i + 1

    def cond(c):
        x, i = c
        return (jnp.abs(x * x - a) > 1e-5 * a) & (i < 50)

    return _wl(cond, body, (jnp.maximum(a, 1.0), 0))[0]


@pytest.mark.parametrize("f, args", [
    (_sin_loop, (np.array([0.3, -0.7, 1.1]),)),
    (_const_tangent_loop, (np.float64(0.5), np.float64(1.5))),
    (_newton, (np.float64(9.0),)),
], ids=["sin_loop", "tangent_from_body_const", "newton"])
def test_jvp_matches_finite_differences(f: Callable, args: tuple) -> None:
    with x64_mode(True):
        check_grads(f, [jnp.asarray(a) for a in args], order=1, modes=["fwd"])


def test_jvp_of_data_dependent_trip_count() -> None:
    """x * 1.7^k with k the trip count: the tangent is 1.7^k, k fixed at the primal."""
    f = lambda x: _wl(lambda c: c < 10.0, lambda c: c * 1.7, x)
    y, t = jax.jvp(f, (jnp.float32(0.5),), (jnp.float32(1.0),))
    assert_close(np.asarray(y), np.float32(0.5 * 1.7 ** 6), 1e-5)
    assert_close(np.asarray(t), np.float32(1.7 ** 6), 1e-5)


def test_linearize_matches_jvp() -> None:
    x = jnp.array([0.3, -0.7, 1.1])
    t = jnp.array([1.0, 0.5, -2.0])
    y, f_lin = jax.linearize(_sin_loop, x)
    y_jvp, t_jvp = jax.jvp(_sin_loop, (x,), (t,))
    assert_close(np.asarray(y), np.asarray(y_jvp), 1e-6)
    assert_close(np.asarray(f_lin(t)), np.asarray(t_jvp), 1e-6)


def test_checkpoint_linearize_matches_jvp() -> None:
    f = jax.checkpoint(_sin_loop)
    x = jnp.array([0.3, -0.7])
    _, f_lin = jax.linearize(f, x)
    _, t_jvp = jax.jvp(_sin_loop, (x,), (x,))
    assert_close(np.asarray(f_lin(x)), np.asarray(t_jvp), 1e-6)


# ---------------------------------------------------------------------------------------------
# vmap against a Python loop over the examples.

def _count_to(n: Any) -> Any:
    return _wl(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, jnp.float32(1.0)))


def _double_until(x: Any) -> Any:
    return _wl(lambda c: c < 10.0, lambda c: c * 2.0, x)


def _carry_only(x: Any) -> Any:
    return _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))


def _body_const(y: Any) -> Any:
    return _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + y), (0, 1.0))


def _vector_pred(x: Any) -> Any:
    return _wl(lambda c: jnp.sum(c) < 10.0, lambda c: c * 2.0, x)


@pytest.mark.parametrize("f, x, in_axes", [
    (_count_to, np.array([0, 3, 1, 5], np.int32), 0),
    (_double_until, np.array([0.5, 3.0, 12.0, 1.25], np.float32), 0),
    (_carry_only, np.array([0.5, 1.0, 1.5], np.float32), 0),
    (_body_const, np.array([2.0, 3.0], np.float32), 0),
    (_vector_pred, np.arange(6.0, dtype=np.float32).reshape(3, 2) + 1.0, 1),
    (_newton, np.array([0.25, 2.0, 9.0, 1e4, 1.0], np.float32), 0),
    (_nested_vmap, np.array([2.0, 3.0], np.float32), 0),
], ids=["batched_trip_counts", "batched_predicate", "batched_carry_only", "batched_body_const",
        "in_axes_1", "newton", "nested_vmap"])
def test_vmap_matches_python_loop(f: Callable, x: np.ndarray, in_axes: int) -> None:
    batched = jax.vmap(f, in_axes=in_axes)(jnp.asarray(x))
    examples = [f(jnp.asarray(e)) for e in np.moveaxis(x, in_axes, 0)]
    expected = jax.tree_util.tree_map(lambda *leaves: np.stack([np.asarray(v) for v in leaves]),
                                      *examples)
    for got, want in zip(jax.tree_util.tree_leaves(batched),
                         jax.tree_util.tree_leaves(expected), strict=True):
        assert got.dtype == want.dtype
        assert_close(np.asarray(got), want, 1e-5)


def test_vmap_of_jvp_and_jvp_of_vmap_agree() -> None:
    x = jnp.array([1.0, 3.0, 7.0])
    f = lambda x: _wl(lambda c: c < 10.0, lambda c: c * 1.5, x)
    ys, ts = jax.vmap(lambda x: jax.jvp(f, (x,), (jnp.ones_like(x),)))(x)
    ys2, ts2 = jax.jvp(jax.vmap(f), (x,), (jnp.ones_like(x),))
    assert_close(np.asarray(ys), np.asarray(ys2), 1e-6)
    assert_close(np.asarray(ts), np.asarray(ts2), 1e-6)
    assert_close(np.asarray(ts), np.array([1.5 ** 6, 1.5 ** 3, 1.5]), 1e-5)


# ---------------------------------------------------------------------------------------------
# jit, eager, disable_jit, dead code.

@pytest.mark.parametrize("f, x", [
    (_sin_loop, np.array([0.3, -0.7, 1.1], np.float32)),
    (_newton, np.float32(10.0)),
    (jax.vmap(_count_to), np.array([0, 3, 1, 5], np.int32)),
], ids=["sin_loop", "newton", "vmap_trip_counts"])
def test_jit_matches_eager(f: Callable, x: np.ndarray) -> None:
    eager = f(jnp.asarray(x))
    jitted = jax.jit(f)(jnp.asarray(x))
    for a, b in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(jitted),
                    strict=True):
        assert a.dtype == b.dtype and a.aval.weak_type == b.aval.weak_type
        assert_close(np.asarray(a), np.asarray(b), 1e-6)


def test_disable_jit_runs_a_python_loop() -> None:
    calls = []

    def cond(c):
        calls.append(float(c))  # concrete under disable_jit
        return c < 10.0

    with jax.disable_jit():
        out = lax.while_loop(cond, lambda c: c * 2.0, jnp.float32(1.5))
    assert float(out) == 12.0
    assert calls == [1.5, 3.0, 6.0, 12.0]


def test_disable_jit_under_vmap_stages_the_loop() -> None:
    with jax.disable_jit():
        out = jax.vmap(_double_until)(jnp.array([0.5, 3.0, 12.0]))
    np.testing.assert_allclose(np.asarray(out), [16.0, 12.0, 12.0])


def test_dce_keeps_the_loop_whole_as_jax() -> None:
    """JAX has no dead-code rule for `while`: with any output used every carry stays (they
    show in its printed jaxprs and StableHLO); with none used the loop goes."""
    f = lambda x: _wl(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0, c[2] + 1.0),
                      (0, x, x))
    closed = jax.make_jaxpr(f)(jnp.float32(1.0))
    jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [False, True, False])
    assert used == [True]
    (eqn,) = jaxpr.eqns
    assert eqn.primitive is lax.while_p and len(eqn.outvars) == 3
    assert eqn.params["body_jaxpr"] is closed.jaxpr.eqns[0].params["body_jaxpr"]
    jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [False, False, False])
    assert used == [False] and not jaxpr.eqns


# ---------------------------------------------------------------------------------------------
# Lowering.

def _ops(module: Any, opcode: str) -> list:
    found = []

    def walk(ops):
        for op in ops:
            if op.opcode == opcode:
                found.append(op)
            for region in op.regions:
                walk(region.block.ops)

    for fn in module.functions:
        walk(fn.body.ops)
    return found


def test_lowering_passes_consts_as_loop_values() -> None:
    """Cond consts, body consts, then carries are the loop's values; the regions return the
    consts unchanged."""
    f = lambda x, n: _wl(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, x))
    x, n = np.array([1.5, 0.5], np.float32), np.int32(4)
    module = lower_to_module(f, x, n)
    (loop,) = _ops(module, "stablehlo.while")
    assert [v.type.shape for v in loop.operands] == [(), (2,), (), (2,)]
    body = loop.regions[1].block
    ret = body.ops[-1]
    assert ret.operands[:2] == body.args[:2]
    i, y = run_reference(module, x, n)
    assert int(i) == 4
    assert_close(y, x ** 5, 1e-6)


def test_lowering_of_batched_predicate_reduces_and_selects() -> None:
    module = lower_to_module(jax.vmap(_count_to), np.array([0, 3, 1, 5], np.int32))
    (loop,) = _ops(module, "stablehlo.while")
    cond_ops = [op.opcode for op in loop.regions[0].block.ops]
    assert cond_ops[-2:] == ["stablehlo.reduce", "stablehlo.return"]
    body_ops = [op.opcode for op in loop.regions[1].block.ops]
    assert body_ops.count("stablehlo.select") == 2
    counts, values = run_reference(module, np.array([0, 3, 1, 5], np.int32))
    np.testing.assert_array_equal(counts, [0, 3, 1, 5])
    np.testing.assert_array_equal(values, [1.0, 8.0, 2.0, 32.0])


def test_eager_while_is_one_compiled_program() -> None:
    """Binding `while` on concrete values runs the compiled loop (same results as jit)."""
    x = jnp.array([1.0, 2.0])
    out = _wl(lambda c: jnp.sum(c) < 100.0, lambda c: c * 3.0, x)
    np.testing.assert_allclose(np.asarray(out), [81.0, 162.0])


# ---------------------------------------------------------------------------------------------
# Real XLA.

@pytest.mark.needs_jax
@pytest.mark.parametrize("f, x", [
    (jax.vmap(_count_to), np.array([0, 3, 1, 5], np.int32)),
    (jax.vmap(_newton), np.array([0.25, 2.0, 9.0], np.float32)),
    (jax.vmap(lambda y: _nested_vmap(y)), np.array([2.0, 3.0], np.float32)),
], ids=["batched_trip_counts", "newton_vmap", "nested_vmap"])
def test_xla_runs_our_stablehlo(f: Callable, x: np.ndarray) -> None:
    """Real XLA parses, verifies and runs the loops as lowered here (per-lane selects
    included), with the values justjax computes."""
    pytest.importorskip("jax")
    from tests import xla_check
    text = jax.jit(f).lower(jnp.asarray(x)).as_text()
    xla_check.parse(text)
    ours = jax.tree_util.tree_leaves(f(jnp.asarray(x)))
    for got, want in zip(xla_check.run(text, [x]), ours, strict=True):
        assert_close(np.asarray(got), np.asarray(want), 1e-6)
