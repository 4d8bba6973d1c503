"""JAX's error classes, with JAX's base classes so `except TypeError` still catches them."""
from __future__ import annotations

from typing import Any


class JAXTypeError(TypeError):
    """Base of justjax's TypeErrors."""


class JAXIndexError(IndexError):
    """Base of justjax's IndexErrors."""


def _describe_tracer(tracer: Any) -> str:
    describe = getattr(tracer, "_origin_msg", None)
    return describe() if describe is not None else ""


class ConcretizationTypeError(JAXTypeError):
    """A concrete value was needed from an abstract (traced) one."""

    def __init__(self, tracer: Any, context: str = "") -> None:
        super().__init__(
            f"Abstract tracer value encountered where concrete value is expected: {tracer}\n"
            f"{context}{_describe_tracer(tracer)}\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError")


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool(x)` (an `if`, `while`, `and`, `or`) on a traced value."""

    def __init__(self, tracer: Any) -> None:
        JAXTypeError.__init__(
            self,
            f"Attempted boolean conversion of traced array with shape {tracer.aval.str_short()}.\n"
            f"{_describe_tracer(tracer)}\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError")


class TracerIntegerConversionError(JAXTypeError):
    """`int(x)` or `x.__index__()` on a traced value."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            f"The __index__() method was called on traced array with shape {tracer.aval.str_short()}.\n"
            f"{_describe_tracer(tracer)}\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError")


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray(x)` on a traced value."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            "The numpy.ndarray conversion method __array__() was called on traced array "
            f"with shape {tracer.aval.str_short()}.\n{_describe_tracer(tracer)}\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError")


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing with a traced mask (the result shape would depend on values)."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            f"Array boolean indices must be concrete; got {tracer}\n\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (only raised when key-reuse checking is on)."""
