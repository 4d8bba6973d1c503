"""Top-level utilities: typeof, ensure_compile_time_eval, linear_transpose, closure_convert,
clear_caches, effects_barrier, copy_to_host_async, eval_shape on ShapeDtypeStructs.
Expected values, jaxprs and messages recorded from JAX 0.10.2 (CPU)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.compilation import dispatch

F32 = jax.ShapeDtypeStruct((), np.float32)


# ---------------------------------------------------------------------------------------------
# typeof

@pytest.mark.parametrize("value,text,weak", [
    (np.ones(2, np.float64), "float32[2]", False),
    (1, "int32[]", True),
    (True, "bool[]", False),
    (1j, "complex64[]", True),
    (np.float16(1), "float16[]", False),
    (jnp.ones((2, 3), jnp.int8), "int8[2,3]", False),
])
def test_typeof_values(value, text, weak):
    aval = jax.typeof(value)
    assert aval.str_short(short_dtypes=False) == text and aval.weak_type is weak
    assert str(aval) == ("~" if weak else "") + text
    assert repr(aval) == f"ShapedArray({text}{', weak_type=True' if weak else ''})"


def test_typeof_tracers_and_keys():
    seen = []
    jax.jit(lambda x: seen.append(str(jax.typeof(x))) or x)(1.0)
    jax.vmap(lambda x: seen.append(str(jax.typeof(x))) or x)(jnp.ones((3, 2)))
    assert seen == ["~float32[]", "float32[2]"]
    assert str(jax.typeof(jax.random.key(0))) == "key<fry>[]"


@pytest.mark.parametrize("value,message", [
    ("x", "Argument 'x' of type <class 'str'> is not a valid JAX type"),
    (None, "Argument 'None' of type '<class 'NoneType'>' is not a valid JAX type"),
    ([1, 2], "Argument '[1, 2]' of type '<class 'list'>' is not a valid JAX type"),
])
def test_typeof_errors(value, message):
    with pytest.raises(TypeError) as info:
        jax.typeof(value)
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# ensure_compile_time_eval

def test_compile_time_eval_gives_concrete_values_inside_jit():
    kinds = []

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            positive = y > 0
            traced = jnp.sin(x)
        kinds.append((type(y).__name__, bool(positive), type(traced).__name__))
        return jnp.sin(x) if positive else jnp.cos(x)

    assert float(f(0.5)) == pytest.approx(np.sin(0.5))
    assert kinds == [("Array", True, "DynamicJaxprTracer")]
    assert str(jax.make_jaxpr(f)(1.0)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = jit[\n      name=f\n"
        "      jaxpr={ lambda ; a:f32[]. let c:f32[] = sin a; b:f32[] = sin a in (b,) }\n"
        "    ] a\n  in (b,) }")


def test_compile_time_eval_result_becomes_a_constant():
    def g(x):
        with jax.ensure_compile_time_eval():
            a = jnp.arange(4) * 2
        return x + a

    assert str(jax.make_jaxpr(g)(jnp.ones(4))) == (
        "{ lambda a:i32[4]; b:f32[4]. let\n"
        "    c:f32[4] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "    d:f32[4] = add b c\n  in (d,) }")
    assert jax.config.eager_constant_folding is False


def test_compile_time_eval_with_custom_derivatives():
    @jax.custom_jvp
    def sq(x):
        return x * x

    sq.defjvp(lambda p, t: (p[0] * p[0], 2 * p[0] * t[0]))

    def f(x):
        with jax.ensure_compile_time_eval():
            c = sq(3.0)
            d = sq(jnp.float32(2.0))
        # As JAX: the rule-less evaluation of Python floats gives a float.
        assert type(c) is float and type(d) is jax.Array
        return x * c * d

    assert jax.jit(f)(2.0) == 72.0


# ---------------------------------------------------------------------------------------------
# linear_transpose

def test_linear_transpose_docs_example():
    f_t = jax.linear_transpose(lambda x, y: 0.5 * x - 0.5 * y, F32, F32)
    assert f_t(1.0) == (0.5, -0.5)
    assert isinstance(f_t, jax.tree_util.Partial)
    assert jax.jit(f_t)(2.0) == (1.0, -1.0)


def test_linear_transpose_pytrees_and_vmap():
    g = jax.linear_transpose(lambda d: {"a": d["x"] * 2.0, "b": jnp.sum(d["y"])},
                             {"x": jnp.ones(2), "y": jnp.ones(3)})
    (out,) = g({"a": jnp.ones(2), "b": 3.0})
    assert out["x"].tolist() == [2.0, 2.0] and out["y"].tolist() == [3.0, 3.0, 3.0]
    h = jax.linear_transpose(lambda x: jax.vmap(jnp.dot, (0, None))(x, jnp.arange(3.0)),
                             jnp.ones((2, 3)))
    assert h(jnp.ones(2))[0].tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]


def test_linear_transpose_integer_and_affine_functions():
    # JAX transposes the linear part of an affine function and ignores constant outputs.
    assert jax.linear_transpose(lambda x: x + 1.0, F32)(1.0) == (1.0,)
    assert jax.linear_transpose(lambda x: jnp.ones(3), F32)(jnp.ones(3)) == (0.0,)
    ints = jax.linear_transpose(lambda x: x * 2, jax.ShapeDtypeStruct((3,), np.int32))
    assert ints(jnp.ones(3, jnp.int32))[0].tolist() == [2, 2, 2]


def test_linear_transpose_errors():
    with pytest.raises(TypeError, match=r"^linear_transpose only supports \[float or complex\] "
                                        r"-> \[float or complex\], and integer -> integer "
                                        r"functions, but got \[dtype\('float32'\)\] -> "
                                        r"\[dtype\('int32'\)\].$"):
        jax.linear_transpose(lambda x: x.astype(jnp.int32), F32)
    with pytest.raises(NotImplementedError, match="^Transpose rule \\(for reverse-mode "
                                                  "differentiation\\) for 'sin' not "
                                                  "implemented$"):
        jax.linear_transpose(jnp.sin, F32)(1.0)
    with pytest.raises(ValueError, match="not linear"):
        jax.linear_transpose(lambda x: x * x, F32)(1.0)
    f_t = jax.linear_transpose(lambda x, y: x - y, F32, F32)
    with pytest.raises(TypeError, match=r"^cotangent tree does not match function output, "
                                        r"expected PyTreeDef\(\*\) but got "
                                        r"PyTreeDef\(\(\*, \*\)\)$"):
        f_t((1.0, 2.0))
    with pytest.raises(TypeError, match=r"^cotangent type does not match function output, "
                                        r"expected \(ShapedArray\(float32\[\]\),\) but got "
                                        r"\[1\]$"):
        f_t(1)
    with pytest.raises(NotImplementedError, match="reduce_axes argument to transpose is "
                                                  "deprecated"):
        jax.linear_transpose(lambda x: x, F32, reduce_axes=("i",))


# ---------------------------------------------------------------------------------------------
# closure_convert

def _outer(y, log):
    def f(x):
        return jnp.sin(x) * y + jnp.arange(3.0)

    converted, hoisted = jax.closure_convert(f, jnp.ones(3))
    log.append([type(h).__name__ for h in hoisted])
    return converted(jnp.ones(3), *hoisted)


def test_closure_convert_hoists_perturbed_values_only():
    log: list = []
    assert _outer(2.0, log).tolist() == pytest.approx([2 * np.sin(1), 1 + 2 * np.sin(1),
                                                       2 + 2 * np.sin(1)])
    assert float(jax.grad(lambda y: _outer(y, log).sum())(2.0)) == pytest.approx(
        3 * np.sin(1))
    jax.jit(lambda y: _outer(y, log).sum())(2.0)
    jax.vmap(lambda y: _outer(y, log))(jnp.arange(2.0))
    # JAX 0.10.2 hoists: nothing, a (Linearize)JVPTracer, a DynamicJaxprTracer, nothing
    # (a vmapped value carries no tangent).
    assert log == [[], ["JVPTracer"], ["DynamicJaxprTracer"], []]


def test_closure_convert_with_custom_vjp():
    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x, *args):
        return fn(x, *args)

    def fwd(fn, x, *args):
        return apply(fn, x, *args), (x, args)

    def bwd(fn, res, g):
        x, args = res
        return jax.vjp(fn, x, *args)[1](g)

    apply.defvjp(fwd, bwd)

    def loss(w):
        converted, consts = jax.closure_convert(lambda x: jnp.sum(x * w), jnp.ones(2))
        return apply(converted, jnp.ones(2), *consts)

    assert jax.grad(loss)(jnp.array([1.0, 2.0])).tolist() == [1.0, 1.0]
    assert jax.jit(jax.grad(loss))(jnp.array([1.0, 2.0])).tolist() == [1.0, 1.0]


def test_closure_convert_caches_and_checks_structure():
    def h(x):
        return x * 3

    first, _ = jax.closure_convert(h, 1.0)
    again, _ = jax.closure_convert(h, 1.0)
    assert first is again
    with jax.checking_leaks():
        uncached, _ = jax.closure_convert(h, 1.0)
    assert uncached is not first
    with pytest.raises(TypeError, match=r"^The inputs to the closure produced by "
                                        r"closure_convert must have the same Pytree "
                                        r"structure as the example arguments passed when "
                                        r"closure_convert was called. Expected "
                                        r"PyTreeDef\(\(\*,\)\), but got "
                                        r"PyTreeDef\(\(\(\*, \*\),\)\)$"):
        first((1.0, 2.0))


# ---------------------------------------------------------------------------------------------
# Caches and effects

def test_clear_caches_retraces_and_recompiles():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 5

    x = jnp.ones(2)
    f(x)
    f(x)
    jnp.cosh(x)
    assert len(traces) == 1 and dispatch._cache
    jax.clear_caches()
    assert not dispatch._cache and f._cache_size() == 0
    assert f(x).tolist() == [5.0, 5.0]
    assert len(traces) == 2


def test_effects_barrier_waits_for_dispatched_work():
    big = jnp.ones(1 << 21)
    y = jnp.tanh(big) * 2 + 1
    jax.effects_barrier()
    assert y.is_ready()
    printed = []
    jax.jit(lambda v: jax.debug.callback(printed.append, v) or v)(jnp.ones(2))
    jax.effects_barrier()
    assert len(printed) == 1


def test_copy_to_host_async_returns_its_argument():
    tree = {"a": jnp.ones(2), "b": 3, "c": np.ones(1)}
    assert jax.copy_to_host_async(tree) is tree


def test_eval_shape_on_shape_dtype_structs():
    s = jax.ShapeDtypeStruct((2, 3), np.float32)
    assert repr(jax.eval_shape(lambda x: x.sum(0), s)) == \
        "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    out = jax.eval_shape(lambda d: d["a"] @ d["b"].T, {"a": s, "b": s})
    assert (out.shape, out.dtype) == ((2, 2), np.float32)
    assert repr(jax.eval_shape(lambda x: x, jax.ShapeDtypeStruct((), np.float64))) == \
        "ShapeDtypeStruct(shape=(), dtype=float32)"
    weak = jax.ShapeDtypeStruct((), np.float32, weak_type=True)
    assert repr(jax.eval_shape(lambda x: x, weak)) == \
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"

    # A function returning a scalar ShapeDtypeStruct it closed over (equinox's
    # filter_closure_convert does): a constvar, not a literal, as JAX stages it.
    scalar = jax.ShapeDtypeStruct((), np.int32)
    assert repr(jax.eval_shape(lambda: (scalar, 2.0))) == (
        "(ShapeDtypeStruct(shape=(), dtype=int32), "
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True))")
    assert str(jax.make_jaxpr(lambda: scalar)()) == "{ lambda a:i32[]; . let  in (a,) }"

    def f(x, y):
        return x

    with pytest.raises(TypeError, match=r"^Error interpreting argument to <function .*f at "
                                        r"0x[0-9a-f]+> as an abstract array. The problematic "
                                        r"value is of type <class 'object'> and was passed to "
                                        r"the function at path y\[0\].\n"):
        jax.eval_shape(f, 1.0, [object()])


def test_top_level_names():
    for name in ("typeof", "ensure_compile_time_eval", "named_scope", "named_call",
                 "linear_transpose", "closure_convert", "clear_caches", "effects_barrier",
                 "copy_to_host_async", "numpy_dtype_promotion", "numpy_rank_promotion",
                 "log_compiles", "checking_leaks", "check_tracer_leaks", "debug_nans",
                 "debug_infs", "enable_x64", "enable_checks", "default_matmul_precision",
                 "default_prng_impl", "legacy_prng_key", "threefry_partitionable",
                 "explain_cache_misses", "no_tracing", "no_execution", "debug_key_reuse",
                 "float0", "typing", "version", "lib", "monitoring"):
        assert hasattr(jax, name), name
