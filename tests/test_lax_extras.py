"""lax.optimization_barrier, lax.mulhi, lax.empty, lax.index_take, lax.broadcast_like:
jaxprs, StableHLO, passes and backends, errors; expected texts and values read off JAX 0.10.2.

(Per-op numerics, jit vs eager, gradients and vmap run from tests/records/lax_extras.py.)
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from tests.harness import lower_to_module, run_on_backend


# -- optimization_barrier -----------------------------------------------------------------------

def test_barrier_jaxpr_and_pytrees():
    x, y = jnp.arange(4.0), jnp.ones(3, jnp.int32)
    assert str(jax.make_jaxpr(lax.optimization_barrier)((x, y))) == (
        "{ lambda ; a:f32[4] b:i32[3]. let\n"
        "    c:f32[4] d:i32[3] = optimization_barrier a b\n  in (c, d) }")
    out = lax.optimization_barrier({"a": 1.0, "b": (np.int32(2), 3)})
    assert float(out["a"]) == 1.0 and out["b"][1].dtype == np.int32
    assert str(jax.make_jaxpr(lambda: lax.optimization_barrier(()))()) == (
        "{ lambda ; . let optimization_barrier  in () }")


def test_barrier_derivatives_as_jax():
    x = jnp.arange(4.0)
    grad_text = str(jax.make_jaxpr(jax.grad(
        lambda x: lax.optimization_barrier(x * 2).sum()))(x))
    assert grad_text == (
        "{ lambda ; a:f32[4]. let\n    b:f32[4] = mul a 2.0:f32[]\n"
        "    c:f32[4] = optimization_barrier b\n"
        "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n"
        "    d:f32[4] = broadcast_in_dim 1.0:f32[]\n    e:f32[4] = optimization_barrier d\n"
        "    f:f32[4] = mul e 2.0:f32[]\n  in (f,) }")
    jvp_text = str(jax.make_jaxpr(jax.jvp, static_argnums=0)(
        lambda x: lax.optimization_barrier((x, 2 * x)), (x,), (x,)))
    assert jvp_text == (
        "{ lambda ; a:f32[4] b:f32[4]. let\n    c:f32[4] = mul 2.0:f32[] a\n"
        "    d:f32[4] = mul 2.0:f32[] b\n    e:f32[4] f:f32[4] = optimization_barrier a c\n"
        "    g:f32[4] h:f32[4] = optimization_barrier b d\n  in (e, f, g, h) }")
    f = lambda x, i: lax.optimization_barrier((x, i))[0] * 2
    assert str(jax.make_jaxpr(jax.grad(f))(1.0, 2)).splitlines()[4] == (
        "    e:f32[] _:float0[] = optimization_barrier d (b'',):float0[]")
    assert float(jax.grad(f)(1.0, 2)) == 2.0
    assert str(jax.make_jaxpr(jax.vmap(lax.optimization_barrier))(jnp.ones((2, 3)))) == (
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = optimization_barrier a in (b,) }")


def test_barrier_stablehlo():
    text = jax.jit(lambda x, y: lax.optimization_barrier((x + 1, y))).lower(
        jnp.arange(4.0), jnp.ones(3, jnp.int32)).as_text()
    assert ("    %2:2 = stablehlo.optimization_barrier %1, %arg1 : tensor<4xf32>, "
            "tensor<3xi32>\n    return %2#0, %2#1 : tensor<4xf32>, tensor<3xi32>\n") in text


def test_barrier_blocks_cse_and_fusion():
    """The two sines stay two (no CSE across the barrier), and the one before the barrier is
    not fused with the add after it."""
    same = lambda x: jnp.sin(x) + jnp.sin(x)
    barred = lambda x: lax.optimization_barrier(jnp.sin(x)) + jnp.sin(x)
    x = jnp.ones(3)
    assert jax.jit(same).lower(x).compile().as_text().count("sine(") == 1
    hlo = jax.jit(barred).lower(x).compile().as_text()
    assert hlo.count("sine(") == 2 and "opt-barrier(" in hlo
    np.testing.assert_allclose(jax.jit(barred)(x), 2 * np.sin(1.0), rtol=1e-6)


@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_barrier_runs_on_both_backends(backend):
    x, y = np.arange(4.0, dtype=np.float32), np.arange(3, dtype=np.int32)
    module = lower_to_module(lambda x, y: lax.optimization_barrier((x * 2, y)), x, y)
    a, b = run_on_backend(backend, module, x, y)
    np.testing.assert_array_equal(a, x * 2)
    np.testing.assert_array_equal(b, y)


# -- mulhi --------------------------------------------------------------------------------------

def test_mulhi_values_as_jax():
    x = jnp.array([3, -7, 2 ** 30, -2 ** 31], jnp.int32)
    y = jnp.array([5, 9, 2 ** 20, -1], jnp.int32)
    # JAX 0.10.2
    np.testing.assert_array_equal(lax.mulhi(x, y), [0, -1, 262144, 0])
    np.testing.assert_array_equal(lax.mulhi(x.astype("uint32"), y.astype("uint32")),
                                  [0, 8, 262144, 2147483647])
    assert int(lax.mulhi(jnp.int8(100), jnp.int8(100))) == 39
    assert int(lax.mulhi(jnp.uint8(200), jnp.uint8(200))) == 156
    assert str(jax.make_jaxpr(lax.mulhi)(x, y)) == (
        "{ lambda ; a:i32[4] b:i32[4]. let c:i32[4] = mulhi a b in (c,) }")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64"])
@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_mulhi_full_range_on_both_backends(dtype, backend):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    x[:4] = [info.min, info.max, info.min, 0]
    y[:4] = [info.min, info.min, info.max, info.max]
    bits = 8 * x.dtype.itemsize
    want = np.array([((int(a) * int(b)) >> bits) for a, b in zip(x, y, strict=True)],
                    dtype=object)
    want = np.array([int(w) % (1 << bits) for w in want], dtype=np.uint64).astype(dtype)
    with jax.enable_x64(True):
        module = lower_to_module(lax.mulhi, x, y)
    got, = run_on_backend(backend, module, x, y)
    np.testing.assert_array_equal(got, want)


def test_mulhi_errors_as_jax():
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32 at position 0. "
                                        "Accepted dtypes at position 0 are subtypes of integer."):
        lax.mulhi(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match="lax.mulhi requires arguments to have the same "
                                        "dtypes, got int8, int16."):
        lax.mulhi(jnp.int8(3), jnp.int16(4))


# -- empty, broadcast_like, index_take ---------------------------------------------------------

def test_empty_as_jax():
    np.testing.assert_array_equal(lax.empty((2, 3), jnp.float32), np.zeros((2, 3)))
    assert lax.empty((), "int32").dtype == np.int32 and lax.empty(3, "float32").shape == (3,)
    assert str(jax.make_jaxpr(lambda: lax.empty((2,), jnp.float32))()) == (
        "{ lambda ; . let\n    a:f32[2] = empty[\n      dtype=<class 'jax.numpy.float32'>\n"
        "      out_sharding=None\n      shape=(2,)\n    ] \n  in (a,) }")
    text = jax.jit(lambda: lax.empty((2,), jnp.float32)).lower().as_text()
    assert ("%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
            "    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> "
            "tensor<2xf32>\n    return %0") in text
    assert float(jax.grad(lambda x: lax.empty((), jnp.float32) * x)(1.0)) == 0.0


def test_broadcast_like_as_jax():
    np.testing.assert_array_equal(lax.broadcast_like(jnp.array([1, 2, 3]), jnp.zeros((2, 3))),
                                  [[1, 2, 3], [1, 2, 3]])
    assert str(jax.make_jaxpr(lax.broadcast_like)(jnp.ones((1, 3)), jnp.zeros((2, 2, 3)))) == (
        "{ lambda ; a:f32[1,3] b:f32[2,2,3]. let\n"
        "    c:f32[2,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n  in (c,) }")
    assert str(jax.make_jaxpr(lax.broadcast_like)(jnp.ones((2, 3)), jnp.zeros((2, 3)))) == (
        "{ lambda ; a:f32[2,3] b:f32[2,3]. let  in (a,) }")
    with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                                         r"type=float32\[3\] and requested type=float32\[2,4\]"):
        lax.broadcast_like(jnp.ones(3), jnp.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"Cannot broadcast to shape with fewer dimensions: "
                                         r"arr_shape=\(2, 3\) shape=\(3,\)"):
        lax.broadcast_like(jnp.ones((2, 3)), jnp.zeros((3,)))


def test_index_take_as_jax():
    src = jnp.arange(24.0).reshape(2, 3, 4)
    idxs = (jnp.array([0, 1, -1]), jnp.array([1, 2, 5]))
    # JAX 0.10.2 (negative and too-large indices wrap)
    np.testing.assert_array_equal(lax.index_take(src, idxs, (1, 2)),
                                  [[1.0, 13.0], [6.0, 18.0], [9.0, 21.0]])
    text = str(jax.make_jaxpr(lambda s, i: lax.index_take(s, i, (1, 2)))(src, idxs))
    assert "mode=GatherScatterMode.PROMISE_IN_BOUNDS\n      slice_sizes=(2, 1, 1)" in text


# -- platform_dependent ------------------------------------------------------------------------

def test_platform_dependent_picks_cpu_or_default():
    f = lambda x: lax.platform_dependent(x, cpu=jnp.sin, default=jnp.cos)
    g = lambda x: lax.platform_dependent(x, tpu=jnp.sin, default=jnp.cos)
    np.testing.assert_allclose([f(1.0), jax.jit(f)(1.0)], np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose([g(1.0), jax.jit(g)(1.0)], np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(f)(1.0), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.jit(f))(jnp.arange(2.0)), np.sin([0.0, 1.0]),
                               rtol=1e-6)
    text = str(jax.make_jaxpr(f)(1.0))
    # JAX 0.10.2 prints the same, plus the cond's branches_platforms=(('cpu',), None).
    assert text.startswith("{ lambda ; a:f32[]. let\n"
                           "    b:i32[] = platform_index[platforms=(('cpu',), None)] \n"
                           "    c:f32[] = cond[\n")
    # Branches given for several platforms are one branch.
    h = lambda x: lax.platform_dependent(x, cpu=jnp.sin, tpu=jnp.sin)
    assert "platform_index[platforms=(('cpu', 'tpu'),)]" in str(jax.make_jaxpr(h)(1.0))


def test_platform_dependent_errors_as_jax():
    message = ("MLIR translation rule for primitive 'platform_index(platforms=(('tpu',),))' "
               "not found for platform cpu")
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        lax.platform_dependent(1.0, tpu=jnp.sin)
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        jax.jit(lambda x: lax.platform_dependent(x, tpu=jnp.sin))(1.0)
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm' for lax.platform_dependent."):
        lax.platform_dependent(1.0, gpu=jnp.sin)
    with pytest.raises(TypeError, match="the 'cpu' branch must be a callable."):
        lax.platform_dependent(1.0, cpu=3)
    with pytest.raises(TypeError, match="the 'default' branch must be a callable."):
        lax.platform_dependent(1.0, cpu=jnp.sin, default=3)


# -- composite ----------------------------------------------------------------------------------

_square = lax.composite(lambda x, *, p=2: x ** p, name="my.square", version=1)


def test_composite_values_and_jaxpr():
    assert float(_square(3.0)) == 9.0 and float(jax.jit(_square)(3.0)) == 9.0
    np.testing.assert_array_equal(_square(jnp.arange(3.0), p=3), [0.0, 1.0, 8.0])
    assert str(jax.make_jaxpr(lambda x: _square(x, p=3))(3.0)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = composite[\n"
        "      attributes=(('p', (3,), PyTreeDef(*)),)\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = integer_pow[y=3] c in (d,) }\n"
        "      name=my.square\n      version=1\n    ] a\n  in (b,) }")


def test_composite_stablehlo_as_jax():
    text = jax.jit(lambda x: _square(x, p=3)).lower(3.0).as_text()
    assert ('    %0 = stablehlo.composite "my.square" %arg0 {composite_attributes = {p = 3 : '
            'i64}, decomposition = @my.square, version = 1 : i32} : (tensor<f32>) -> '
            'tensor<f32>\n') in text
    assert "  func.func private @my.square(%arg0: tensor<f32>) -> tensor<f32> {" in text
    attrs = lax.composite(lambda x, *, s, v, f, a, b, n: x, name="my.attrs")
    text = jax.jit(lambda x: attrs(x, s="hi", v=np.array([1, 2], np.int32), f=1.5, a=True,
                                   b=(1, 2), n=np.float32(2))).lower(1.0).as_text()
    assert ('{composite_attributes = {a = true, b = [1, 2], f = 1.500000e+00 : f64, n = '
            '2.000000e+00 : f32, s = "hi", v = dense<[1, 2]> : tensor<2xi32>}, decomposition '
            '= @my.attrs}') in text
    two = lax.composite(lambda x: x + 1, name="my.c")
    text = jax.jit(lambda x: two(x) + two(x)).lower(1.0).as_text()
    assert "{decomposition = @my.c}" in text and "{decomposition = @my.c_0}" in text


@pytest.mark.parametrize("backend", ["reference", "llvm"])
def test_composite_decomposition_runs_on_both_backends(backend):
    pair = lax.composite(lambda x, y: (x + y, x * y), name="my.two")
    x, y = np.float32(2.0), np.arange(3.0, dtype=np.float32)
    module = lower_to_module(pair, x, y)
    if backend == "llvm":
        from justjax._src.hlo.passes.optimize import optimize
        module = optimize(module)   # the compiler inlines the composite, as XLA does
        assert not any(op.opcode == "stablehlo.composite" for op in module.walk())
    got_sum, got_product = run_on_backend(backend, module, x, y)
    np.testing.assert_array_equal(got_sum, x + y)
    np.testing.assert_array_equal(got_product, x * y)


def test_composite_errors_as_jax():
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.grad(_square)(3.0)
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite' not "
                                                  "implemented"):
        jax.vmap(_square)(jnp.arange(3.0))
    with pytest.raises(ValueError, match="name must be a valid namespaced op name"):
        jax.jit(lax.composite(lambda x: x, name="bad"))(1.0)
    with pytest.raises(jax.errors.UnexpectedTracerError, match="Found a JAX Tracer as an "
                                                               "attribute"):
        jax.jit(lambda t: lax.composite(lambda x, *, p: x, name="my.a")(1.0, p=t))(1.0)


# -- approx_max_k / approx_min_k -----------------------------------------------------------------

_X = np.array([[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0]],
              np.float32)


def test_approx_top_k_values_as_jax():
    values, indices = lax.approx_max_k(jnp.asarray(_X), 3)   # JAX 0.10.2
    np.testing.assert_array_equal(values, [[9, 6, 5], [8, 8, 8]])
    np.testing.assert_array_equal(indices, [[5, 7, 4], [3, 5, 7]])
    values, indices = lax.approx_min_k(jnp.asarray(_X), 2, reduction_dimension=0)
    np.testing.assert_array_equal(indices, [[1, 0, 1, 0, 1, 1, 1, 0], [0, 1, 0, 1, 0, 0, 0, 1]])
    values, indices = lax.approx_max_k(jnp.asarray(_X), 3, aggregate_to_topk=False)
    np.testing.assert_array_equal(indices, [[5, 7, 4, 2, 0, 6, 1, 3], [3, 5, 7, 1, 0, 4, 2, 6]])
    # Ties and signed zeros as XLA's CPU fallback orders them.
    for data, low, high in [([0.0, -0.0, 1.0], [0, 1], [2, 0]), ([-0.0, 0.0, 1.0], [0, 1], [2, 1]),
                            ([3.0, 1.0, 1.0, 2.0], [1, 2], [0, 3]), ([1.0, np.nan, 3.0], [0, 2],
                                                                   [1, 2])]:
        np.testing.assert_array_equal(lax.approx_min_k(jnp.array(data), 2)[1], low)
        np.testing.assert_array_equal(lax.approx_max_k(jnp.array(data), 2)[1], high)


def test_approx_top_k_jaxpr_and_transforms():
    x = jnp.asarray(_X)
    assert str(jax.make_jaxpr(lambda x: lax.approx_max_k(x, 3))(x)) == (
        "{ lambda ; a:f32[2,8]. let\n    b:f32[2,3] c:i32[2,3] = approx_top_k[\n"
        "      aggregate_to_topk=True\n      is_max_k=True\n      k=3\n"
        "      recall_target=0.95\n      reduction_dimension=-1\n"
        "      reduction_input_size_override=-1\n    ] a\n  in (b, c) }")
    assert "reduction_dimension=1\n" in str(jax.make_jaxpr(jax.vmap(
        lambda x: lax.approx_min_k(x, 2)))(x))
    np.testing.assert_array_equal(jax.grad(lambda x: lax.approx_max_k(x, 2)[0].sum())(x),
                                  [[0, 0, 0, 0, 0, 1, 0, 1], [0, 0, 0, 1, 0, 1, 0, 0]])
    values, indices = jax.vmap(lambda x: lax.approx_min_k(x, 1), in_axes=1)(x)
    np.testing.assert_array_equal(indices.ravel(), [1, 0, 1, 0, 1, 1, 1, 0])


@pytest.mark.parametrize("args, want", [  # XLA's ApproxTopKReductionOutputSize (JAX 0.10.2)
    ((1000, 2, 3, 0.95, False, -1), (256, 2)), ((4096, 1, 3, 0.95, False, -1), (1024, 2)),
    ((100000, 2, 10, 0.99, False, -1), (1664, 6)), ((100000, 2, 10, 1.0, False, -1), (100000, 0)),
    ((100000, 2, 10, 0.95, False, 200000), (128, 10)), ((1025, 2, 1, 0.95, False, -1), (128, 4)),
    ((1000, 2, 1, 1.0, False, -1), (128, 3)), ((1032, 2, 2, 0.999, False, -1), (1032, 0)),
    ((129, 2, 3, 0.9, False, 100000), (256, 0)), ((694, 3, 2, 0.95, False, 1654), (128, 3)),
    ((613, 3, 554, 0.999, False, 2870), (613, 0)), ((100000, 2, 10, 0.95, True, -1), (10, -1))])
def test_reduction_output_size_as_xla(args, want):
    from justjax._src.lax.ann import reduction_output_size
    assert reduction_output_size(*args) == want


def test_approx_top_k_aggregate_false_large():
    x = np.random.default_rng(0).normal(size=(3, 1000)).astype(np.float32)
    values, _ = lax.approx_max_k(x, 5, reduction_dimension=1, aggregate_to_topk=False)
    np.testing.assert_array_equal(values, -np.sort(-x, axis=1)[:, :256])
    values, _ = jax.jit(lambda x: lax.approx_min_k(x, 5, recall_target=0.99,
                                                   aggregate_to_topk=False))(x)
    np.testing.assert_array_equal(values, np.sort(x, axis=1)[:, :512])   # 2 bins per tile


def test_approx_top_k_errors_as_jax():
    x = jnp.asarray(_X)
    with pytest.raises(ValueError, match="k must be smaller than the size of reduction_dim 8, "
                                         "got 9"):
        lax.approx_max_k(x, 9)
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        lax.approx_max_k(x, 0)
    with pytest.raises(ValueError, match="operand must be a floating type"):
        lax.approx_max_k(jnp.arange(5), 2)
    with pytest.raises(jax.errors.JaxRuntimeError, match="recall_target out of range"):
        lax.approx_max_k(x, 2, recall_target=1.5)
    with pytest.raises(jax.errors.JaxRuntimeError, match="reduction_input_size_override out of "
                                                         "range"):
        lax.approx_max_k(x, 2, reduction_input_size_override=3)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"recall_target should range in "
                                                         r"\(0,1\]"):
        lax.approx_max_k(jnp.ones((2, 1000)), 2, recall_target=0.0, aggregate_to_topk=False)
