"""Lowering of the reductions, windowed reductions, sorting and call primitives, and the
reference backend's kernels for them (`reduce`, `reduce_window`, `select_and_scatter`, `sort`,
`chlo.top_k`, `optimization_barrier`).

Every op record of those primitives is lowered to StableHLO and run by the reference backend,
which must give the eager result; golden texts (read off real JAX 0.10.2) pin down what the
lowering emits for representative cases; hand-built IR checks the kernels' less common paths
(regions run element by element, padding in `select_and_scatter`, large sorts).
"""
from __future__ import annotations

import itertools
import zlib

import ml_dtypes
import numpy as np
import pytest

import justjax
import justjax.ad_checkpoint  # noqa: F401  (the golden cases reach it as jax.ad_checkpoint)
from justjax import lax
from justjax._src.backends.reference.kernels import reductions as kernels
from justjax._src.numerics import windows
from justjax._src.hlo import ir
from justjax._src.interpreters import lowering
from justjax._src.lax import windowed
from tests.harness import (OpRecord, assert_close, hand_built_module, lower_to_module,
                           record_cases, record_rng, run_reference)
from tests.records import lax_reductions, lax_sorting, lax_windowed

RECORDS = lax_reductions.RECORDS + lax_windowed.RECORDS + lax_sorting.RECORDS
CASES = record_cases(RECORDS)


def _rng(record: OpRecord, shapes: tuple, dtypes: tuple) -> np.random.Generator:
    return record_rng(record, shapes, dtypes, salt="lower")


_lower = lower_to_module
_run = run_reference


def _check_against_eager(fun, args, tol: float) -> None:
    """`fun` lowered and run by the reference backend gives its eager results: same dtypes and
    shapes; integers and bools exactly, floats within `tol`."""
    args = [justjax.numpy.asarray(a) for a in args]
    eager = fun(*args)
    eagers = list(eager) if isinstance(eager, (tuple, list)) else [eager]
    results = _run(_lower(fun, *args), *args)
    assert len(results) == len(eagers)
    for got, want in zip(results, eagers, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (got.dtype, want.aval)
        assert_close(got, np.asarray(want), 0 if got.dtype.kind in "biu" else tol)


@pytest.mark.parametrize("record,shapes,dtypes", CASES)
def test_reference_backend_matches_eager(record: OpRecord, shapes: tuple, dtypes: tuple
                                         ) -> None:
    args = record.make(_rng(record, shapes, dtypes), shapes, dtypes)
    _check_against_eager(lambda *xs: record.fun(*xs, **record.static), args,
                         max(record.tolerance(d) for d in dtypes))


# ---------------------------------------------------------------------------------------------
# Golden texts: what `jit(f).lower(*args).as_text()` prints, character for character, as
# real JAX 0.10.2 prints it.

# -- golden cases: each takes (jax, lax, windowed) and returns (function, example arguments) --

F32_2x3 = np.arange(6, dtype=np.float32).reshape(2, 3)


def case_reduce_sum(jax, lax, windowed):
    return lambda x: lax.reduce_sum(x, (1,)), [F32_2x3]


def case_reduce_max_all_axes(jax, lax, windowed):
    return lambda x: lax.reduce_max(x, (0, 1)), [F32_2x3]


def case_reduce_and_bool(jax, lax, windowed):
    return lambda x: lax.reduce_and(x, (1,)), [np.ones((2, 3), bool)]


def case_reduce_min_complex(jax, lax, windowed):
    return lambda x: lax.reduce_min(x, (0,)), [np.ones((4,), np.complex64)]


def case_reduce_prod_bfloat16(jax, lax, windowed):
    return lambda x: lax.reduce_prod(x, (0,)), [np.ones((4,), ml_dtypes.bfloat16)]


def case_argmax(jax, lax, windowed):
    return lambda x: (lax.argmax(x, 1, np.int32), lax.argmax(x, 1, np.int32)), [F32_2x3]


def case_argmin_int(jax, lax, windowed):
    return lambda x: lax.argmin(x, 0, np.int32), [np.ones((2, 3), np.int32)]


def case_cumsum(jax, lax, windowed):
    return lambda x: (lax.cumsum(x, 1), lax.cumsum(x, 0)), [F32_2x3]


def case_cummax_reverse(jax, lax, windowed):
    return lambda x: lax.cummax(x, 0, reverse=True), [F32_2x3]


def case_cumprod_int(jax, lax, windowed):
    return lambda x: lax.cumprod(x, 0), [np.ones((3,), np.int32)]


def case_cumlogsumexp(jax, lax, windowed):
    return lambda x: lax.cumlogsumexp(x, 1), [F32_2x3]


def case_reduce_general(jax, lax, windowed):
    return lambda x: lax.reduce(x, np.float32(0), lambda a, b: a + b * b, (0,)), [F32_2x3]


def case_reduce_variadic(jax, lax, windowed):
    def f(x, y):
        return lax.reduce((x, y), (np.float32(0), np.int32(1)),
                          lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,))
    return f, [F32_2x3, np.ones((2, 3), np.int32)]


