"""JAX's error classes, with JAX's base classes so `except TypeError` still catches them."""
from __future__ import annotations

import functools
from typing import Any, Callable

_DOCS = "See https://docs.jax.dev/en/latest/errors.html#jax.errors."


class JAXTypeError(TypeError):
    """Base of justjax's TypeErrors."""


class JAXIndexError(IndexError):
    """Base of justjax's IndexErrors."""


def _shape_of(tracer: Any) -> str:
    return tracer.aval.str_short(short_dtypes=False)


def _origin(tracer: Any) -> str:
    """Where the tracer came from: the function being traced and the arguments it depends on."""
    describe = getattr(tracer, "_origin_msg", None)
    return describe() if describe is not None else ""


def _with_origin(tracer: Any) -> str:
    origin = _origin(tracer)
    return f"{origin}\n" if origin else ""


class ConcretizationTypeError(JAXTypeError):
    """A concrete value was needed from an abstract (traced) one."""

    def __init__(self, tracer: Any, context: str = "") -> None:
        context = f"{context}\n" if context else ""
        super().__init__(
            "Abstract tracer value encountered where concrete value is expected: traced array "
            f"with shape {_shape_of(tracer)}\n{context}{_with_origin(tracer)}\n"
            f"{_DOCS}ConcretizationTypeError")


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool(x)` (an `if`, `while`, `and`, `or`) on a traced value."""

    def __init__(self, tracer: Any) -> None:
        JAXTypeError.__init__(
            self,
            f"Attempted boolean conversion of traced array with shape {_shape_of(tracer)}.\n"
            f"{_with_origin(tracer)}{_DOCS}TracerBoolConversionError")


class TracerIntegerConversionError(JAXTypeError):
    """`int(x)` or `x.__index__()` on a traced value."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            f"The __index__() method was called on traced array with shape {_shape_of(tracer)}\n"
            f"{_with_origin(tracer)}{_DOCS}TracerIntegerConversionError")


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray(x)` on a traced value."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            "The numpy.ndarray conversion method __array__() was called on traced array "
            f"with shape {_shape_of(tracer)}\n{_with_origin(tracer)}"
            f"{_DOCS}TracerArrayConversionError")


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing with a traced mask (the result shape would depend on values)."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            f"Array boolean indices must be concrete; got {tracer.aval.str_short()}\n\n"
            f"{_DOCS}NonConcreteBooleanIndexError")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it."""


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (only raised when key-reuse checking is on)."""


class JaxRuntimeError(RuntimeError):
    """An error while running a compiled program (a failing host callback, ...), as JAX's
    `jax.errors.JaxRuntimeError` (XLA's runtime status, e.g. `INTERNAL: ...`)."""


def _out_of_memory(error: BaseException) -> JaxRuntimeError | None:
    """XLA's error for a buffer that cannot be allocated (`RESOURCE_EXHAUSTED`), for NumPy's
    `MemoryError`, or its ValueError for a size past the address space; None for any other
    error."""
    too_big = ("array is too big", "Maximum allowed dimension exceeded")
    if isinstance(error, MemoryError) or (isinstance(error, ValueError)
                                          and str(error).startswith(too_big)):
        nbytes = getattr(error, "_total_size", None)  # NumPy's MemoryError knows it
        size = f"{nbytes} bytes" if nbytes is not None else "a buffer"
        return JaxRuntimeError(f"RESOURCE_EXHAUSTED: Out of memory allocating {size}.")
    return None


def allocation_failures_as_xla(fun: Callable[..., Any]) -> Callable[..., Any]:
    """`fun` (an entry point that runs programs: a jit call, an eager op), raising XLA's
    `RESOURCE_EXHAUSTED` JaxRuntimeError where a buffer could not be allocated."""
    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except (MemoryError, ValueError) as error:
            raised = _out_of_memory(error)
            if raised is None:
                raise
            raise raised from None

    return run


# JAX's error classes print as `jax.errors.X`; these as `justjax.errors.X`, their public home.
for _cls in (JAXTypeError, JAXIndexError, ConcretizationTypeError, TracerBoolConversionError,
             TracerIntegerConversionError, TracerArrayConversionError,
             NonConcreteBooleanIndexError, UnexpectedTracerError, KeyReuseError, JaxRuntimeError):
    _cls.__module__ = "justjax.errors"
