"""Layout assignment (transpose folding), scheduling, buffer assignment and cost analysis.

The figures checked against JAX were recorded from JAX 0.10.2 (`compiled.cost_analysis()`
and `compiled.memory_analysis()` on the CPU) for the same programs, fused as XLA fuses
them; the fused modules are built by hand here so these tests do not depend on the fusion
pass.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pytest

import justjax.numpy as jnp
from justjax import lax
from justjax._src.hlo import ir
from justjax._src.hlo.passes import buffers, cost, schedule
from justjax._src.hlo.passes import layout_assignment as layout
from justjax._src.hlo.passes.pipeline import Pipeline

from tests.harness import hand_built_module, lower_to_module, run_reference

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)


def t(*shape: int, dtype: np.dtype = F32) -> ir.TensorType:
    return ir.TensorType(shape, dtype)


def fusion(b: ir.Builder, operands: Sequence[ir.Value], result_types: Sequence[ir.Type],
           body: Callable[..., Sequence[ir.Value]], kind: str = "kLoop",
           name: str = "fusion") -> ir.Op:
    """An `hlo.fusion` op whose fused computation is `body(builder, *params)`."""
    region, inner = ir.new_region([v.type for v in operands])
    inner.ret(list(body(inner, *region.block.args)))
    return b.op("hlo.fusion", operands, result_types,
                {"kind": kind, "name": name, "computation": "fused_computation"}, [region])


def splat(b: ir.Builder, value: float, type_: ir.TensorType) -> ir.Value:
    scalar = b.constant(value, type_.dtype)
    return b.one("stablehlo.broadcast_in_dim", [scalar], type_, broadcast_dimensions=())


def dot(b: ir.Builder, x: ir.Value, y: ir.Value, out: ir.TensorType,
        lhs_contract: tuple[int, ...] = (1,), rhs_contract: tuple[int, ...] = (0,),
        lhs_batch: tuple[int, ...] = (), rhs_batch: tuple[int, ...] = ()) -> ir.Value:
    dims = ir.DotDimensionNumbers(lhs_batch, rhs_batch, lhs_contract, rhs_contract)
    return b.one("stablehlo.dot_general", [x, y], out, dot_dimension_numbers=dims)


def verified(module: ir.Module, *passes) -> ir.Module:
    Pipeline(list(passes), verify=True, dump_to="", disabled=()).run(module)
    return module


def x2p1_fused() -> ir.Module:
    """XLA's optimized `x*2+1` on f32[5]: one loop fusion."""
    def body(b, x):
        return [b.one("stablehlo.add", [b.one("stablehlo.multiply", [x, splat(b, 2, t(5))],
                                              t(5)), splat(b, 1, t(5))], t(5))]
    return hand_built_module([t(5)], lambda b, x: fusion(b, [x], [t(5)], body).results)


def mlp_fused() -> ir.Module:
    """XLA's optimized `maximum(x @ w + b, 0)`: a dot and a loop fusion."""
    def body(b, d, bias):
        wide = b.one("stablehlo.broadcast_in_dim", [bias], t(2, 4), broadcast_dimensions=(1,))
        added = b.one("stablehlo.add", [d, wide], t(2, 4))
        return [b.one("stablehlo.maximum", [added, splat(b, 0, t(2, 4))], t(2, 4))]

    def build(b, x, w, bias):
        d = dot(b, x, w, t(2, 4))
        return fusion(b, [d, bias], [t(2, 4)], body).results
    return hand_built_module([t(2, 3), t(3, 4), t(4)], build)


# ---------------------------------------------------------------------------------------------
# Cost analysis.

def test_cost_of_fused_x2p1_matches_jax():
    figures = cost.cost_analysis(verified(x2p1_fused()))
    assert figures == {"flops": 10.0, "bytes accessed": 40.0, "bytes accessed0{}": 20.0,
                       "bytes accessedout{}": 20.0}


def test_cost_of_fused_mlp_matches_jax():
    figures = cost.cost_analysis(verified(mlp_fused()))
    assert figures["flops"] == 64.0
    assert figures["bytes accessed"] == 184.0
    # JAX: bytes accessed0{} 56 (dot 24 + fusion 32), 1{} 64 (48 + 16), out{} 64.
    assert figures["bytes accessed0{}"] == 56.0
    assert figures["bytes accessed1{}"] == 64.0
    assert figures["bytes accessedout{}"] == 64.0
    assert "transcendentals" not in figures