def case_reduce_window_max_dilated(jax, lax, windowed):
    return (lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), ((1, 0), (0, 1)),
                                        (1, 2), (1, 1)), [F32_2x3])


def case_reduce_window_sum_scalar(jax, lax, windowed):
    return lambda x: lax.reduce_window(x, 0.0, lax.add, (), (), ()), [np.float32(1)]


def case_reduce_window_generic(jax, lax, windowed):
    return lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME"), [F32_2x3]


def case_reduce_window_variadic(jax, lax, windowed):
    def f(x, y):
        return lax.reduce_window((x, y), (np.float32(0), np.float32(1)),
                                 lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2), (1, 1),
                                 "VALID")
    return f, [F32_2x3, F32_2x3]


def case_select_and_scatter_add(jax, lax, windowed):
    def f(source, operand):
        return windowed._select_and_scatter_add(source, operand, lax.ge_p, (2, 2), (1, 1),
                                                ((1, 0), (0, 1)))
    return f, [F32_2x3, F32_2x3]


def case_select_and_gather_add(jax, lax, windowed):
    def f(tangents, operand):
        return windowed._select_and_gather_add(tangents, operand, lax.le_p, (2, 2), (1, 1),
                                               ((1, 0), (0, 1)), (1, 1), (1, 1))
    return f, [F32_2x3, F32_2x3]


def case_sort(jax, lax, windowed):
    return lambda x: lax.sort(x), [F32_2x3]


def case_sort_two_keys_unstable(jax, lax, windowed):
    def f(x, i):
        return lax.sort((x, i, x), dimension=0, is_stable=False, num_keys=2)
    return f, [F32_2x3, np.ones((2, 3), np.int32)]


def case_sort_complex(jax, lax, windowed):
    return lambda x: lax.sort(x), [np.ones((3,), np.complex64)]


def case_sort_key_val_bool(jax, lax, windowed):
    return lambda k, v: lax.sort_key_val(k, v), [np.ones((4,), bool), np.ones((4,), np.uint8)]


def case_top_k(jax, lax, windowed):
    return lambda x: lax.top_k(x, 2), [F32_2x3]


def case_top_k_axis0(jax, lax, windowed):
    return lambda x: lax.top_k(x, 1, axis=0), [F32_2x3]


def case_remat_grad(jax, lax, windowed):
    body = jax.checkpoint(lambda x: lax.sin(jax.ad_checkpoint.checkpoint_name(lax.sin(x), "a")))
    return jax.grad(lambda x: lax.reduce_sum(body(x), (0,))), [np.ones((3,), np.float32)]


def case_remat_forward(jax, lax, windowed):
    return jax.checkpoint(lambda x: lax.sin(lax.sin(x))), [np.ones((3,), np.float32)]


