"""The StableHLO printer: golden texts read off real JAX/jaxlib for IR built by hand, exact
float and dense-constant printing, and (needs_jax) JAX's own lowered modules printed back
identically."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from justjax._src.hlo import ir
from justjax._src.hlo.ir import Builder, Enum, TensorType
from justjax._src.hlo.stablehlo_printer import dense_literal, format_float, print_module
from tests.harness import hand_built_module

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)


def _module(arg_types, result_types, build, name="jit_f", infos=None) -> ir.Module:
    return hand_built_module(
        arg_types, build, result_types=result_types, name=name,
        result_infos=infos or ["result"] * len(result_types),
        attributes={"mhlo.num_partitions": ir.IntegerAttr(1, "i32"),
                    "mhlo.num_replicas": ir.IntegerAttr(1, "i32")})


HEADER = "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"


def test_elementwise_broadcast_and_constants() -> None:
    t = TensorType((2, 3), F32)

    def build(b, x):
        s = b.one("stablehlo.sine", [x], t)
        c = b.constant(1.0, F32)
        one = b.one("stablehlo.broadcast_in_dim", [c], t, broadcast_dimensions=())
        y = b.one("stablehlo.add", [s, one], t)
        c2 = b.constant(2.0, F32)
        two = b.one("stablehlo.broadcast_in_dim", [c2], t, broadcast_dimensions=())
        return [b.one("stablehlo.multiply", [y, two], t)]

    assert print_module(_module([t], [t], build)) == HEADER + """\
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<2x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<2x3xf32>
    return %4 : tensor<2x3xf32>
  }
}
"""


def test_structural_ops_and_multiple_results() -> None:
    t = TensorType((2, 3), F32)

    def build(b, x):
        zero = b.constant(0.0, F32)
        z = b.one("stablehlo.broadcast_in_dim", [zero], t, broadcast_dimensions=())
        gt = b.one("stablehlo.compare", [x, z], TensorType((2, 3), np.bool_),
                   comparison_direction=Enum("comparison_direction", "GT"),
                   compare_type=Enum("comparison_type", "FLOAT"))
        conv = b.one("stablehlo.convert", [x], TensorType((2, 3), I32))
        tr = b.one("stablehlo.transpose", [x], TensorType((3, 2), F32), permutation=(1, 0))
        sl = b.one("stablehlo.slice", [x], TensorType((2, 1), F32), start_indices=(0, 1),
                   limit_indices=(2, 2), strides=(1, 1))
        cat = b.one("stablehlo.concatenate", [x, x], TensorType((4, 3), F32), dimension=0)
        io = b.one("stablehlo.iota", [], TensorType((4,), I32), iota_dimension=0)
        dot = b.one("stablehlo.dot_general", [x, tr], TensorType((2, 2), F32),
                    dot_dimension_numbers=ir.DotDimensionNumbers((), (), (1,), (0,)),
                    precision_config=(Enum("precision", "DEFAULT"),) * 2)
        return [gt, conv, tr, sl, cat, io, dot]

    types = [TensorType((2, 3), np.bool_), TensorType((2, 3), I32), TensorType((3, 2), F32),
             TensorType((2, 1), F32), TensorType((4, 3), F32), TensorType((4,), I32),
             TensorType((2, 2), F32)]
    text = print_module(_module([t], types, build,
                                infos=[f"result[{i}]" for i in range(len(types))]))
    body = text.split("\n")[2:-4]
    assert body == [
        "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
        "    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>",
        "    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>",
        "    %2 = stablehlo.convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi32>",
        "    %3 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
        "    %4 = stablehlo.slice %arg0 [0:2, 1:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>",
        "    %5 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
        "    %6 = stablehlo.iota dim = 0 : tensor<4xi32>",
        "    %7 = stablehlo.dot_general %arg0, %3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>",
    ]


def _reduce(b, x, opcode, out_type, swap=False):
    init = b.constant(0.0, F32)
    region, rb = ir.new_region([TensorType((), F32)] * 2)
    a, c = region.block.args
    r = rb.one(opcode, [c, a] if swap else [a, c], TensorType((), F32))
    rb.ret([r])
    return b.op("stablehlo.reduce", [x, init], [out_type], {"dimensions": (0,)},
                [region]).result


def test_reduce_compact_and_general_forms_and_region_names() -> None:
    t, out = TensorType((2, 3), F32), TensorType((3,), F32)

    def build(b, x):
        return [_reduce(b, x, "stablehlo.add", out),
                _reduce(b, x, "stablehlo.add", out, swap=True)]

    text = print_module(_module([t], [out, out], build, infos=["result[0]", "result[1]"]))
    assert text.split("\n")[2:10] == [
        "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
        "    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>",
        "    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
        "    %1 = stablehlo.reduce(%arg0 init: %cst_0) across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>",
        "     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {",
        "      %2 = stablehlo.add %arg2, %arg1 : tensor<f32>",
        "      stablehlo.return %2 : tensor<f32>",
        "    }",
    ]


def test_while_sort_and_calls() -> None:
    scalar_i, t = TensorType((), I32), TensorType((3,), F32)
    block = ir.Block([ir.Value(t)])
    b = Builder(block)
    x = block.args[0]
    zero = b.constant(0, I32)
    cond, cb = ir.new_region([scalar_i, t])
    ten = cb.constant(10, I32)
    cb.ret([cb.one("stablehlo.compare", [cond.block.args[0], ten], TensorType((), np.bool_),
                   comparison_direction=Enum("comparison_direction", "LT"),
                   compare_type=Enum("comparison_type", "SIGNED"))])
    body, bb = ir.new_region([scalar_i, t])
    one = bb.constant(1, I32)
    bb.ret([bb.one("stablehlo.add", [body.block.args[0], one], scalar_i), body.block.args[1]])
    loop = b.op("stablehlo.while", [zero, x], [scalar_i, t], {}, [cond, body])
    comparator, sb = ir.new_region([TensorType((), F32)] * 2)
    sb.ret([sb.one("stablehlo.compare", list(comparator.block.args), TensorType((), np.bool_),
                   comparison_direction=Enum("comparison_direction", "LT"),
                   compare_type=Enum("comparison_type", "TOTALORDER"))])
    sort = b.op("stablehlo.sort", [loop.results[1]], [t], {"dimension": 0, "is_stable": True},
                [comparator]).result
    called = b.op("func.call", [sort], [t], {"callee": ir.Symbol("<lambda>")}).result
    b.ret([loop.results[0], called], "func.return")
    main = ir.Function("main", block, [scalar_i, t], "public")
    g_block = ir.Block([ir.Value(t)])
    Builder(g_block).ret(g_block.args, "func.return")
    module = ir.Module("jit_g", [main, ir.Function("<lambda>", g_block, [t], "private")])
    assert print_module(module) == """\
