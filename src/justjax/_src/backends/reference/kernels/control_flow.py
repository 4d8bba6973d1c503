"""Reference kernels of the control-flow ops: `stablehlo.while` and `stablehlo.case`.

Regions run through `compiler.region(region)`, compiled once when the op's kernel is built.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.hlo.ir import Op


@register("stablehlo.while")
def _while(op: Op, compiler: Compiler) -> Kernel:
    """`while cond(carry): carry = body(carry)`; the operands are the initial carries."""
    cond_region, body_region = op.regions
    cond = compiler.region(cond_region)
    body = compiler.region(body_region)
    single = len(op.results) == 1

    def kernel(*carry: np.ndarray) -> Any:
        # The body returns new arrays; the operands themselves are never written to.
        values = list(carry)
        while bool(cond(values)[0]):
            values = body(values)
        return values[0] if single else values

    return kernel


@register("stablehlo.case")
def _case(op: Op, compiler: Compiler) -> Kernel:
    """Runs the branch the i32 index names; an index out of range runs the LAST branch, as
    the StableHLO spec says (jax.lax.switch clamps before it gets here)."""
    branches = [compiler.region(region) for region in op.regions]
    single = len(op.results) == 1

    def kernel(index: np.ndarray) -> Any:
        i = int(index)
        branch = branches[i] if 0 <= i < len(branches) else branches[-1]
        results = branch([])
        return results[0] if single else results

    return kernel
