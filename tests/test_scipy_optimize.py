"""justjax.scipy.optimize.minimize: JAX 0.10.2's iterations (counts, status, results) for
BFGS and the experimental L-BFGS, under jit and vmap, in float32 and x64; dtypes; errors;
agreement with SciPy where both converge."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy.optimize import OptimizeResults, minimize
from tests.harness import x64_mode

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def himmel(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def beale(x):
    return ((1.5 - x[0] + x[0] * x[1]) ** 2 + (2.25 - x[0] + x[0] * x[1] ** 2) ** 2
            + (2.625 - x[0] + x[0] * x[1] ** 3) ** 2)


A = [[4., 1., 0., 0.], [1., 3., 0.5, 0.], [0., 0.5, 2., 0.2], [0., 0., 0.2, 1.]]
B = [1., -2., 0.5, 3.]


def quad(x, a, b):
    return 0.5 * x @ a @ x - b @ x


def logsum(x):
    return jnp.log(jnp.sum(jnp.exp(x))) + 0.1 * x @ x


# name -> (objective, x0, takes A and B as args, options)
CASES = {
    "rosen2": (rosen, [-1.2, 1.0], False, {}),
    "rosen5": (rosen, [0.] * 5, False, {}),
    "rosen5b": (rosen, [1.3, 0.7, 0.8, 1.9, 1.2], False, {}),
    "himmel": (himmel, [0., 0.], False, {}),
    "beale": (beale, [1., 1.], False, {}),
    "quad": (quad, [0.] * 4, True, {}),
    "logsum": (logsum, [1., 2., 3.], False, {}),
    "maxiter": (rosen, [-1.2, 1.0], False, {"maxiter": 5}),
    "unbounded": (lambda x: -jnp.sum(x), [0., 0.], False, {}),
}

# Recorded from JAX 0.10.2 with jax_enable_x64: `minimize(f, jnp.array(x0), args, method,
# options=...)` for each of CASES (tests/ does not import jax: these are its literals).
JAX_X64 = {
    "BFGS": {
        "rosen2": dict(
            x=[-0.2778069614751315, 0.043338775200157394],
            fun=1.7472911993555371, status=3, success=False, nfev=17, njev=17, nit=8),
        "rosen5": dict(
            x=[0.9999999945520046, 0.999999989949592, 0.9999999883958697, 0.999999971126479,
               0.9999999501932214],
            fun=1.7904189542397135e-14, status=0, success=True, nfev=50, njev=50, nit=36),
        "rosen5b": dict(
            x=[0.9967396880997339, 0.9945007484172954, 0.9885649736274327, 0.9754681770102098,
               0.9507830995860188],
            fun=0.0012757172677625042, status=3, success=False, nfev=25, njev=25, nit=19),
        "himmel": dict(
            x=[1.6983738560669346, 2.6688732023908974],
            fun=32.98301016598844, status=3, success=False, nfev=5, njev=5, nit=1),
        "beale": dict(
            x=[2.9999999664498227, 0.49999999169711584],
            fun=1.8017319993673197e-16, status=0, success=True, nfev=16, njev=16, nit=14),
        "quad": dict(
            x=[0.4620622441943821, -0.8482490301904476, 0.16536968083993894, 2.96692600042879],
            fun=-5.571011673151747, status=0, success=True, nfev=11, njev=11, nit=8),
        "logsum": dict(
            x=[-1.666663670042134, -1.6666669405709793, -1.6666588353705574],
            fun=0.26527895534735724, status=0, success=True, nfev=10, njev=10, nit=9),
        "maxiter": dict(
            x=[-0.5093233117132628, 0.2428366863172165],
            fun=2.3055251137077875, status=1, success=False, nfev=12, njev=12, nit=5),
        "unbounded": dict(x=[0.0, 0.0], fun=-0.0, status=5, success=False, nfev=11, njev=11, nit=1),
    },
    LBFGS: {
        "rosen2": dict(
            x=[0.2233641973095693, 0.022606940744656703],
            fun=0.6776082401302695, status=5, success=False, nfev=35, njev=35, nit=17),
        "rosen5": dict(
            x=[0.40085993723225954, 0.13158377008209624, 0.017469675387704574,
               0.010787504157617764, -0.0019225040069396804],
            fun=3.1531384033158485, status=5, success=False, nfev=14, njev=14, nit=6),
        "rosen5b": dict(
            x=[1.0000000074917565, 0.9999999721743824, 0.9999999956013813, 1.0000001401220642,
               1.000000266450366],
            fun=2.7031518405142446e-12, status=4, success=False, nfev=42, njev=42, nit=27),
        "himmel": dict(
            x=[3.0000000444226416, 1.9999999432051707],
            fun=7.739129780053418e-14, status=0, success=True, nfev=13, njev=13, nit=8),
        "beale": dict(
            x=[1.8897057444028147, 0.22535034989564953],
            fun=0.7824058924474874, status=5, success=False, nfev=11, njev=11, nit=4),
        "quad": dict(
            x=[0.46206223799689616, -0.8482489366238694, 0.1653694924818317, 2.9669264355272578],
            fun=-5.571011673151666, status=0, success=True, nfev=10, njev=10, nit=9),
        "logsum": dict(
            x=[-1.8559784508854484, -1.8413553549815054, -1.7735884085569396],
            fun=0.27370649140610837, status=5, success=False, nfev=5, njev=5, nit=3),
        "maxiter": dict(
            x=[-0.8780493021529268, 0.7291171245514154],
            fun=3.702240329597789, status=1, success=False, nfev=19, njev=19, nit=6),
        "unbounded": dict(x=[0.0, 0.0], fun=-0.0, status=5, success=False, nfev=21, njev=21, nit=1),
    },
}

# Recorded from JAX 0.10.2 in float32 (the default), as JAX_X64. Only cases whose path does
# not hinge on the last bit of a float32 dot or sum: XLA's dots accumulate with fused
# multiply-adds, its elementwise code does not, so chaotic float32 runs (rosen5 by BFGS,
# quad by L-BFGS) take other paths on another backend.
JAX_F32 = {
    "BFGS": {
        "himmel": dict(
            x=[1.6983739137649536, 2.6688733100891113],
            fun=32.983009338378906, status=3, success=False, nfev=5, njev=5, nit=1),
        "beale": dict(x=[3.0, 0.5], fun=0.0, status=0, success=True, nfev=16, njev=16, nit=14),
        "quad": dict(
            x=[0.4620622396469116, -0.8482490181922913, 0.1653696894645691, 2.966925859451294],
            fun=-5.571012020111084, status=0, success=True, nfev=11, njev=11, nit=8),
        "logsum": dict(
            x=[-1.6666637659072876, -1.666667103767395, -1.666658878326416],
            fun=0.2652789354324341, status=0, success=True, nfev=10, njev=10, nit=9),
        "maxiter": dict(
            x=[-0.5093246102333069, 0.24283823370933533],
            fun=2.305528163909912, status=1, success=False, nfev=12, njev=12, nit=5),
    },
    LBFGS: {
        "rosen5": dict(
            x=[0.40085917711257935, 0.13158315420150757, 0.017469538375735283,
               0.010787358507514, -0.0019225099822506309],
            fun=3.1531407833099365, status=5, success=False, nfev=14, njev=14, nit=6),
        "himmel": dict(x=[3.0, 2.0], fun=0.0, status=0, success=True, nfev=13, njev=13, nit=8),
        "beale": dict(
            x=[1.889705777168274, 0.22535042464733124],
            fun=0.7824059128761292, status=5, success=False, nfev=11, njev=11, nit=4),
        "maxiter": dict(
            x=[-0.878051221370697, 0.7291181087493896],
            fun=3.702267646789551, status=1, success=False, nfev=19, njev=19, nit=6),
        "unbounded": dict(x=[0.0, 0.0], fun=-0.0, status=5, success=False, nfev=21, njev=21, nit=1),
    },
}


def _run(name: str, method: str) -> OptimizeResults:
    fun, x0, with_args, options = CASES[name]
    args = (jnp.array(A), jnp.array(B)) if with_args else ()
    return minimize(fun, jnp.array(x0), args=args, method=method, options=options)


def _check(result: OptimizeResults, expected: dict, rtol: float, atol: float) -> None:
    for field in ("status", "success", "nfev", "njev", "nit"):
        assert result._asdict()[field].item() == expected[field], field
    np.testing.assert_allclose(np.asarray(result.x), expected["x"], rtol=rtol, atol=atol)
    np.testing.assert_allclose(result.fun.item(), expected["fun"], rtol=rtol, atol=atol)


@pytest.mark.parametrize("method,name", [(m, n) for m in JAX_X64 for n in JAX_X64[m]])
def test_x64_iterations_are_jax(method: str, name: str) -> None:
    with x64_mode(True):
        _check(_run(name, method), JAX_X64[method][name], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method,name", [(m, n) for m in JAX_F32 for n in JAX_F32[m]])
def test_float32_iterations_are_jax(method: str, name: str) -> None:
    _check(_run(name, method), JAX_F32[method][name], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_result_types_are_jax(method: str) -> None:
    """As JAX: counts and status are weak int32 (int64 with x64); BFGS returns its inverse
    Hessian estimate, L-BFGS None."""
    result = _run("quad", method)
    assert isinstance(result, OptimizeResults)
    assert result.x.dtype == jnp.float32 and result.x.shape == (4,)
    assert result.fun.dtype == jnp.float32 and result.fun.shape == ()
    assert result.success.dtype == jnp.bool_
    for count in (result.status, result.nfev, result.njev, result.nit):
        assert count.dtype == jnp.int32 and count.weak_type
    if method == "BFGS":
        assert result.hess_inv.shape == (4, 4)
        # Near the minimum of a quadratic the estimate approaches A^-1.
        np.testing.assert_allclose(result.hess_inv, np.linalg.inv(A), atol=0.05)
    else:
        assert result.hess_inv is None


def test_x64_dtypes_are_jax() -> None:
    with x64_mode(True):
        result = minimize(himmel, jnp.array([0., 0.]), method=LBFGS)
    assert result.x.dtype == jnp.float64
    assert result.nit.dtype == jnp.int64 and result.nit.weak_type


# Recorded from JAX 0.10.2 (x64): `vmap(lambda x0: minimize(rosen, x0, method=m))(X0S)`
# (x, nit, nfev, status), and `jit` of the same at X0S[2].
X0S = [[-1.2, 1.0], [0., 0.], [2., 2.]]
JAX_VMAP_X64 = {
    "BFGS": ([[-0.2778069614751315, 0.043338775200157394], [0.17879488483310618, 0.0],
              [0.9999999946527616, 0.9999999891502032]], [8, 1, 24], [17, 5, 37], [3, 3, 0]),
    LBFGS: ([[0.2233641973095693, 0.022606940744656703], [0.17354647186935693, 0.0],
             [-0.9415926576248677, 0.8342858499076623]], [17, 1, 15], [35, 6, 29], [5, 5, 5]),
}


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_vmap_and_jit(method: str) -> None:
    x, nit, nfev, status = JAX_VMAP_X64[method]
    with x64_mode(True):
        batched = jax.vmap(lambda x0: minimize(rosen, x0, method=method))(jnp.array(X0S))
        jitted = jax.jit(lambda x0: minimize(rosen, x0, method=method))(jnp.array(X0S[2]))
    np.testing.assert_allclose(batched.x, x, rtol=1e-9, atol=1e-12)
    assert batched.nit.tolist() == nit and batched.nfev.tolist() == nfev
    assert batched.status.tolist() == status
    np.testing.assert_allclose(jitted.x, x[2], rtol=1e-9, atol=1e-12)
    assert (jitted.nit.item(), jitted.nfev.item()) == (nit[2], nfev[2])


# Recorded from JAX 0.10.2 (x64): (x, nit, nfev, status, fun) with non-default options.
JAX_OPTIONS_X64 = [
    (LBFGS, [0.] * 5, dict(maxcor=3),
     ([0.9999997919917685, 0.9999998435170497, 0.9999998115096579, 1.0000000012831491,
       1.0000000454117814], 37, 50, 4, 2.2880386246932686e-11)),
    ("BFGS", [-1.2, 1.0], dict(gtol=1e-2, norm=2, line_search_maxiter=4),
     ([-0.2778069614751315, 0.043338775200157394], 8, 17, 3, 1.7472911993555371)),
    (LBFGS, [0.] * 5, dict(maxfun=8),
     ([0.142851213787616, 0.0023371002459899887, -0.0005924521636447352,
       -0.0026530209647787437, 0.0010272603370296408], 3, 9, 2, 3.7700277224313337)),
]


@pytest.mark.parametrize("method,x0,options,expected", JAX_OPTIONS_X64)
def test_options(method: str, x0: list, options: dict, expected: tuple) -> None:
    x, nit, nfev, status, fun = expected
    with x64_mode(True):
        result = minimize(rosen, jnp.array(x0), method=method, options=options)
    np.testing.assert_allclose(result.x, x, rtol=1e-9, atol=1e-12)
    assert (result.nit.item(), result.nfev.item(), result.status.item()) == (nit, nfev, status)
    np.testing.assert_allclose(result.fun.item(), fun, rtol=1e-9, atol=1e-15)


def test_lbfgs_complex() -> None:
    """L-BFGS takes complex variables (a real objective of them), as JAX's (x64: 1
    iteration, 3 evaluations, status 0)."""
    with x64_mode(True):
        result = minimize(lambda z: jnp.sum(jnp.abs(z - (1 + 2j)) ** 2),
                          jnp.array([0.5, 1j, 2.]), method=LBFGS)
    assert result.x.dtype == jnp.complex128
    np.testing.assert_allclose(result.x, [1 + 2j] * 3, atol=1e-12)
    assert (result.nit.item(), result.nfev.item(), result.status.item()) == (1, 3, 0)


@pytest.mark.parametrize("method", ["BFGS", "bfgs", LBFGS])
def test_agrees_with_scipy(method: str) -> None:
    """Where both converge, to SciPy's minimizer."""
    expected = scipy.optimize.minimize(
        lambda x: 0.5 * x @ np.array(A) @ x - np.array(B) @ x, np.zeros(4), method="BFGS",
        jac=lambda x: np.array(A) @ x - np.array(B)).x
    with x64_mode(True):
        result = minimize(quad, jnp.zeros(4), args=(jnp.array(A), jnp.array(B)),
                          method=method)
    assert result.success.item()
    np.testing.assert_allclose(result.x, expected, atol=1e-6)


