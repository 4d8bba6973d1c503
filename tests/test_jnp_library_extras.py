"""jax.numpy's index tricks, set operations, histograms and statistics, windows, polynomials,
bit packing, `put`/`place`, `unwrap` and the buffer constructors: against NumPy where the
semantics agree, and against values and errors recorded from JAX 0.10.2 where JAX differs
(static sizes, fill values, dtypes)."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp

RNG = np.random.RandomState(0)
DATA = RNG.randn(20).astype(np.float32)
SAMPLE = RNG.randn(30, 3).astype(np.float32)


def _same(got, want, rtol=1e-5, atol=1e-6):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w, rtol, atol)
        return
    got = np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    assert got.shape == np.shape(want)


@pytest.mark.parametrize("expr", [
    "mgrid[0:4, 0:3]", "mgrid[0:1:4j]", "mgrid[0:1:3j, 0:2]", "ogrid[:2, :3]",
    "r_[-1:5:1, 0, 0, [1, 2, 3]]", "r_['0,2', [1, 2, 3], [4, 5, 6]]",
    "r_['0,2,0', [1, 2, 3], [4, 5, 6]]", "r_['r', [1, 2, 3], [4, 5, 6]]",
    "c_[[1, 2, 3], [4, 5, 6]]", "c_[[[1, 2, 3]], 0, 0, [[4, 5, 6]]]",
    "tril_indices(3)", "triu_indices(3, 1, 4)", "tril_indices_from(np.ones((3, 5)), -1)",
    "mask_indices(3, {ns}.triu, 1)", "block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), "
    "np.array([[5.]])]])", "block([1, 2, np.array([3, 4])])",
    "apply_along_axis({ns}.cumsum, 1, np.arange(12.).reshape(3, 4))",
    "apply_over_axes({ns}.sum, np.arange(24.).reshape(2, 3, 4), [0, 2])",
    "fromfunction(lambda i, j: i + 10 * j, (3, 4))",
])
def test_index_tricks_match_numpy(expr):
    got = eval(expr.replace("{ns}", "jnp"), {"jnp": jnp, "np": np}, vars(jnp))
    want = eval(expr.replace("{ns}", "np"), {"np": np}, vars(np))
    _same(got, want)


def test_index_tricks_errors():
    with pytest.raises(ValueError, match="Mismatched list depths in jax.numpy.block"):
        jnp.block([[1], 2])
    with pytest.raises(ValueError, match="does not allow tuples"):
        jnp.block((1, 2))
    with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
        jnp.tril_indices_from(jnp.ones(3))
    with pytest.raises(ValueError, match="could not understand directive"):
        jnp.r_["x,y", [1]]


A = np.array([5, 1, 3, 3, 7, 1, 9])
B = np.array([3, 4, 1, 11])


@pytest.mark.parametrize("name", ["union1d", "setdiff1d", "setxor1d", "intersect1d"])
def test_set_operations_match_numpy(name):
    _same(getattr(jnp, name)(A, B), getattr(np, name)(A, B))
    floats = np.array([1.5, 2., 2., -1.]), np.array([2., 3.])
    _same(getattr(jnp, name)(*floats), getattr(np, name)(*floats))


def test_isin_methods():
    for method in ["compare_all", "binary_search", "sort", "auto"]:
        _same(jnp.isin(A.reshape(7, 1), B, method=method), np.isin(A.reshape(7, 1), B))
        _same(jnp.isin(A, B, invert=True, method=method), np.isin(A, B, invert=True))
    with pytest.raises(ValueError, match="method='bad' is not implemented"):
        jnp.isin(A, B, method="bad")


def test_set_operations_with_static_size():
    # Values recorded from JAX 0.10.2: padding defaults (0 for setdiff1d, else the smallest
    # value), and padded indices equal to the inputs' sizes.
    _same(jnp.union1d(A, B, size=10), [1, 3, 4, 5, 7, 9, 11, 1, 1, 1])
    _same(jnp.setdiff1d(A, B, size=5), [5, 7, 9, 0, 0])
    _same(jnp.setxor1d(A, B, size=8, fill_value=99), [4, 5, 7, 9, 11, 99, 99, 99])
    _same(jnp.setxor1d(A, B, size=8), [4, 5, 7, 9, 11, 4, 4, 4])
    _same(jnp.intersect1d(A, B, size=4, return_indices=True),
          ([1, 3, 1, 1], [1, 2, 7, 7], [2, 0, 4, 4]))
    jitted = jax.jit(lambda x, y: jnp.intersect1d(x, y, size=3, return_indices=True))
    _same(jitted(A, B), ([1, 3, 1], [1, 2, 7], [2, 0, 4]))
    _same(jnp.intersect1d(np.array([3, 1, 7]), np.array([7, 3]), assume_unique=True,
                          return_indices=True), ([3, 7], [0, 2], [1, 0]))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.setdiff1d)(A, B)


def test_bincount_and_histograms_match_numpy():
    x = np.array([0, 1, 1, 3, 2, 1, 7])
    _same(jnp.bincount(x), np.bincount(x))
    _same(jnp.bincount(x, weights=np.arange(7.)), np.bincount(x, weights=np.arange(7.)))
    _same(jnp.bincount(x, minlength=10), np.bincount(x, minlength=10))
    # JAX: negative values count into bin 0, values past `length` are dropped.
    _same(jnp.bincount(np.array([-1, 2, 9]), length=4), [1, 0, 1, 0])
    _same(jax.jit(lambda v: jnp.bincount(v, length=8))(x), np.bincount(x))
    for kwargs in [{}, {"bins": 4, "weights": np.abs(DATA)}, {"bins": 5, "density": True},
                   {"bins": np.array([-2., 0, 0.5, 3])}, {"bins": 3, "range": (0, 1)}]:
        _same(jnp.histogram(DATA, **kwargs), np.histogram(DATA, **kwargs))
    _same(jnp.histogram_bin_edges(DATA, 5), np.histogram_bin_edges(DATA, 5))
    _same(jnp.histogramdd(SAMPLE, bins=[2, 3, 4], density=True),
          np.histogramdd(SAMPLE, bins=[2, 3, 4], density=True))
    counts, edges = jnp.histogramdd(SAMPLE, bins=3)
    assert counts.dtype == jnp.int32  # integer counts without weights, as JAX's
    _same((counts, edges), np.histogramdd(SAMPLE, bins=3))
    _same(jnp.histogram2d(SAMPLE[:, 0], SAMPLE[:, 1], bins=[2, 4]),
          np.histogram2d(SAMPLE[:, 0], SAMPLE[:, 1], bins=[2, 4]))
    with pytest.raises(TypeError, match="must have an integer type"):
        jnp.bincount(np.array([1.0]))
    with pytest.raises(ValueError, match="only 1-dimensional input supported"):
        jnp.bincount(x.reshape(7, 1))


@pytest.mark.parametrize("kwargs", [{}, {"bias": True}, {"ddof": 2},
                                    {"fweights": np.arange(30) % 3 + 1},
                                    {"aweights": np.linspace(0.1, 1, 30)}])
def test_cov_and_corrcoef_match_numpy(kwargs):
    _same(jnp.cov(SAMPLE.T, **kwargs), np.cov(SAMPLE.T, **kwargs), rtol=1e-4)
    _same(jnp.cov(SAMPLE, rowvar=False, **kwargs), np.cov(SAMPLE, rowvar=False, **kwargs),
          rtol=1e-4)
    _same(jnp.corrcoef(SAMPLE.T), np.corrcoef(SAMPLE.T), rtol=1e-4)
    _same(jnp.corrcoef(SAMPLE[:, 0], SAMPLE[:, 2]), np.corrcoef(SAMPLE[:, 0], SAMPLE[:, 2]),
          rtol=1e-4)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
def test_windows_match_numpy(name, M):
    got = getattr(jnp, name)(M)
    assert got.dtype == jnp.float32
    _same(got, getattr(np, name)(M), atol=2e-7)


def test_kaiser_and_i0():
    _same(jnp.kaiser(8, 3.5), np.kaiser(8, 3.5), rtol=1e-5)
    x = np.array([0., 1., -2., 3.5])
    _same(jnp.i0(x), np.i0(x), rtol=1e-6)
    # d/dx I0 = I1, 0 at 0 (JAX 0.10.2: 0.56515914 at 1.0).
    _same(jax.vmap(jax.grad(jnp.i0))(x[:2]), [0.0, 0.56515914], rtol=1e-6)
    with pytest.raises(ValueError, match="Unsupported input type to jax.numpy.i0"):
        jnp.i0(np.array([1j]))


def test_polynomials_match_numpy():
    p, q = np.array([1., 2, 3, 4]), np.array([2., 1])
    _same(jnp.poly(np.array([1, 2])), np.poly([1, 2]))
    _same(jnp.polyadd(p, q), np.polyadd(p, q))
    _same(jnp.polysub(p, q), np.polysub(p, q))
    _same(jnp.polymul(p, q), np.polymul(p, q))
    _same(jnp.polydiv(p, q)[0], np.polydiv(p, q)[0])
    _same(jnp.polyder(p, 2), np.polyder(p, 2))
    _same(jnp.polyint(p, 2, k=np.array([1., 2.])), np.polyint(p, 2, k=[1., 2.]))
    _same(jnp.polyint(p, k=3), np.polyint(p, k=3))
    xs = np.linspace(0, 2, 12).astype(np.float32)
    ys = (3 * xs ** 2 - xs + 0.5 + RNG.randn(12) * 0.01).astype(np.float32)
    _same(jnp.polyfit(xs, ys, 2), np.polyfit(xs, ys, 2), rtol=1e-3)
    _same(jnp.polyfit(xs, ys, 1, w=np.linspace(1, 2, 12)),
          np.polyfit(xs, ys, 1, w=np.linspace(1, 2, 12)), rtol=1e-3)
    _same(jnp.polyfit(xs, ys, 2, cov=True)[1], np.polyfit(xs, ys, 2, cov=True)[1],
          rtol=0.05, atol=1e-6)
    # JAX keeps the remainder's length; the quotient of a zero-led divisor is NaN.
    assert jnp.polydiv(p, q)[1].shape == (4,)
    _same(jnp.polymul(np.array([0, 0, 1, 2]), np.array([0, 1, 5]), trim_leading_zeros=True),
          [1., 7., 10.])
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        jnp.polyder(p, -1)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jnp.polyfit(xs, ys[:5], 2)


def test_trim_zeros():
    x = np.array([0, 0, 1, 2, 0, 3, 0])
    for trim in ["fb", "f", "b"]:
        _same(jnp.trim_zeros(x, trim), np.trim_zeros(x, trim))
    m = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    _same(jnp.trim_zeros(m), [[1]])
    _same(jnp.trim_zeros(m, axis=1), [[0], [1], [0]])


def test_bits_match_numpy():
    bits = np.array([[1, 0, 1], [0, 1, 1]])
    for kwargs in [{}, {"axis": 1}, {"axis": 0}, {"bitorder": "little"}]:
        _same(jnp.packbits(bits, **kwargs), np.packbits(bits, **kwargs))
    packed = np.array([[5, 255], [7, 0]], dtype=np.uint8)
    for kwargs in [{}, {"axis": 1}, {"count": 10}, {"count": -3}, {"bitorder": "little"}]:
        _same(jnp.unpackbits(packed, **kwargs), np.unpackbits(packed, **kwargs))
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(np.array([1.5]))
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(np.array([5]))


def test_put_and_place():
    want = np.arange(5)
    np.put(want, [0, 2], [10, 20])
    _same(jnp.put(jnp.arange(5), np.array([0, 2]), np.array([10, 20]), inplace=False), want)
    _same(jnp.put(jnp.arange(5), np.array([-1, 9]), 7, mode="clip", inplace=False),
          [7, 1, 2, 3, 7])
    _same(jnp.put(jnp.arange(5), np.array([-1, 9]), np.array([7, 8]), mode="wrap",
                  inplace=False), [0, 1, 2, 3, 8])
    _same(jnp.put(jnp.arange(5), np.array([-1, 9]), 7, inplace=False), [0, 1, 2, 3, 7])
    want = np.arange(6)
    np.place(want, want % 2 == 0, [10, 20])
    _same(jnp.place(jnp.arange(6), np.arange(6) % 2 == 0, np.array([10, 20]), inplace=False),
          want)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put(jnp.arange(5), 0, 1)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.place(jnp.arange(5), np.ones(5, bool), 1)


def test_unwrap_matches_numpy():
    phase = np.array([0., 1., 2., 3.5, 5., 6.5, 0.2, -3.], dtype=np.float32)
    _same(jnp.unwrap(phase), np.unwrap(phase), rtol=1e-5)
    _same(jnp.unwrap(phase, discont=4.), np.unwrap(phase, discont=4.), rtol=1e-5)
    ints = jnp.unwrap(np.array([0, 3, 6, 1, 4]), period=6)
    assert ints.dtype == jnp.int32
    _same(ints, np.unwrap(np.array([0, 3, 6, 1, 4]), period=6))


def test_buffer_constructors():
    _same(jnp.frombuffer(b"\x01\x00\x00\x00\x02\x00\x00\x00", dtype=jnp.int32), [1, 2])
    _same(jnp.frombuffer(b"\x01\x02\x03", dtype=jnp.uint8, count=2, offset=1), [2, 3])
    _same(jnp.fromstring("1.5,2", sep=","), [1.5, 2.0])
    with pytest.raises(NotImplementedError, match="may be non-pure"):
        jnp.fromfile("x")
    with pytest.raises(NotImplementedError, match="may be non-pure"):
        jnp.fromiter(iter([1]), float)


M = np.arange(1, 13).reshape(3, 4)
F = np.linspace(-1, 2, 12).reshape(3, 4).astype(np.float32)


@pytest.mark.parametrize("expr", [
    "{ns}.add.reduce(M)", "{ns}.add.reduce(M, axis=1, keepdims=True)", "{ns}.add.reduce(M, axis=None)",
    "{ns}.multiply.accumulate(M, axis=1)", "{ns}.subtract.reduce(M, axis=1)",
    "{ns}.subtract.accumulate(M)", "{ns}.maximum.reduce(F, axis=0)",
    "{ns}.maximum.accumulate(F, axis=1)", "{ns}.bitwise_and.reduce(M, axis=1)",
    "{ns}.bitwise_xor.reduce(M, axis=None)", "{ns}.logical_xor.reduce(M % 3 == 0, axis=1)",
    "{ns}.logaddexp.reduce(F, axis=1)", "{ns}.logaddexp2.reduce(F)",
    "{ns}.multiply.outer(np.arange(3), np.arange(4))", "{ns}.add.reduceat(np.arange(8), np.array([0, 4, 1, 5]))",
    "{ns}.multiply.reduceat(M, np.array([0, 2]), axis=1)",
    "{ns}.minimum.reduce(F, axis=1, where=F > 0, initial=5.)",
])
def test_ufunc_methods_match_numpy(expr):
    got = eval(expr.format(ns="jnp"), {"jnp": jnp, "np": np, "M": M, "F": F})
    want = eval(expr.format(ns="np"), {"np": np, "M": M, "F": F})
    _same(got, want, rtol=1e-5)


def test_ufunc_objects_and_frompyfunc():
    assert repr(jnp.add) == "<jnp.ufunc 'add'>"
    assert isinstance(jnp.add, jnp.ufunc) and not isinstance(jnp.sin, jnp.ufunc)
    assert (jnp.add.nin, jnp.add.nout, jnp.add.identity, jnp.maximum.identity) == (2, 1, 0, None)
    want = np.arange(1, 13).reshape(3, 4)
    np.add.at(want, (0, [1, 1, 2]), 10)
    _same(jnp.add.at(M, (0, np.array([1, 1, 2])), 10, inplace=False), want)
    hypot = jnp.frompyfunc(lambda x, y: jnp.sqrt(x * x + y * y), 2, 1)
    _same(hypot(F, 2.), np.hypot(F, 2.), rtol=1e-6)
    _same(hypot.reduce(F, axis=1), np.hypot.reduce(F, axis=1), rtol=1e-5)
    _same(hypot.accumulate(F, axis=0), np.hypot.accumulate(F, axis=0), rtol=1e-5)
    _same(hypot.outer(np.arange(2.), np.arange(3.)), np.hypot.outer(np.arange(2.), np.arange(3.)))
    _same(hypot.reduceat(np.arange(8.), np.array([0, 3, 6])),
          np.hypot.reduceat(np.arange(8.), [0, 3, 6]), rtol=1e-6)
    want = F.copy()
    np.hypot.at(want, ([0, 0, 2], 1), 3.)
    _same(hypot.at(F, (np.array([0, 0, 2]), 1), 3., inplace=False), want, rtol=1e-6)
    _same(jax.jit(lambda x: hypot.reduce(x, axis=0))(F), np.hypot.reduce(F, axis=0), rtol=1e-5)
    assert jax.grad(lambda x: hypot.reduce(x, axis=None))(F).shape == F.shape
    with pytest.raises(NotImplementedError, match="cannot operate inplace"):
        jnp.add.at(M, 0, 1)
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        jnp.negative.reduce(M)
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.subtract.reduce(M, where=M > 1)
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
        hypot.reduce(np.zeros((0, 3)))


def test_roots_and_poly_of_matrices():
    _same(np.sort_complex(np.asarray(jnp.roots(np.array([1., -3, 2])))), [1, 2], atol=1e-5)
    _same(np.sort_complex(np.asarray(jnp.roots(np.array([1., 0, 1])))), [-1j, 1j], atol=1e-6)
    # Values recorded from JAX 0.10.2: only leading zeros are stripped; without stripping
    # each leading zero gives a NaN root, last.
    got = jnp.roots(np.array([0., 0, 1., -1, 0]))
    _same(np.sort_complex(np.asarray(got)), [0, 1], atol=1e-6)
    no_strip = np.asarray(jax.jit(lambda p: jnp.roots(p, strip_zeros=False))(np.array([0., 1., -1])))
    np.testing.assert_allclose(no_strip[0], 1.0, rtol=1e-6)
    assert np.isnan(no_strip[1])
    assert jnp.roots(np.array([2.])).shape == (0,)
    _same(jnp.poly(np.array([[1., 2], [0, 3]])), np.poly(np.array([[1., 2], [0, 3]])), atol=1e-5)
