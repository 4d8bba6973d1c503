"""Call inlining ("inline"), as XLA's CallInliner: `func.call`s of private functions (and
composites, as calls of their decomposition) are replaced by the callee's body; functions no
longer called are removed.
"""
from __future__ import annotations

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Block, Op, Value
from justjax._src.hlo.passes.pipeline import Pass
from justjax._src.hlo.passes.util import clone_ops, remove_unused_functions, sweep

__all__ = ["CallInlining"]


class CallInlining(Pass):
    """Replaces each `func.call` of a private function by a copy of the callee's body (calls
    in the copy inlined too), then removes the functions no longer called."""

    name = "inline"

    def run(self, module: ir.Module) -> bool:
        functions = {fn.name: fn for fn in module.functions}
        changed = False
        for fn in module.functions:
            changed |= _Inliner(functions, fn.name).inline(fn.body)
        changed |= remove_unused_functions(module)
        return changed


# The ops that call a function of the module, and the attribute naming it: a composite is
# inlined as a call of its decomposition, as XLA inlines composites.
_CALLEE_ATTRIBUTE = {"func.call": "callee", "stablehlo.composite": "decomposition"}


class _Inliner:
    def __init__(self, functions: dict[str, ir.Function], root: str) -> None:
        self.functions = functions
        self.stack = [root]  # callees being inlined: a recursive call is left as it is
        self.mapping: dict[Value, Value] = {}

    def inline(self, block: Block) -> bool:
        return sweep(block, self.visit, self.mapping)

    def visit(self, op: Op) -> list[Op] | None:
        attribute = _CALLEE_ATTRIBUTE.get(op.opcode)
        if attribute is None:
            return None
        callee = self.functions.get(op.attributes[attribute].name)
        if callee is None or callee.visibility != "private" or callee.name in self.stack:
            return None
        values = dict(zip(callee.args, op.operands, strict=True))
        copied = clone_ops(callee.body.ops, values)
        self.stack.append(callee.name)
        try:
            body = Block([], copied)
            self.inline(body)
        finally:
            self.stack.pop()
        ret = body.ops[-1]
        for result, value in zip(op.results, ret.operands, strict=True):
            self.mapping[result] = value
        return body.ops[:-1]