def test_fusion_bytes_count_operands_once_not_inner_ops():
    def body(b, x):
        e = b.one("stablehlo.exponential", [x], t(5))
        return [b.one("stablehlo.add", [e, e], t(5))]
    module = hand_built_module([t(5)], lambda b, x: fusion(b, [x], [t(5)], body).results)
    figures = cost.cost_analysis(module)
    assert figures == {"flops": 5.0, "transcendentals": 5.0, "bytes accessed": 40.0,
                       "bytes accessed0{}": 20.0, "bytes accessedout{}": 20.0}


# (function, args, expected figures) recorded from JAX 0.10.2 on one-op programs.
_X = np.ones(10, np.float32)
_COST_CASES = [
    ("neg", lambda x: -x, (_X,), {"flops": 10, "bytes accessed": 80}),
    ("exp", jnp.exp, (_X,), {"transcendentals": 10, "bytes accessed": 80}),
    ("sqrt", jnp.sqrt, (_X,), {"transcendentals": 10, "bytes accessed": 80}),
    ("logistic", lax.logistic, (_X,), {"flops": 30, "transcendentals": 10}),
    ("convert", lambda x: x.astype(jnp.int32), (_X,), {"flops": 10, "bytes accessed": 80}),
    ("compare", lambda x: lax.lt(x, x), (_X,), {"flops": 10}),
    ("sum2d", lambda y: y.sum(0), (np.ones((3, 4), np.float32),), {"flops": 8}),
    ("max_all", lambda y: y.max(), (np.ones((3, 4), np.float32),), {"flops": 11}),
    ("bdot", lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
     (np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)),
     {"flops": 240, "bytes accessed": 376}),
    ("transpose", lambda y: y.T, (np.ones((3, 4), np.float32),), {"bytes accessed": 96}),
    ("slice", lambda y: y[2:5], (_X,), {"bytes accessed": 24}),
    ("sort", jnp.sort, (_X,), {"flops": 40}),
    ("cumsum", jnp.cumsum, (_X,), {"flops": 90}),
]


@pytest.mark.parametrize("name,fun,args,expected", _COST_CASES, ids=[c[0] for c in _COST_CASES])
def test_cost_of_single_ops_matches_jax(name, fun, args, expected):
    figures = cost.cost_analysis(lower_to_module(fun, *args))
    for key, value in expected.items():
        assert figures.get(key, 0.0) == value, (key, figures)
    if "flops" not in expected and name != "logistic":
        assert "flops" not in figures


def test_cost_of_while_counts_body_once_and_case_its_dearest_branch():
    looped = lower_to_module(lambda x: lax.fori_loop(0, 3, lambda k, v: v * 2, x), _X)
    # Once each: 10 multiplies, the compare, and the adds of the two counters JAX's lowering
    # keeps (XLA's 12 is after its simplifier merged them); the call's body included.
    assert cost.cost_analysis(looped)["flops"] == 13.0
    chosen = lower_to_module(
        lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: jnp.exp(v) * 2 + 1], x), 1, _X)
    figures = cost.cost_analysis(chosen)
    assert figures["transcendentals"] == 10.0
    assert figures["flops"] >= 20.0


def test_dynamic_update_slice_bytes_are_the_update():
    def build(b, x):
        update = b.constant([2.0], F32)
        index = b.constant(1, I32)
        return [b.one("stablehlo.dynamic_update_slice", [x, update, index], t(8))]
    figures = cost.cost_analysis(hand_built_module([t(8)], build))
    assert figures == {"bytes accessed": 12.0, "bytes accessed1{}": 4.0,
                       "bytes accessed2{}": 4.0, "bytes accessedout{}": 4.0}


# ---------------------------------------------------------------------------------------------
# Layout: transpose folding.

def _opcodes(block: ir.Block) -> list[str]:
    return [op.opcode.split(".")[-1] for op in block.ops]


def test_transpose_folds_into_dot_contracting_dims():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    module = lower_to_module(lambda x, y: jnp.dot(x.T, y), a, b)
    before = run_reference(module, a, b)
    assert "transpose" in _opcodes(module.main.body)
    verified(module, layout.TransposeFolding())
    assert _opcodes(module.main.body) == ["dot_general", "return"]
    dot_op = module.main.body.ops[0]
    assert dot_op.operands[0] is module.main.args[0]
    dims = dot_op.attributes["dot_dimension_numbers"]
    assert (dims.lhs_contracting_dimensions, dims.rhs_contracting_dimensions) == ((0,), (0,))
    np.testing.assert_array_equal(run_reference(module, a, b)[0], before[0])


