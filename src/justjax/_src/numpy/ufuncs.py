"""Elementwise jax.numpy functions, written with lax."""
from __future__ import annotations

from typing import Any

from justjax._src.lax import elementwise as lax
from justjax._src.numpy import util

__all__ = ["add", "subtract", "multiply", "true_divide", "divide"]


def add(x: Any, y: Any, /) -> Any:
    """Elementwise `x + y` with NumPy broadcasting and JAX's type promotion."""
    x, y = util.promote_args("add", x, y)
    return lax.add(x, y)


def subtract(x: Any, y: Any, /) -> Any:
    """Elementwise `x - y`."""
    x, y = util.promote_args("subtract", x, y)
    return lax.sub(x, y)


def multiply(x: Any, y: Any, /) -> Any:
    """Elementwise `x * y`."""
    x, y = util.promote_args("multiply", x, y)
    return lax.mul(x, y)


def true_divide(x: Any, y: Any, /) -> Any:
    """Elementwise `x / y`; integers divide as floats."""
    x, y = util.promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide
