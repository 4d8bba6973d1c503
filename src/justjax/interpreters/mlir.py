"""`jax.interpreters.mlir`: lowering rules (re-exports only).

A rule is `rule(ctx, *operands, **params)` over justjax's IR values (`ctx.avals_in`,
`ctx.avals_out`, `ctx.module_context`); `lower_fun(f)` makes one from a function written
with jax.numpy/lax, which is how libraries write them. JAX's MLIR Python bindings (`ir`,
`hlo` dialect builders) are not provided.
"""
from justjax._src.debug.callbacks import emit_host_callback as emit_python_callback
from justjax._src.interpreters.lowering import LoweringRule as LoweringRule
from justjax._src.interpreters.lowering import LoweringRuleContext as LoweringRuleContext
from justjax._src.interpreters.lowering import ModuleContext as ModuleContext
from justjax._src.interpreters.lowering import lower_fun as lower_fun
from justjax._src.interpreters.lowering import register_lowering as register_lowering