def case_add_any(jax, lax, windowed):
    return jax.grad(lambda x: lax.reduce_sum(x * x, (0,))), [np.ones((3,), np.float32)]


def case_custom_jvp(jax, lax, windowed):
    @jax.custom_jvp
    def f(x):
        return lax.sin(x)

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0]))
    return f, [np.ones((3,), np.float32)]


def case_custom_vjp(jax, lax, windowed):
    @jax.custom_vjp
    def f(x):
        return lax.sin(x)

    f.defvjp(lambda x: (f(x), x), lambda residual, g: (g,))
    return f, [np.ones((3,), np.float32)]


GOLDEN = {
    "add_any": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<3xf32>
    %2 = stablehlo.multiply %0, %arg0 : tensor<3xf32>
    %3 = stablehlo.add %1, %2 : tensor<3xf32>
    return %3 : tensor<3xf32>
  }
}
""",
    "argmax": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2xi32> {jax.result_info = "result[0]"}, tensor<2xi32> {jax.result_info = "result[1]"}) {
    %0 = call @argmax(%arg0) : (tensor<2x3xf32>) -> tensor<2xi32>
    %1 = call @argmax(%arg0) : (tensor<2x3xf32>) -> tensor<2xi32>
    return %0, %1 : tensor<2xi32>, tensor<2xi32>
  }
  func.func private @argmax(%arg0: tensor<2x3xf32>) -> tensor<2xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<2xi32>
  }
}
""",
    "argmin_int": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xi32>) -> (tensor<3xi32> {jax.result_info = "result"}) {
    %0 = call @argmin(%arg0) : (tensor<2x3xi32>) -> tensor<3xi32>
    return %0 : tensor<3xi32>
  }
  func.func private @argmin(%arg0: tensor<2x3xi32>) -> tensor<3xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<2x3xi32>
    %c = stablehlo.constant dense<2147483647> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %c), (%0 init: %c_0) across dimensions = [0] : (tensor<2x3xi32>, tensor<2x3xi32>, tensor<i32>, tensor<i32>) -> (tensor<3xi32>, tensor<3xi32>)
     reducer(%arg1: tensor<i32>, %arg3: tensor<i32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare LT, %arg1, %arg3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<i32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<i32>, tensor<i32>
    }
    return %1#1 : tensor<3xi32>
  }
}
""",
    "cumlogsumexp": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = call @cumlogsumexp(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
  func.func private @cumlogsumexp(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      %2 = stablehlo.subtract %arg1, %arg2 : tensor<f32>
      %3 = stablehlo.compare NE, %2, %2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.add %arg1, %arg2 : tensor<f32>
      %5 = stablehlo.abs %2 : tensor<f32>
      %6 = stablehlo.negate %5 : tensor<f32>
      %7 = stablehlo.exponential %6 : tensor<f32>
      %8 = stablehlo.log_plus_one %7 : tensor<f32>
      %9 = stablehlo.add %1, %8 : tensor<f32>
      %10 = stablehlo.select %3, %4, %9 : tensor<i1>, tensor<f32>
      stablehlo.return %10 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
""",
    "cummax_reverse": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = call @cummax(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
  func.func private @cummax(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
""",
    "cumprod_int": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xi32>) -> (tensor<3xi32> {jax.result_info = "result"}) {
    %0 = call @cumprod(%arg0) : (tensor<3xi32>) -> tensor<3xi32>
    return %0 : tensor<3xi32>
  }
  func.func private @cumprod(%arg0: tensor<3xi32>) -> tensor<3xi32> {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = "stablehlo.reduce_window"(%arg0, %c) <{base_dilations = array<i64: 1>, padding = dense<[[2, 0]]> : tensor<1x2xi64>, window_dilations = array<i64: 1>, window_dimensions = array<i64: 3>, window_strides = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %1 = stablehlo.multiply %arg1, %arg2 : tensor<i32>
      stablehlo.return %1 : tensor<i32>
    }) : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
    return %0 : tensor<3xi32>
  }
}
""",
    "cumsum": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<2x3xf32> {jax.result_info = "result[1]"}) {
    %0 = call @cumsum(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = call @cumsum_0(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
  }
  func.func private @cumsum(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
""",
    "custom_jvp": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
""",
    "custom_vjp": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
""",
    "reduce_and_bool": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xi1>) -> (tensor<2xi1> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<true> : tensor<i1>
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.and across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
    return %0 : tensor<2xi1>
  }
}
""",
    "reduce_general": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {
      %1 = stablehlo.multiply %arg2, %arg2 : tensor<f32>
      %2 = stablehlo.add %arg1, %1 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }
    return %0 : tensor<3xf32>
  }
}
""",
    "reduce_max_all_axes": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}
""",
    "reduce_min_complex": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f32>>) -> (tensor<complex<f32>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<(0x7F800000,0.000000e+00)> : tensor<complex<f32>>
    %0 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [0] : (tensor<4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
     reducer(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>)  {
      %1 = stablehlo.real %arg1 : (tensor<complex<f32>>) -> tensor<f32>
      %2 = stablehlo.real %arg2 : (tensor<complex<f32>>) -> tensor<f32>
      %3 = stablehlo.compare EQ, %1, %2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.compare LT, %1, %2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %5 = stablehlo.imag %arg1 : (tensor<complex<f32>>) -> tensor<f32>
      %6 = stablehlo.imag %arg2 : (tensor<complex<f32>>) -> tensor<f32>
      %7 = stablehlo.compare LT, %5, %6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = stablehlo.select %3, %7, %4 : tensor<i1>, tensor<i1>
      %9 = stablehlo.select %8, %arg1, %arg2 : tensor<i1>, tensor<complex<f32>>
      stablehlo.return %9 : tensor<complex<f32>>
    }
    return %0 : tensor<complex<f32>>
  }
}
""",
    "reduce_prod_bfloat16": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xbf16>) -> (tensor<bf16> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.multiply across dimensions = [0] : (tensor<4xbf16>, tensor<bf16>) -> tensor<bf16>
    return %0 : tensor<bf16>
  }
}
""",
    "reduce_sum": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
""",
    "reduce_variadic": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xi32>) -> (tensor<2xf32> {jax.result_info = "result[0]"}, tensor<2xi32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0:2 = stablehlo.reduce(%arg0 init: %cst), (%arg1 init: %c) across dimensions = [1] : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
     reducer(%arg2: tensor<f32>, %arg4: tensor<f32>) (%arg3: tensor<i32>, %arg5: tensor<i32>)  {
      %1 = stablehlo.add %arg2, %arg4 : tensor<f32>
      %2 = stablehlo.multiply %arg3, %arg5 : tensor<i32>
      stablehlo.return %1, %2 : tensor<f32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<2xf32>, tensor<2xi32>
  }
}
""",
    "reduce_window_generic": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 1], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 2>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = stablehlo.multiply %arg1, %arg2 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
}
""",
    "reduce_window_max_dilated": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x5xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 2>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x5xf32>
    return %1 : tensor<2x5xf32>
  }
}
""",
    "reduce_window_sum_scalar": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64>, padding = dense<> : tensor<0x2xi64>, window_dilations = array<i64>, window_dimensions = array<i64>, window_strides = array<i64>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}
