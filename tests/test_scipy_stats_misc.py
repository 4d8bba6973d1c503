"""justjax.scipy.stats beyond the univariate table: poisson.entropy, the multivariate
distributions (dirichlet, multinomial, multivariate_normal), the sample statistics (mode,
rankdata, sem) and gaussian_kde, against SciPy and values and errors recorded from JAX."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy import stats
from justjax.test_util import check_grads
from tests.harness import x64_mode

# -- poisson.entropy ----------------------------------------------------------------------


def test_poisson_entropy_matches_scipy_in_each_regime() -> None:
    # Below 10 and below 100 the sum over the mass, from 100 on the asymptotic formula.
    mu = np.array([0.1, 1.0, 5.0, 9.99, 10.0, 50.0, 99.0, 100.0, 1000.0], np.float32)
    out = stats.poisson.entropy(jnp.asarray(mu))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), scipy.stats.poisson.entropy(mu), rtol=1e-5)
    with x64_mode(True):
        out = stats.poisson.entropy(jnp.asarray(mu.astype(np.float64)))
        # JAX's truncated sums and its asymptotic formula are good to about 2e-6.
        np.testing.assert_allclose(np.asarray(out), scipy.stats.poisson.entropy(mu), rtol=2e-6)


def test_poisson_entropy_edges_shapes_and_dtypes_as_in_jax() -> None:
    # Recorded from JAX 0.10.2: a negative mean is NaN, a zero mean 0.
    np.testing.assert_allclose(np.asarray(stats.poisson.entropy(jnp.array([-1.0, 0.0, 2.5]))),
                               [np.nan, 0.0, 1.830726], rtol=1e-6)
    assert stats.poisson.entropy(jnp.array([0.5, 20.0]), jnp.zeros((3, 1))).shape == (3, 2)
    assert stats.poisson.entropy(jnp.array([1, 50])).dtype == np.float32
    assert stats.poisson.entropy(3.0).shape == ()


def test_poisson_entropy_derivative() -> None:
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose([float(jax.grad(stats.poisson.entropy)(m)) for m in (3.0, 30.0)],
                               [0.18243074, 0.016762972], rtol=3e-5)
    with x64_mode(True):
        # Reverse mode only: forward mode carries a zero tangent into entr's derivative at
        # the masked-out terms' 0, log(0) * 0 = NaN, in JAX as here.
        check_grads(stats.poisson.entropy, [np.float64(3.0)], order=1, modes=("rev",),
                    rtol=1e-5)


# -- dirichlet ----------------------------------------------------------------------------

ALPHA = np.array([1.5, 2.0, 3.0], np.float32)
# Two points, by column (binary fractions, so that SciPy's strict simplex check holds).
SIMPLEX = np.array([[0.25, 0.5], [0.25, 0.125], [0.5, 0.375]], np.float32)


@pytest.mark.parametrize("name", ["logpdf", "pdf"])
def test_dirichlet_matches_scipy(name: str) -> None:
    fn = getattr(stats.dirichlet, name)
    want = getattr(scipy.stats.dirichlet, name)(SIMPLEX.astype(np.float64), ALPHA)
    np.testing.assert_allclose(np.asarray(fn(jnp.asarray(SIMPLEX), jnp.asarray(ALPHA))), want,
                               rtol=1e-5)
    # One component fewer: the last is 1 - sum.
    np.testing.assert_allclose(np.asarray(fn(jnp.asarray(SIMPLEX[:2]), jnp.asarray(ALPHA))),
                               want, rtol=1e-5)


def test_dirichlet_off_the_simplex_and_errors() -> None:
    off = jnp.array([[0.0, 0.2, 0.3], [0.4, 0.2, 0.3], [0.6, 0.5, 0.3]])
    np.testing.assert_array_equal(np.asarray(stats.dirichlet.logpdf(off, jnp.asarray(ALPHA))),
                                  [-np.inf, -np.inf, -np.inf])
    with pytest.raises(ValueError, match=r"^`alpha` must be one-dimensional; got "
                                         r"alpha.shape=\(3, 3\)$"):
        stats.dirichlet.logpdf(jnp.ones((2, 2)), jnp.ones((3, 3)))
    with pytest.raises(ValueError, match=r"^`x` must have either the same number of entries as "
                                         r"`alpha` or one entry fewer; got x.shape=\(5,\), "
                                         r"alpha.shape=\(3,\)$"):
        stats.dirichlet.logpdf(jnp.ones(5), jnp.ones(3))


def test_dirichlet_dtype_jit_and_derivatives() -> None:
    # Recorded from JAX 0.10.2: integer concentrations give float32, not weakly typed.
    out = stats.dirichlet.logpdf(jnp.array([0.2, 0.3, 0.5]), jnp.array([1, 2, 3]))
    assert out.dtype == np.float32 and not out.weak_type
    x, alpha = jnp.asarray(SIMPLEX), jnp.asarray(ALPHA)
    np.testing.assert_allclose(np.asarray(jax.jit(stats.dirichlet.logpdf)(x, alpha)),
                               np.asarray(stats.dirichlet.logpdf(x, alpha)), rtol=1e-6)
    with x64_mode(True):
        check_grads(lambda a: stats.dirichlet.logpdf(SIMPLEX[:2].astype(np.float64), a),
                    [ALPHA.astype(np.float64)], order=1, rtol=1e-5)


# -- multinomial --------------------------------------------------------------------------

P3 = np.array([0.2, 0.3, 0.5], np.float32)


@pytest.mark.parametrize("counts,n", [([1, 2, 3], 6), ([0, 2, 3], 5), ([0, 0, 4], 4)])
def test_multinomial_matches_scipy(counts: list[int], n: int) -> None:
    x = jnp.array(counts)
    np.testing.assert_allclose(np.asarray(stats.multinomial.logpmf(x, n, jnp.asarray(P3))),
                               scipy.stats.multinomial.logpmf(counts, n, P3), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.multinomial.pmf(x, n, jnp.asarray(P3))),
                               scipy.stats.multinomial.pmf(counts, n, P3), rtol=1e-5)


def test_multinomial_edges_as_in_jax() -> None:
    p = jnp.asarray(P3)
    assert float(stats.multinomial.logpmf(jnp.array([1, 2, 3]), 7, p)) == -np.inf
    # Recorded from JAX 0.10.2: the counts' total runs over every axis, so a batch of count
    # vectors each adding up to n is -inf.
    np.testing.assert_array_equal(
        np.asarray(stats.multinomial.logpmf(jnp.array([[1, 2, 3], [2, 2, 2]]), 6, p)),
        [-np.inf, -np.inf])
    with pytest.raises(ValueError, match=r"^x and n must be of integer type; got "
                                         r"x.dtype=float32, n.dtype=float32$"):
        stats.multinomial.logpmf(jnp.array([1.0, 2.0]), 3, jnp.array([0.5, 0.5]))
    assert stats.multinomial.logpmf(jnp.array([1, 2, 3]), 6, p).dtype == np.float32


def test_multinomial_derivative_in_p() -> None:
    with x64_mode(True):
        check_grads(lambda p: stats.multinomial.logpmf(jnp.array([1, 2, 3]), 6, p),
                    [P3.astype(np.float64)], order=2, rtol=1e-5)


# -- multivariate_normal ------------------------------------------------------------------

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]], np.float32)
MEAN = np.array([0.0, 0.5, -0.5], np.float32)
XS = np.array([[0.1, -0.5, 1.0], [2.0, 0.0, -1.0]], np.float32)


@pytest.mark.parametrize("name", ["logpdf", "pdf"])
def test_multivariate_normal_matches_scipy(name: str) -> None:
    fn = getattr(stats.multivariate_normal, name)
    ref = getattr(scipy.stats.multivariate_normal, name)
    x, mean = jnp.asarray(XS), jnp.asarray(MEAN)
    np.testing.assert_allclose(np.asarray(fn(x, mean, jnp.asarray(COV))), ref(XS, MEAN, COV),
                               rtol=1e-5)
    # A scalar covariance is that times the identity; a scalar mean one dimension.
    np.testing.assert_allclose(np.asarray(fn(x, mean, np.float32(2.0))),
                               ref(XS, MEAN, 2.0 * np.eye(3)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(fn(jnp.array([0.3, -1.0]), 0.5, 2.0)),
                               ref([0.3, -1.0], 0.5, 2.0), rtol=1e-5)
    # A batch of covariances.
    covs = jnp.stack([jnp.asarray(COV), 2 * jnp.asarray(COV)])
    want = [ref(XS[i], np.zeros(3), COV * (i + 1)) for i in range(2)]
    np.testing.assert_allclose(np.asarray(fn(x, jnp.zeros((2, 3)), covs)), want, rtol=1e-5)


def test_multivariate_normal_errors_as_in_jax() -> None:
    with pytest.raises(ValueError, match="^multivariate_normal.logpdf got incompatible shapes$"):
        stats.multivariate_normal.logpdf(jnp.ones(3), jnp.zeros(3), jnp.eye(2))
    with pytest.raises(NotImplementedError,
                       match="^allow_singular argument of multivariate_normal.logpdf$"):
        stats.multivariate_normal.logpdf(jnp.ones(3), jnp.zeros(3), jnp.eye(3),
                                         allow_singular=True)


def test_multivariate_normal_jit_vmap_and_derivatives() -> None:
    x, mean, cov = jnp.asarray(XS), jnp.asarray(MEAN), jnp.asarray(COV)
    fn = stats.multivariate_normal.logpdf
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x, mean, cov)),
                               np.asarray(fn(x, mean, cov)), rtol=1e-6)
    batched = jax.vmap(fn, in_axes=(0, None, None))(x, mean, cov)
    np.testing.assert_allclose(np.asarray(batched),
                               [float(fn(x[i], mean, cov)) for i in range(2)], rtol=1e-6)
    with x64_mode(True):
        check_grads(lambda x, m: fn(x, m, COV.astype(np.float64)),
                    [XS[0].astype(np.float64), MEAN.astype(np.float64)], order=2, rtol=1e-5)


# -- mode, rankdata, sem ------------------------------------------------------------------

INTS = np.array([[1, 2, 2, 5], [3, 3, 1, 1], [0, 0, 0, 7]], np.int32)
FLOATS = np.array([[1.5, 2.0, 2.0], [2.0, 2.0, -1.0], [0.5, 3.0, 3.0]], np.float32)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mode_matches_scipy(axis: int | None, keepdims: bool) -> None:
    for data in (INTS, FLOATS):
        got = stats.mode(jnp.asarray(data), axis=axis, keepdims=keepdims)
        want = scipy.stats.mode(data, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(np.asarray(got.mode), want.mode)
        np.testing.assert_array_equal(np.asarray(got.count), want.count)
        assert got.mode.dtype == data.dtype and got.count.dtype == np.int32


def test_mode_edges_and_errors_as_in_jax() -> None:
    # Recorded from JAX 0.10.2: a scalar is a one-element sample (its weak type kept); an
    # empty axis gives NaN and a float 0 count.
    result = stats.mode(3.0)
    assert float(result.mode) == 3.0 and result.mode.weak_type and int(result.count) == 1
    empty = stats.mode(jnp.zeros((0, 2)), axis=0)
    assert np.isnan(np.asarray(empty.mode)).all() and empty.count.dtype == np.float32
    assert isinstance(stats.mode(jnp.asarray(INTS)), tuple)
    np.testing.assert_array_equal(np.asarray(jax.jit(stats.mode)(jnp.asarray(INTS)).mode),
                                  [0, 0, 0, 1])
    errors = [("omit", NotImplementedError, "Logic for `nan_policy` of omit is not implemented"),
              ("raise", NotImplementedError, "In order to best JIT compile `mode`, we cannot "
                                             "know whether `x` contains nans."),
              ("x", ValueError, "Illegal nan_policy value 'x'; expected one of")]
    for policy, error, message in errors:
        with pytest.raises(error) as info:
            stats.mode(jnp.asarray(INTS), nan_policy=policy)
        assert str(info.value).startswith(message)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method: str) -> None:
    for data in (INTS, FLOATS):
        np.testing.assert_array_equal(np.asarray(stats.rankdata(jnp.asarray(data), method)),
                                      scipy.stats.rankdata(data, method))
        for axis in (0, 1):
            got = stats.rankdata(jnp.asarray(data), method, axis=axis)
            assert got.dtype == np.float32
            np.testing.assert_array_equal(np.asarray(got),
                                          scipy.stats.rankdata(data, method, axis=axis))


def test_rankdata_nan_scalar_and_errors_as_in_jax() -> None:
    # Recorded from JAX 0.10.2: a NaN makes its slice all NaN; a scalar ranks as [1.].
    with_nan = jnp.array([[1.0, np.nan], [2.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(stats.rankdata(with_nan)), [np.nan] * 4)
    np.testing.assert_array_equal(np.asarray(stats.rankdata(with_nan, axis=1)),
                                  [[np.nan, np.nan], [2.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(stats.rankdata(2.0)), [1.0])
    np.testing.assert_array_equal(np.asarray(stats.rankdata(jnp.array([True, False, True]))),
                                  [2.5, 1.0, 2.5])
    np.testing.assert_array_equal(np.asarray(jax.vmap(stats.rankdata)(jnp.asarray(FLOATS))),
                                  scipy.stats.rankdata(FLOATS, axis=1))
    with pytest.raises(ValueError, match="^unknown method 'foo'$"):
        stats.rankdata(jnp.asarray(INTS), "foo")
    with pytest.raises(NotImplementedError, match="^Logic for `nan_policy` of omit"):
        stats.rankdata(jnp.asarray(INTS), nan_policy="omit")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # SciPy's, with no degrees of freedom
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_sem_matches_scipy(axis: int | None, ddof: int) -> None:
    data = FLOATS.copy()
    np.testing.assert_allclose(np.asarray(stats.sem(jnp.asarray(data), axis=axis, ddof=ddof)),
                               scipy.stats.sem(data, axis=axis, ddof=ddof), rtol=1e-5)
    data[0, 1] = np.nan
    want = scipy.stats.sem(data, axis=axis, ddof=ddof, nan_policy="omit")
    # Recorded from JAX 0.10.2: no degrees of freedom left is NaN (SciPy: inf).
    want = np.where(np.isinf(want), np.nan, want)
    np.testing.assert_allclose(
        np.asarray(stats.sem(jnp.asarray(data), axis=axis, ddof=ddof, nan_policy="omit")),
        want, rtol=1e-5)


def test_sem_dtypes_keepdims_errors_and_derivative() -> None:
    out = stats.sem(jnp.asarray(INTS), keepdims=True)
    assert out.dtype == np.float32 and out.shape == (1, 4)
    with pytest.raises(ValueError, match="^raise is not supported$"):
        stats.sem(jnp.asarray(FLOATS), nan_policy="raise")
    # Recorded from JAX 0.10.2.
    grad = jax.grad(lambda x: stats.sem(x, axis=None))(jnp.array([1.0, 2.0, 4.0, 0.5]))
    np.testing.assert_allclose(np.asarray(grad), [-0.09421683, 0.01345955, 0.2288123,
                                                  -0.14805502], rtol=1e-5)
    with x64_mode(True):
        check_grads(lambda x: stats.sem(x, axis=None), [np.array([1.0, 2.0, 4.0, 0.5])],
                    order=2, rtol=1e-5)


# -- gaussian_kde -------------------------------------------------------------------------

DATA1 = np.array([0.1, 0.5, 1.2, 2.0, 2.2, 3.5, -1.0], np.float32)
DATA2 = np.array([[0.1, 0.5, 1.2, 2.0, 2.2, 3.5], [1.0, -0.3, 0.2, 0.8, 1.5, 0.0]], np.float32)
WEIGHTS = np.array([1.0, 2.0, 1.0, 0.5, 1.0, 3.0], np.float32)
POINTS1 = np.array([-2.0, 0.0, 1.0, 2.5, 10.0], np.float32)
POINTS2 = np.array([[0.0, 1.0, 3.0], [0.5, 0.0, -1.0]], np.float32)


@pytest.mark.parametrize("bw_method", [None, "scott", "silverman", 0.3])
def test_kde_one_dimension_matches_scipy(bw_method: str | float | None) -> None:
    ours = stats.gaussian_kde(jnp.asarray(DATA1), bw_method=bw_method)
    theirs = scipy.stats.gaussian_kde(DATA1, bw_method=bw_method)
    np.testing.assert_allclose(np.asarray(ours.evaluate(jnp.asarray(POINTS1))),
                               theirs.evaluate(POINTS1), rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(np.asarray(ours.logpdf(jnp.asarray(POINTS1))),
                               theirs.logpdf(POINTS1), rtol=1e-5)
    np.testing.assert_allclose(float(ours.integrate_box_1d(-0.5, 1.5)),
                               theirs.integrate_box_1d(-0.5, 1.5), rtol=1e-5)
    np.testing.assert_allclose(float(ours.integrate_gaussian(0.5, 2.0)),
                               theirs.integrate_gaussian(0.5, 2.0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ours.covariance), theirs.covariance, rtol=1e-5)


def test_kde_weighted_two_dimensions_matches_scipy() -> None:
    ours = stats.gaussian_kde(jnp.asarray(DATA2), weights=jnp.asarray(WEIGHTS))
    theirs = scipy.stats.gaussian_kde(DATA2, weights=WEIGHTS)
    np.testing.assert_allclose(np.asarray(ours(jnp.asarray(POINTS2))), theirs(POINTS2),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ours.pdf(jnp.array([0.5, 0.2]))),
                               theirs.pdf([0.5, 0.2]), rtol=1e-5)
    # Far out the density underflows; the log density is summed in log space.
    far = np.array([[30.0], [30.0]], np.float32)
    np.testing.assert_allclose(np.asarray(ours.logpdf(jnp.asarray(far))), theirs.logpdf(far),
                               rtol=1e-5)
    for name in ("covariance", "inv_cov", "neff", "weights"):
        np.testing.assert_allclose(np.asarray(getattr(ours, name)), getattr(theirs, name),
                                   rtol=1e-5)
    other = scipy.stats.gaussian_kde(DATA2)
    np.testing.assert_allclose(
        float(ours.integrate_kde(stats.gaussian_kde(jnp.asarray(DATA2)))),
        theirs.integrate_kde(other), rtol=1e-5)
    np.testing.assert_allclose(
        float(ours.integrate_gaussian(jnp.array([0.5, 0.5]), jnp.eye(2))),
        theirs.integrate_gaussian(np.array([0.5, 0.5]), np.eye(2)), rtol=1e-5)
    assert (ours.d, ours.n) == (2, 6)


def test_kde_bandwidth_callable_pytree_jit_and_derivative() -> None:
    ours = stats.gaussian_kde(jnp.asarray(DATA1), bw_method=lambda k: 0.5 * k.neff ** -0.2)
    theirs = scipy.stats.gaussian_kde(DATA1, bw_method=lambda k: 0.5 * k.neff ** -0.2)
    np.testing.assert_allclose(np.asarray(ours.covariance), theirs.covariance, rtol=1e-5)
    kde = stats.gaussian_kde(jnp.asarray(DATA2), weights=jnp.asarray(WEIGHTS))
    leaves, tree = jax.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_array_equal(np.asarray(rebuilt.evaluate(jnp.asarray(POINTS2))),
                                  np.asarray(kde.evaluate(jnp.asarray(POINTS2))))
    jitted = jax.jit(lambda k, x: k.evaluate(x))(kde, jnp.asarray(POINTS2))
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(kde.evaluate(POINTS2)), rtol=1e-6)
    # Recorded from JAX 0.10.2: the derivative of a log density in the data.
    grad = jax.grad(lambda x: stats.gaussian_kde(x).logpdf(1.0)[0])(jnp.asarray(DATA1))
    np.testing.assert_allclose(np.asarray(grad), [0.17306, 0.12441, -0.04922, -0.16925,
                                                  -0.16805, -0.07105, 0.11183], atol=1e-4)


def test_kde_resample_draws_jax_bits() -> None:
    kde = stats.gaussian_kde(jnp.asarray(DATA2), weights=jnp.asarray(WEIGHTS))
    draws = kde.resample(jax.random.PRNGKey(0), (4,))
    # Recorded from JAX 0.10.2 (the PRNG's bits are JAX's).
    np.testing.assert_allclose(np.asarray(draws),
                               [[-2.4142001, 3.74524, 2.5908501, 2.1300099],
                                [-1.27036, -0.1961, -0.59033, 0.20753]], atol=1e-4)
    one_d = stats.gaussian_kde(jnp.asarray(DATA2[0])).resample(jax.random.PRNGKey(3), (5,))
    np.testing.assert_allclose(np.asarray(one_d),
                               [[1.80952, 3.59118, 2.1586, 2.4662, 0.93463]], atol=1e-4)
    assert stats.gaussian_kde(jnp.asarray(DATA1)).resample(jax.random.PRNGKey(1)).shape == (1,)


KDE_ERRORS = [
    (lambda: stats.gaussian_kde(jnp.array([1.0])), ValueError,
     "`dataset` input should have multiple elements."),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA1), bw_method="foo"), ValueError,
     "`bw_method` should be 'scott', 'silverman', a scalar, or a callable."),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA2), weights=jnp.ones(3)), ValueError,
     "`weights` input should be of length n"),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA2)).evaluate(jnp.ones((3, 2))), ValueError,
     "points have dimension 3, dataset has dimension 2"),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA2)).integrate_box_1d(0.0, 1.0), ValueError,
     "integrate_box_1d() only handles 1D pdfs"),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA2)).integrate_box(0.0, 1.0),
     NotImplementedError, "only 1D box integrations are supported; use `integrate_box_1d`"),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA2)).set_bandwidth(0.1), NotImplementedError,
     "dynamically changing the bandwidth method is not supported"),
    (lambda: stats.gaussian_kde(jnp.asarray(DATA1, jnp.complex64)), NotImplementedError,
     "gaussian_kde does not support complex data"),
]


@pytest.mark.parametrize("index", range(len(KDE_ERRORS)))
def test_kde_errors_as_in_jax(index: int) -> None:
    call, error, message = KDE_ERRORS[index]
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message
