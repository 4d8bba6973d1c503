"""The pass infrastructure (`_src/hlo/passes/pipeline.py`): passes run in order and report
changes, disabled passes are skipped, the verifier between passes names the pass that broke
the module, the IR is dumped after each pass, and `FixedPoint` reruns until nothing changes."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.hlo import ir
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.pipeline import FixedPoint, Pass, PassError, Pipeline
from tests.harness import run_reference


def _module() -> ir.Module:
    return jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0).lower(jnp.ones(3)).compiler_ir()


class _CountOps(Pass):
    """Changes nothing; remembers how many ops it saw."""

    name = "count"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def run(self, module: ir.Module) -> bool:
        self.seen.append(sum(1 for _ in module.walk()))
        return False


class _DropOneMultiply(Pass):
    """Replaces the first `multiply` by its left operand (changes the module once)."""

    name = "drop-multiply"

    def run(self, module: ir.Module) -> bool:
        body = module.main.body
        for op in body.ops:
            if op.opcode == "stablehlo.multiply":
                util.replace_uses(body, op.result, op.operands[0])
                body.ops.remove(op)
                return True
        return False


class _BreakSSA(Pass):
    name = "break-ssa"

    def run(self, module: ir.Module) -> bool:
        body = module.main.body
        body.ops.insert(0, body.ops.pop(-2))  # uses a value before it is defined
        return True


def test_passes_run_in_order_and_report_changes() -> None:
    count = _CountOps()
    pipeline = Pipeline([count, _DropOneMultiply(), count, _DropOneMultiply()], verify=True)
    module = _module()
    assert pipeline.run(module)
    assert pipeline.changes == [("count", False), ("drop-multiply", True), ("count", False),
                                ("drop-multiply", False)]
    assert count.seen[1] == count.seen[0] - 1
    (out,) = run_reference(module, np.ones(3, np.float32))
    np.testing.assert_allclose(out, np.sin(np.ones(3, np.float32)) + 1.0, rtol=1e-6)


def test_disabled_passes_are_skipped() -> None:
    pipeline = Pipeline([_DropOneMultiply()], disabled=["drop-multiply"])
    assert not pipeline.run(_module()) and pipeline.changes == []
    with jax.config.override("justjax_disable_passes", "count, drop-multiply"):
        assert Pipeline([_DropOneMultiply()]).disabled == {"count", "drop-multiply"}


def test_verifier_names_the_pass_that_broke_the_module() -> None:
    with pytest.raises(PassError, match="after pass break-ssa"):
        Pipeline([_BreakSSA()], verify=True).run(_module())
    Pipeline([_BreakSSA()], verify=False).run(_module())  # unchecked when not asked


def test_ir_is_dumped_after_each_pass(tmp_path) -> None:
    Pipeline([_CountOps(), _DropOneMultiply()], dump_to=str(tmp_path)).run(_module())
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["jit__lambda.000.input.mlir", "jit__lambda.001.count.mlir",
                     "jit__lambda.002.drop-multiply.mlir"]
    assert "stablehlo.multiply" not in (tmp_path / names[-1]).read_text()
    assert "stablehlo.multiply" in (tmp_path / names[0]).read_text()


def test_fixed_point_reruns_until_nothing_changes() -> None:
    f = lambda x: x * 2.0 * 3.0 * 4.0
    module = jax.jit(f).lower(jnp.ones(2)).compiler_ir()
    fixed = FixedPoint(_DropOneMultiply(), max_iters=10)
    assert fixed.run(module)
    assert not any(op.opcode == "stablehlo.multiply" for op in module.walk())
    bounded = jax.jit(f).lower(jnp.ones(2)).compiler_ir()
    FixedPoint(_DropOneMultiply(), max_iters=2).run(bounded)
    assert sum(op.opcode == "stablehlo.multiply" for op in bounded.walk()) == 1


def test_clone_module_is_independent() -> None:
    module = _module()
    clone = util.clone_module(module)
    assert str(clone) == str(module)
    _DropOneMultiply().run(clone)
    assert str(clone) != str(module)