""",
    "reduce_window_variadic": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<1x2xf32> {jax.result_info = "result[0]"}, tensor<1x2xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0:2 = "stablehlo.reduce_window"(%arg0, %arg1, %cst, %cst_0) <{base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<f32>):
      %1 = stablehlo.add %arg2, %arg4 : tensor<f32>
      %2 = stablehlo.multiply %arg3, %arg5 : tensor<f32>
      stablehlo.return %1, %2 : tensor<f32>, tensor<f32>
    }) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
    return %0#0, %0#1 : tensor<1x2xf32>, tensor<1x2xf32>
  }
}
""",
    "remat_forward": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<3xf32>
    %1 = stablehlo.sine %0 : tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
""",
    "remat_grad": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %1:2 = stablehlo.optimization_barrier %arg0, %0 : tensor<3xf32>, tensor<3xf32>
    %2 = stablehlo.sine %1#0 : tensor<3xf32>
    %3 = stablehlo.cosine %1#0 : tensor<3xf32>
    %4 = stablehlo.cosine %2 : tensor<3xf32>
    %5 = stablehlo.multiply %1#1, %4 : tensor<3xf32>
    %6 = stablehlo.multiply %5, %3 : tensor<3xf32>
    return %6 : tensor<3xf32>
  }
}
""",
    "select_and_gather_add": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0:2 = "stablehlo.reduce_window"(%arg1, %arg0, %cst, %cst_0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<f32>):
      %1 = stablehlo.compare LE, %arg2, %arg4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %2 = stablehlo.select %1, %arg2, %arg4 : tensor<i1>, tensor<f32>
      %3 = stablehlo.select %1, %arg3, %arg5 : tensor<i1>, tensor<f32>
      stablehlo.return %2, %3 : tensor<f32>, tensor<f32>
    }) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
    return %0#1 : tensor<2x3xf32>
  }
}
""",
    "select_and_scatter_add": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.pad %arg1, %cst, low = [1, 0], high = [0, 1], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = "stablehlo.select_and_scatter"(%0, %arg0, %cst_0) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %3 = stablehlo.compare GE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %3 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %3 : tensor<f32>
    }) : (tensor<3x4xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
    %2 = stablehlo.slice %1 [1:3, 0:3] : (tensor<3x4xf32>) -> tensor<2x3xf32>
    return %2 : tensor<2x3xf32>
  }
}
""",
    "sort": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
