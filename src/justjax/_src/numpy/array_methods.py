"""The operators and methods shared by `justjax.Array` and tracers.

Both classes get the same functions, so `x + 1` means the same thing eagerly and under a
transformation. Each entry names the jax.numpy module and function that implements it.
"""
from __future__ import annotations

import functools
import importlib
from typing import Any, Callable

import numpy as np

from justjax._src.core import core
from justjax._src.numpy import array_api_metadata
from justjax._src.runtime.array import put
from justjax._src.runtime.sharding import device_put_target

# name -> (module under justjax._src.numpy, function name, swap operands)
_BINARY_OPERATORS: dict[str, tuple[str, str, bool]] = {
    "__add__": ("ufuncs", "add", False), "__radd__": ("ufuncs", "add", True),
    "__sub__": ("ufuncs", "subtract", False), "__rsub__": ("ufuncs", "subtract", True),
    "__mul__": ("ufuncs", "multiply", False), "__rmul__": ("ufuncs", "multiply", True),
    "__truediv__": ("ufuncs", "true_divide", False), "__rtruediv__": ("ufuncs", "true_divide", True),
    "__floordiv__": ("ufuncs", "floor_divide", False),
    "__rfloordiv__": ("ufuncs", "floor_divide", True),
    "__mod__": ("ufuncs", "remainder", False), "__rmod__": ("ufuncs", "remainder", True),
    "__divmod__": ("ufuncs", "divmod", False), "__rdivmod__": ("ufuncs", "divmod", True),
    "__pow__": ("ufuncs", "power", False), "__rpow__": ("ufuncs", "power", True),
    "__matmul__": ("tensor", "matmul", False), "__rmatmul__": ("tensor", "matmul", True),
    "__and__": ("ufuncs", "bitwise_and", False), "__rand__": ("ufuncs", "bitwise_and", True),
    "__or__": ("ufuncs", "bitwise_or", False), "__ror__": ("ufuncs", "bitwise_or", True),
    "__xor__": ("ufuncs", "bitwise_xor", False), "__rxor__": ("ufuncs", "bitwise_xor", True),
    "__lshift__": ("ufuncs", "left_shift", False), "__rlshift__": ("ufuncs", "left_shift", True),
    "__rshift__": ("ufuncs", "right_shift", False), "__rrshift__": ("ufuncs", "right_shift", True),
    "__eq__": ("ufuncs", "equal", False), "__ne__": ("ufuncs", "not_equal", False),
    "__lt__": ("ufuncs", "less", False), "__le__": ("ufuncs", "less_equal", False),
    "__gt__": ("ufuncs", "greater", False), "__ge__": ("ufuncs", "greater_equal", False),
}

_UNARY_OPERATORS: dict[str, tuple[str, str]] = {
    "__neg__": ("ufuncs", "negative"), "__pos__": ("ufuncs", "positive"),
    "__abs__": ("ufuncs", "absolute"), "__invert__": ("ufuncs", "invert"),
}

# Methods whose first argument is the array itself.
_METHODS: dict[str, tuple[str, str]] = {
    "all": ("reductions", "all"), "any": ("reductions", "any"),
    "argmax": ("reductions", "argmax"), "argmin": ("reductions", "argmin"),
    "argsort": ("sorting", "argsort"), "sort": ("sorting", "sort"),
    "searchsorted": ("sorting", "searchsorted"), "argpartition": ("sorting", "argpartition"),
    "astype": ("dtype_ops", "astype"),
    "choose": ("selection", "choose"),
    "conj": ("ufuncs", "conjugate"), "conjugate": ("ufuncs", "conjugate"),
    "copy": ("array_creation", "copy"),
    "cumprod": ("reductions", "cumprod"), "cumsum": ("reductions", "cumsum"),
    "diagonal": ("diagonals", "diagonal"), "dot": ("tensor", "dot"),
    "flatten": ("shape_ops", "ravel"), "ravel": ("shape_ops", "ravel"),
    "max": ("reductions", "max"), "min": ("reductions", "min"), "mean": ("reductions", "mean"),
    "nonzero": ("selection", "nonzero"), "prod": ("reductions", "prod"),
    "ptp": ("reductions", "ptp"), "repeat": ("rearranging", "repeat"),
    "round": ("ufuncs", "round"), "squeeze": ("shape_ops", "squeeze"),
    "std": ("reductions", "std"), "var": ("reductions", "var"), "sum": ("reductions", "sum"),
    "swapaxes": ("shape_ops", "swapaxes"), "take": ("take", "take"),
    "trace": ("diagonals", "trace"), "view": ("dtype_ops", "view"),
}


@functools.cache
def _function(module: str, name: str) -> Callable:
    return getattr(importlib.import_module(f"justjax._src.numpy.{module}"), name)