def test_transpose_folds_rhs_and_batch_dims():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    y = rng.normal(size=(5, 2, 4)).astype(np.float32)   # (k, b, j): transposed to (b, j, k)
    module = lower_to_module(
        lambda p, q: jnp.einsum("bij,bjk->bik", p, q.transpose(1, 2, 0)), x, y)
    before = run_reference(module, x, y)[0]
    verified(module, layout.TransposeFolding())
    assert "transpose" not in _opcodes(module.main.body)
    np.testing.assert_allclose(run_reference(module, x, y)[0], before, rtol=1e-6)


def test_transpose_reordering_free_dims_is_not_folded():
    def build(b, x, y):
        swapped = b.one("stablehlo.transpose", [x], t(2, 3, 5), permutation=(1, 0, 2))
        return [dot(b, swapped, y, t(2, 3, 4), lhs_contract=(2,), rhs_contract=(0,))]
    module = hand_built_module([t(3, 2, 5), t(5, 4)], build)
    assert not layout.TransposeFolding().run(module)
    assert _opcodes(module.main.body)[0] == "transpose"


def test_transpose_with_other_readers_stays():
    def build(b, x, y):
        xt = b.one("stablehlo.transpose", [x], t(2, 3), permutation=(1, 0))
        return [dot(b, xt, y, t(2, 4)), xt]
    module = hand_built_module([t(3, 2), t(3, 4)], build)
    verified(module, layout.TransposeFolding())
    assert _opcodes(module.main.body) == ["transpose", "dot_general", "return"]
    assert module.main.body.ops[1].operands[0] is module.main.args[0]


def test_transpose_folding_in_a_loop_body():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x):
        return lax.fori_loop(0, 2, lambda i, v: jnp.dot(v.T, v)[:2, :3] * 0.1, x)
    module = lower_to_module(f, a)
    before = run_reference(module, a)[0]
    assert layout.TransposeFolding().run(module)
    verified(module)
    assert not any(op.opcode == "stablehlo.transpose" for op in module.walk())
    np.testing.assert_allclose(run_reference(module, a)[0], before, rtol=1e-6)


def test_row_major_layouts():
    assert layout.row_major(t(2, 3, 4)) == (2, 1, 0)
    assert layout.row_major(t()) == ()
    main = mlp_fused().main
    assert layout.entry_computation_layout(main) == \
        "{(f32[2,3]{1,0}, f32[3,4]{1,0}, f32[4]{0})->f32[2,4]{1,0}}"


# ---------------------------------------------------------------------------------------------
# Scheduling.

def peak_live_bytes(block: ir.Block) -> int:
    """The most bytes of the block's own values live at once in its current order (a value
    lives from its op to its last reader; returned values to the end)."""
    last: dict[ir.Value, int] = {}
    for i, op in enumerate(block.ops):
        for inner in block_walk(op):
            for v in inner.operands:
                last[v] = i
    live = peak = 0
    for i, op in enumerate(block.ops):
        live += sum(v.type.nbytes for v in op.results)
        peak = max(peak, live)
        if op is not block.terminator:
            live -= sum(v.type.nbytes for v in set(op.operands)
                        if last.get(v) == i and v not in block.args)
        live -= sum(v.type.nbytes for v in op.results if v not in last)
    return peak


def block_walk(op: ir.Op):
    yield op
    for region in op.regions:
        yield from region.block.walk()


def is_topological(block: ir.Block) -> bool:
    defined = set(block.args)
    outside: set[ir.Value] = set()
    produced = {v for op in block.ops for v in op.results}
    for op in block.ops:
        for inner in block_walk(op):
            for v in inner.operands:
                if v in produced and v not in defined:
                    return False
                outside.add(v)
        defined.update(op.results)
    return True


def two_chains(b: ir.Builder, x: ir.Value) -> list[ir.Value]:
    """Two big intermediates, each reduced to a scalar, in the worst order: both big
    values are live at once."""
    big = t(1000)
    wide = b.one("stablehlo.broadcast_in_dim", [x], big, broadcast_dimensions=())
    e1 = b.one("stablehlo.exponential", [wide], big)
    e2 = b.one("stablehlo.sine", [wide], big)
    zero = b.constant(0.0, F32)
    region1, r1 = ir.new_region([t(), t()])
    r1.ret([r1.one("stablehlo.add", region1.block.args, t())])
    s1 = b.op("stablehlo.reduce", [e1, zero], [t()], {"dimensions": (0,)}, [region1]).result
    region2, r2 = ir.new_region([t(), t()])
    r2.ret([r2.one("stablehlo.add", region2.block.args, t())])
    s2 = b.op("stablehlo.reduce", [e2, zero], [t()], {"dimensions": (0,)}, [region2]).result
    return [b.one("stablehlo.add", [s1, s2], t())]


