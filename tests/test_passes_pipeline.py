"""The pass infrastructure (`_src/hlo/passes/pipeline.py`): passes run in order and report
changes, disabled passes are skipped, the verifier between passes names the pass that broke
the module, the IR is dumped after each pass, and `FixedPoint` reruns until nothing changes."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.hlo import ir
from justjax._src.hlo.passes import optimize, util
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


# ---------------------------------------------------------------------------------------------
# A fixed point is a nested pipeline.

def _loop_with_invariant(x: Any, y: Any) -> Any:
    # cos(x) is the same in every iteration: licm hoists it out of the while body.
    return jax.lax.fori_loop(0, 3, lambda i, acc: acc + jnp.cos(x), y)


def _cosines_in_loop_bodies(module: ir.Module) -> int:
    return sum(inner.opcode == "stablehlo.cosine"
               for op in module.walk() if op.opcode == "stablehlo.while"
               for inner in op.regions[1].block.walk())


def test_justjax_disable_passes_disables_an_inner_pass() -> None:
    args = (jnp.ones(3), jnp.zeros(3))
    module = jax.jit(_loop_with_invariant).lower(*args).compiler_ir()
    hoisted = optimize.optimize(module, verify=True)
    assert _cosines_in_loop_bodies(hoisted) == 0
    assert any(op.opcode == "stablehlo.cosine" for op in hoisted.walk())
    with jax.config.override("justjax_disable_passes", "licm"):
        kept = optimize.optimize(module, verify=True)
    assert _cosines_in_loop_bodies(kept) == 1
    x, y = np.full(3, 0.5, np.float32), np.zeros(3, np.float32)
    (out,) = run_reference(kept, x, y)
    np.testing.assert_allclose(out, 3 * np.cos(x), rtol=1e-6)


def test_inner_passes_are_verified_timed_and_reported_by_name() -> None:
    with pytest.raises(PassError, match=r"after pass fp: break-ssa \(round 1\)"):
        Pipeline([FixedPoint([_BreakSSA()], name="fp")], verify=True).run(_module())
    heard: list[tuple[str, bool]] = []
    pipeline = Pipeline([FixedPoint([_DropOneMultiply()], name="fp")], verify=True,
                        on_pass=lambda name, module, changed, seconds: heard.append(
                            (name, changed)))
    assert pipeline.run(_module())
    inner = [("fp: drop-multiply (round 1)", True), ("fp: drop-multiply (round 2)", False)]
    assert heard == inner
    assert pipeline.changes == [*inner, ("fp", True)]
    assert [name for name, _ in pipeline.seconds] == [name for name, _ in pipeline.changes]
    assert all(seconds >= 0 for _, seconds in pipeline.seconds)


def test_inner_passes_are_dumped_and_disabled_one_by_one(tmp_path) -> None:
    count = _CountOps()
    fixed = FixedPoint([count, _DropOneMultiply()], name="fp")
    Pipeline([fixed], dump_to=str(tmp_path)).run(_module())
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "jit__lambda.000.input.mlir", "jit__lambda.001.fp.count.round1.mlir",
        "jit__lambda.002.fp.drop-multiply.round1.mlir",
        "jit__lambda.003.fp.count.round2.mlir",
        "jit__lambda.004.fp.drop-multiply.round2.mlir"]
    module = _module()
    assert not Pipeline([FixedPoint([count, _DropOneMultiply()])],
                        disabled=["drop-multiply"]).run(module)
    assert any(op.opcode == "stablehlo.multiply" for op in module.walk())
