"""The fusion passes (`_src/hlo/passes/fusion.py`), the reference kernel of `hlo.fusion`, its
verifier rule and the optimized HLO text: which ops end up in which fusion, their kinds and
names as XLA's CPU compiler gives them, and results unchanged on the reference backend."""
from __future__ import annotations


import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.hlo import ir, verifier
from justjax._src.hlo.hlo_printer import print_optimized_module
from justjax._src.hlo.passes import util
from justjax._src.hlo.passes.fusion import FusionWrapper, InstructionFusion
from justjax._src.hlo.passes.pipeline import Pipeline
from tests.harness import run_reference

F32 = np.float32


def _fuse(fun, *args, wrap: bool = True) -> ir.Module:
    """`fun` lowered, fused (and wrapped), checked: verified and with the unfused results."""
    module = jax.jit(fun).lower(*args).compiler_ir()
    expected = run_reference(module, *args)
    fused = util.clone_module(module)
    passes = [InstructionFusion()] + ([FusionWrapper()] if wrap else [])
    Pipeline(passes, verify=True).run(fused)
    for want, got in zip(expected, run_reference(fused, *args), strict=True):
        np.testing.assert_array_equal(got, want)
    return fused


def _top(module: ir.Module) -> list[ir.Op]:
    return module.main.body.ops[:-1]


def _fusions(module: ir.Module) -> list[ir.Op]:
    return [op for op in _top(module) if op.opcode == "hlo.fusion"]


def _inside(fusion: ir.Op) -> list[str]:
    return [op.opcode.split(".", 1)[1] for op in fusion.regions[0].block.ops[:-1]]


def _grad_chain(y):
    for _ in range(10):
        y = jnp.sin(y) + 0.1 * jnp.cos(y ** 2) - jnp.tanh(y)
    return jnp.sum(y)


X5 = np.linspace(-2, 2, 5).astype(F32)
X48 = np.linspace(-1, 1, 32).astype(F32).reshape(4, 8)


def test_elementwise_chain_is_one_loop_fusion_with_its_scalar_constants() -> None:
    module = _fuse(lambda x: x * 2 + 1, X5)
    [fusion] = _top(module)
    assert fusion.attributes == {"kind": "kLoop", "name": "broadcast_add_fusion",
                                 "computation": "fused_computation"}
    assert sorted(_inside(fusion)) == sorted(
        ["constant", "broadcast_in_dim", "multiply", "constant", "broadcast_in_dim", "add"])
    assert fusion.operands == module.main.args


def test_mlp_dot_stays_a_library_call() -> None:
    module = _fuse(lambda x, w, b: jnp.maximum(x @ w + b, 0),
                   X48[:2, :3].copy(), X48[:3, :4].copy(), X5[:4].copy())
    dot, fusion = _top(module)
    assert dot.opcode == "stablehlo.dot_general"
    assert fusion.attributes["name"] == "broadcast_maximum_fusion"
    assert fusion.operands == [dot.result, module.main.args[2]]
    assert "dot_general" not in _inside(fusion)


def test_grad_chain_is_a_single_kernel() -> None:
    module = _fuse(jax.grad(_grad_chain), X5)
    [fusion] = _top(module)
    assert fusion.attributes["name"] == "multiply_add_fusion"
    inside = _inside(fusion)
    assert inside.count("tanh") == 10 and inside.count("sine") == 19


def test_reduction_fuses_its_producers_as_a_loop_fusion() -> None:
    # XLA CPU gives a reduction fusion the kind kLoop (kInput is XLA GPU's).
    module = _fuse(lambda x: jnp.sum(jnp.exp(x) * 2, axis=1), X48)
    [fusion] = _top(module)
    assert fusion.attributes["kind"] == "kLoop"
    assert fusion.attributes["name"] == "multiply_reduce_fusion"
    assert {"exponential", "multiply", "reduce"} <= set(_inside(fusion))


