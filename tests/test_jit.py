"""justjax.jit: caching and retracing, static and donated arguments, wrappers, AOT stages."""
from __future__ import annotations

import functools
import logging

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.compilation import stages


class TraceCounter:
    """Wraps a function and counts how often Python runs it (once per trace)."""

    def __init__(self, fun):
        self.fun = fun
        self.count = 0
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        self.count += 1
        return self.fun(*args, **kwargs)


def counted(fun):
    counter = TraceCounter(fun)
    return counter, jax.jit(counter)


# ---------------------------------------------------------------------------------------------
# Values.

def test_values_match_eager():
    def f(x, y):
        return jnp.sin(x) * y + 1.0, (x - y).sum()

    x, y = jnp.arange(6.0).reshape(2, 3), jnp.ones((2, 3))
    jitted = jax.jit(f)(x, y)
    eager = f(x, y)
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(eager),
                    strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_pytrees_in_and_out():
    @jax.jit
    def f(tree, *, scale):
        return {"sum": tree["a"] + tree["b"][0], "scaled": tree["b"][1] * scale}

    out = f({"a": jnp.ones(2), "b": (jnp.ones(2), 3.0)}, scale=2.0)
    assert set(out) == {"sum", "scaled"}
    np.testing.assert_array_equal(out["sum"], [2.0, 2.0])
    assert float(out["scaled"]) == 6.0


def test_weak_types_survive():
    out = jax.jit(lambda x: x * 2)(3.0)
    assert out.weak_type and out.dtype == np.float32
    assert not jax.jit(lambda x: x * 2)(np.float32(3.0)).weak_type


def test_numpy_input_not_frozen_or_aliased():
    value = np.arange(3.0, dtype=np.float32)
    out = jax.jit(lambda x: x)(value)
    assert value.flags.writeable
    value[0] = 10.0
    assert float(out[0]) == 0.0


# ---------------------------------------------------------------------------------------------
# Caching: the same shapes and dtypes never retrace; anything else does.

def test_same_signature_traces_once():
    counter, f = counted(lambda x, y: x + y)
    f(jnp.ones(3), jnp.ones(3))
    f(jnp.zeros(3), jnp.ones(3))
    f(np.ones(3, np.float32), jnp.ones(3))
    assert counter.count == 1


@pytest.mark.parametrize("second", [
    lambda: (jnp.ones(4), jnp.ones(4)),                     # shape
    lambda: (jnp.ones(3, jnp.int32), jnp.ones(3)),          # dtype
    lambda: (1.0, jnp.ones(3)),                             # weak type and shape
    lambda: ((jnp.ones(3),), jnp.ones(3)),                  # pytree structure
], ids=["shape", "dtype", "weak_type", "structure"])
def test_new_signature_retraces(second):
    counter, f = counted(lambda x, y: jax.tree_util.tree_leaves(x)[0] + y)
    f(jnp.ones(3), jnp.ones(3))
    try:
        f(*second())
    except TypeError:
        pass  # shapes that do not broadcast still traced once more
    assert counter.count == 2


def test_weak_type_alone_retraces():
    counter, f = counted(lambda x: x + 1)
    f(2.0)
    f(np.float32(2.0))
    f(3.0)
    assert counter.count == 2


def test_x64_flag_is_part_of_the_key():
    counter, f = counted(lambda x: x + 1)
    f(1)
    with jax.config.override("jax_enable_x64", True):
        assert f(1).dtype == np.int64
    assert f(1).dtype == np.int32
    assert counter.count == 2


def test_cache_shared_between_jit_wrappers_of_one_function():
    counter = TraceCounter(lambda x: x * 2)
    jax.jit(counter)(jnp.ones(2))
    jax.jit(counter)(jnp.ones(2))
    assert counter.count == 1


def test_functions_lowering_to_one_module_share_its_program():
    x = jnp.arange(4.0)
    first = jax.jit(lambda v: jnp.sin(v) * 2).lower(x).compile()
    second = jax.jit(lambda w: jnp.sin(w) * 2).lower(x).compile()
    other = jax.jit(lambda w: jnp.sin(w) * 3).lower(x).compile()
    assert first._call.executable is second._call.executable
    assert other._call.executable is not first._call.executable
    # Each keeps its own name in the optimized text.
    assert "jit__lambda" in second.as_text()
    # One program, so the same bits; sin's values to an ulp (the native backend's sinf is
    # XLA's, `test_mathlib_xla_bits`; the reference backend's is NumPy's float32 sin).
    np.testing.assert_array_equal(second(x), first(x))
    np.testing.assert_allclose(second(x), np.sin(np.arange(4.0)) * 2, rtol=2.4e-7)