def _defers(other: Any) -> bool:
    """Whether a binary operator should return NotImplemented for `other` (as JAX does for
    values that are not arrays, so Python can try the reflected operator)."""
    if isinstance(other, core.Tracer):
        return False
    try:
        core.get_aval(other)
    except TypeError:
        return True
    return False


def _binary_operator(module: str, name: str, swap: bool) -> Callable:
    def operator(self: Any, other: Any) -> Any:
        if _defers(other):
            return NotImplemented
        fn = _function(module, name)
        return fn(other, self) if swap else fn(self, other)
    return operator


def _unary_operator(module: str, name: str) -> Callable:
    def operator(self: Any) -> Any:
        return _function(module, name)(self)
    return operator


def _method(module: str, name: str) -> Callable:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _function(module, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _reshape(self: Any, *args: Any, order: str = "C", **kwargs: Any) -> Any:
    """`x.reshape(2, 3)` or `x.reshape((2, 3))`, as NumPy allows both."""
    if "shape" in kwargs:
        shape = kwargs.pop("shape")
    elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        shape = args[0]
    else:
        shape = args
    return _function("shape_ops", "reshape")(self, shape, order=order, **kwargs)


def _transpose(self: Any, *args: Any) -> Any:
    axes = args[0] if len(args) == 1 and not isinstance(args[0], (int, np.integer)) else args
    return _function("shape_ops", "transpose")(self, axes or None)


def _getitem(self: Any, index: Any) -> Any:
    return _function("indexing", "rewriting_take")(self, index)


def _round(self: Any, ndigits: int | None = None) -> Any:
    if ndigits is None and self.ndim == 0 and not isinstance(self, core.Tracer):
        return round(self.item())
    return _function("ufuncs", "round")(self, ndigits or 0)


def _clip(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 -- NumPy's names
    """`a.clip(lo, hi)` passes its bounds by keyword, as JAX's method does (a jitted
    function's keyword arguments come after its positional ones, sorted by name)."""
    return _function("selection", "clip")(self, min=min, max=max)


def _compress(self: Any, condition: Any, axis: int | None = None, **kwargs: Any) -> Any:
    """`a.compress(condition)` is `jnp.compress(condition, a)`: the array comes second."""
    return _function("selection", "compress")(condition, self, axis, **kwargs)


def _to_device(self: Any, device: Any, *, stream: Any = None) -> Any:
    """The array committed to `device` (a `Device` or a `Sharding`), as `jax.device_put`.

    Args:
      device: where the result goes.
      stream: must be None (no streams on CPU; JAX's NotImplementedError otherwise).
    Returns:
      The array on `device` (a traced value is returned as it is, as device_put does).
    """
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    target = device_put_target(device)
    if target is None or isinstance(self, core.Tracer):
        return self
    return put(self, target)


def _at(self: Any) -> Any:
    return _function("indexing", "IndexUpdateHelper")(self)


def _T(self: Any) -> Any:
    return _function("shape_ops", "transpose")(self)


def _mT(self: Any) -> Any:
    return _function("shape_ops", "matrix_transpose")(self)


def _real(self: Any) -> Any:
    return _function("ufuncs", "real")(self)


def _imag(self: Any) -> Any:
    return _function("ufuncs", "imag")(self)


def _iter_traced_rows(self: Any) -> Any:
    """Rows of a traced array, each a static `slice` and `squeeze` (as JAX stages them)."""
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    index_in_dim = importlib.import_module("justjax._src.lax.slicing").index_in_dim
    return (index_in_dim(self, i, 0, keepdims=False) for i in range(self.shape[0]))


def install_tracer_iteration(cls: type) -> None:
    """Tracers iterate by staging one slice per row; concrete Arrays iterate on the host."""
    cls.__iter__ = _iter_traced_rows


def install(cls: type) -> None:
    """Gives `cls` (Array or Tracer) the jax.Array operator and method surface."""
    for name, (module, fn, swap) in _BINARY_OPERATORS.items():
        setattr(cls, name, _binary_operator(module, fn, swap))
    for name, (module, fn) in _UNARY_OPERATORS.items():
        setattr(cls, name, _unary_operator(module, fn))
    for name, (module, fn) in _METHODS.items():
        setattr(cls, name, _method(module, fn))
    cls.reshape = _reshape
    cls.to_device = _to_device
    cls.__array_namespace__ = array_api_metadata.__array_namespace__
    cls.compress = _compress
    cls.clip = _clip
    cls.transpose = _transpose
    cls.__getitem__ = _getitem
    cls.__round__ = _round
    cls.at = property(_at)
    cls.T = property(_T)
    cls.mT = property(_mT)
    cls.real = property(_real)
    cls.imag = property(_imag)
