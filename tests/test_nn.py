"""justjax.nn behaviours beyond the op records: one_hot, masks, special values."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import errors


def test_one_hot_matches_jax() -> None:
    out = jax.nn.one_hot(jnp.array([0, 1, 2]), 3)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.eye(3))
    np.testing.assert_array_equal(jax.nn.one_hot(jnp.array([-1, 3]), 3), np.zeros((2, 3)))
    np.testing.assert_array_equal(jax.nn.one_hot(jnp.array([1]), 3, axis=0), [[0], [1], [0]])
    assert jax.nn.one_hot(jnp.array([1]), 2, dtype=jnp.int32).dtype == np.int32


def test_one_hot_needs_static_num_classes() -> None:
    with pytest.raises(errors.ConcretizationTypeError, match="num_classes"):
        jax.make_jaxpr(lambda n: jax.nn.one_hot(jnp.array([0]), n))(3)


def test_softmax_with_where_and_infinities() -> None:
    x = jnp.array([1.0, 2.0, 3.0, 4.0])
    mask = jnp.array([True, True, False, True])
    out = np.asarray(jax.nn.softmax(x, where=mask))
    e = np.exp(np.array([1.0, 2.0, 4.0]) - 4.0)
    np.testing.assert_allclose(out, [e[0] / e.sum(), e[1] / e.sum(), 0.0, e[2] / e.sum()],
                               rtol=1e-6)
    logs = np.asarray(jax.nn.log_softmax(x, where=mask))
    assert logs[2] == -np.inf
    assert np.isnan(np.asarray(jax.nn.softmax(jnp.array([1.0, np.inf])))).any()


def test_logsumexp_of_all_minus_inf_and_return_sign() -> None:
    assert float(jax.scipy.special.logsumexp(jnp.array([-np.inf, -np.inf]))) == -np.inf
    value, sign = jax.scipy.special.logsumexp(jnp.array([1.0, 2.0]), b=jnp.array([1.0, -2.0]),
                                              return_sign=True)
    expected = np.log(abs(np.exp(1.0) - 2 * np.exp(2.0)))
    np.testing.assert_allclose(float(value), expected, rtol=1e-6)
    assert float(sign) == -1.0
    assert np.isnan(float(jax.scipy.special.logsumexp(jnp.array([1.0, 2.0]),
                                                      b=jnp.array([1.0, -2.0]))))


def test_activations_keep_integer_inputs_as_jax_does() -> None:
    assert jax.nn.relu(jnp.array([-1, 2])).dtype == np.int32
    with pytest.raises(TypeError, match="logistic does not accept dtype int32"):
        jax.nn.sigmoid(jnp.array([0, 1]))
    assert jax.nn.gelu(jnp.array([1, 2])).dtype == np.float32


# The public names of JAX 0.10.2's jax.nn (`dir(jax.nn)` without underscores).
JAX_NN_NAMES = [
    "celu", "dot_product_attention", "elu", "gelu", "get_scaled_dot_general_config", "glu",
    "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity", "initializers",
    "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish",
    "one_hot", "relu", "relu6", "scaled_dot_general", "scaled_matmul", "selu", "sigmoid", "silu",
    "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
    "standardize", "swish", "tanh",
]


def test_every_jax_nn_name_exists() -> None:
    assert sorted(n for n in dir(jax.nn) if not n.startswith("_")) == JAX_NN_NAMES
    assert jax.nn.tanh is jnp.tanh
    assert jax.nn.initializers.lecun_normal()(jax.random.key(0), (2, 2)).shape == (2, 2)


def test_log1mexp_values_and_derivative_match_jax() -> None:
    x = jnp.array([0.0, 1e-4, 0.3, 0.6931472, 1.0, 5.0, 30.0])
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(
        np.asarray(jax.nn.log1mexp(x)),
        [-np.inf, -9.2103901, -1.3502257, -0.69314718, -0.45867515, -0.0067607495,
         -9.3576229e-14], rtol=2e-6)
    # The custom derivative 1 / expm1(x), the same on both sides of the split at log 2.
    np.testing.assert_allclose(
        np.asarray(jax.vmap(jax.grad(jax.nn.log1mexp))(x)),
        [np.inf, 9999.5, 2.8582962, 1.0, 0.58197671, 0.0067836549, 9.3576236e-14], rtol=2e-6)


def test_sparse_sigmoid_is_the_derivative_of_sparse_plus() -> None:
    x = jnp.array([-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 1.5])
    np.testing.assert_allclose(np.asarray(jax.nn.sparse_sigmoid(x)),
                               [0.0, 0.0, 0.25, 0.5, 0.65, 1.0, 1.0], rtol=1e-6)
    inner = jnp.array([-2.0, -0.5, 0.0, 0.3, 1.5])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(jax.nn.sparse_plus))(inner)),
                               np.asarray(jax.nn.sparse_sigmoid(inner)), rtol=1e-6)
    # Recorded from JAX 0.10.2: the clip's derivative halves at the ends.
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(jax.nn.sparse_sigmoid))(x)),
                               [0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0])


def test_logmeanexp() -> None:
    m = jnp.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(float(jax.nn.logmeanexp(m)), 1.7110758, rtol=1e-6)
    out = jax.nn.logmeanexp(m, axis=1, keepdims=True)
    assert out.shape == (2, 1)
    np.testing.assert_allclose(np.asarray(out), [[1.2503998], [2.0252607]], rtol=1e-6)
    where = jnp.array([[True, False, True], [True, False, False]])
    # An empty selection is log(0 / 0): NaN, as in JAX.
    np.testing.assert_allclose(np.asarray(jax.nn.logmeanexp(m, axis=0, where=where)),
                               [0.7809298, np.nan, -1.0], rtol=1e-6)
    grads = jax.grad(lambda a: jax.nn.logmeanexp(a, axis=1).sum())(m)
    np.testing.assert_allclose(np.asarray(grads), np.asarray(jax.nn.softmax(m, axis=1)),
                               rtol=1e-6)


def test_silu_derivative_at_zero() -> None:
    assert float(jax.grad(jax.nn.silu)(0.0)) == 0.5


def test_one_hot_over_a_named_axis() -> None:
    out = jax.vmap(lambda i: jax.nn.one_hot(i, 3, axis="b"), axis_name="b")(
        jnp.array([2, 1, 1]))
    # Member j holds whether x[j] == j (recorded from JAX 0.10.2).
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="Expected num_classes to match the size of axis b, "
                                         "but 4 != 3"):
        jax.vmap(lambda i: jax.nn.one_hot(i, 4, axis="b"), axis_name="b")(jnp.array([2, 1, 1]))


def test_one_hot_warns_on_non_integer_indices() -> None:
    with pytest.warns(DeprecationWarning, match="jax.nn.one_hot input should be integer-typed; "
                                                "got dtype=float32"):
        out = jax.nn.one_hot(jnp.array([1.0, 0.0]), 2)
    np.testing.assert_array_equal(np.asarray(out), [[0, 1], [1, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.nn.one_hot(jnp.array([1], jnp.uint8), 2)


def test_scaled_matmul_is_the_block_scaled_product() -> None:
    a = jnp.arange(8.0).reshape(1, 2, 4)
    b = jnp.arange(12.0).reshape(1, 3, 4)
    a_scales = jnp.array([[[1.0, 2.0], [0.5, 4.0]]])
    b_scales = jnp.array([[[2.0, 1.0], [1.0, 1.0], [3.0, 0.25]]])
    expected = np.einsum("bmk,bnk->bmn", np.asarray(a) * np.repeat(a_scales, 2, axis=-1),
                         np.asarray(b) * np.repeat(b_scales, 2, axis=-1))
    out = jax.nn.scaled_matmul(a, b, a_scales, b_scales)
    assert out.dtype == np.float32 and out.shape == (1, 2, 3)
    np.testing.assert_allclose(np.asarray(out), expected)
    assert jax.nn.scaled_matmul(a, b, a_scales, b_scales, jnp.bfloat16).dtype == jnp.bfloat16
    # JAX's docstring example.
    one = jnp.array([0.5]).reshape(1, 1, 1)
    np.testing.assert_array_equal(
        np.asarray(jax.nn.scaled_matmul(jnp.array([1.0, 2, 3]).reshape(1, 1, 3),
                                        jnp.array([4.0, 5, 6]).reshape(1, 1, 3), one, one)),
        [[[8.0]]])


SCALED_MATMUL_ERRORS = [
    ((jnp.ones((2, 4)), jnp.ones((1, 2, 4)), jnp.ones((1, 2, 2)), jnp.ones((1, 2, 2))),
     "scaled_matmul requires all inputs to be 3-dimensional arrays"),
    ((jnp.ones((1, 2, 4)), jnp.ones((1, 2, 3)), jnp.ones((1, 2, 2)), jnp.ones((1, 2, 2))),
     "scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) "
     "dimensions, but got shapes (1, 2, 4) and (1, 2, 3)"),
    ((jnp.ones((1, 2, 4)), jnp.ones((1, 2, 4)), jnp.ones((1, 2, 2)), jnp.ones((1, 2, 1))),
     "scaled_matmul requires scales to have matching batch (B) and contract (K) dimensions, "
     "but got shapes (1, 2, 2) and (1, 2, 1)"),
    ((jnp.ones((1, 2, 4)), jnp.ones((1, 2, 4)), jnp.ones((1, 3, 2)), jnp.ones((1, 2, 2))),
     "scaled_matmul requires scales to match non-contract dimensions of inputs, but got shapes "
     "a: (1, 2, 4), b: (1, 2, 4), a_scales: (1, 3, 2), b_scales: (1, 2, 2)"),
]


@pytest.mark.parametrize("index", range(len(SCALED_MATMUL_ERRORS)))
def test_scaled_matmul_errors_are_jax_errors(index: int) -> None:
    args, message = SCALED_MATMUL_ERRORS[index]
    with pytest.raises(ValueError) as info:
        jax.nn.scaled_matmul(*args)
    assert str(info.value) == message


def test_scaled_dot_general_configs() -> None:
    # Reprs recorded from JAX 0.10.2.
    assert repr(jax.nn.get_scaled_dot_general_config("mxfp8")) == (
        "BlockScaleConfig(mode='mxfp8', block_size=32, data_type=<class "
        "'ml_dtypes.float8_e4m3fn'>, scale_type=<class 'ml_dtypes.float8_e8m0fnu'>, "
        "global_scale=None, infer_only=False)")
    nvfp4 = jax.nn.get_scaled_dot_general_config("nvfp4")
    assert (nvfp4.block_size, nvfp4.data_type, nvfp4.scale_type) == (
        16, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(np.asarray(nvfp4.global_scale), [1.0])
    with pytest.raises(ValueError, match="Unsupported mode: fp8"):
        jax.nn.get_scaled_dot_general_config("fp8")


def test_scaled_dot_general() -> None:
    lhs, rhs = jnp.ones((2, 3), jnp.bfloat16), jnp.ones((3, 4), jnp.bfloat16)
    dims = (((1,), (0,)), ((), ()))
    # Without configs: lax.dot_general with JAX's float32 default result.
    out = jax.nn.scaled_dot_general(lhs, rhs, dims)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 4), 3.0))
    assert jax.nn.scaled_dot_general(lhs, rhs, dims, jnp.bfloat16).dtype == jnp.bfloat16
    with pytest.warns(DeprecationWarning, match="Backend selector, now ignored"):
        jax.nn.scaled_dot_general(lhs, rhs, dims, implementation="cudnn")
    configs = [jax.nn.get_scaled_dot_general_config("mxfp8")] * 3
    with pytest.raises(TypeError, match="Only support preferred_element_type"):
        jax.nn.scaled_dot_general(lhs, rhs, dims, jnp.int32, configs=configs)
    # As JAX on CPU, which has no lowering for the quantized product.
    with pytest.raises(NotImplementedError, match="'scaled_matmul' not found for platform cpu"):
        jax.nn.scaled_dot_general(lhs, rhs, dims, configs=configs)


def test_softmax_custom_jvp_flag() -> None:
    x = jnp.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])
    where = jnp.array([[True, False, True], [True, True, True]])

    def loss(a):
        return (jax.nn.softmax(a, axis=0, where=where) ** 2).sum()

    default_value, default_grad = jax.nn.softmax(x), jax.grad(loss)(x)
    with jax.config.override("jax_softmax_custom_jvp", True):
        assert "custom_jvp_call" in str(jax.make_jaxpr(jax.nn.softmax)(x))
        np.testing.assert_allclose(np.asarray(jax.nn.softmax(x)), np.asarray(default_value),
                                   rtol=1e-6)
        grad = jax.grad(loss)(x)
    # Recorded from JAX 0.10.2 (either setting).
    expected = [[0.11511361, 0.0, -0.034054667], [-0.11511359, 0.0, 0.034054875]]
    np.testing.assert_allclose(np.asarray(grad), expected, atol=1e-6)
    np.testing.assert_allclose(np.asarray(default_grad), expected, atol=1e-6)
    assert "custom_jvp_call" not in str(jax.make_jaxpr(jax.nn.softmax)(x))