def test_modules_differing_only_in_host_callback_compile_apart():
    x = jnp.arange(3.0)

    def through(callback):
        return jax.jit(lambda v: jax.pure_callback(callback, v, v))

    doubled = through(lambda a: np.asarray(a) * 2)(x)
    tripled = through(lambda a: np.asarray(a) * 3)(x)
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(tripled, [0.0, 3.0, 6.0])


def test_globals_captured_at_trace_time():
    state = {"scale": 2.0}

    @jax.jit
    def impure_uses_globals(x):
        return x * state["scale"]

    assert float(impure_uses_globals(1.0)) == 2.0
    state["scale"] = 3.0
    assert float(impure_uses_globals(1.0)) == 2.0  # cached trace keeps the old value
    assert float(impure_uses_globals(jnp.ones(()))) == 3.0  # a new signature retraces


def test_closing_over_an_enclosing_trace():
    """A jitted function closing over a tracer of the trace calling it takes the tracer as
    its first operand (its jaxpr keeps only concrete constants), as JAX stages it; the trace
    is not cached, so a later call under another trace sees its own value."""

    def outer(x):
        return jax.jit(lambda y: x * y)(2.0)

    # Printed by JAX 0.10.2 for make_jaxpr(outer)(jnp.ones(3)).
    assert str(jax.make_jaxpr(outer)(jnp.ones(3))) == """{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[3] = mul a d
        in (b,) }
    ] a 2.0:f32[]
  in (b,) }"""
    np.testing.assert_array_equal(jax.jit(outer)(jnp.ones(3)), [2.0, 2.0, 2.0])
    closed_over = {}
    inner = jax.jit(lambda y: closed_over["x"] * y)

    def scaled(x):
        closed_over["x"] = x
        return inner(2.0)

    np.testing.assert_array_equal(jax.vmap(scaled)(jnp.arange(3.0)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(jax.vmap(scaled)(jnp.arange(3.0) + 1), [2.0, 4.0, 6.0])
    in_cond = jax.jit(lambda x: jax.lax.cond(x[0] > 0, lambda: jax.jit(lambda y: x * y)(2.0),
                                             lambda: x))
    np.testing.assert_array_equal(in_cond(jnp.ones(2)), [2.0, 2.0])
    grads = jax.grad(lambda x: jnp.sum(jax.jit(lambda y: x * y)(3.0)))(jnp.ones(2))
    np.testing.assert_array_equal(grads, [3.0, 3.0])


def test_log_compiles(caplog):
    f = jax.jit(lambda x: x + 1)
    with jax.config.override("jax_log_compiles", True), caplog.at_level(logging.WARNING):
        f(jnp.ones(7))
        f(jnp.ones(7))
    messages = [r.getMessage() for r in caplog.records]
    compiles = [m for m in messages if m.startswith("Compiling jit(<lambda>)")]
    assert compiles == ["Compiling jit(<lambda>) with global shapes and types "
                        "(ShapedArray(float32[7]),). Argument mapping: (UnspecifiedValue,)."]
    assert sum(m.startswith("Finished tracing <lambda> for jit in ") for m in messages) == 1


def test_explain_cache_misses(caplog):
    f = jax.jit(lambda x: x + 1)  # noqa: E731
    with jax.config.override("jax_explain_cache_misses", True), \
            caplog.at_level(logging.WARNING):
        f(jnp.ones(2))
        f(jnp.ones(3))
    messages = [r.getMessage() for r in caplog.records if "CACHE MISS" in r.getMessage()]
    assert len(messages) == 2
    assert "test_jit.py" in messages[0] and "never seen function" in messages[0]
    assert messages[1].endswith("different input types:\n  * at x, now f32[3] and before "
                                "f32[2]")


# ---------------------------------------------------------------------------------------------
# Static arguments.

def test_static_argnums_and_argnames():
    counter = TraceCounter(lambda x, n, *, mode="add": x + n if mode == "add" else x * n)
    f = jax.jit(counter, static_argnums=1, static_argnames="mode")
    assert float(f(2.0, 3)) == 5.0
    assert float(f(2.0, 3, mode="mul")) == 6.0
    assert float(f(4.0, 3)) == 7.0
    assert counter.count == 2
    assert float(f(2.0, 4)) == 6.0
    assert counter.count == 3


def test_static_argnum_passed_by_keyword():
    counter = TraceCounter(lambda x, n: x * n)
    f = jax.jit(counter, static_argnums=1)
    assert float(f(2.0, n=3)) == 6.0
    assert float(f(2.0, n=3)) == 6.0
    assert counter.count == 1


def test_unhashable_static_argument():
    f = jax.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported. "
                                         "An error occurred while trying to hash an object of "
                                         r"type <class 'list'>, \[1\]"):
        f(1.0, [1])


def test_non_array_argument_error():
    # JAX 0.10.2's message names the function and the argument's path.
    def f(x, y):
        return x

    with pytest.raises(TypeError, match=(
            r"^Error interpreting argument to <function .*f at 0x[0-9a-f]+> as an abstract "
            r"array. The problematic value is of type <class 'str'> and was passed to the "
            r"function at path y\['a'\].\nThis typically means that a jit-wrapped function "
            r"was called with a non-array argument, and this argument was not marked as "
            r"static using the static_argnums or static_argnames parameters of jax.jit.$")):
        jax.jit(f)(1.0, {"a": "text"})


# ---------------------------------------------------------------------------------------------
# Donation, keep_unused, inline.

def test_donated_argument_is_deleted():
    x = jnp.ones(3)
    y = jax.jit(lambda a: a + 1, donate_argnums=0)(x)
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
        x + 1


def test_donation_in_jaxpr_and_stablehlo():
    f = jax.jit(lambda a, b: a + b, donate_argnums=0)
    text = str(jax.make_jaxpr(f)(jnp.ones(3), jnp.ones(3)))
    assert "donated_invars=(True, False)" in text
    assert "tf.aliasing_output = 0 : i32" in f.lower(jnp.ones(3), jnp.ones(3)).as_text()


def test_keep_unused():
    def f(x, y):
        return x

    dropped = jax.jit(f).lower(1.0, 2.0).compiler_ir().main
    kept = jax.jit(f, keep_unused=True).lower(1.0, 2.0).compiler_ir().main
    assert len(dropped.args) == 1 and len(kept.args) == 2
    assert float(jax.jit(f)(1.0, 2.0)) == 1.0


def test_inline_prints_inline():
    inner = jax.jit(lambda x: x * 2, inline=True)
    text = str(jax.make_jaxpr(lambda x: inner(x) + 1)(1.0))
    assert "jit[" not in text and "mul" in text


def test_nested_jit_prints_as_jit_equation():
    @jax.jit
    def g(x):
        return jnp.sin(x)

    text = str(jax.make_jaxpr(lambda x: g(x) + g(x))(jnp.ones(3)))
    assert text.startswith("let g = { lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) } in")
    assert text.count("jit[name=g jaxpr=g]") == 2


# ---------------------------------------------------------------------------------------------
# Wrappers: decorator forms, methods, partials, lambdas.

def test_wrapper_attributes():
    def f(x):
        """Doubles."""
        return 2 * x

    jf = jax.jit(f)
    assert jf.__wrapped__ is f and jf.__name__ == "f" and jf.__doc__ == "Doubles."


def test_decorator_with_options():
    @jax.jit(static_argnames="n")
    def power(x, n):
        return x ** n

    assert float(power(2.0, n=3)) == 8.0

    @functools.partial(jax.jit, static_argnums=(1,))
    def scale(x, k):
        return x * k

    assert float(scale(2.0, 5)) == 10.0


def test_methods_partials_lambdas():
    class Model:
        def __init__(self, w):
            self.w = w

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return x * self.w

    model = Model(3.0)
    assert float(model.apply(2.0)) == 6.0
    part = jax.jit(functools.partial(lambda a, b: a - b, 10.0))
    assert float(part(4.0)) == 6.0
    assert jax.jit(functools.partial(jnp.add, 1.0)).lower(2.0).as_text().startswith(
        "module @jit_add")
    assert jax.jit(lambda x: x).lower(1.0).as_text().startswith("module @jit__lambda")


def test_disable_jit_runs_python():
    counter, f = counted(lambda x: x + 1)
    with jax.config.override("jax_disable_jit", True):
        f(1.0)
        f(1.0)
    assert counter.count == 2


# ---------------------------------------------------------------------------------------------
# AOT stages.

def test_trace_stage():
    traced = jax.jit(lambda x: {"a": x, "b": (x, 2)}).trace(jnp.ones(2))
    assert str(traced.jaxpr) == "{ lambda ; a:f32[2]. let  in (a, a, 2:i32[]) }"
    info = traced.out_info
    assert info["a"] == jax.ShapeDtypeStruct((2,), jnp.float32)
    assert info["b"][1] == jax.ShapeDtypeStruct((), jnp.int32, weak_type=True)


def test_lower_text_of_x_times_2_plus_1():
    text = jax.jit(lambda x: x * 2 + 1).lower(jnp.ones(5, jnp.float32)).as_text()
    assert text == (
        'module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, '
        'mhlo.num_replicas = 1 : i32} {\n'
        '  func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> '
        '{jax.result_info = "result"}) {\n'
        '    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>\n'
        '    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>\n'
        '    %1 = stablehlo.multiply %arg0, %0 : tensor<5xf32>\n'
        '    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n'
        '    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> '
        'tensor<5xf32>\n'
        '    %3 = stablehlo.add %1, %2 : tensor<5xf32>\n'
        '    return %3 : tensor<5xf32>\n'
        '  }\n'
        '}\n')


def test_hlo_text_of_lowered_and_compiled():
    lowered = jax.jit(lambda x: x * 2 + 1).lower(jnp.ones(5, jnp.float32))
    hlo = lowered.as_text(dialect="hlo")
    assert hlo.startswith("HloModule jit__lambda, entry_computation_layout={(f32[5]{0})->f32[5]{0}}")
    assert "ROOT" in hlo and "add(" in hlo and "multiply(" in hlo
    assert lowered.compile().as_text().startswith("HloModule jit__lambda")
    with pytest.raises(ValueError, match="Unknown dialect"):
        lowered.as_text(dialect="llvm")


def test_result_info_paths():
    text = jax.jit(lambda x: {"a": x, "b": (x, 2)}).lower(jnp.ones(2)).as_text()
    assert ('jax.result_info = "result[\'a\']"' in text
            and 'jax.result_info = "result[\'b\'][1]"' in text)


def test_shape_dtype_struct_arguments():
    lowered = jax.jit(lambda x, y: x @ y).lower(jax.ShapeDtypeStruct((2, 3), jnp.float32),
                                              jax.ShapeDtypeStruct((3, 4), jnp.float32))
    compiled = lowered.compile()
    out = compiled(jnp.ones((2, 3)), jnp.ones((3, 4)))
    np.testing.assert_array_equal(out, np.full((2, 4), 3.0, np.float32))


def test_compiled_rejects_other_types():
    compiled = jax.jit(lambda x: x * 2).lower(jnp.ones(3)).compile()
    with pytest.raises(TypeError, match=r"Argument types differ from the types for which this "
                                        r"computation was compiled\. .*\nArgument 'x' compiled "
                                        r"with float32\[3\] and called with float32\[4\]"):
        compiled(jnp.ones(4))


def test_compiled_with_static_args_takes_dynamic_ones():
    f = jax.jit(lambda x, n: x * n, static_argnums=1)
    compiled = f.lower(jnp.ones(3), 2).compile()
    np.testing.assert_array_equal(compiled(jnp.ones(3)), [2.0, 2.0, 2.0])


def test_cost_and_memory_analysis():
    compiled = jax.jit(lambda x, w: x @ w).lower(jnp.ones((2, 3)), jnp.ones((3, 4))).compile()
    cost = compiled.cost_analysis()
    assert cost["flops"] == 2 * 2 * 3 * 4
    assert cost["bytes accessed"] == 4 * (6 + 12 + 8)
    memory = compiled.memory_analysis()
    assert memory.argument_size_in_bytes == 4 * 18 and memory.output_size_in_bytes == 32


def test_eval_shape():
    out = jax.jit(lambda x: x.sum(0)).eval_shape(jnp.ones((4, 5)))
    assert out == jax.ShapeDtypeStruct((5,), jnp.float32)
    assert jax.eval_shape(jax.jit(lambda x: x[None]), jnp.ones(3)).shape == (1, 3)


def test_stages_module_exports():
    assert isinstance(jax.jit(lambda x: x).lower(1.0), stages.Lowered)


def test_compiler_ir_in_hlo_has_as_hlo_text():
    computation = jax.jit(lambda x: x * 2).lower(1.0).compiler_ir(dialect="hlo")
    text = computation.as_hlo_text()
    assert text.startswith("HloModule jit__lambda") and "multiply" in text
    assert computation.name() == "jit__lambda"


def test_array_copy_method():
    x = jnp.arange(3.0)
    y = x.copy()
    assert y is not x and y.tolist() == [0.0, 1.0, 2.0]
    assert "copy" in str(jax.make_jaxpr(lambda v: v.copy())(x))


def test_float0_results_are_numpy_arrays():
    # JAX 0.10.2 gives a float0 result of a jitted function as a NumPy array (its
    # TypedNdArray): it holds no data, and compares as NumPy's (equinox's tree_equal does).
    f = jax.jit(lambda x, y: jax.vjp(lambda i, a: a * 2.0, x, y)[1](1.0))
    ct_int, ct_float = f(1, 2.0)
    assert isinstance(ct_int, np.ndarray) and ct_int.dtype == jax.dtypes.float0
    assert bool(np.all(ct_int == f(1, 2.0)[0])) and float(ct_float) == 2.0


def test_static_arguments_of_different_types_trace_apart():
    # As JAX: 1, True and 1.0 compare equal but are different static arguments.
    traces = []

    @functools.partial(jax.jit, static_argnums=1)
    def f(x, k):
        traces.append(type(k))
        return x * k

    assert [float(f(2.0, k)) for k in (1, True, 1.0, 1)] == [2.0] * 4
    assert traces == [int, bool, float]