""",
    "sort_complex": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xcomplex<f32>>) -> (tensor<3xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      %1 = stablehlo.real %arg1 : (tensor<complex<f32>>) -> tensor<f32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.compare EQ, %1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %3 = stablehlo.select %2, %cst_0, %1 : tensor<i1>, tensor<f32>
      %4 = stablehlo.compare NE, %1, %1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f32>
      %6 = stablehlo.imag %arg1 : (tensor<complex<f32>>) -> tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %7 = stablehlo.compare EQ, %6, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %8 = stablehlo.select %7, %cst_3, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare NE, %6, %6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %10 = stablehlo.select %9, %cst_4, %8 : tensor<i1>, tensor<f32>
      %11 = stablehlo.real %arg2 : (tensor<complex<f32>>) -> tensor<f32>
      %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %12 = stablehlo.compare EQ, %11, %cst_5, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %13 = stablehlo.select %12, %cst_6, %11 : tensor<i1>, tensor<f32>
      %14 = stablehlo.compare NE, %11, %11, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_7 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %15 = stablehlo.select %14, %cst_7, %13 : tensor<i1>, tensor<f32>
      %16 = stablehlo.imag %arg2 : (tensor<complex<f32>>) -> tensor<f32>
      %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %17 = stablehlo.compare EQ, %16, %cst_8, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %18 = stablehlo.select %17, %cst_9, %16 : tensor<i1>, tensor<f32>
      %19 = stablehlo.compare NE, %16, %16, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_10 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %20 = stablehlo.select %19, %cst_10, %18 : tensor<i1>, tensor<f32>
      %21 = stablehlo.compare LT, %10, %20, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %22 = stablehlo.compare LT, %5, %15, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %23 = stablehlo.compare EQ, %5, %15, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %24 = stablehlo.and %23, %21 : tensor<i1>
      %25 = stablehlo.or %22, %24 : tensor<i1>
      stablehlo.return %25 : tensor<i1>
    }) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    return %0 : tensor<3xcomplex<f32>>
  }
}
""",
    "sort_key_val_bool": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi1>, %arg1: tensor<4xui8>) -> (tensor<4xi1> {jax.result_info = "result[0]"}, tensor<4xui8> {jax.result_info = "result[1]"}) {
    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>, %arg4: tensor<ui8>, %arg5: tensor<ui8>):
      %1 = stablehlo.compare LT, %arg2, %arg3, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<4xi1>, tensor<4xui8>) -> (tensor<4xi1>, tensor<4xui8>)
    return %0#0, %0#1 : tensor<4xi1>, tensor<4xui8>
  }
}
""",
    "sort_two_keys_unstable": """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xi32>) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<2x3xi32> {jax.result_info = "result[1]"}, tensor<2x3xf32> {jax.result_info = "result[2]"}) {
    %0:3 = "stablehlo.sort"(%arg0, %arg1, %arg0) <{dimension = 0 : i64, is_stable = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<i32>, %arg5: tensor<i32>, %arg6: tensor<f32>, %arg7: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg2, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.select %1, %cst_0, %arg2 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg3, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg3 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %arg4, %arg5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %10 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %11 = stablehlo.compare EQ, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %12 = stablehlo.and %11, %9 : tensor<i1>
      %13 = stablehlo.or %10, %12 : tensor<i1>
      stablehlo.return %13 : tensor<i1>
    }) : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>)
    return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>
  }
}
""",
    "top_k": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x2xf32> {jax.result_info = "result[0]"}, tensor<2x2xi32> {jax.result_info = "result[1]"}) {
    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
    return %values, %indices : tensor<2x2xf32>, tensor<2x2xi32>
  }
}
""",
    "top_k_axis0": """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<1x3xf32> {jax.result_info = "result[0]"}, tensor<1x3xi32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %values, %indices = chlo.top_k(%0, k = 1) : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi32>)
    %1 = stablehlo.transpose %values, dims = [1, 0] : (tensor<3x1xf32>) -> tensor<1x3xf32>
    %2 = stablehlo.transpose %indices, dims = [1, 0] : (tensor<3x1xi32>) -> tensor<1x3xi32>
    return %1, %2 : tensor<1x3xf32>, tensor<1x3xi32>
  }
}
""",
}


