"""Reference kernels of custom calls: host callbacks (`stablehlo.custom_call
@xla_ffi_python_cpu_callback`, whose `HostCallback` config holds the Python function: see
`runtime/host_callbacks.py`), the other targets (`register_target`) and effect tokens.

Ordered effects thread a `!stablehlo.token` through their custom calls; `stablehlo.after_all`
makes the first token of a chain.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.hlo import ir
from justjax._src.hlo.ir import Op
from justjax._src.runtime.host_callbacks import CALL_TARGET, HostCallback, call_host


@dataclass(frozen=True)
class _Token:
    """The run-time value of a `!stablehlo.token`: it carries nothing."""


TOKEN = _Token()


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
