"""justjax.nn.initializers: JAX's values for the same key, shapes, dtypes, fans, errors,
and the distributions' statistics."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.nn import initializers as init
from tests.harness import x64_mode

KEY = jax.random.key(42)

# Recorded from JAX 0.10.2 (`/work/jaxvenv`), `jax.random.key(42)`, float32, rounded to 7
# decimals: `eval("init." + builder)(key, shape)`.
RECORDED = [
    ("uniform(10.0)", (2, 3),
     [[4.8870955, 6.7979717, 6.162715], [5.6101608, 4.5064459, 5.8586588]]),
    ("normal(5.0)", (2, 3),
     [[-0.1415231, 2.3356593, 1.4785148], [0.7677296, -0.6201641, 1.0846157]]),
    ("truncated_normal(5.0)", (2, 3),
     [[-0.1350825, 2.221904, 1.4093853], [0.7325402, -0.5918115, 1.0345374]]),
    ("truncated_normal(1.0, lower=-0.5, upper=1.0)", (4,),
     [0.1736393, 0.4419531, 0.3501621, 0.2726815]),
    ("glorot_uniform()", (2, 3),
     [[-0.0247361, 0.3939159, 0.2547381], [0.1336795, -0.1081322, 0.1881227]]),
    ("glorot_normal()", (2, 3),
     [[-0.019425, 0.3195122, 0.2026711], [0.1053401, -0.0851031, 0.1487676]]),
    ("lecun_uniform()", (2, 3),
     [[-0.0276558, 0.4404114, 0.2848058], [0.1494583, -0.1208955, 0.2103275]]),
    ("lecun_normal()", (2, 3),
     [[-0.0217178, 0.3572254, 0.2265932], [0.1177738, -0.0951482, 0.1663272]]),
    ("he_uniform()", (2, 3),
     [[-0.0391112, 0.6228356, 0.4027763], [0.2113659, -0.1709721, 0.297448]]),
    ("he_normal()", (2, 3),
     [[-0.0307136, 0.5051931, 0.3204512], [0.1665573, -0.1345599, 0.2352222]]),
    ("variance_scaling(2.0, 'fan_geo_avg', 'normal', in_axis=0, out_axis=(1, 2), batch_axis=3)",
     (2, 3, 1, 2),
     [[[[-0.0255761, 0.4221013]], [[0.2671978, 0.1387444]], [[-0.1120763, 0.1960122]]],
      [[[-1.3019811, 0.6829965]], [[0.4711468, 0.8224318]], [[-0.3474319, 1.0299467]]]]),
    ("variance_scaling(0.5, 'fan_out', 'normal')", (3, 2),
     [[-0.0141523, 0.2335659], [0.1478515, 0.076773], [-0.0620164, 0.1084616]]),
    ("orthogonal()", (2, 3),
     [[-0.0879273, 0.9185913, -0.3853038], [0.8722634, 0.257802, 0.4155657]]),
    ("orthogonal(2.0, column_axis=0)", (3, 2, 1),
     [[[-0.1758547], [1.7445267]], [[1.8371826], [0.5156041]], [[-0.7706075], [0.8311314]]]),
    ("orthogonal()", (3, 2),
     [[-0.0879273, 0.8722634], [0.9185913, 0.257802], [-0.3853038, 0.4155657]]),
]


@pytest.mark.parametrize("builder,shape,expected", RECORDED, ids=[r[0] for r in RECORDED])
def test_values_match_jax(builder: str, shape: tuple[int, ...], expected: list) -> None:
    out = eval("init." + builder)(KEY, shape)
    assert out.dtype == np.float32
    assert out.shape == shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=2e-6)


# Recorded from JAX 0.10.2: variance_scaling(1.0, "fan_in", distribution)(key(42), (2, 2),
# complex64), flattened.
COMPLEX_RECORDED = {
    "uniform": [-0.101859 - 0.721031j, 0.131937 - 0.544017j, 0.395104 + 0.863379j,
                -0.066247 + 0.833033j],
    "truncated_normal": [-0.088976 - 0.629836j, 0.106019 - 0.437152j, 0.454035 + 0.992153j,
                         -0.06326 + 0.795466j],
    "normal": [0.037963 + 0.302882j, -0.243171 + 0.399522j, 0.64516 - 0.454464j,
               0.259806 - 0.317629j],
}


@pytest.mark.parametrize("distribution", sorted(COMPLEX_RECORDED))
def test_complex_variance_scaling_matches_jax(distribution: str) -> None:
    out = init.variance_scaling(1.0, "fan_in", distribution)(KEY, (2, 2), jnp.complex64)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(out).ravel(), COMPLEX_RECORDED[distribution],
                               atol=2e-6)


def test_delta_orthogonal_matches_jax() -> None:
    out = np.asarray(init.delta_orthogonal()(KEY, (3, 3, 3)))
    # Recorded from JAX 0.10.2: the centre slice; the others are zero.
    centre = [[-0.0195297, 0.9952678, 0.0951896], [0.1059439, -0.0926115, 0.9900501],
              [-0.9941804, -0.0294198, 0.1036339]]
    np.testing.assert_allclose(out[1], centre, atol=2e-6)
    np.testing.assert_array_equal(out[0], 0)
    np.testing.assert_array_equal(out[2], 0)
    out4 = np.asarray(init.delta_orthogonal()(KEY, (2, 3, 2, 2)))
    np.testing.assert_allclose(out4[0, 1], [[-0.0952842, 0.9954501], [0.9954501, 0.0952843]],
                               atol=2e-6)
    assert np.count_nonzero(out4) == 4


def test_half_precision_values_match_jax() -> None:
    # Recorded from JAX 0.10.2.
    bf16 = init.lecun_normal(dtype=jnp.bfloat16)(KEY, (2, 3))
    assert bf16.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(np.asarray(bf16, np.float32),
                                  [[0.255859375, 0.76171875, 1.2890625],
                                   [0.73828125, -1.0390625, 0.76171875]])
    f16 = init.glorot_uniform()(KEY, (2, 3), jnp.float16)
    assert f16.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(f16, np.float32),
                                  [[-0.927734375, -0.677734375, 1.041015625],
                                   [0.5625, -0.1112060546875, -0.421142578125]])


def test_x64_default_dtype_and_values() -> None:
    with x64_mode(True):
        out = init.he_normal()(KEY, (2, 3))
        assert out.dtype == np.float64
        # Recorded from JAX 0.10.2 under jax.enable_x64(True).
        np.testing.assert_allclose(np.asarray(out),
                                   [[-0.20033253597379388, -2.030021558632832,
                                     0.20274189246826677],
                                    [0.6604485423606329, 0.5293360729996152,
                                     0.39958717082402606]], rtol=1e-12)


def test_constant_initializers() -> None:
    zeros = init.zeros(KEY, (2, 3))
    assert zeros.dtype == np.float32 and zeros.shape == (2, 3)
    np.testing.assert_array_equal(zeros, 0)
    ones = init.ones(KEY, (3, 2), jnp.int32)
    assert ones.dtype == np.int32
    np.testing.assert_array_equal(ones, 1)
    seven = init.constant(-7)(KEY, (2, 3))
    assert seven.dtype == np.float32
    np.testing.assert_array_equal(seven, -7)
    half = init.constant(1.5, jnp.float16)(KEY, (2,))
    assert half.dtype == np.float16
    assert init.constant(2, jnp.float16)(KEY, (2,), jnp.float32).dtype == np.float32


def test_builders_keep_their_default_dtype_and_accept_an_override() -> None:
    builder = init.normal(1.0, dtype=jnp.bfloat16)
    assert builder(KEY, (2,)).dtype == ml_dtypes.bfloat16
    assert builder(KEY, (2,), jnp.float32).dtype == np.float32
    unitary = init.orthogonal(dtype=jnp.complex64)(KEY, (2, 2))
    assert unitary.dtype == np.complex64
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(np.asarray(unitary),
                               [[0.044866 + 0.357959j, -0.71718 + 0.596243j],
                                [0.762478 - 0.537104j, -0.333913 - 0.136562j]], atol=2e-6)


def test_aliases_names_and_protocol() -> None:
    assert init.xavier_uniform is init.glorot_uniform
    assert init.xavier_normal is init.glorot_normal
    assert init.kaiming_uniform is init.he_uniform
    assert init.kaiming_normal is init.he_normal
    assert init.lecun_normal.__name__ == "lecun_normal"
    assert isinstance(init.lecun_normal(), init.Initializer)
    assert isinstance(init.zeros, init.Initializer)
    assert not isinstance(3, init.Initializer)
    assert jax.nn.initializers is init


def test_fans_follow_the_axes() -> None:
    # A 3x3 convolution from 2 to 4 channels: fan_in = 2 * 9, fan_out = 4 * 9.
    samples = np.asarray(init.variance_scaling(1.0, "fan_in", "uniform")(KEY, (3, 3, 2, 4)))
    bound = np.sqrt(3.0 / 18)
    assert np.abs(samples).max() <= bound
    assert np.abs(samples).max() > 0.8 * bound
    fan_out = init.variance_scaling(1.0, "fan_out", "uniform")(KEY, (3, 3, 2, 4))
    np.testing.assert_allclose(np.asarray(fan_out), samples * np.sqrt(18 / 36), rtol=1e-6)
    # Batch axes are left out of both fans; in/out axes may be tuples.
    a = init.variance_scaling(1.0, "fan_avg", "uniform", in_axis=(0, 1), out_axis=-1,
                              batch_axis=(2,))(KEY, (2, 2, 3, 4))
    b = init.variance_scaling(1.0, "fan_avg", "uniform", in_axis=0, out_axis=1)(KEY, (4, 4, 3, 4))
    assert a.shape == (2, 2, 3, 4)
    assert np.abs(np.asarray(a)).max() <= np.sqrt(3.0 / 4) + 1e-6
    assert np.abs(np.asarray(b)).max() <= np.sqrt(3.0 / 48) + 1e-6


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
@pytest.mark.parametrize("mode,fan", [("fan_in", 50), ("fan_out", 200), ("fan_avg", 125),
                                      ("fan_geo_avg", 100)])
def test_variance_is_scale_over_fan(distribution: str, mode: str, fan: int) -> None:
    samples = np.asarray(init.variance_scaling(2.0, mode, distribution)(KEY, (50, 200)))
    assert abs(samples.mean()) < 0.01
    np.testing.assert_allclose(samples.var(), 2.0 / fan, rtol=0.05)


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_complex_variance(distribution: str) -> None:
    samples = np.asarray(init.variance_scaling(1.0, "fan_in", distribution)(
        KEY, (100, 100), jnp.complex64))
    np.testing.assert_allclose(np.mean(np.abs(samples) ** 2), 1 / 100, rtol=0.05)
    if distribution != "normal":
        # The disk and the truncated modulus both bound |z|.
        assert np.abs(samples).max() <= 0.3


def test_truncated_normal_bounds() -> None:
    samples = np.asarray(init.truncated_normal(3.0, lower=-1.0, upper=0.5)(KEY, (10000,)))
    assert samples.min() > -3.0 and samples.max() < 1.5
    glorot = np.asarray(init.glorot_normal()(KEY, (40, 60)))
    assert np.abs(glorot).max() < 2 * np.sqrt(2 / 100) / .87962566103423978


@pytest.mark.parametrize("shape,column_axis", [((4, 4), -1), ((3, 5), -1), ((6, 2), -1),
                                               ((2, 3, 4), 0), ((2, 3, 4), 1)])
def test_orthogonal_is_orthogonal(shape: tuple[int, ...], column_axis: int) -> None:
    q = np.asarray(init.orthogonal(scale=1.5, column_axis=column_axis)(KEY, shape),
                   np.float64)
    assert q.shape == shape
    columns = np.moveaxis(q, column_axis, -1).reshape(-1, shape[column_axis]) / 1.5
    gram = columns.T @ columns if columns.shape[0] >= columns.shape[1] else columns @ columns.T
    np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-5)


def test_orthogonal_of_an_empty_shape_is_zeros() -> None:
    out = init.orthogonal()(KEY, (0, 3))
    assert out.shape == (0, 3) and out.dtype == np.float32


def test_jit_and_vmap() -> None:
    builder = init.he_uniform()
    eager = builder(KEY, (3, 4))
    jitted = jax.jit(builder, static_argnums=1)(KEY, (3, 4))
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
    keys = jax.random.split(KEY, 3)
    batched = jax.vmap(lambda k: init.glorot_normal()(k, (2, 2)))(keys)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(batched[i]),
                                      np.asarray(init.glorot_normal()(keys[i], (2, 2))))
    legacy = init.normal(1.0)(jax.random.PRNGKey(0), (3,))
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(np.asarray(legacy), [1.6226422, 2.0252647, -0.43359444],
                               rtol=1e-6)


ERRORS = [
    (lambda: init.lecun_normal()(KEY, (3,)), ValueError,
     "Can't compute input and output sizes of a 1-dimensional weights tensor with default "
     "in_axis. Must be at least 2D or specify in_axis explicitly."),
    (lambda: init.variance_scaling(1.0, "fan", "normal")(KEY, (2, 2)), ValueError,
     "invalid mode for variance scaling initializer: fan"),
    (lambda: init.variance_scaling(1.0, "fan_in", "cauchy")(KEY, (2, 2)), ValueError,
     "invalid distribution for variance scaling initializer: cauchy"),
    (lambda: init.orthogonal()(KEY, (3,)), ValueError,
     "orthogonal initializer requires at least a 2D shape"),
    (lambda: init.delta_orthogonal()(KEY, (3, 3)), ValueError,
     "Delta orthogonal initializer requires a 3D, 4D or 5D shape."),
    (lambda: init.delta_orthogonal()(KEY, (3, 3, 2)), ValueError,
     "`fan_in` must be less or equal than `fan_out`. "),
    (lambda: init.normal()(KEY, (2,), jnp.int32), ValueError,
     "dtype argument to `normal` must be a float or complex dtype, got int32"),
    (lambda: init.uniform()(KEY, (2,), jnp.complex64), ValueError,
     "dtype argument to `uniform` must be a float dtype, got complex64"),
    (lambda: init.orthogonal()(KEY, (2, 2), out_sharding=object()), NotImplementedError, ""),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jax_errors(index: int) -> None:
    call, error, message = ERRORS[index]
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_builders_do_not_fail_early() -> None:
    # As JAX: a bad mode or distribution is only reported when the initializer runs.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.variance_scaling(1.0, "bad", "worse")


def test_zeros_reject_what_is_not_a_sharding_clearly() -> None:
    # JAX 0.10.2's message (its initializer calls jnp.zeros).
    with pytest.raises(TypeError, match="`out_sharding` argument of jnp.zeros only supports "
                                        "instances of `NamedSharding` or `PartitionSpec`"):
        init.zeros(KEY, (2,), out_sharding=object())
