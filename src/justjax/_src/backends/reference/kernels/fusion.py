"""Reference kernel of `hlo.fusion` (the fusion pass's op): the fused computation is run as
its region, the fusion's operands being the region's block arguments (its parameters).

The region is isolated (it reads only its parameters), so it runs like a called function;
it is compiled once, when the fusion's kernel is built.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from justjax._src.backends.reference import Compiler, Kernel, register
from justjax._src.hlo.ir import Op


@register("hlo.fusion")
def _fusion(op: Op, compiler: Compiler) -> Kernel:
    """`results = fused_computation(operands)`: one array, or a list for a multi-output
    fusion."""
    body = compiler.region(op.regions[0])
    single = len(op.results) == 1

    def kernel(*operands: np.ndarray) -> Any:
        results = body(operands)
        return results[0] if single else results

    return kernel
