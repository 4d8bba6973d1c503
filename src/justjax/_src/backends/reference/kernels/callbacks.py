"""Host callbacks: `stablehlo.custom_call @xla_ffi_python_cpu_callback` and effect tokens.

A Python callback (`jax.debug.print`, `jax.debug.callback`, `jax.pure_callback`,
`io_callback`) lowers, as in JAX, to a custom call whose `mhlo.backend_config` is
`{index = N : ui64}`: N numbers the module's callbacks in lowering order. JAX keeps the
callables in a side table of the executable; here the attribute value itself holds the
callable (`HostCallback`), so the module is self-contained and the kernel calls it directly.
Such modules print as JAX's but cannot run on real XLA (which has no table to look N up in).

Ordered effects thread a `!stablehlo.token` through their custom calls; `stablehlo.after_all`
makes the first token of a chain.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op

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


@dataclass(frozen=True)
class _Token:
    """The run-time value of a `!stablehlo.token`: it carries nothing."""


TOKEN = _Token()


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


# Kernel builders of the other custom call targets, by target name (`register_target`).
target_kernel_builders: dict[str, Callable[[Op, Compiler], Kernel]] = {}


def register_target(*targets: str) -> Callable[[Callable[[Op, Compiler], Kernel]],
                                               Callable[[Op, Compiler], Kernel]]:
    """Registers a kernel builder for custom calls to each of `targets`."""
    def decorate(builder: Callable[[Op, Compiler], Kernel]) -> Callable[[Op, Compiler], Kernel]:
        for target in targets:
            target_kernel_builders[target] = builder
        return builder

    return decorate


@register("stablehlo.custom_call")
def _custom_call(op: Op, compiler: Compiler) -> Kernel:
    target = op.attributes.get("call_target_name")
    if target in target_kernel_builders:
        return target_kernel_builders[target](op, compiler)
    config = op.attributes.get("mhlo.backend_config")
    if target != CALL_TARGET or not isinstance(config, HostCallback):
        raise NotImplementedError(f"reference backend: no kernel for custom_call @{target}")
    # Tokens lead the operands and results of ordered callbacks.
    takes_token = bool(op.operands) and isinstance(op.operands[0].type, ir.TokenType)
    returns_token = bool(op.results) and isinstance(op.results[0].type, ir.TokenType)
    result_types = [r.type for r in op.results[int(returns_token):]]
    callback = config.callback

    def kernel(*args: Any) -> Any:
        outs = call_host(callback, args[int(takes_token):], result_types)
        if returns_token:
            outs = [TOKEN, *outs]
        return outs[0] if len(op.results) == 1 else outs

    return kernel


@register("stablehlo.after_all")
def _after_all(op: Op, compiler: Compiler) -> Kernel:
    return lambda *tokens: TOKEN
