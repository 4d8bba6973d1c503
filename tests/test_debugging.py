"""jax.debug.print / debug.callback, pure_callback, io_callback and the NaN checks: eagerly,
under jit, vmap and grad, with JAX's printed jaxprs, lowering and error texts (recorded from
JAX 0.10.2; the needs_jax tests compare live)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.debug import callbacks as debugging
from justjax._src.runtime import host_callbacks as host_kernels
from justjax._src.errors import JaxRuntimeError
from justjax.experimental import io_callback

X = np.arange(3.0, dtype=np.float32)
SD3 = jax.ShapeDtypeStruct((3,), jnp.float32)
SCALAR = jax.ShapeDtypeStruct((), jnp.float32)


def _printing(x):
    jax.debug.print("x={x}", x=x)
    return x + 1


# ---------------------------------------------------------------------------------------------
# debug.print

@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_print_formats_like_str_format(wrap, capsys):
    def f(x):
        jax.debug.print("x={x} y={} s={s} {:.2f}", x * 2, x[1], x=x, s="str")
        return x

    (jax.jit(f) if wrap == "jit" else f)(jnp.asarray(X))
    assert capsys.readouterr().out == "x=[0. 1. 2.] y=[0. 2. 4.] s=str 1.00\n"


def test_print_without_placeholders_is_rejected_with_jaxs_message():
    with pytest.raises(ValueError, match=re.escape(
            "Unused positional arguments to `jax.debug.print`: [Array([1., 1.], "
            "dtype=float32), 3]")):
        jax.debug.print("vals", jnp.ones(2), 3)
    with pytest.raises(ValueError, match="Unused keyword arguments to `jax.debug.print`: "
                                         r"\['y'\]. You may be passing an f-string"):
        jax.debug.print("hi", y=1.0)


def test_print_skip_format_check_joins_values(capsys):
    jax.debug.print("vals", jnp.ones(2), 3, skip_format_check=True)
    assert capsys.readouterr().out == "vals [1. 1.] 3\n"


def test_print_two_call_form(capsys):
    jax.debug.print(ordered=True)("{} {}", 1, True)
    assert capsys.readouterr().out == "1 True\n"
    with pytest.raises(TypeError, match="debug_print received unexpected arguments"):
        jax.debug.print(None, 1)


def test_print_under_vmap_prints_each_element_in_order(capsys):
    xs = jnp.arange(6.0).reshape(2, 3)
    jax.vmap(_printing)(xs)
    jax.jit(jax.vmap(_printing))(xs)
    assert capsys.readouterr().out == "x=[0. 1. 2.]\nx=[3. 4. 5.]\n" * 2


@pytest.mark.parametrize("transform", ["grad", "jit_grad", "grad_jit", "jvp"])
def test_print_under_differentiation_sees_primals_once(transform, capsys):
    g = lambda x: _printing(x).sum()  # noqa: E731
    x = jnp.asarray(X)
    if transform == "grad":
        out = jax.grad(g)(x)
    elif transform == "jit_grad":
        out = jax.jit(jax.grad(g))(x)
    elif transform == "grad_jit":
        out = jax.grad(jax.jit(g))(x)
    else:
        out = jax.jvp(_printing, (x,), (jnp.ones(3),))[1]
    np.testing.assert_array_equal(out, np.ones(3, np.float32))
    assert capsys.readouterr().out == "x=[0. 1. 2.]\n"


def test_print_under_remat_runs_in_both_passes(capsys):
    g = lambda x: _printing(x).sum()  # noqa: E731
    jax.grad(jax.checkpoint(g))(jnp.asarray(X))
    assert capsys.readouterr().out == "x=[0. 1. 2.]\n" * 2


def test_print_of_a_tangent_inside_grad(capsys):
    def h(x):
        y, t = jax.jvp(jnp.sin, (x,), (x,))
        jax.debug.print("t={}", t)
        return y

    assert float(jax.grad(h)(1.0)) == pytest.approx(np.cos(1.0))
    assert capsys.readouterr().out == "t=0.5403022766113281\n"


_PRINT_PARAMS = (
    "      has_placeholders=True\n"
    "      in_tree=PyTreeDef(((), {'x': *}))\n"
    "      logging_record=None\n"
    f"      np_printoptions={tuple(np.get_printoptions().items())}\n"
    "      ordered=False\n"
    "      partitioned=False\n"
    "      static_args=()\n")


def test_print_jaxpr_as_jax():
    assert str(jax.make_jaxpr(_printing)(X)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    debug_print[\n"
        "      fmt=x={x}\n" + _PRINT_PARAMS +
        "    ] a\n"
        "    b:f32[3] = add a 1.0:f32[]\n"
        "  in (b,) }")


def test_print_survives_dead_code_elimination_in_jit(capsys):
    @jax.jit
    def f(x):
        jax.debug.print("{}", x * 2)
        return x

    f(jnp.asarray(X))
    assert capsys.readouterr().out == "[0. 2. 4.]\n"


# ---------------------------------------------------------------------------------------------
# debug.callback

def test_callback_receives_arrays_and_static_leaves():
    seen = []
    def record(*args, **kwargs):
        seen.append(([type(a).__name__ for a in args], {k: type(v).__name__
                                                        for k, v in kwargs.items()}))

    def f(x):
        jax.debug.callback(record, x, 3, "s", k=x)
        return x

    f(X)
    jax.jit(f)(X)
    assert seen == [(["Array", "Array", "str"], {"k": "Array"})] * 2


def test_callback_jaxpr_and_vmap_slices():
    def f(x, y):
        jax.debug.callback(print, x, y, 2)

    text = str(jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(jnp.ones((2, 2)), X))
    assert text.count("squeeze[dimensions=(1,)]") == 2
    assert ("    debug_callback[\n      callback=<function debug_callback.<locals>._debug_callback"
            ".<locals>._flat_callback at 0xXXXXXXXXXXXX>\n      effect=Debug\n"
            "      partitioned=False\n    ] d b 2:i32[]\n") in text


def test_callback_errors():
    with pytest.raises(TypeError, match="first argument to jax.debug.callback must be callable, "
                                        "but got an object of type <class 'int'>"):
        jax.debug.callback(3, X)
    with pytest.raises(ZeroDivisionError):
        jax.debug.callback(lambda a: 1 / 0, X)
    with pytest.raises(JaxRuntimeError, match="(?s)INTERNAL: CpuCallback error "
                                                "calling callback: .*ZeroDivisionError"):
        jax.jit(lambda x: jax.debug.callback(lambda a: 1 / 0, x))(X)


def test_ordered_callbacks_keep_program_order_and_thread_a_token():
    order = []

    def f(x):
        jax.debug.callback(lambda a: order.append(("a", float(a[0]))), x, ordered=True)
        jax.debug.callback(lambda a: order.append(("b", float(a[1]))), x * 2, ordered=True)
        return x

    jax.jit(f)(X)
    assert order == [("a", 0.0), ("b", 2.0)]
    text = jax.jit(f).lower(X).as_text()
    assert "stablehlo.after_all" in text
    calls = [line for line in text.splitlines() if "custom_call" in line]
    assert [("index = 0" in c, "index = 1" in c) for c in calls] == [(True, False), (False, True)]
    assert all("has_side_effect = true" in c and "(!stablehlo.token, tensor<3xf32>) -> "
               "!stablehlo.token" in c for c in calls)
    first_token = calls[0].split(" = ")[0].strip()
    assert f"({first_token}," in calls[1]


# ---------------------------------------------------------------------------------------------
# pure_callback

def test_pure_callback_eager_jit_and_jaxpr():
    np.testing.assert_allclose(jax.pure_callback(np.sin, SD3, X), np.sin(X))
    np.testing.assert_allclose(jax.jit(lambda x: jax.pure_callback(np.sin, SD3, x))(X),
                               np.sin(X))
    assert str(jax.make_jaxpr(lambda x: jax.pure_callback(np.sin, SD3, x))(X)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = pure_callback[\n"
        "      callback=_FlatCallback(callback_func=<ufunc 'sin'>, "
        "in_tree=PyTreeDef(((*,), {})))\n"
        "      result_avals=(ShapedArray(float32[3]),)\n"
        "      sharding=None\n"
        "      vmap_method=None\n"
        "    ] a\n"
        "  in (b,) }")


def test_pure_callback_pytrees_and_canonical_results():
    out = jax.pure_callback(lambda d: {"a": d["x"] * 2, "b": 1.0},
                            {"a": SD3, "b": SCALAR}, {"x": X})
    assert out["a"].dtype == np.float32 and out["b"].dtype == np.float32
    np.testing.assert_allclose(out["a"], X * 2)


def test_pure_callback_unused_result_is_removed_by_jit():
    calls = []

    def f(x):
        jax.pure_callback(lambda a: calls.append(1) or a, SD3, x)
        return x

    jax.jit(f)(X)
    assert calls == []


@pytest.mark.parametrize("method,shapes", [
    ("sequential", [((), ())] * 3), ("sequential_unrolled", [((), ())] * 3),
    ("expand_dims", [((3,), (1,))]), ("broadcast_all", [((3,), (3,))]),
    ("legacy_vectorized", [((3,), ())])])
def test_pure_callback_vmap_methods(method, shapes):
    seen = []

    def cb(a, b):
        seen.append((np.shape(a), np.shape(b)))
        return np.asarray(a + b, np.float32)

    out = jax.vmap(lambda x: jax.pure_callback(cb, SCALAR, x, 1.0, vmap_method=method))(X)
    np.testing.assert_array_equal(out, X + 1)
    assert seen == shapes


def test_pure_callback_errors():
    with pytest.raises(NotImplementedError, match=re.escape(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            "'legacy_vectorized'. Got vmap_method=None.")):
        jax.vmap(lambda x: jax.pure_callback(np.sin, SCALAR, x))(X)
    with pytest.raises(ValueError, match=re.escape(
            "vmap_method must be on of the allowed methods ['sequential', "
            "'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized', "
            "None], but got: foo")):
        jax.pure_callback(np.sin, SD3, X, vmap_method="foo")
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP. Please use "
                                         "`jax.custom_jvp`"):
        jax.grad(lambda x: jax.pure_callback(np.sin, SD3, x).sum())(X)
    with pytest.raises(ValueError, match="result_shape_dtypes cannot specify 64-bit types when "
                                         "`jax_enable_x64` is disabled"):
        jax.pure_callback(np.sin, jax.ShapeDtypeStruct((3,), np.float64), X)


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize("result,message", [
    (np.zeros(2, np.float32), "Incorrect output shape for return value #0: Expected: (3,), "
                              "Actual: (2,)"),
    (np.zeros(3, np.int32), "Incorrect output dtype for return value #0: Expected: float32, "
                            "Actual: int32"),
    ((X, X), "Mismatched number of outputs from callback. Expected: 1, Actual: 2")])
def test_pure_callback_result_checks(wrap, result, message):
    f = lambda x: jax.pure_callback(lambda a: result, SD3, x)  # noqa: E731
    with pytest.raises(JaxRuntimeError) as info:
        (jax.jit(f) if wrap == "jit" else f)(X)
    text = str(info.value)
    assert text.startswith("INTERNAL: CpuCallback error calling callback: Traceback")
    assert f"RuntimeError: {message}" in text


def test_float64_results_are_canonicalized():
    out = jax.jit(lambda x: jax.pure_callback(lambda a: np.zeros(3), SD3, x))(X)
    assert out.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# io_callback

def test_io_callback_runs_even_when_unused_and_in_order():
    calls = []

    def f(x):
        io_callback(lambda a: calls.append(float(a[0])) or a, SD3, x, ordered=True)
        io_callback(lambda a: calls.append(float(a[1])) or a, SD3, x)
        return x

    jax.jit(f)(X)
    f(X)
    assert calls == [0.0, 1.0, 0.0, 1.0]


def test_io_callback_vmap_and_errors():
    out = jax.vmap(lambda x: io_callback(lambda a: np.float32(a * 2), SCALAR, x))(X)
    np.testing.assert_array_equal(out, X * 2)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(lambda x: io_callback(lambda a: a, SCALAR, x, ordered=True))(X)
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        jax.jvp(lambda x: io_callback(np.sin, SD3, x), (X,), (X,))


def test_io_callback_jaxpr_as_jax():
    text = str(jax.make_jaxpr(lambda x: io_callback(np.cos, SD3, x, ordered=True))(X))
    assert text == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = io_callback[\n"
        "      callback=_FlatCallback(callback_func=<ufunc 'cos'>, "
        "in_tree=PyTreeDef(((*,), {})))\n"
        "      ordered=True\n"
        "      result_avals=(ShapedArray(float32[3]),)\n"
        "      sharding=None\n"
        "    ] a\n"
        "  in (b,) }")


# ---------------------------------------------------------------------------------------------
# Lowering

def test_lowering_as_jax():
    def f(x):
        jax.debug.print("x={x}", x=x)
        y = jax.pure_callback(np.sin, SD3, x)
        z = io_callback(np.cos, SD3, x)
        return y + z

    lines = [line.strip() for line in jax.jit(f).lower(X).as_text().splitlines()
             if "custom_call" in line]
    assert lines == [
        'stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = "", '
        "has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}} : "
        "(tensor<3xf32>) -> ()",
        '%0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = "", '
        "mhlo.backend_config = {index = 1 : ui64}} : (tensor<3xf32>) -> tensor<3xf32>",
        '%1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = "", '
        "has_side_effect = true, mhlo.backend_config = {index = 2 : ui64}} : "
        "(tensor<3xf32>) -> tensor<3xf32>"]


def test_host_callback_attribute_is_jaxs_backend_config():
    config = host_kernels.HostCallback(3, print)
    assert config == {"index": np.uint64(3)} and config.callback is print


@pytest.mark.needs_jax
def test_lowered_text_parses_in_jaxlib():
    pytest.importorskip("jax")
    from tests import xla_check

    def f(x):
        jax.debug.callback(lambda a: None, x, ordered=True)
        jax.debug.print("{}", x, ordered=True)
        return jax.pure_callback(np.sin, SD3, x) + io_callback(np.cos, SD3, x, ordered=True)

    xla_check.parse(jax.jit(f).lower(X).as_text())


# ---------------------------------------------------------------------------------------------
# jax_debug_nans / jax_debug_infs

@pytest.fixture
def debug_nans():
    with jax.config.override("jax_debug_nans", True):
        yield


def test_check_nans_names_the_primitive(debug_nans, capsys):
    def f(x):
        return jnp.log(jnp.sin(x) - 2.0) * 2

    closed = jax.make_jaxpr(f)(X)
    with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in log$"):
        debugging.check_nans("f", closed, [X], [np.full(3, np.nan, np.float32)])
    assert capsys.readouterr().out == ("Invalid nan value encountered in the output of a jax.jit "
                                       "function. Calling the de-optimized version.\n")


def test_check_nans_opens_nested_jits(debug_nans):
    inner = jax.jit(lambda x: jnp.sqrt(x - 5.0))
    closed = jax.make_jaxpr(lambda x: inner(x) + 1)(X)
    with pytest.raises(FloatingPointError, match=r"encountered in sqrt$"):
        debugging.check_nans("g", closed, [X], [np.full(3, np.nan, np.float32)])


def test_check_nans_when_no_primitive_makes_one(debug_nans):
    closed = jax.make_jaxpr(lambda x: x)(X)
    with pytest.raises(FloatingPointError) as info:
        debugging.check_nans("<lambda>", closed, [np.full(3, np.nan, np.float32)],
                             [np.full(3, np.nan, np.float32)])
    assert str(info.value).startswith(
        "('jit(<lambda>)', 'nan'). Because jax_config.debug_nans.value and/or "
        "config.jax_debug_infs is set, the de-optimized function")


def test_check_nans_ignores_clean_and_integer_results(debug_nans):
    closed = jax.make_jaxpr(lambda x: x)(X)
    debugging.check_nans("f", closed, [X], [X, np.arange(3)])
    with jax.config.override("jax_debug_nans", False):
        debugging.check_nans("f", closed, [X], [np.full(3, np.nan, np.float32)])


def test_check_primitive_nans_and_infs():
    nan = [np.array([np.nan], np.float32)]
    inf = [np.array([np.inf], np.float32)]
    with jax.config.override("jax_debug_nans", True):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in div$"):
            debugging.check_primitive_nans("div", nan)
        debugging.check_primitive_nans("div", inf)
    with jax.config.override("jax_debug_infs", True):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered in div$"):
            debugging.check_primitive_nans("div", inf)


@pytest.mark.needs_jax
def test_printing_matches_real_jax_live():
    real = pytest.importorskip("jax")
    import io
    import contextlib

    def program(api, jnp_):
        def f(x):
            api.debug.print("x={x} {}", x * 2, x=x)
            return x + 1
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            f(jnp_.arange(3.0))
            api.jit(f)(jnp_.arange(3.0))
            api.vmap(f)(jnp_.arange(6.0).reshape(2, 3))
            api.grad(lambda x: f(x).sum())(jnp_.arange(3.0))
        return buffer.getvalue(), str(api.make_jaxpr(f)(jnp_.arange(3.0)))

    import jax.numpy as real_jnp
    assert program(jax, jnp) == program(real, real_jnp)