def test_lone_reductions_are_wrapped_with_their_init_as_parameter() -> None:
    module = _fuse(lambda x: (jnp.sum(x, axis=0), jnp.max(x, axis=0)), X48)
    fusions = _fusions(module)
    assert [f.attributes["name"] for f in fusions] == ["wrapped_reduce", "wrapped_reduce.1"]
    assert [f.attributes["computation"] for f in fusions] == [
        "wrapped_reduce_computation", "wrapped_reduce_computation.1"]
    for f in fusions:
        assert _inside(f) == ["reduce"]
        assert len(f.operands) == 2   # the input and the init constant


def test_expensive_producer_is_not_duplicated_into_a_broadcasting_consumer() -> None:
    def f(x):
        e = jnp.exp(x)
        return e[:, None] * e[None, :]

    module = _fuse(f, X5)
    wrapped, fusion = _fusions(module)
    assert wrapped.attributes["name"] == "wrapped_exponential"
    assert _inside(wrapped) == ["exponential"]
    assert "exponential" not in _inside(fusion)
    assert fusion.operands == [wrapped.result]


def test_expensive_producer_with_two_users_is_not_duplicated() -> None:
    def f(x):
        e = jnp.exp(x)
        return e + 1, e * 2

    module = _fuse(f, X5)
    fusions = _fusions(module)
    inside = [_inside(op) for op in fusions]
    assert sum(i.count("exponential") for i in inside) == 1
    assert ["exponential"] in inside


def test_expensive_producer_fuses_through_permutations() -> None:
    # XLA fuses exp through transpose/reverse/slice: each element is still read once.
    module = _fuse(lambda x: jnp.exp(x)[::-1, 1:3].T * 2, X48)
    [fusion] = _top(module)
    assert "exponential" in _inside(fusion)


def test_cheap_producer_is_duplicated_into_each_consumer() -> None:
    def f(x):
        y = x + 1
        return y * 2, y - 3

    module = _fuse(f, X5)
    fusions = _fusions(module)
    assert len(fusions) == 2
    assert all(_inside(op).count("add") == 1 for op in fusions)
    assert not any(op.opcode == "stablehlo.add" for op in _top(module))


def test_non_scalar_constant_is_not_fused() -> None:
    module = _fuse(lambda x: x * jnp.array([1.0, 2.0, 3.0, 4.0, 5.0], F32) + 1, X5)
    constants = [op for op in _top(module) if op.opcode == "stablehlo.constant"]
    assert [c.result.type.shape for c in constants] == [(5,)]
    [fusion] = _fusions(module)
    assert constants[0].result in fusion.operands
    assert all(op.result.type.size == 1 for op in fusion.regions[0].block.ops
               if op.opcode == "stablehlo.constant")


def test_sort_and_while_stay_unfused_but_their_neighbours_fuse() -> None:
    def f(x):
        s = jnp.sort(x * 2)
        return jax.lax.while_loop(lambda v: jnp.abs(v[0]) < 10, lambda v: v * 2 + 1, s)

    module = _fuse(f, X5)
    fused_ops = {id(inner) for op in module.walk() if op.opcode == "hlo.fusion"
                 for inner in op.regions[0].block.walk()}
    sorts = [op for op in module.walk() if op.opcode == "stablehlo.sort"]
    loops = [op for op in module.walk() if op.opcode == "stablehlo.while"]
    assert sorts and loops
    assert not any(id(op) in fused_ops for op in sorts + loops)
    # The loop body is fused too (directly, or in the function it calls).
    body = loops[0].regions[1].block
    callees = [module.function(op.attributes["callee"].name).body
               for op in body.ops if op.opcode == "func.call"]
    assert any(op.opcode == "hlo.fusion" for block in [body, *callees] for op in block.ops)


def test_matrix_vector_dot_with_bias_is_an_output_fusion() -> None:
    module = _fuse(lambda w, v, b: w @ v + b, X48, X48[0].copy(), X5[:4].copy())
    [fusion] = _fusions(module)
    assert fusion.attributes["kind"] == "kOutput"
    assert set(_inside(fusion)) == {"dot_general", "add"}