def test_at_the_minimum_no_iteration() -> None:
    with x64_mode(True):
        x0 = jnp.linalg.solve(jnp.array(A), jnp.array(B))
        result = minimize(quad, x0, args=(jnp.array(A), jnp.array(B)), method="BFGS")
    assert (result.nit.item(), result.nfev.item(), result.status.item()) == (0, 1, 0)
    np.testing.assert_array_equal(result.hess_inv, np.eye(4))


def test_tol_is_ignored_as_in_jax() -> None:
    fun, x0, _, _ = CASES["himmel"]
    results = [minimize(fun, jnp.array(x0), method="BFGS", tol=tol) for tol in (None, 1e-1)]
    assert results[0].nit.item() == results[1].nit.item() == 1


def test_not_reverse_differentiable() -> None:
    """As JAX: the while loop has no reverse-mode rule."""
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop"):
        jax.grad(lambda b: minimize(quad, jnp.zeros(4), args=(jnp.array(A), b),
                                    method="BFGS").fun)(jnp.array(B))


# Recorded from JAX 0.10.2: the error class and message for each bad call.
def _sq(x):
    return jnp.sum(x ** 2)


ERRORS = [
    (lambda: minimize(_sq, jnp.ones(2), method="Nelder-Mead"), ValueError,
     "Method Nelder-Mead not recognized"),
    (lambda: minimize(_sq, jnp.ones(2)), TypeError,
     "missing 1 required keyword-only argument: 'method'"),
    (lambda: minimize(_sq, jnp.ones(2), method=None), AttributeError,
     "'NoneType' object has no attribute 'lower'"),
    (lambda: minimize(_sq, jnp.ones(2), args=[1], method="BFGS"), TypeError,
     "args argument to jax.scipy.optimize.minimize must be a tuple, got [1]"),
    (lambda: minimize(_sq, jnp.ones(2), method="BFGS", options={"foo": 1}), TypeError,
     "minimize_bfgs() got an unexpected keyword argument 'foo'"),
    (lambda: minimize(_sq, jnp.ones((2, 2)), method="BFGS"), TypeError,
     "cond_fun must return a boolean scalar, but got output type(s) "
     "[ShapedArray(bool[2,2])]."),
    (lambda: minimize(_sq, jnp.ones((2, 2)), method=LBFGS), ValueError,
     "Cannot broadcast to shape with fewer dimensions: arr_shape=(2,) shape=()"),
    (lambda: minimize(_sq, jnp.array(1.), method="BFGS"), IndexError,
     "tuple index out of range"),
    (lambda: minimize(_sq, jnp.array(1.), method=LBFGS), TypeError,
     "len() of unsized object"),
    (lambda: minimize(_sq, [1., 2.], method="BFGS"), AttributeError,
     "'list' object has no attribute 'shape'"),
    (lambda: minimize(_sq, jnp.array([1, 2]), method="BFGS"), TypeError,
     "grad requires real- or complex-valued inputs"),
    (lambda: minimize(lambda x: x ** 2, jnp.ones(2), method="BFGS"), TypeError,
     "Gradient only defined for scalar-output functions. Output had shape: (2,)."),
]


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors_are_jax(call, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


# Recorded from JAX 0.10.2 (x64): jit(vmap) over the objective's argument b, (x, nit, nfev);
# and the forward-mode derivative of x in b[0] along ones.
BS = [[1., -2., 0.5, 3.], [0., 1., 2., -1.], [5., 5., 5., 5.]]
JAX_BATCHED_ARGS_X64 = {
    "BFGS": ([[0.4620622441943821, -0.8482490301904476, 0.16536968083993894, 2.96692600042879],
              [-0.04182878077730205, 0.1673148561939412, 1.0797659358187106, -1.2159531940365766],
              [0.9897859316483476, 1.0408564514808734, 1.775291661891966, 4.644941834179168]],
             [8, 6, 9], [11, 9, 10],
             [0.19795713909457227, 0.2081711289633297, 0.35505855799495634, 0.9289878023785477]),
    LBFGS: ([[0.46206223799689616, -0.8482489366238695, 0.16536949248183166, 2.9669264355272578],
             [-0.04182891684557985, 0.1673150416498543, 1.0797666546397355, -1.2159535588255008],
             [0.9897859878596751, 1.0408560328266714, 1.775291836277776, 4.644941629193006]],
            [9, 8, 8], [10, 10, 10],
            [0.19794721277270438, 0.20817881618994444, 0.3550522495169039, 0.9290212055962351]),
}


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_batched_args_and_forward_mode(method: str) -> None:
    x, nit, nfev, tangent = JAX_BATCHED_ARGS_X64[method]
    with x64_mode(True):
        a = jnp.array(A)

        def solve(b):
            return minimize(quad, jnp.zeros(4), args=(a, b), method=method)

        batched = jax.jit(jax.vmap(solve))(jnp.array(BS))
        _, dx = jax.jvp(lambda b: solve(b).x, (jnp.array(BS[0]),), (jnp.ones(4),))
    np.testing.assert_allclose(batched.x, x, rtol=1e-9, atol=1e-12)
    assert batched.nit.tolist() == nit and batched.nfev.tolist() == nfev
    np.testing.assert_allclose(dx, tangent, rtol=1e-9)