CASES_BY_NAME = {name[len("case_"):]: fun for name, fun in sorted(globals().items())
                 if name.startswith("case_")}


def test_every_case_has_golden_text() -> None:
    assert sorted(CASES_BY_NAME) == sorted(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_lowered_text_is_what_jax_prints(name: str) -> None:
    fun, args = CASES_BY_NAME[name](justjax, lax, windowed)
    assert justjax.jit(fun).lower(*args).as_text() == GOLDEN[name]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_cases_run_like_eager(name: str) -> None:
    fun, args = CASES_BY_NAME[name](justjax, lax, windowed)
    _check_against_eager(fun, args, 1e-6)


@pytest.mark.needs_jax
def test_golden_texts_are_what_jax_prints() -> None:
    jax = pytest.importorskip("jax")
    import jax.ad_checkpoint  # noqa: F401
    from jax._src.lax import windowed_reductions
    for name, case in CASES_BY_NAME.items():
        fun, args = case(jax, jax.lax, windowed_reductions)
        assert jax.jit(fun).lower(*args).as_text() == GOLDEN[name], name


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_cases_run_on_xla_as_on_the_reference_backend(name: str) -> None:
    pytest.importorskip("jax")
    from tests import xla_check
    fun, args = CASES_BY_NAME[name](justjax, lax, windowed)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = [np.asarray(rng.normal(size=np.shape(a)) * 3).astype(np.asarray(a).dtype)
            for a in args]
    text = justjax.jit(fun).lower(*args).as_text()
    expected = _run(_lower(fun, *args), *args)
    for got, want in zip(xla_check.run(text, args), expected, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        assert_close(got, want, 0 if got.dtype.kind in "biu" else 1e-5, context=name)


# ---------------------------------------------------------------------------------------------
# Kernels: paths the records do not reach.

_module = hand_built_module


def _scalar(dtype) -> ir.TensorType:
    return ir.TensorType((), np.dtype(dtype))


def _add_region(dtype, through_reshape: bool) -> ir.Region:
    """`(acc, x) -> acc + x`; with `through_reshape` the element first goes through a
    (no-op) reshape, which makes the region run element by element."""
    region, b = ir.new_region([_scalar(dtype)] * 2)
    acc, x = region.block.args
    if through_reshape:
        x = b.one("stablehlo.reshape", [x], x.type)
    b.ret([b.one("stablehlo.add", [acc, x], x.type)])
    return region


def test_low_precision_sums_accumulate_in_float32() -> None:
    # XLA CPU gives 1000 for all three (a bfloat16 accumulator would stop at 256).
    ones = np.ones((1000,), ml_dtypes.bfloat16)
    sums = [lambda x: lax.reduce_sum(x, (0,)), lambda x: lax.cumsum(x)[-1],
            lambda x: lax.reduce_window(x, np.zeros((), x.dtype), lax.add, (1000,), (1,),
                                        "VALID")[0]]
    for fun in sums:
        result, = _run(_lower(fun, ones), ones)
        assert float(result) == 1000.0


def test_reduce_from_a_non_identity_initial_value() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    result, = _run(_lower(lambda x: lax.reduce(x, np.float32(1), lax.add, (1,)), x), x)
    np.testing.assert_array_equal(result, x.sum(1) + 1)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), ()])
