"""Host callbacks: what runs Python from a compiled program, for every backend.

A Python callback (`jax.debug.print`, `jax.debug.callback`, `jax.pure_callback`,
`io_callback`) lowers, as in JAX, to `stablehlo.custom_call @xla_ffi_python_cpu_callback`
whose `mhlo.backend_config` is `{index = N : ui64}`: N numbers the module's callbacks in
lowering order. JAX keeps the callables in a side table of the executable; here the attribute
value itself holds the callable (`HostCallback`), so the module is self-contained and a backend
calls it directly (`call_host`). Such modules print as JAX's but cannot run on real XLA (which
has no table to look N up in).
"""
from __future__ import annotations

import traceback
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.core import dtypes
from justjax._src.hlo import ir

__all__ = ["CALL_TARGET", "HostCallback", "call_host", "check_results"]

CALL_TARGET = "xla_ffi_python_cpu_callback"


class HostCallback(dict):
    """The `mhlo.backend_config` attribute of a Python callback's custom call.

    As a dictionary it is JAX's `{index = N : ui64}` (and prints so); its `callback(*numpy_arrays)
    -> sequence of results` is what the reference backend calls (token operands and results
    excluded). Two configs are equal when their indices are.
    """

    def __init__(self, index: int, callback: Callable[..., Sequence[Any]]) -> None:
        super().__init__(index=np.uint64(index))
        self.callback = callback


def check_results(results: Sequence[Any], result_types: Sequence[ir.TensorType]
                  ) -> list[np.ndarray]:
    """A callback's results as NumPy arrays of the declared types, with the RuntimeErrors
    JAX raises when their number, shapes or dtypes differ. Values are canonicalized first
    (a Python float or a float64 array stands for float32 without x64), as in JAX."""
    if len(results) != len(result_types):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_types)}, Actual: {len(results)}")
    arrays = []
    for i, (value, expected) in enumerate(zip(results, result_types, strict=True)):
        array = np.asarray(value)
        canonical = dtypes.canonicalize_dtype(array.dtype)
        if canonical != array.dtype:
            array = array.astype(canonical)
        if array.shape != expected.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {expected.shape}, Actual: {array.shape}")
        if array.dtype != expected.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {expected.dtype}, Actual: {array.dtype}")
        arrays.append(array)
    return arrays


def call_host(callback: Callable[..., Sequence[Any]], args: Sequence[np.ndarray],
              result_types: Sequence[ir.TensorType]) -> list[np.ndarray]:
    """Runs `callback(*args)` and checks its results. Any exception becomes JAX's
    `JaxRuntimeError("INTERNAL: CpuCallback error calling callback: <traceback>")`, which is
    what XLA's CPU runtime reports when a host callback fails. As there, that includes
    `SystemExit` (`q` in `jax.debug.breakpoint`'s debugger)."""
    try:
        return check_results(list(callback(*args)), result_types)
    except BaseException as e:
        raise errors.JaxRuntimeError(
            "INTERNAL: CpuCallback error calling callback: "
            + "".join(traceback.format_exception(e)).rstrip("\n")) from e