def test_scheduler_lowers_peak_memory_and_keeps_results():
    module = hand_built_module([t()], two_chains)
    x = np.float32(0.3)
    before_value = run_reference(module, x)[0]
    before_peak = peak_live_bytes(module.main.body)
    verified(module, schedule.ListScheduler())
    body = module.main.body
    assert is_topological(body)
    assert peak_live_bytes(body) < before_peak
    order = _opcodes(body)
    # Each big value is reduced before the next one is computed.
    assert order.index("reduce") < order.index("sine")
    np.testing.assert_array_equal(run_reference(module, x)[0], before_value)


def test_scheduler_leaves_a_good_order_alone():
    module = x2p1_fused()
    assert not schedule.ListScheduler().run(module)
    module = lower_to_module(lambda x: jnp.sin(x) * 2 + 1, _X)
    order = list(module.main.body.ops)
    schedule.ListScheduler().run(module)
    assert is_topological(module.main.body)
    assert peak_live_bytes(module.main.body) <= peak_live_bytes(ir.Block(module.main.args, order))


def test_scheduler_keeps_effectful_ops_in_order():
    def build(b, x):
        # The first effect defines 4000 bytes, the second 4: by size the scheduler would
        # run the second first; their effects must stay ordered.
        first = b.one("stablehlo.custom_call", [x], t(1000), call_target_name="log_a",
                      has_side_effect=True)
        second = b.one("stablehlo.custom_call", [x], t(), call_target_name="log_b",
                       has_side_effect=True)
        return [first, second]
    module = hand_built_module([t()], build)
    schedule.ListScheduler().run(module)
    names = [op.attributes.get("call_target_name") for op in module.main.body.ops[:-1]]
    assert names == ["log_a", "log_b"]


def test_scheduler_orders_nested_blocks():
    def build(b, x):
        cond, c = ir.new_region([t()])
        limit = c.constant(5.0, F32)
        c.ret([c.one("stablehlo.compare", [cond.block.args[0], limit], t(dtype=np.bool_),
                     comparison_direction=ir.Enum("comparison_direction", "LT"))])
        body, bb = ir.new_region([t()])
        step = two_chains(bb, body.block.args[0])[0]
        bb.ret([bb.one("stablehlo.add", [step, body.block.args[0]], t())])
        return b.op("stablehlo.while", [x], [t()], {}, [cond, body]).results
    module = hand_built_module([t()], build)
    x = np.float32(-3.0)
    before = run_reference(module, x)[0]
    loop_body = module.main.body.ops[0].regions[1].block
    peak = peak_live_bytes(loop_body)
    verified(module, schedule.ListScheduler())
    assert peak_live_bytes(loop_body) < peak
    np.testing.assert_array_equal(run_reference(module, x)[0], before)


# ---------------------------------------------------------------------------------------------
# Buffer assignment and memory figures.

def figures(module: ir.Module) -> dict[str, int]:
    stats = buffers.memory_analysis(module)
    return {k.replace("_size_in_bytes", ""): v for k, v in stats.items()
            if k != "generated_code_size_in_bytes"}


def check_no_conflicts(module: ir.Module, assignment: buffers.BufferAssignment) -> None:
    """No two values live at the same time share bytes, except an in-place pair."""
    body = module.main.body.ops
    start = {v: -1 for v in module.main.args}
    end = dict(start)
    for i, op in enumerate(body):
        for inner in block_walk(op):
            for v in inner.operands:
                if v in end:
                    end[v] = i
        for v in op.results:
            start[v] = end[v] = i
    for v in body[-1].operands:
        end[v] = len(body)
    paired = {frozenset((a, b)) for _, a, b in assignment.in_place}
    values = [v for v in start if v in assignment.slices]
    for k, a in enumerate(values):
        for b in values[k + 1:]:
            (alloc_a, off_a), (alloc_b, off_b) = assignment.slices[a], assignment.slices[b]
            if alloc_a is not alloc_b or frozenset((a, b)) in paired:
                continue
            bytes_overlap = off_a < off_b + b.type.nbytes and off_b < off_a + a.type.nbytes
            time_overlap = start[a] <= end[b] and start[b] <= end[a]
            assert not (bytes_overlap and time_overlap), (a, b)