def test_matrix_matrix_dot_is_not_fused() -> None:
    module = _fuse(lambda a, b: jnp.dot(jnp.exp(a), b) + 1, X48[:, :4].copy(),
                   X48[:, :4].T.copy())
    dots = [op for op in _top(module) if op.opcode == "stablehlo.dot_general"]
    assert len(dots) == 1
    assert all("dot_general" not in _inside(op) for op in _fusions(module))


def test_fusion_without_wrapper_leaves_lone_ops() -> None:
    module = _fuse(lambda x: jnp.exp(x), X5, wrap=False)
    assert [op.opcode for op in _top(module)] == ["stablehlo.exponential"]
    assert FusionWrapper().run(module)
    assert _top(module)[0].attributes["name"] == "wrapped_exponential"


def test_effectful_ops_are_not_fused() -> None:
    def f(x):
        y = x * 2
        jax.debug.print("{}", y)
        return y + 1

    module = jax.jit(f).lower(X5).compiler_ir()
    InstructionFusion().run(module)
    FusionWrapper().run(module)
    verifier.verify(module)
    for op in module.walk():
        if op.opcode == "hlo.fusion":
            assert not util.has_side_effect(op)


# ---------------------------------------------------------------------------------------------
# The verifier and the reference kernel.

def _hand_fusion(kind: str = "kLoop", capture: bool = False) -> ir.Module:
    t = ir.TensorType((3,), F32)
    body = ir.Block([ir.Value(t)])
    b = ir.Builder(body)
    region_block = ir.Block([ir.Value(t), ir.Value(t)])
    rb = ir.Builder(region_block)
    x, y = region_block.args
    s = rb.one("stablehlo.add", [x, body.args[0] if capture else y], t)
    m = rb.one("stablehlo.multiply", [s, y], t)
    rb.ret([m, s])
    c = b.constant([1.0, 2.0, 3.0], F32)
    fusion = b.op("hlo.fusion", [body.args[0], c], [t, t],
                  {"kind": kind, "name": "add_multiply_fusion",
                   "computation": "fused_computation"}, [ir.Region(region_block)])
    b.ret(fusion.results, opcode="func.return")
    return ir.Module("jit_f", [ir.Function("main", body, [t, t], visibility="public")])


def test_reference_backend_runs_a_multi_output_fusion() -> None:
    module = _hand_fusion()
    verifier.verify(module)
    x = np.array([1.0, -2.0, 0.5], F32)
    product, total = run_reference(module, x)
    np.testing.assert_array_equal(total, x + np.array([1, 2, 3], F32))
    np.testing.assert_array_equal(product, (x + np.array([1, 2, 3], F32)) * [1, 2, 3])


def test_verifier_rejects_bad_fusions() -> None:
    with pytest.raises(verifier.VerificationError, match="kind 'kFoo'"):
        verifier.verify(_hand_fusion(kind="kFoo"))
    with pytest.raises(verifier.VerificationError, match="outside the fusion"):
        verifier.verify(_hand_fusion(capture=True))


# ---------------------------------------------------------------------------------------------
# Optimized HLO text.

def _text(fun, *args) -> str:
    return print_optimized_module(_fuse(fun, *args))


def test_text_of_x_times_2_plus_1() -> None:
    text = _text(lambda x: x * 2 + 1, X5)
    assert text.startswith(
        "HloModule jit__lambda, is_scheduled=true, entry_computation_layout="
        "{(f32[5]{0})->f32[5]{0}}, allow_spmd_sharding_propagation_to_parameters={true}, "
        "allow_spmd_sharding_propagation_to_output={true}\n\n%fused_computation "
        "(param_0.1: f32[5]) -> f32[5] {\n  %param_0.1 = f32[5]{0} parameter(0)\n")
    assert "  ROOT %add.1 = f32[5]{0} add(%multiply.1, %broadcast.2)\n}" in text
    assert ("ENTRY %main.1 (Arg_0.1: f32[5]) -> f32[5] {\n  %Arg_0.1 = f32[5]{0} parameter(0)\n"
            "  ROOT %broadcast_add_fusion = f32[5]{0} fusion(%Arg_0.1), kind=kLoop, "
            "calls=%fused_computation\n}") in text