def test_region_element_by_element_equals_vectorized(dims: tuple) -> None:
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    out_shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)

    def reduce(through_reshape: bool) -> np.ndarray:
        def build(b, operand):
            init = b.constant(np.float32(0.5), np.float32)
            region = _add_region(np.float32, through_reshape)
            assert kernels._vectorizable(region.block) != through_reshape
            return [b.op("stablehlo.reduce", [operand, init],
                         [ir.TensorType(out_shape, np.float32)], {"dimensions": dims},
                         [region]).result]
        return _run(_module([ir.TensorType(x.shape, np.float32)], build), x)[0]

    np.testing.assert_array_equal(reduce(True), reduce(False))
    if dims:
        np.testing.assert_allclose(reduce(True), x.sum(dims) + 0.5, rtol=1e-6)


def test_sort_large_rows_with_ties_and_nans_is_stable() -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 6, (5, 999)).astype(np.float32)
    keys[rng.random(keys.shape) < 0.1] = np.nan
    keys[rng.random(keys.shape) < 0.1] = -0.0
    second = rng.integers(0, 3, keys.shape).astype(np.int32)
    payload = np.arange(keys.size, dtype=np.int32).reshape(keys.shape)
    fun = lambda a, b, c: lax.sort((a, b, c), num_keys=2)
    results = _run(_lower(fun, keys, second, payload), keys, second, payload)
    # JAX's order: -0.0 ties with 0.0, NaNs last; np.lexsort is stable.
    ranks = np.where(np.isnan(keys), np.inf, keys + np.float32(0))
    order = np.stack([np.lexsort((s, r)) for s, r in zip(second, ranks, strict=True)])
    expected = [np.take_along_axis(a, order, axis=1) for a in (keys, second, payload)]
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_sort_with_a_comparator_run_element_by_element() -> None:
    x = np.random.default_rng(2).integers(0, 4, (3, 9)).astype(np.int32)
    index = np.broadcast_to(np.arange(9, dtype=np.int32), x.shape).copy()

    def build(b, keys, values):
        region, rb = ir.new_region([_scalar(np.int32)] * 4)
        lhs, rhs = (rb.one("stablehlo.reshape", [v], v.type) for v in region.block.args[:2])
        rb.ret([lowering.compare(rb, lhs, rhs, "LT")])
        return b.op("stablehlo.sort", [keys, values], [keys.type, values.type],
                    {"dimension": 1, "is_stable": True}, [region]).results

    module = _module([ir.TensorType(x.shape, np.int32)] * 2, build)
    assert not kernels._vectorizable(module.main.body.ops[0].regions[0].block)
    keys, values = _run(module, x, index)
    order = np.argsort(x, axis=1, kind="stable")
    np.testing.assert_array_equal(keys, np.take_along_axis(x, order, 1))
    np.testing.assert_array_equal(values, order)