module @jit_g {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<3xf32>
    cond {
      %c_1 = stablehlo.constant dense<10> : tensor<i32>
      %3 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      stablehlo.return %3, %iterArg_0 : tensor<i32>, tensor<3xf32>
    }
    %1 = "stablehlo.sort"(%0#1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = stablehlo.compare LT, %arg1, %arg2, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    }) : (tensor<3xf32>) -> tensor<3xf32>
    %2 = call @"<lambda>"(%1) : (tensor<3xf32>) -> tensor<3xf32>
    return %0#0, %2 : tensor<i32>, tensor<3xf32>
  }
  func.func private @"<lambda>"(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    return %arg0 : tensor<3xf32>
  }
}
"""


def test_unknown_ops_print_in_generic_form() -> None:
    t = TensorType((2,), F32)
    module = _module([t], [t], lambda b, x: [b.one("stablehlo.frobnicate", [x], t, level=3,
                                                   mode=Enum("mode", "FAST"))])
    line = print_module(module).split("\n")[2]
    assert line == ('    %0 = "stablehlo.frobnicate"(%arg0) {level = 3 : i64, mode = '
                    '#stablehlo<mode FAST>} : (tensor<2xf32>) -> tensor<2xf32>')


# Read off jaxlib: `ir.DenseElementsAttr.get(array)` printed.
FLOATS = [
    (np.float32, 0.1, "1.000000e-01"), (np.float32, 1e10, "1.000000e+10"),
    (np.float32, 12345678.0, "0x4B3C614E"), (np.float32, 1 / 3, "0.333333343"),
    (np.float32, 65504, "6.550400e+04"), (np.float32, 3e38, "3.000000e+38"),
    (np.float32, np.nan, "0x7FC00000"), (np.float32, -np.inf, "0xFF800000"),
    (np.float32, -0.0, "-0.000000e+00"), (np.float32, 1e-45, "1.401300e-45"),
    (np.float32, 1.17549435e-38, "1.17549435E-38"), (np.float32, 123456.7, "123456.703"),
    (np.float32, 1234567.0, "0x4996B438"), (np.float32, 16777216.0, "0x4B800000"),
    (np.float64, 1 / 3, "0.33333333333333331"), (np.float64, 1e300, "1.000000e+300"),
    (np.float64, 5e-324, "4.940660e-324"),
    (np.float64, 123456789012345678.0, "1.2345678901234568E+17"),
    (np.float16, 0.1, "9.997550e-02"), (np.float16, 1 / 3, "3.332520e-01"),
    (np.float16, np.nan, "0x7E00"), (np.float16, 6e-8, "5.960460e-08"),
    (ml_dtypes.bfloat16, 0.1, "1.000980e-01"), (ml_dtypes.bfloat16, np.nan, "0x7FC0"),
    (ml_dtypes.bfloat16, 3e38, "3.004060e+38"), (ml_dtypes.bfloat16, 1e-40, "9.183550e-41"),
]


@pytest.mark.parametrize("dtype,value,text", FLOATS)
def test_floats_print_as_mlir_does(dtype, value, text) -> None:
    assert format_float(np.asarray(value).astype(dtype), dtype) == text


@pytest.mark.parametrize("array,text", [
    (np.ones(200, np.float32), "dense<1.000000e+00>"),
    (np.array([1 + 2j, 3 - 0.5j], np.complex64),
     "dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,-5.000000e-01)]>"),
    (np.array([[1, 2], [3, 4]], np.uint32), "dense<[[1, 2], [3, 4]]>"),
    (np.array([2**64 - 1, 0], np.uint64), "dense<[18446744073709551615, 0]>"),
    (np.array([-1, 2**31 - 1], np.int32), "dense<[-1, 2147483647]>"),
    (np.zeros((2, 0), np.int32), "dense<>"),
    (np.array([True, True]), "dense<true>"),
    (np.array([1.0, -0.0], np.float32), "dense<[1.000000e+00, -0.000000e+00]>"),
    (np.arange(101, dtype=np.int8), 'dense<"0x' + bytes(range(101)).hex().upper() + '">'),
    (np.array([True, False] * 60), 'dense<"0x' + "0100" * 60 + '">'),
])
def test_dense_constants(array, text) -> None:
    assert dense_literal(array) == text


# ---------------------------------------------------------------------------------------------
# Against real JAX.

def _jax_programs():
    import jax
    import jax.numpy as jnp
    from jax import lax
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    special = np.array([0.1, 1e10, 12345678., 1 / 3, np.nan, -np.inf, -0.0, 2.5e-5], np.float32)
    funs = [
        (lambda x: (jnp.sin(x) + 1.0) * 2, x),
        (lambda x: [x.sum(0), x.max(), jnp.argmax(x, 1), jnp.cumsum(x, 1)], x),
        (lambda x: [jnp.sort(x), jnp.argsort(x), lax.top_k(x, 2)], x),
        (lambda x, i: [x[i], x.at[i].add(1.), x[:, ::2], jnp.pad(x, 1), x.T @ x], x, 1),
        (lambda x, n: [lax.fori_loop(0, n, lambda k, c: c * 2, x),
                       lax.switch(n, [jnp.sin, jnp.cos], x)], x, 1),
        (lambda x: x + special.astype(x.dtype), special),
        (lambda x: x + special.astype(jnp.bfloat16), special.astype(ml_dtypes.bfloat16)),
        (lambda x: [lax.shift_left(x, x), x // 3, x % 3, lax.clz(x), ~x], i),
        (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME"), x),
        (lambda x: jax.random.uniform(jax.random.PRNGKey(0), (3,)) + x[0], x),
        (lambda x: lax.conv(x[None, None], x[None, None], (1, 1), "SAME"), x),
        (lambda x: jnp.exp(lax.complex(x, x)), x),
    ]
    return [jax.jit(f).lower(*args).as_text() for f, *args in funs]


@pytest.mark.needs_jax
def test_jax_modules_print_back_identically() -> None:
    pytest.importorskip("jax")
    from tests import xla_check
    for text in _jax_programs():
        assert print_module(xla_check.to_ir(text)) == text


@pytest.mark.needs_jax
def test_every_float16_and_bfloat16_prints_as_jaxlib() -> None:
    pytest.importorskip("jax")
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir as mlir_ir
    with mlir.make_ir_context():
        for dtype in (np.float16, ml_dtypes.bfloat16):
            values = np.arange(0, 65536, 7, dtype=np.uint16).view(dtype)
            for chunk in np.array_split(values, len(values) // 90):
                attr = mlir_ir.DenseElementsAttr.get(
                    chunk, type=mlir.dtype_to_ir_type(np.dtype(dtype)))
                assert dense_literal(chunk) == str(attr).split(" : ")[0]