def test_text_of_mlp() -> None:
    text = _text(lambda x, w, b: jnp.maximum(x @ w + b, 0),
                 X48[:2, :3].copy(), X48[:3, :4].copy(), X5[:4].copy())
    assert "entry_computation_layout={(f32[2,3]{1,0}, f32[3,4]{1,0}, f32[4]{0})->" \
           "f32[2,4]{1,0}}" in text
    assert "%fused_computation (param_0.1: f32[2,4], param_1.1: f32[4]) -> f32[2,4] {" in text
    assert ("dot(%Arg_0.1, %Arg_1.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"
            in text)
    assert ("ROOT %broadcast_maximum_fusion = f32[2,4]{1,0} fusion(%dot.1, %Arg_2.1), "
            "kind=kLoop, calls=%fused_computation") in text


def test_text_of_reductions_prints_regions_before_their_users() -> None:
    text = _text(lambda x: (jnp.sum(x, axis=0), jnp.max(x, axis=0)), X48)
    order = [text.index(s) for s in ("%region_0.1 (", "%wrapped_reduce_computation (",
                                     "%region_1.2 (", "%wrapped_reduce_computation.1 (",
                                     "ENTRY %main")]
    assert order == sorted(order)
    assert "to_apply=%region_0.1" in text
    assert ("ROOT %tuple.1 = (f32[8]{0}, f32[8]{0}) tuple(%wrapped_reduce, "
            "%wrapped_reduce.1)") in text


def test_text_of_grad_chain_has_one_kernel() -> None:
    text = _text(jax.grad(_grad_chain), X5)
    assert text.count("fusion(") == 1
    assert "ROOT %multiply_add_fusion = f32[5]{0} fusion(%Arg_0.1), kind=kLoop, " \
           "calls=%fused_computation" in text


def test_fused_computations_print_in_creation_order() -> None:
    def f(x):
        e = jnp.exp(x)
        return e[:, None] * e[None, :] + jnp.sum(x)

    text = _text(f, X5)
    assert text.index("%fused_computation (") < text.index("%wrapped_exponential_computation")


# ---------------------------------------------------------------------------------------------
# A long chain (its speed is measured in benchmarks/bench_compile.py).

def test_two_thousand_op_chain_fuses_into_one_kernel() -> None:
    def f(x):
        for i in range(500):
            x = jnp.sin(x) * 1.5 + x
        return x

    module = jax.jit(f).lower(X5).compiler_ir()
    assert sum(1 for _ in module.walk()) >= 2000
    InstructionFusion().run(module)
    FusionWrapper().run(module)
    assert len(_fusions(module)) == 1


def test_column_reduction_is_not_fused_into_its_consumer() -> None:
    """A reduce keeping the minor dim stays a fusion root (XLA 0.10.2 runs it as a YNNPACK
    fusion of its own: `b - 0.01 * sum(g, (0, 1, 2))` of NHWC g); a row reduction still fuses
    into its consumer."""
    g, b = np.ones((4, 3, 5, 8), F32), np.ones(8, F32)
    module = _fuse(lambda b, g: b - 0.01 * jnp.sum(g, axis=(0, 1, 2)), b, g)
    names = [f.attributes["name"] for f in _fusions(module)]
    assert names == ["wrapped_reduce", "multiply_subtract_fusion"]
    rows = _fuse(lambda b, g: b[:4] - jnp.sum(g, axis=(1, 2, 3)), b, g)
    [fusion] = _fusions(rows)
    assert "reduce" in _inside(fusion)