def _select_and_scatter_loop(operand, source, init, window, strides, padding):
    """The StableHLO spec, element by element: per window the first element (row-major, not
    padding) that `>=` keeps against every later one; its source value is added there."""
    result = np.full(operand.shape, init, operand.dtype)
    for w in np.ndindex(*source.shape):
        best = None
        for tap in np.ndindex(*window):
            at = tuple(i * s + t - lo for i, s, t, (lo, _) in zip(w, strides, tap, padding))
            if not all(0 <= a < n for a, n in zip(at, operand.shape)):
                continue
            if best is None or not operand[best] >= operand[at]:
                best = at
        if best is not None:
            result[best] += source[w]
    return result


@pytest.mark.parametrize("window,strides,padding", [
    ((2, 3), (1, 2), ((1, 1), (0, 2))),
    ((3, 2), (2, 1), ((2, 0), (1, -1))),
    ((2, 2), (2, 2), ((0, 0), (0, 0)))])
def test_select_and_scatter_never_selects_padding(window, strides, padding) -> None:
    rng = np.random.default_rng(3)
    operand = rng.integers(-2, 3, (5, 6)).astype(np.float32)
    out_shape = windowed.reduce_window_shape_tuple(operand.shape, window, strides, padding)
    source = rng.normal(size=out_shape).astype(np.float32)

    def build(b, x, s):
        init = b.constant(np.float32(0.25), np.float32)
        select, sb = ir.new_region([_scalar(np.float32)] * 2)
        sb.ret([lowering.compare(sb, *select.block.args, "GE")])
        return [b.op("stablehlo.select_and_scatter", [x, s, init], [x.type],
                     {"window_dimensions": window, "window_strides": strides,
                      "padding": np.asarray(padding, np.int64)},
                     [select, _add_region(np.float32, False)]).result]

    module = _module([ir.TensorType(operand.shape, np.float32),
                      ir.TensorType(out_shape, np.float32)], build)
    result, = _run(module, operand, source)
    expected = _select_and_scatter_loop(operand, source, np.float32(0.25), window, strides,
                                        padding)
    np.testing.assert_allclose(result, expected, rtol=1e-6)


@pytest.mark.parametrize("combine", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("axis,reverse", list(itertools.product((0, 1), (False, True))))
def test_cumulative_windows_scan_as_the_windows_fold(combine, axis, reverse) -> None:
    x = np.random.default_rng(4).normal(size=(4, 5)).astype(np.float32)
    n = x.shape[axis]
    window = tuple(n if d == axis else 1 for d in range(2))
    padding = tuple(((0, n - 1) if reverse else (n - 1, 0)) if d == axis else (0, 0)
                    for d in range(2))
    params = dict(window_dimensions=window, window_strides=(1, 1), padding=padding,
                  base_dilation=(1, 1), window_dilation=(1, 1))
    assert windows.cumulative_axis(x.shape, **params) == (axis, reverse)
    identity = {np.add: 0.0, np.multiply: 1.0, np.maximum: -np.inf, np.minimum: np.inf}
    folded = kernels.window_fold(x, np.float32(identity[combine]), combine, x.shape, **params)
    np.testing.assert_allclose(kernels._accumulate(x, combine, axis, reverse), folded,
                               rtol=1e-6)


def test_top_k_orders_nans_and_zeros_as_xla() -> None:
    x = np.array([1.0, np.nan, -np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.0], np.float32)
    values, indices = _run(_lower(lambda x: lax.top_k(x, 9), x), x)
    # Read off XLA CPU (jax 0.10.2).
    np.testing.assert_array_equal(indices, [1, 4, 0, 7, 6, 5, 8, 3, 2])
    np.testing.assert_array_equal(np.signbit(values), np.signbit(x[indices]))