def test_memory_of_fused_x2p1_matches_jax():
    assert figures(x2p1_fused()) == {"argument": 20, "output": 20, "alias": 0, "temp": 0}


def test_memory_of_fused_mlp_matches_jax():
    module = mlp_fused()
    assignment = buffers.assign_buffers(module)
    assert figures(module) == {"argument": 88, "output": 32, "alias": 0, "temp": 0}
    # The fusion adds in place over the dot's result, which lives in the output.
    dot_value, result = module.main.body.ops[0].result, module.main.body.ops[1].result
    assert assignment.allocation_of(dot_value) is assignment.allocation_of(result)
    assert assignment.allocation_of(result).kind == "output"
    check_no_conflicts(module, assignment)


def _exp_fusion(b: ir.Builder, x: ir.Value) -> ir.Value:
    return fusion(b, [x], [x.type], lambda bb, p: [bb.one("stablehlo.exponential", [p],
                                                          p.type)]).result


def test_temp_feeding_a_dot_matches_jax():
    # dot(exp(x), w) + 1: JAX reports temp 24 (exp's result), the add in place.
    def build(b, x, w):
        d = dot(b, _exp_fusion(b, x), w, t(2, 4))
        add = fusion(b, [d], [t(2, 4)], lambda bb, p: [bb.one(
            "stablehlo.add", [p, splat(bb, 1, t(2, 4))], t(2, 4))])
        return add.results
    module = hand_built_module([t(2, 3), t(3, 4)], build)
    assert figures(module) == {"argument": 72, "output": 32, "alias": 0, "temp": 24}
    check_no_conflicts(module, buffers.assign_buffers(module))


def test_temporary_may_use_the_output_before_it_is_computed():
    # dot(dot(exp(x), w), w.T): JAX reports temp 24 for two 24-byte temporaries.
    def build(b, x, w):
        d1 = dot(b, _exp_fusion(b, x), w, t(2, 3))
        return [dot(b, d1, w, t(2, 3), rhs_contract=(1,))]
    module = hand_built_module([t(2, 3), t(3, 3)], build)
    assignment = buffers.assign_buffers(module)
    assert figures(module) == {"argument": 60, "output": 24, "alias": 0, "temp": 24}
    exp_value = module.main.body.ops[0].result
    assert assignment.allocation_of(exp_value).kind == "output"
    check_no_conflicts(module, assignment)


def test_returned_parameter_is_copied_and_tuple_pointers_counted():
    def build(b, x):
        return [fusion(b, [x], [t(3)], lambda bb, p: [bb.one(
            "stablehlo.add", [p, splat(bb, 1, t(3))], t(3))]).result, x]
    module = hand_built_module([t(3)], build)
    assignment = buffers.assign_buffers(module)
    # JAX: output 40 = 12 + 12 + two 8-byte tuple pointers; the parameter is copied.
    assert figures(module) == {"argument": 12, "output": 40, "alias": 0, "temp": 0}
    assert assignment.copies == [1]


def test_donated_parameter_holds_its_output():
    def build(b, x, y):
        return fusion(b, [x, y], [t(3)], lambda bb, p, q: [bb.one(
            "stablehlo.multiply", [p, q], t(3))]).results
    module = hand_built_module([t(3), t(3)], build)
    module.main.arg_attrs = [{}, {"tf.aliasing_output": ir.IntegerAttr(0, "i32")}]
    assignment = buffers.assign_buffers(module)
    assert figures(module) == {"argument": 24, "output": 12, "alias": 12, "temp": 0}
    result = module.main.body.ops[0].result
    assert assignment.allocation_of(result) is assignment.allocation_of(module.main.args[1])
    assert assignment.aliases == [(1, 0)] and assignment.copies == []


def _donated(module: ir.Module, *outputs: int | None) -> None:
    """Marks parameter i of `main` donated to output `outputs[i]` (None: not donated)."""
    module.main.arg_attrs = [{} if j is None else {"tf.aliasing_output": ir.IntegerAttr(j, "i32")}
                             for j in outputs]


def test_swapped_donated_parameters_stage_one_copy():
    # `(a, b) -> (b, a)`, both donated: each output is copied into the other parameter's
    # allocation, a cycle: one source is copied aside first.
    module = hand_built_module([t(3), t(3)], lambda b, x, y: [y, x])
    _donated(module, 0, 1)
    assignment = buffers.assign_buffers(module)
    assert assignment.aliases == [(0, 0), (1, 1)]
    assert sorted(assignment.copies) == [0, 1] and len(assignment.staged) == 1
    # No copy reads an allocation an earlier copy wrote, except from its staged value.
    written = set()
    for j in assignment.copies:
        source = assignment.allocation_of(module.main.body.terminator.operands[j])
        assert j in assignment.staged or id(source) not in written
        written.add(id(next(a for a in assignment.allocations if j in a.outputs)))


