"""Argument handling shared by the special-function modules."""
from __future__ import annotations

from typing import Any

from justjax._src.core import core, dtypes
from justjax._src.numpy import util

__all__: list[str] = []


def promote_inexact(name: str, *args: Any) -> list[Any]:
    """`promote_args_inexact`, with every result an array (it lets host scalars of the right
    type through, and the special functions read `.dtype` and use operators)."""
    return [util.asarray_lite(a) for a in util.promote_args_inexact(name, *args)]


def reject_complex(name: str, x: Any, message: str | None = None) -> None:
    """JAX's ValueError for the functions that take real arguments only."""
    if dtypes.is_complex(core.get_aval(x).dtype):
        raise ValueError(message or f"{name} does not support complex-valued inputs.")
