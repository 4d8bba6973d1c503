"""`hlo/passes/refine_shapes.py`: a shape-polymorphic module specialized to static shapes."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import export
from justjax._src.backends import get_backend
from justjax._src.hlo import ir, verifier
from justjax._src.hlo.passes.refine_shapes import ShapeRefinementError, refine_shapes
from justjax._src.hlo.stablehlo_parser import parse_module
from justjax._src.hlo.stablehlo_printer import print_module

F32 = np.float32

POLY = """\
module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32>) -> tensor<?xf32> {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %1 = call @body(%0, %arg0) : (tensor<i32>, tensor<?x4xf32>) -> tensor<?xf32>
    return %1 : tensor<?xf32>
  }
  func.func private @body(%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<?x4xf32>) -> tensor<?xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.dynamic_iota %1, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
    %3 = stablehlo.convert %2 : (tensor<?xi32>) -> tensor<?xf32>
    %4 = stablehlo.add %0, %3 : tensor<?xf32>
    return %4 : tensor<?xf32>
  }
}
"""


def test_refines_to_static_text() -> None:
    module = parse_module(POLY)
    refined = refine_shapes(module, [ir.TensorType((3, 4), np.float32)])
    text = print_module(refined)
    assert "?" not in text
    assert "stablehlo.iota dim = 0 : tensor<3xi32>" in text
    assert "func.func private @body(%arg0: tensor<i32> {jax.global_constant = \"b\"}, " \
           "%arg1: tensor<3x4xf32>) -> tensor<3xf32>" in text
    verifier.verify(refined)
    assert print_module(module) == POLY  # the input is not changed


def test_refined_module_runs() -> None:
    refined = refine_shapes(parse_module(POLY), [ir.TensorType((5, 4), np.float32)])
    x = np.arange(20, dtype=F32).reshape(5, 4)
    out, = get_backend("reference").compile(refined).execute([x], frozenset())
    np.testing.assert_allclose(out, x.sum(1) + np.arange(5))


def test_one_function_specialized_per_shape() -> None:
    module = parse_module(POLY.replace(
        "    return %1 : tensor<?xf32>\n  }\n  func.func private",
        "    %2 = call @body(%0, %arg0) : (tensor<i32>, tensor<?x4xf32>) -> tensor<?xf32>\n"
        "    return %2 : tensor<?xf32>\n  }\n  func.func private", 1))
    refined = refine_shapes(module, [ir.TensorType((2, 4), np.float32)])
    assert [fn.name for fn in refined.functions] == ["main", "body"]


def test_wrong_argument_type() -> None:
    with pytest.raises(ShapeRefinementError, match="does not refine"):
        refine_shapes(parse_module(POLY), [ir.TensorType((3, 5), np.float32)])


def test_failed_shape_assertion_raises_its_message() -> None:
    exp = export.export(jax.jit(lambda x: x * 2))(
        jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), F32))
    module = parse_module(exp.mlir_module())
    with pytest.raises(ValueError, match="Expected value >= 1 for dimension variable 'b'.*"
                                         r"'b' = 0 from specification 'b' for dimension "
                                         r"args\[0\].shape\[0\] \(= 0\)"):
        refine_shapes(module, [ir.TensorType((0, 4), np.float32)])


@pytest.mark.parametrize("n", [1, 2, 7])
def test_exported_modules_refine_and_verify(n: int) -> None:
    def f(x):
        y = jnp.concatenate([x, x[::-1]]).reshape(-1, 2)
        return jnp.pad(y, ((1, 0), (0, 1))) @ jnp.ones((3, 2)), x[1:] - x[:-1]

    exp = export.export(jax.jit(f))(jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), F32))
    refined = refine_shapes(parse_module(exp.mlir_module()),
                            [ir.TensorType((n, 4), np.float32)])
    verifier.verify(refined)
    assert "?" not in print_module(refined)


def test_constraint_assertions_of_an_exported_module() -> None:
    """The exported `main` asserts the scope's constraints as JAX's does; refinement with
    shapes that break one raises JAX's message with the values filled in."""
    a, b = export.symbolic_shape("a, b", constraints=("a >= b + 2",))
    exp = export.export(jax.jit(lambda x, y: x.sum() + y.sum()))(
        jax.ShapeDtypeStruct((a,), F32), jax.ShapeDtypeStruct((b,), F32))
    module = parse_module(exp.mlir_module())
    assert exp.mlir_module().count("@shape_assertion(") == 3
    with pytest.raises(ValueError) as info:
        refine_shapes(module, [ir.TensorType((3,), np.float32), ir.TensorType((2,), np.float32)])
    assert str(info.value) == (
        "Input shapes do not match the symbolic shape constraint a >= b + 2. Expected "
        "'- b + a - 2' to be greater or equal to 0, but found -1.  Using the following "
        "polymorphic shapes specifications: args[0].shape = (a,),args[1].shape = (b,). "
        "Obtained dimension variables: 'a' = 3 from specification 'a' for dimension "
        "args[0].shape[0] (= 3), 'b' = 2 from specification 'b' for dimension args[1].shape[0] "
        "(= 2), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
        "#shape-assertion-errors for more details.")
    refine_shapes(module, [ir.TensorType((5,), np.float32), ir.TensorType((2,), np.float32)])