def test_copy_reading_a_donated_parameter_runs_before_the_copy_writing_it():
    # `a -> (reverse(a), a)`, a donated to output 0: a is copied to output 1 before the
    # reversed value is copied over it.
    def build(b, x):
        return [b.one("stablehlo.reverse", [x], t(8), dimensions=(0,)), x]
    module = hand_built_module([t(8)], build)
    _donated(module, 0)
    assignment = buffers.assign_buffers(module)
    assert assignment.copies == [1, 0] and assignment.staged == []


def _update(b: ir.Builder, operand: ir.Value) -> ir.Value:
    update = b.constant([2.0], F32)
    index = b.constant(1, I32)
    return b.one("stablehlo.dynamic_update_slice", [operand, update, index], t(8))


def test_donated_dynamic_update_slice_runs_in_place():
    module = hand_built_module([t(8)], lambda b, x: [_update(b, x)])
    module.main.arg_attrs = [{"tf.aliasing_output": ir.IntegerAttr(0, "i32")}]
    assignment = buffers.assign_buffers(module)
    # JAX: alias 32, temp 0 (constants have allocations of their own).
    assert figures(module) == {"argument": 32, "output": 32, "alias": 32, "temp": 0}
    dus = module.main.body.ops[2]
    assert [(op, a, r) for op, a, r in assignment.in_place] == [(dus, module.main.args[0],
                                                                 dus.result)]
    assert {a.kind for a in assignment.allocations} == {"parameter", "constant"}


def test_dynamic_update_slice_in_place_only_when_its_operand_dies():
    def dies(b, x):
        y = b.one("stablehlo.reverse", [x], t(8), dimensions=(0,))
        return [_update(b, y)]

    def survives(b, x):
        y = b.one("stablehlo.reverse", [x], t(8), dimensions=(0,))
        return [_update(b, y), b.one("stablehlo.reverse", [y], t(8), dimensions=(0,))]
    module = hand_built_module([t(8)], dies)
    assignment = buffers.assign_buffers(module)
    assert len(assignment.in_place) == 1
    assert figures(module)["temp"] == 0
    module = hand_built_module([t(8)], survives)
    assignment = buffers.assign_buffers(module)
    assert assignment.in_place == []
    check_no_conflicts(module, assignment)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(run_reference(module, x)[1], x)


def test_non_parameter_operand_of_undonated_parameter_not_in_place():
    module = hand_built_module([t(8)], lambda b, x: [_update(b, x)])
    assignment = buffers.assign_buffers(module)
    assert assignment.in_place == []


def test_dead_buffers_share_memory_smaller_in_larger():
    def build(b, x):
        r1 = b.one("stablehlo.reverse", [x], t(8), dimensions=(0,))
        r2 = b.one("stablehlo.reverse", [r1], t(8), dimensions=(0,))
        s = b.one("stablehlo.slice", [r2], t(4), start_indices=(0,), limit_indices=(4,),
                  strides=(1,))
        r3 = b.one("stablehlo.reverse", [s], t(4), dimensions=(0,))
        return [b.one("stablehlo.reverse", [r3], t(4), dimensions=(0,))]
    module = hand_built_module([t(8)], build)
    assignment = buffers.assign_buffers(module)
    # r1 and r2 overlap (32 + 32 bytes; r1 is too big for the 16-byte output); s uses the
    # output before the output is computed; r3 (16 bytes) sits in r1's dead 32-byte slot.
    assert figures(module)["temp"] == 64
    ops = module.main.body.ops
    assert assignment.allocation_of(ops[2].result).kind == "output"
    assert assignment.slices[ops[3].result] == assignment.slices[ops[0].result]
    check_no_conflicts(module, assignment)


def test_loop_body_values_are_temporaries():
    module = lower_to_module(lambda x: lax.fori_loop(0, 3, lambda k, v: jnp.sin(v) * 2, x), _X)
    assignment = buffers.assign_buffers(module)
    assert figures(module)["temp"] > 0
    inner = [v for op in module.walk() for v in op.results if v not in
             {r for top in module.main.body.ops for r in top.results}]
    assert any(v in assignment.slices for v in inner)
