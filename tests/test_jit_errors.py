"""Error messages met while tracing under jit: they name the user's function (with its source
location) and the arguments the offending value depends on, in JAX 0.10.2's words. The plain
tests pin the texts recorded from JAX; the needs_jax test compares with JAX live."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import justjax
import justjax.numpy as justjax_numpy
from justjax._src import errors

DOCS = "See https://docs.jax.dev/en/latest/errors.html#jax.errors."


def f_if(x, y):
    if x > 0:
        return y
    return -y


def f_if2(x, y):
    if x + y > 0:
        return y
    return -y


def f_int(x):
    return int(x)


def f_range(n):
    return sum(range(n))


def f_zeros(jnp, n):
    return jnp.zeros((n, 2))


def f_mask(x):
    return x[x > 0]


def f_asarray(x):
    return np.asarray(x)


def f_tree(d):
    if d["a"] > 0:
        return d["b"]
    return 0.0


def f_kw(x, *, y):
    if y > 0:
        return x
    return -x


def f_tolist(x):
    return x.tolist()


def _where(f) -> str:
    return f"{f.__name__} at {inspect.getsourcefile(f)}:{inspect.getsourcelines(f)[1]}"


def _traced(f, names: str) -> str:
    depends = (f"the value of the argument {names}" if " and " not in names
               else f"the values of the arguments {names}")
    return (f"The error occurred while tracing the function {_where(f)} for jit. This concrete "
            f"value was not available in Python because it depends on {depends}.")


def _cases(jax, jnp):
    """name -> (thunk raising under jit, expected error class name, expected text)."""
    return {
        "if": (lambda: jax.jit(f_if)(1.0, 2.0), "TracerBoolConversionError",
               "Attempted boolean conversion of traced array with shape bool[].\n"
               f"{_traced(f_if, 'x')}\n{DOCS}TracerBoolConversionError"),
        "if2": (lambda: jax.jit(f_if2)(1.0, 2.0), "TracerBoolConversionError",
                "Attempted boolean conversion of traced array with shape bool[].\n"
                f"{_traced(f_if2, 'x and y')}\n{DOCS}TracerBoolConversionError"),
        "int": (lambda: jax.jit(f_int)(1.0), "ConcretizationTypeError",
                "Abstract tracer value encountered where concrete value is expected: traced "
                "array with shape float32[]\nThe problem arose with the `int` function. If "
                "trying to convert the data type of a value, try using `x.astype(int)` or "
                f"`jnp.array(x, int)` instead.\n{_traced(f_int, 'x')}\n\n"
                f"{DOCS}ConcretizationTypeError"),
        "range": (lambda: jax.jit(f_range)(3), "TracerIntegerConversionError",
                  "The __index__() method was called on traced array with shape int32[]\n"
                  f"{_traced(f_range, 'n')}\n{DOCS}TracerIntegerConversionError"),
        "mask": (lambda: jax.jit(f_mask)(jnp.arange(3.0)), "NonConcreteBooleanIndexError",
                 "Array boolean indices must be concrete; got bool[3]\n\n"
                 f"{DOCS}NonConcreteBooleanIndexError"),
        "asarray": (lambda: jax.jit(f_asarray)(jnp.arange(3.0)), "TracerArrayConversionError",
                    "The numpy.ndarray conversion method __array__() was called on traced "
                    f"array with shape float32[3]\n{_traced(f_asarray, 'x')}\n"
                    f"{DOCS}TracerArrayConversionError"),
        "tree": (lambda: jax.jit(f_tree)({"a": 1.0, "b": 2.0}), "TracerBoolConversionError",
                 "Attempted boolean conversion of traced array with shape bool[].\n"
                 f"{_traced(f_tree, chr(100) + repr(['a']))}\n{DOCS}TracerBoolConversionError"),
        "kw": (lambda: jax.jit(f_kw)(1.0, y=2.0), "TracerBoolConversionError",
               "Attempted boolean conversion of traced array with shape bool[].\n"
               f"{_traced(f_kw, 'y')}\n{DOCS}TracerBoolConversionError"),
        "tolist": (lambda: jax.jit(f_tolist)(jnp.ones(2)), "ConcretizationTypeError",
                   "Abstract tracer value encountered where concrete value is expected: traced "
                   "array with shape float32[2]\nThe tolist() method was called on traced array "
                   f"with shape float32[2].\n{_traced(f_tolist, 'x')}\n{_traced(f_tolist, 'x')}"
                   f"\n\n{DOCS}ConcretizationTypeError"),
    }


CASES = list(_cases(justjax, justjax_numpy))


@pytest.mark.parametrize("name", CASES)
def test_message_pinned(name):
    thunk, cls, text = _cases(justjax, justjax_numpy)[name]
    with pytest.raises(getattr(errors, cls)) as info:
        thunk()
    assert str(info.value) == text


def test_shape_from_traced_value():
    with pytest.raises(TypeError) as info:
        justjax.jit(lambda n: f_zeros(justjax_numpy, n))(3)
    lines = str(info.value).splitlines()
    assert lines[:2] == [
        "Shapes must be 1D sequences of concrete values of integer type, got "
        "(JitTracer(~int32[]), 2).",
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions."]
    assert lines[2].startswith("The error occurred while tracing the function <lambda> at ")
    assert lines[2].endswith("for jit. This concrete value was not available in Python because "
                             "it depends on the value of the argument n.")


def test_error_classes_are_typeerrors_and_public():
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    assert issubclass(errors.ConcretizationTypeError, TypeError)
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)
    assert errors.TracerBoolConversionError.__module__ == "justjax.errors"
    assert justjax.errors.TracerBoolConversionError is errors.TracerBoolConversionError


def _leak(jax, jnp, how):
    leaked = []

    def f_leak(x):
        leaked.append(jnp.sin(x))
        return x

    if how == "grad":
        jax.grad(f_leak)(1.0)
    elif how == "vmap":
        jax.vmap(f_leak)(jnp.ones(2))
    elif how == "jvp":
        jax.jvp(f_leak, (1.0,), (1.0,))
    else:
        jax.jit(f_leak)(1.0)
    return leaked[0], f_leak


LEAK_TAIL = ("To catch the leak earlier, try setting the environment variable "
             "JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.\n"
             f"{DOCS}UnexpectedTracerError")


def _leak_head(tracer_type: str) -> str:
    return ("Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
            "allowing for a reference to an intermediate value with type float32[] wrapped in a "
            f"{tracer_type} to escape the scope of the transformation.\nJAX transformations "
            "require that functions explicitly return their outputs, and disallow saving "
            "intermediate values to global state.\n")


@pytest.mark.parametrize("how,tracer_type", [("grad", "LinearizeTracer"), ("vmap", "BatchTracer"),
                                             ("jvp", "JVPTracer")])
def test_leaked_tracer(how, tracer_type):
    tracer, _ = _leak(justjax, justjax_numpy, how)
    with pytest.raises(errors.UnexpectedTracerError) as info:
        tracer + 1
    assert str(info.value) == _leak_head(tracer_type) + LEAK_TAIL


def test_leaked_jit_tracer_names_the_function():
    tracer, f_leak = _leak(justjax, justjax_numpy, "jit")
    rule = "-" * 30
    # JAX also names the line that created the value (justjax tracers do not record it).
    expected = (_leak_head("DynamicJaxprTracer")
                + f"The function being traced when the value leaked was {_where(f_leak)} traced "
                f"for jit.\n{rule}\nThe leaked intermediate value was created on line . \n{rule}"
                "\nWhen the value was created, the final 5 stack frames (most recent last) "
                f"excluding JAX-internal frames were:\n{rule}\n\n{rule}\n\n" + LEAK_TAIL)
    for use in (lambda: tracer + 1, lambda: justjax.jit(lambda y: y * tracer)(2.0)):
        with pytest.raises(errors.UnexpectedTracerError) as info:
            use()
        assert str(info.value) == expected


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", CASES)
def test_message_matches_jax_live(name):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    thunk, cls, _ = _cases(jax, jnp)[name]
    with pytest.raises(Exception) as real:
        thunk()
    assert type(real.value).__name__ == cls
    ours_thunk, _, _ = _cases(justjax, justjax_numpy)[name]
    with pytest.raises(getattr(errors, cls)) as ours:
        ours_thunk()
    assert str(ours.value) == str(real.value)


@pytest.mark.needs_jax
@pytest.mark.parametrize("how", ["grad", "vmap", "jvp", "jit"])
def test_leak_matches_jax_live(how):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    real_tracer, _ = _leak(jax, jnp, how)
    with pytest.raises(Exception) as real:
        real_tracer + 1
    tracer, _ = _leak(justjax, justjax_numpy, how)
    with pytest.raises(errors.UnexpectedTracerError) as ours:
        tracer + 1
    # Only the source lines of the leaked value differ (justjax does not record them).
    real_lines = [line for line in str(real.value).splitlines() if "test_jit_errors.py:" not in line
                  or "The function being traced" in line]
    our_lines = [line for line in str(ours.value).splitlines()
                 if line not in ("The leaked intermediate value was created on line . ", "")]
    assert our_lines == [line for line in real_lines if line != ""]
