"""Differentiation programs over jax.numpy / jax.nn / jax.scipy.special / lax, whose values
real JAX recorded (`record_grad_golden.py`, compared by `tests/test_grad_programs.py`).

`PRELUDE` is executed with `jax`, `jnp`, `lax` and `np` bound (to real JAX when recording, to
justjax in the tests). Each case is `(title, function source, arguments source)`: the test
evaluates `function(*arguments)` and compares the result pytree, or the exception raised.
Titles are "<group>/<what>"; programs under "error/" are expected to raise, and programs whose
group is "x64" run (arguments built and function called) with `jax_enable_x64` switched on.

Inputs are built from NumPy values (`pts`, `mixed`, `grid`), so JAX and justjax differentiate
at bit-identical points; `g(f)` is the gradient of a weighted sum of `f`'s output, with small
integer weights, so that every output element shows in the gradient (a plain sum would make
e.g. softmax's gradient cancel to zero).
"""
from __future__ import annotations

# The second half of the corpus; importable as the recorder imports this module (tools/ on
# sys.path).
from grad_program_corpus_extra import (BUILD, COMPLEX, CONCRETE, EMPTY, ERRORS, FORWARD, HIGHER,
                                       LOW_PRECISION, METHODS, SPECIAL_VALUES, VARIANTS, WEAK, X64)

Case = tuple[str, str, str]

PRELUDE = '''
sp = jax.scipy.special
nn = jax.nn

def pts(*shape, lo=-2.0, hi=2.0):
    """Evenly spaced values from lo to hi in the default float dtype, in `shape`."""
    n = int(np.prod(shape))
    return jnp.asarray(np.linspace(lo, hi, n).reshape(shape))

def mixed(*shape, scale=1.0):
    """Distinct values in [-scale, scale] in a scrambled order (no ties), in `shape`."""
    n = int(np.prod(shape))
    return jnp.asarray(((np.arange(n) * 37 % 101 - 50) / 50.0 * scale).reshape(shape))

def grid(*shape):
    """Small distinct positive values 0.5, 0.75, 1.0, ... in a scrambled order."""
    n = int(np.prod(shape))
    return jnp.asarray((0.5 + (np.arange(n) * 7 % n) / 4.0).reshape(shape))

def arr(values):
    """A default-float array of literal values."""
    return jnp.asarray(np.asarray(values, dtype=np.float64))

def wsum(y):
    """A weighted sum of y with weights 1..7 (exact in every dtype)."""
    y = jnp.asarray(y)
    w = (np.arange(y.size) * 5 % 7 + 1).reshape(y.shape)
    return jnp.sum(y * jnp.asarray(w, dtype=y.dtype))

def g(f, argnums=0):
    """The gradient of the weighted sum of f's output."""
    return jax.grad(lambda *a: wsum(f(*a)), argnums=argnums)

def g2(f):
    """The gradient of the weighted sum of f's output with respect to its first two args."""
    return g(f, argnums=(0, 1))

def cplx(*shape):
    """Distinct complex values with real and imaginary parts in [-1, 1], in `shape`."""
    n = int(np.prod(shape))
    re = (np.arange(n) * 37 % 101 - 50) / 50.0
    im = (np.arange(n) * 23 % 97 - 48) / 48.0
    return jnp.asarray((re + 1j * im).reshape(shape))

def gh(f, argnums=0):
    """The holomorphic gradient of the weighted sum of f's (complex) output."""
    return jax.grad(lambda *a: wsum(f(*a)), argnums=argnums, holomorphic=True)

def gg(f):
    """The second derivative of a scalar function, elementwise over an array of points."""
    d = jax.grad(lambda x: jnp.sum(f(x)))
    return jax.grad(lambda x: jnp.sum(d(x)))

def ggg(f):
    """The third derivative of a scalar function, elementwise over an array of points."""
    d2 = gg(f)
    return jax.grad(lambda x: jnp.sum(d2(x)))
'''

# Unary ufuncs: (name, function expression, arguments), gradient at ordinary points.
_UNARY = [
    ("sin", "jnp.sin", "(pts(7),)"),
    ("cos", "jnp.cos", "(pts(7),)"),
    ("tan", "jnp.tan", "(pts(7, lo=-1.2, hi=1.2),)"),
    ("arcsin", "jnp.arcsin", "(pts(7, lo=-0.9, hi=0.9),)"),
    ("arccos", "jnp.arccos", "(pts(7, lo=-0.9, hi=0.9),)"),
    ("arctan", "jnp.arctan", "(pts(7, lo=-3.0, hi=3.0),)"),
    ("sinh", "jnp.sinh", "(pts(7),)"),
    ("cosh", "jnp.cosh", "(pts(7),)"),
    ("tanh", "jnp.tanh", "(pts(7, lo=-4.0, hi=4.0),)"),
    ("arcsinh", "jnp.arcsinh", "(pts(7, lo=-3.0, hi=3.0),)"),
    ("arccosh", "jnp.arccosh", "(pts(7, lo=1.1, hi=4.0),)"),
    ("arctanh", "jnp.arctanh", "(pts(7, lo=-0.9, hi=0.9),)"),
    ("exp", "jnp.exp", "(pts(7),)"),
    ("exp2", "jnp.exp2", "(pts(7),)"),
    ("expm1", "jnp.expm1", "(pts(7),)"),
    ("log", "jnp.log", "(pts(7, lo=0.1, hi=4.0),)"),
    ("log2", "jnp.log2", "(pts(7, lo=0.1, hi=4.0),)"),
    ("log10", "jnp.log10", "(pts(7, lo=0.1, hi=4.0),)"),
    ("log1p", "jnp.log1p", "(pts(7, lo=-0.9, hi=4.0),)"),
    ("sqrt", "jnp.sqrt", "(pts(7, lo=0.1, hi=4.0),)"),
    ("cbrt", "jnp.cbrt", "(pts(6, lo=-3.0, hi=3.0),)"),
    ("square", "jnp.square", "(pts(7),)"),
    ("reciprocal", "jnp.reciprocal", "(pts(6, lo=-3.0, hi=3.0),)"),
    ("abs", "jnp.abs", "(pts(6),)"),
    ("fabs", "jnp.fabs", "(pts(6),)"),
    ("negative", "jnp.negative", "(pts(5),)"),
    ("positive", "jnp.positive", "(pts(5),)"),
    ("sign", "jnp.sign", "(pts(5),)"),
    ("floor", "jnp.floor", "(pts(5),)"),
    ("ceil", "jnp.ceil", "(pts(5),)"),
    ("round", "jnp.round", "(pts(5),)"),
    ("round_decimals", "lambda x: jnp.round(x, 1)", "(pts(5),)"),
    ("trunc", "jnp.trunc", "(pts(5),)"),
    ("rint", "jnp.rint", "(pts(5),)"),
    ("deg2rad", "jnp.deg2rad", "(pts(5),)"),
    ("rad2deg", "jnp.rad2deg", "(pts(5),)"),
    ("sinc", "jnp.sinc", "(pts(6),)"),
    ("rsqrt", "lax.rsqrt", "(pts(7, lo=0.1, hi=4.0),)"),
    ("logistic", "lax.logistic", "(pts(7, lo=-5.0, hi=5.0),)"),
    ("lax_erf", "lax.erf", "(pts(7),)"),
    ("lax_erfc", "lax.erfc", "(pts(7),)"),
    ("lax_erf_inv", "lax.erf_inv", "(pts(7, lo=-0.9, hi=0.9),)"),
    ("lax_lgamma", "lax.lgamma", "(pts(7, lo=0.2, hi=5.0),)"),
    ("lax_digamma", "lax.digamma", "(pts(7, lo=0.2, hi=5.0),)"),
    ("integer_pow_3", "lambda x: lax.integer_pow(x, 3)", "(pts(5),)"),
    ("integer_pow_neg2", "lambda x: lax.integer_pow(x, -2)", "(pts(6),)"),
    ("pow_scalar_exponent", "lambda x: x ** 2.5", "(pts(5, lo=0.5, hi=3.0),)"),
    ("nan_to_num", "jnp.nan_to_num", "(arr([1.0, np.nan, np.inf, -np.inf, -2.0]),)"),
    ("conj_real", "jnp.conj", "(pts(4),)"),
    ("real_of_real", "jnp.real", "(pts(4),)"),
    ("signbit_cast", "lambda x: jnp.signbit(x).astype(x.dtype) * x", "(pts(4),)"),
    ("modf_parts", "lambda x: jnp.modf(x)[0] * 2 + jnp.modf(x)[1]", "(pts(5, lo=-2.7, hi=2.3),)"),
    ("frexp_mantissa", "lambda x: jnp.frexp(x)[0]", "(pts(5, lo=0.3, hi=9.0),)"),
    ("isfinite_mask", "lambda x: jnp.where(jnp.isfinite(x), x, 0.0)",
     "(arr([1.0, np.inf, -2.0, np.nan]),)"),
]

UNARY = [(f"unary/{name}", f"g({fun})", args) for name, fun, args in _UNARY]

# Special points and kinks, where JAX's subgradient conventions decide.
KINKS: list[Case] = [
    ("kink/abs_at_zero", "g(jnp.abs)", "(arr([-1.0, 0.0, 1.0]),)"),
    ("kink/sqrt_at_zero", "g(jnp.sqrt)", "(arr([0.0, 1.0]),)"),
    ("kink/sqrt_negative", "g(jnp.sqrt)", "(arr([-1.0, 4.0]),)"),
    ("kink/cbrt_at_zero", "g(jnp.cbrt)", "(arr([0.0, 8.0, -8.0]),)"),
    ("kink/log_at_zero", "g(jnp.log)", "(arr([0.0, 1.0, -1.0]),)"),
    ("kink/log1p_at_minus_one", "g(jnp.log1p)", "(arr([-1.0, 0.0]),)"),
    ("kink/arcsin_at_one", "g(jnp.arcsin)", "(arr([1.0, -1.0, 0.0]),)"),
    ("kink/arctanh_at_one", "g(jnp.arctanh)", "(arr([1.0, 0.0]),)"),
    ("kink/arccosh_at_one", "g(jnp.arccosh)", "(arr([1.0, 2.0]),)"),
    ("kink/pow_half_at_zero", "g(lambda x: x ** 0.5)", "(arr([0.0, 4.0]),)"),
    ("kink/square_at_zero", "g(lambda x: x ** 2)", "(arr([0.0, -1.0]),)"),
    ("kink/integer_pow_0", "g(lambda x: lax.integer_pow(x, 0))", "(arr([0.0, 2.0]),)"),
    ("kink/power_zero_exponent", "g(lambda x: jnp.power(x, 0.0))", "(arr([0.0, 2.0]),)"),
    ("kink/power_both_at_zero", "g2(jnp.power)", "(arr([0.0, 0.0, 2.0]), arr([0.0, 2.0, 0.0]))"),
    ("kink/power_negative_base", "g2(jnp.power)", "(arr([-2.0, -1.0]), arr([2.0, 3.0]))"),
    ("kink/float_power_zero", "g2(jnp.float_power)", "(arr([0.0, 1.0]), arr([1.0, 0.0]))"),
    ("kink/relu_at_zero", "g(nn.relu)", "(arr([-1.0, 0.0, 1.0]),)"),
    ("kink/relu6_ends", "g(nn.relu6)", "(arr([-1.0, 0.0, 3.0, 6.0, 7.0]),)"),
    ("kink/maximum_tie", "g2(jnp.maximum)", "(arr([1.0, 2.0, 3.0]), arr([1.0, 1.0, 4.0]))"),
    ("kink/minimum_tie", "g2(jnp.minimum)", "(arr([1.0, 2.0, 3.0]), arr([1.0, 1.0, 4.0]))"),
    ("kink/maximum_self", "g(lambda x: jnp.maximum(x, x))", "(pts(3),)"),
    ("kink/fmax_tie", "g2(jnp.fmax)", "(arr([1.0, np.nan, 3.0]), arr([1.0, 1.0, np.nan]))"),
    ("kink/fmin_tie", "g2(jnp.fmin)", "(arr([1.0, np.nan, 3.0]), arr([1.0, 1.0, np.nan]))"),
    ("kink/maximum_constant_tie", "g(lambda x: jnp.maximum(x, 0.0))", "(arr([-1.0, 0.0, 1.0]),)"),
    ("kink/clip_at_bounds", "g(lambda x: jnp.clip(x, -1.0, 1.0))",
     "(arr([-2.0, -1.0, 0.0, 1.0, 2.0]),)"),
    ("kink/clip_bounds_grad", "jax.grad(lambda lo, hi: wsum(jnp.clip(arr([-2.0, -1.0, 0.0, 1.0, "
     "2.0]), lo, hi)), argnums=(0, 1))", "(-1.0, 1.0)"),
    ("kink/lax_clamp", "g(lambda x: lax.clamp(-1.0, x, 1.0))", "(arr([-2.0, -1.0, 0.0, 1.0]),)"),
    ("kink/lax_clamp_all", "jax.grad(lambda lo, x, hi: wsum(lax.clamp(lo, x, hi)), "
     "argnums=(0, 1, 2))",
     "(arr([-1.0, -1.0, -1.0]), arr([-2.0, 0.0, 1.0]), arr([1.0, 1.0, 1.0]))"),
    ("kink/lax_max_tie", "g2(lax.max)", "(arr([1.0, 2.0]), arr([1.0, 3.0]))"),
    ("kink/lax_min_tie", "g2(lax.min)", "(arr([1.0, 2.0]), arr([1.0, 3.0]))"),
    ("kink/arctan2_origin", "g2(jnp.arctan2)", "(arr([0.0, 1.0]), arr([0.0, 1.0]))"),
    ("kink/hypot_origin", "g2(jnp.hypot)", "(arr([0.0, 3.0]), arr([0.0, 4.0]))"),
    ("kink/logaddexp_infs", "g2(jnp.logaddexp)",
     "(arr([-np.inf, 0.0, np.inf]), arr([-np.inf, -np.inf, 1.0]))"),
    ("kink/logaddexp2_infs", "g2(jnp.logaddexp2)", "(arr([-np.inf, 0.0]), arr([-np.inf, 1.0]))"),
    ("kink/sinc_at_zero", "g(jnp.sinc)", "(arr([0.0, 0.5]),)"),
    ("kink/sinc_second_at_zero", "gg(jnp.sinc)", "(arr([0.0, 0.5]),)"),
    ("kink/where_sqrt_trap", "g(lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0))",
     "(arr([-1.0, 0.0, 4.0]),)"),
    ("kink/where_safe_sqrt", "g(lambda x: jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)), "
     "0.0))", "(arr([-1.0, 0.0, 4.0]),)"),
    ("kink/exp_overflow", "g(jnp.exp)", "(arr([100.0, 0.0]),)"),
    ("kink/tanh_saturated", "g(jnp.tanh)", "(arr([-30.0, 30.0]),)"),
    ("kink/logistic_saturated", "g(lax.logistic)", "(arr([-100.0, 100.0]),)"),
    ("kink/sign_at_zero", "g(lambda x: jnp.sign(x) * x)", "(arr([-2.0, 0.0, 2.0]),)"),
    ("kink/div_by_zero", "g2(jnp.divide)", "(arr([1.0, 0.0]), arr([0.0, 0.0]))"),
    ("kink/reciprocal_at_zero", "g(jnp.reciprocal)", "(arr([0.0, 2.0]),)"),
    ("kink/copysign_zero", "g2(jnp.copysign)", "(arr([1.0, -2.0, 3.0]), arr([0.0, -0.0, -1.0]))"),
    ("kink/max_reduce_ties", "g(jnp.max)", "(arr([1.0, 3.0, 3.0, 2.0]),)"),
    ("kink/min_reduce_ties", "g(jnp.min)", "(arr([1.0, 1.0, 3.0, 1.0]),)"),
    ("kink/max_reduce_inf", "g(jnp.max)", "(arr([-np.inf, -np.inf]),)"),
    ("kink/sort_ties", "g(jnp.sort)", "(arr([2.0, 1.0, 2.0, 1.0]),)"),
    ("kink/erfinv_at_one", "g(sp.erfinv)", "(arr([1.0, 0.0]),)"),
    ("kink/lgamma_at_pole", "g(lax.lgamma)", "(arr([0.0, 1.0, 2.0]),)"),
    ("kink/nan_input", "g(jnp.sin)", "(arr([np.nan, 1.0]),)"),
    ("kink/norm_at_zero", "jax.grad(lambda x: jnp.sqrt(jnp.sum(x ** 2)))", "(arr([0.0, 0.0]),)"),
]

# Binary ufuncs: gradients with respect to both arguments, with broadcasting.
_BINARY = [
    ("add", "jnp.add"), ("subtract", "jnp.subtract"), ("multiply", "jnp.multiply"),
    ("divide", "jnp.divide"), ("true_divide", "jnp.true_divide"),
    ("floor_divide", "jnp.floor_divide"), ("power", "jnp.power"),
    ("float_power", "jnp.float_power"), ("arctan2", "jnp.arctan2"), ("hypot", "jnp.hypot"),
    ("logaddexp", "jnp.logaddexp"), ("logaddexp2", "jnp.logaddexp2"),
    ("maximum", "jnp.maximum"), ("minimum", "jnp.minimum"), ("fmax", "jnp.fmax"),
    ("fmin", "jnp.fmin"), ("copysign", "jnp.copysign"), ("remainder", "jnp.remainder"),
    ("mod", "jnp.mod"), ("fmod", "jnp.fmod"), ("heaviside", "jnp.heaviside"),
    ("lax_rem", "lax.rem"), ("lax_atan2", "lax.atan2"), ("lax_pow", "lax.pow"),
]
# Positive bases for the powers; same shapes for the lax functions (which do not broadcast).
_BINARY_ARGS = {"power": "(grid(3, 4), grid(4) - 0.3)",
                "float_power": "(grid(3, 4), grid(4) - 0.3)",
                "lax_rem": "(mixed(3, 4, scale=2.0), grid(3, 4) - 0.3)",
                "lax_atan2": "(mixed(3, 4, scale=2.0), grid(3, 4) - 0.3)",
                "lax_pow": "(grid(3, 4), mixed(3, 4, scale=2.0))"}
BINARY: list[Case] = [
    (f"binary/{name}", f"g2({fun})",
     _BINARY_ARGS.get(name, "(mixed(3, 4, scale=2.0), grid(4) - 0.3)"))
    for name, fun in _BINARY
] + [
    ("binary/divmod", "g2(lambda x, y: jnp.divmod(x, y)[1] + jnp.divmod(x, y)[0])",
     "(mixed(5, scale=3.0), grid(5))"),
    ("binary/ldexp", "g(lambda x: jnp.ldexp(x, jnp.arange(4)))", "(pts(4),)"),
    ("binary/python_scalar_weak", "jax.grad(lambda x: x * 2.0 + x ** 2)", "(3.0,)"),
    ("binary/python_scalar_two_args", "jax.grad(lambda x, y: x * y + y, argnums=(0, 1))",
     "(2.0, 5.0)"),
    ("binary/broadcast_scalar_array", "jax.grad(lambda s, x: wsum(s * x + s), argnums=(0, 1))",
     "(jnp.float32(1.5), pts(2, 3))"),
    ("binary/broadcast_column_row", "g2(lambda a, b: a * b - a / (b + 3.0))",
     "(pts(3, 1), pts(1, 4))"),
    ("binary/logaddexp_equal", "g2(jnp.logaddexp)", "(arr([1.0, 2.0]), arr([1.0, 2.0]))"),
    ("binary/mixed_dtype_int", "g(lambda x: x * jnp.arange(3) + jnp.arange(3) / 2)",
     "(pts(3),)"),
    ("binary/float16_input", "g(lambda x: jnp.sin(x) * x)",
     "(jnp.asarray(np.linspace(-1, 1, 4), dtype=jnp.float16),)"),
    ("binary/bfloat16_input", "g(lambda x: jnp.exp(x) * x)",
     "(jnp.asarray(np.linspace(-1, 1, 4), dtype=jnp.bfloat16),)"),
]

REDUCTIONS: list[Case] = [
    ("reduce/sum_all", "g(jnp.sum)", "(mixed(3, 4),)"),
    ("reduce/sum_axis0", "g(lambda x: jnp.sum(x, axis=0))", "(mixed(3, 4),)"),
    ("reduce/sum_axes_keepdims", "g(lambda x: jnp.sum(x ** 2, axis=(0, 2), keepdims=True))",
     "(mixed(2, 3, 4),)"),
    ("reduce/sum_where", "g(lambda x: jnp.sum(x, axis=1, where=jnp.arange(4) % 2 == 0))",
     "(mixed(3, 4),)"),
    ("reduce/sum_initial", "g(lambda x: jnp.sum(x ** 2, axis=0, initial=2.0))", "(mixed(3, 4),)"),
    ("reduce/prod", "g(jnp.prod)", "(grid(5),)"),
    ("reduce/prod_axis", "g(lambda x: jnp.prod(x, axis=1))", "(mixed(3, 4),)"),
    ("reduce/prod_one_zero", "g(jnp.prod)", "(arr([2.0, 0.0, 3.0, 4.0]),)"),
    ("reduce/prod_two_zeros", "g(jnp.prod)", "(arr([2.0, 0.0, 3.0, 0.0]),)"),
    ("reduce/prod_where", "g(lambda x: jnp.prod(x, where=x > 0.6))", "(grid(5),)"),
    ("reduce/max_axis", "g(lambda x: jnp.max(x, axis=1))", "(mixed(3, 4),)"),
    ("reduce/max_keepdims", "g(lambda x: jnp.max(x, axis=0, keepdims=True) * x)",
     "(mixed(3, 4),)"),
    ("reduce/max_initial", "g(lambda x: jnp.max(x, axis=1, initial=0.5))", "(mixed(3, 4),)"),
    ("reduce/max_where", "g(lambda x: jnp.max(x, axis=0, where=x < 0.5, initial=-5.0))",
     "(mixed(3, 4),)"),
    ("reduce/min_axis", "g(lambda x: jnp.min(x, axis=0))", "(mixed(3, 4),)"),
    ("reduce/amax", "g(lambda x: jnp.amax(x, axis=(0, 1)))", "(mixed(2, 3, 2),)"),
    ("reduce/amin_ties_rows", "g(lambda x: jnp.amin(x, axis=1))",
     "(arr([[1.0, 1.0, 2.0], [0.0, 3.0, 0.0]]),)"),
    ("reduce/mean", "g(jnp.mean)", "(mixed(3, 4),)"),
    ("reduce/mean_axis", "g(lambda x: jnp.mean(x, axis=-1, keepdims=True))", "(mixed(3, 4),)"),
    ("reduce/mean_where", "g(lambda x: jnp.mean(x, axis=1, where=x > -0.5))", "(mixed(3, 4),)"),
    ("reduce/var", "g(jnp.var)", "(mixed(3, 4),)"),
    ("reduce/var_ddof_axis", "g(lambda x: jnp.var(x, axis=0, ddof=1))", "(mixed(3, 4),)"),
    ("reduce/var_where", "g(lambda x: jnp.var(x, axis=1, where=x > -0.5))", "(mixed(3, 4),)"),
    ("reduce/std", "g(lambda x: jnp.std(x, axis=1))", "(mixed(3, 4),)"),
    ("reduce/std_keepdims_ddof", "g(lambda x: jnp.std(x, axis=0, ddof=1, keepdims=True))",
     "(mixed(3, 4),)"),
    ("reduce/std_constant", "g(jnp.std)", "(arr([2.0, 2.0, 2.0]),)"),
    ("reduce/average_weights", "g2(lambda x, w: jnp.average(x, axis=1, weights=w))",
     "(mixed(3, 4), grid(4))"),
    ("reduce/average_returned", "g2(lambda x, w: jnp.average(x, weights=w, returned=True)[0] * "
     "jnp.average(x, weights=w, returned=True)[1])", "(mixed(5), grid(5))"),
    ("reduce/ptp", "g(lambda x: jnp.ptp(x, axis=1))", "(mixed(3, 4),)"),
    ("reduce/trace", "g(jnp.trace)", "(mixed(3, 3),)"),
    ("reduce/trace_offset", "g(lambda x: jnp.trace(x, offset=1))", "(mixed(3, 4),)"),
    ("reduce/logsumexp_lax_style", "g(lambda x: jnp.log(jnp.sum(jnp.exp(x), axis=0)))",
     "(mixed(3, 4),)"),
    ("reduce/nansum", "g(jnp.nansum)", "(arr([1.0, np.nan, 3.0, -2.0]),)"),
    ("reduce/nanmean", "g(lambda x: jnp.nanmean(x, axis=1))",
     "(arr([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0]]),)"),
    ("reduce/nanmax", "g(lambda x: jnp.nanmax(x, axis=1))",
     "(arr([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0]]),)"),
    ("reduce/nanmin", "g(jnp.nanmin)", "(arr([1.0, np.nan, -3.0, 2.0]),)"),
    ("reduce/nanprod", "g(jnp.nanprod)", "(arr([1.5, np.nan, 3.0, -2.0]),)"),
    ("reduce/nanvar", "g(jnp.nanvar)", "(arr([1.0, np.nan, 3.0, -2.0]),)"),
    ("reduce/nanstd_axis", "g(lambda x: jnp.nanstd(x, axis=0))",
     "(arr([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0], [0.5, 0.25, 2.0]]),)"),
    ("reduce/median_odd", "g(jnp.median)", "(mixed(5),)"),
    ("reduce/median_even", "g(jnp.median)", "(mixed(6),)"),
    ("reduce/median_axis", "g(lambda x: jnp.median(x, axis=0))", "(mixed(4, 3),)"),
    ("reduce/median_keepdims", "g(lambda x: jnp.median(x, axis=1, keepdims=True))",
     "(mixed(3, 4),)"),
    ("reduce/nanmedian", "g(jnp.nanmedian)", "(arr([1.0, np.nan, 3.0, -2.0, 0.5]),)"),
    ("reduce/quantile_linear", "g(lambda x: jnp.quantile(x, 0.3))", "(mixed(7),)"),
    ("reduce/quantile_array_q", "g(lambda x: jnp.quantile(x, jnp.array([0.1, 0.5, 0.9]), axis=1))",
     "(mixed(3, 5),)"),
    ("reduce/quantile_lower", "g(lambda x: jnp.quantile(x, 0.3, method='lower'))", "(mixed(7),)"),
    ("reduce/quantile_higher", "g(lambda x: jnp.quantile(x, 0.3, method='higher'))",
     "(mixed(7),)"),
    ("reduce/quantile_nearest", "g(lambda x: jnp.quantile(x, 0.3, method='nearest'))",
     "(mixed(7),)"),
    ("reduce/quantile_midpoint", "g(lambda x: jnp.quantile(x, 0.3, method='midpoint'))",
     "(mixed(7),)"),
    ("reduce/quantile_grad_q", "jax.grad(lambda q: jnp.quantile(mixed(7), q))", "(0.3,)"),
    ("reduce/percentile", "g(lambda x: jnp.percentile(x, jnp.array([25.0, 75.0])))",
     "(mixed(8),)"),
    ("reduce/nanquantile", "g(lambda x: jnp.nanquantile(x, 0.4))",
     "(arr([1.0, np.nan, 3.0, -2.0, 0.5]),)"),
    ("reduce/nanpercentile", "g(lambda x: jnp.nanpercentile(x, 60.0, axis=1))",
     "(arr([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0]]),)"),
    ("reduce/cumsum", "g(jnp.cumsum)", "(mixed(5),)"),
    ("reduce/cumsum_axis", "g(lambda x: jnp.cumsum(x, axis=0))", "(mixed(3, 4),)"),
    ("reduce/cumprod", "g(jnp.cumprod)", "(grid(5),)"),
    ("reduce/cumprod_zero", "g(jnp.cumprod)", "(arr([2.0, 0.0, 3.0, 0.5]),)"),
    ("reduce/cumprod_axis1", "g(lambda x: jnp.cumprod(x, axis=1))", "(mixed(3, 4),)"),
    ("reduce/cumulative_sum_initial", "g(lambda x: jnp.cumulative_sum(x, include_initial=True))",
     "(mixed(4),)"),
    ("reduce/cumulative_prod", "g(lambda x: jnp.cumulative_prod(x, axis=0))", "(mixed(3, 2),)"),
    ("reduce/nancumsum", "g(jnp.nancumsum)", "(arr([1.0, np.nan, 3.0, -2.0]),)"),
    ("reduce/nancumprod", "g(jnp.nancumprod)", "(arr([1.5, np.nan, 3.0, -2.0]),)"),
    ("reduce/lax_cumsum_reverse", "g(lambda x: lax.cumsum(x, axis=0, reverse=True))",
     "(mixed(4, 2),)"),
    ("reduce/lax_cumprod", "g(lambda x: lax.cumprod(x, axis=1))", "(mixed(2, 4),)"),
    ("reduce/lax_cummax", "g(lambda x: lax.cummax(x, axis=0))", "(mixed(6),)"),
    ("reduce/lax_cummin_reverse", "g(lambda x: lax.cummin(x, axis=0, reverse=True))",
     "(mixed(6),)"),
    ("reduce/lax_cumlogsumexp", "g(lambda x: lax.cumlogsumexp(x, axis=1))", "(mixed(2, 4),)"),
    ("reduce/lax_reduce_max", "g(lambda x: lax.reduce_max(x, (1,)))", "(mixed(3, 4),)"),
    ("reduce/lax_reduce_prod", "g(lambda x: lax.reduce_prod(x, (0,)))", "(mixed(3, 4),)"),
    ("reduce/argmax_to_float", "jax.grad(lambda x: jnp.argmax(x).astype(jnp.float32) * "
     "jnp.sum(x))", "(mixed(5),)"),
    ("reduce/count_times_x", "g(lambda x: jnp.count_nonzero(x > 0) * x)", "(mixed(5),)"),
    ("reduce/any_all_where", "g(lambda x: jnp.where(jnp.any(x > 0.9) & jnp.all(x > -2), x, -x))",
     "(mixed(5),)"),
    ("reduce/mean_int_promoted", "jax.grad(lambda x: jnp.mean(x * jnp.arange(4)))", "(pts(4),)"),
    ("reduce/sum_dtype_float16", "g(lambda x: jnp.sum(x, dtype=jnp.float16))", "(pts(4),)"),
]

SORTING: list[Case] = [
    ("sort/sort", "g(jnp.sort)", "(mixed(6),)"),
    ("sort/sort_axis0", "g(lambda x: jnp.sort(x, axis=0))", "(mixed(4, 3),)"),
    ("sort/sort_descending", "g(lambda x: jnp.sort(x, descending=True))", "(mixed(5),)"),
    ("sort/sort_none_axis", "g(lambda x: jnp.sort(x, axis=None))", "(mixed(2, 3),)"),
    ("sort/argsort_take", "g(lambda x: x[jnp.argsort(x)])", "(mixed(5),)"),
    ("sort/argsort_take_along", "g(lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), "
     "axis=1))", "(mixed(3, 4),)"),
    ("sort/argsort_descending", "g(lambda x: x[jnp.argsort(-x)] * jnp.arange(5))", "(mixed(5),)"),
    ("sort/partition", "g(lambda x: jnp.partition(x, 2))", "(mixed(6),)"),
    ("sort/partition_value", "g(lambda x: jnp.partition(x, 3)[3])", "(mixed(6),)"),
    ("sort/argpartition_take", "g(lambda x: x[jnp.argpartition(x, 2)[:3]])", "(mixed(6),)"),
    ("sort/top_k", "g(lambda x: lax.top_k(x, 3)[0])", "(mixed(7),)"),
    ("sort/top_k_2d", "g(lambda x: lax.top_k(x, 2)[0])", "(mixed(3, 4),)"),
    ("sort/sort_key_val", "g2(lambda k, v: lax.sort_key_val(k, v)[1] * lax.sort_key_val(k, v)[0])",
     "(mixed(5), pts(5))"),
    ("sort/lax_sort_multi", "g2(lambda a, b: lax.sort((a, b), num_keys=1)[1])",
     "(mixed(5), pts(5))"),
    ("sort/sort_complex_real", "g(lambda x: jnp.real(jnp.sort_complex(x)))", "(mixed(4),)"),
    ("sort/searchsorted_const", "g(lambda x: x * jnp.searchsorted(jnp.sort(x), 0.1))",
     "(mixed(5),)"),
    ("sort/lexsort_take", "g(lambda x: x[jnp.lexsort((x, jnp.floor(x)))])", "(mixed(5),)"),
    ("sort/unique_size", "g(lambda x: jnp.unique(x, size=4, fill_value=0.0))",
     "(arr([3.0, 1.0, 3.0, 2.0, 1.0]),)"),
    ("sort/max_via_sort", "jax.grad(lambda x: jnp.sort(x)[-1] - jnp.sort(x)[0])", "(mixed(5),)"),
]

INDEXING: list[Case] = [
    ("index/int", "g(lambda x: x[1])", "(mixed(4),)"),
    ("index/negative", "g(lambda x: x[-1] * x[0])", "(mixed(4),)"),
    ("index/slice", "g(lambda x: x[1:3])", "(mixed(5),)"),
    ("index/slice_step", "g(lambda x: x[::2])", "(mixed(5),)"),
    ("index/slice_reverse", "g(lambda x: x[::-1] * jnp.arange(5))", "(mixed(5),)"),
    ("index/slice_negative_step", "g(lambda x: x[4:0:-2])", "(mixed(6),)"),
    ("index/newaxis_ellipsis", "g(lambda x: x[None, ..., 1])", "(mixed(2, 3),)"),
    ("index/2d_mixed", "g(lambda x: x[1, 1:])", "(mixed(3, 4),)"),
    ("index/array", "g(lambda x: x[jnp.array([2, 0, 3])])", "(mixed(5),)"),
    ("index/array_duplicates", "g(lambda x: x[jnp.array([0, 0, 2, 0])])", "(mixed(4),)"),
    ("index/array_2d", "g(lambda x: x[jnp.array([[0, 1], [1, 2]])])", "(mixed(3),)"),
    ("index/column_array", "g(lambda x: x[:, jnp.array([3, 0])])", "(mixed(3, 4),)"),
    ("index/two_arrays", "g(lambda x: x[jnp.array([0, 2]), jnp.array([1, 3])])",
     "(mixed(3, 4),)"),
    ("index/broadcast_arrays", "g(lambda x: x[jnp.array([[0], [2]]), jnp.array([1, 3])])",
     "(mixed(3, 4),)"),
    ("index/bool_mask_concrete", "g(lambda x: x[np.array([True, False, True, True])])",
     "(mixed(4),)"),
    ("index/out_of_bounds_clamps", "g(lambda x: x[jnp.array([5, -7])])", "(mixed(4),)"),
    ("index/negative_array", "g(lambda x: x[jnp.array([-1, -2])])", "(mixed(4),)"),
    ("index/take", "g(lambda x: jnp.take(x, jnp.array([2, 0, 2])))", "(mixed(4),)"),
    ("index/take_axis", "g(lambda x: jnp.take(x, jnp.array([1, 1]), axis=1))", "(mixed(3, 4),)"),
    ("index/take_clip", "g(lambda x: jnp.take(x, jnp.array([0, 9]), mode='clip'))",
     "(mixed(4),)"),
    ("index/take_wrap", "g(lambda x: jnp.take(x, jnp.array([-1, 5]), mode='wrap'))",
     "(mixed(4),)"),
    ("index/take_fill", "g(lambda x: jnp.take(x, jnp.array([1, 9]), mode='fill', "
     "fill_value=2.0))", "(mixed(4),)"),
    ("index/take_along_axis", "g(lambda x: jnp.take_along_axis(x, jnp.array([[0, 0], [2, 1], "
     "[3, 3]]), axis=1))", "(mixed(3, 4),)"),
    ("index/take_along_axis0", "g(lambda x: jnp.take_along_axis(x, jnp.array([[2, 0, 1, 0]]), "
     "axis=0))", "(mixed(3, 4),)"),
    ("index/at_set", "g(lambda x: x.at[1].set(5.0) * x)", "(mixed(4),)"),
    ("index/at_set_updates", "g2(lambda x, u: x.at[jnp.array([0, 2])].set(u))",
     "(mixed(4), pts(2))"),
    ("index/at_set_duplicate_updates", "g2(lambda x, u: x.at[jnp.array([1, 1, 3])].set(u))",
     "(mixed(4), pts(3))"),
    ("index/at_add", "g2(lambda x, u: x.at[jnp.array([0, 0, 2])].add(u) ** 2)",
     "(mixed(4), pts(3))"),
    ("index/at_add_slice", "g2(lambda x, u: x.at[1:3, 0].add(u * x[0, 1]))",
     "(mixed(3, 4), pts(2))"),
    ("index/at_mul_unique", "g2(lambda x, u: x.at[jnp.array([0, 2])].mul(u, unique_indices=True))",
     "(mixed(4), pts(2))"),
    ("index/at_min", "g2(lambda x, u: x.at[jnp.array([0, 1, 1])].min(u))",
     "(mixed(4), arr([-2.0, 0.0, 0.5]))"),
    ("index/at_max", "g2(lambda x, u: x.at[jnp.array([0, 1, 3])].max(u))",
     "(mixed(4), arr([-2.0, 0.0, 0.5]))"),
    ("index/at_max_tie", "g2(lambda x, u: x.at[0].max(u))", "(arr([1.0, 2.0]), 1.0)"),
    ("index/at_get_fill", "g(lambda x: x.at[jnp.array([0, 7])].get(mode='fill', fill_value=3.0))",
     "(mixed(4),)"),
    ("index/at_set_out_of_bounds", "g2(lambda x, u: x.at[jnp.array([1, 9])].set(u))",
     "(mixed(4), pts(2))"),
    ("index/at_divide", "g2(lambda x, u: x.at[2].divide(u))", "(mixed(4), 2.5)"),
    ("index/at_power", "g2(lambda x, u: x.at[1].power(u))", "(grid(3), 2.0)"),
    ("index/at_subtract", "g2(lambda x, u: x.at[:, 1].subtract(u))", "(mixed(2, 3), pts(2))"),
    ("index/dynamic_slice", "g(lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)))",
     "(mixed(3, 4),)"),
    ("index/dynamic_slice_clamped", "g(lambda x: lax.dynamic_slice(x, (3,), (3,)))",
     "(mixed(5),)"),
    ("index/dynamic_update_slice", "g2(lambda x, u: lax.dynamic_update_slice(x, u, (1, 1)))",
     "(mixed(3, 4), pts(2, 2))"),
    ("index/dynamic_index_in_dim", "g(lambda x: lax.dynamic_index_in_dim(x, 2, axis=1))",
     "(mixed(3, 4),)"),
    ("index/put_along_axis", "g2(lambda x, v: jnp.put_along_axis(x, jnp.array([[1], [0]]), v, "
     "axis=1, inplace=False))", "(mixed(2, 3), pts(2, 1))"),
    ("index/choose", "jax.grad(lambda a, b: wsum(jnp.choose(jnp.array([0, 1, 1, 0]), [a, b])), "
     "argnums=(0, 1))", "(mixed(4), pts(4))"),
    ("index/diagonal", "g(jnp.diagonal)", "(mixed(3, 4),)"),
    ("index/diagonal_offset", "g(lambda x: jnp.diagonal(x, offset=-1))", "(mixed(3, 4),)"),
    ("index/diag_vector", "g(jnp.diag)", "(mixed(3),)"),
    ("index/diag_matrix", "g(lambda x: jnp.diag(x, k=1))", "(mixed(3, 3),)"),
    ("index/diagflat", "g(jnp.diagflat)", "(mixed(2, 2),)"),
    ("index/tril", "g(jnp.tril)", "(mixed(3, 3),)"),
    ("index/triu_k", "g(lambda x: jnp.triu(x, k=-1))", "(mixed(3, 4),)"),
    ("index/fill_diagonal", "g(lambda x: jnp.fill_diagonal(x, 0.5, inplace=False))",
     "(mixed(3, 3),)"),
    ("index/delete", "g(lambda x: jnp.delete(x, 1, axis=0))", "(mixed(3, 2),)"),
    ("index/insert", "g2(lambda x, v: jnp.insert(x, 1, v))", "(mixed(4), 2.0)"),
    ("index/extract", "g(lambda x: jnp.extract(np.array([True, False, True]), x))",
     "(mixed(3),)"),
    ("index/compress", "g(lambda x: jnp.compress(np.array([False, True, True]), x, axis=1))",
     "(mixed(2, 3),)"),
]

SELECTION: list[Case] = [
    ("select/where", "g2(lambda a, b: jnp.where(a > b, a, b))",
     "(mixed(5), pts(5, lo=-0.5, hi=0.5))"),
    ("select/where_scalar_branch", "g(lambda x: jnp.where(x > 0, x ** 2, 1.0))", "(mixed(5),)"),
    ("select/where_broadcast", "g2(lambda a, b: jnp.where(jnp.arange(3)[:, None] > 0, a, b))",
     "(mixed(3, 4), pts(4))"),
    ("select/where_both_same", "g(lambda x: jnp.where(x > 0, x, x))", "(mixed(4),)"),
    ("select/select", "g(lambda x: jnp.select([x < -0.5, x > 0.5], [x ** 2, jnp.sin(x)], x))",
     "(mixed(6),)"),
    ("select/select_default_scalar", "g(lambda x: jnp.select([x < 0], [x * 3.0], 2.0))",
     "(mixed(4),)"),
    ("select/lax_select_n", "jax.grad(lambda a, b, c: wsum(lax.select_n(jnp.array([0, 1, 2, 1]), "
     "a, b, c)), argnums=(0, 1, 2))", "(mixed(4), pts(4), grid(4))"),
    ("select/lax_select", "g2(lambda a, b: lax.select(a > 0, a, b))", "(mixed(4), pts(4))"),
    ("select/clip", "g(lambda x: jnp.clip(x, -0.5, 0.3))", "(mixed(6),)"),
    ("select/clip_only_max", "g(lambda x: jnp.clip(x, max=0.2))", "(mixed(5),)"),
    ("select/clip_array_bounds", "jax.grad(lambda x, lo: wsum(jnp.clip(x, lo, 0.5)), "
     "argnums=(0, 1))", "(mixed(4), arr([-0.5, 0.0, 0.2, -1.0]))"),
    ("select/piecewise", "g(lambda x: jnp.piecewise(x, [x < 0, x >= 0], [lambda v: v ** 2, "
     "lambda v: jnp.sin(v)]))", "(mixed(5),)"),
    ("select/piecewise_const", "g(lambda x: jnp.piecewise(x, [x < 0], [0.5, lambda v: v * 3]))",
     "(mixed(5),)"),
    ("select/heaviside_mask", "g(lambda x: jnp.heaviside(x, 0.5) * x)", "(arr([-1.0, 0.0, 2.0]),)"),
]

JOINING: list[Case] = [
    ("join/concatenate", "g2(lambda a, b: jnp.concatenate([a, b, a]))", "(mixed(3), pts(2))"),
    ("join/concatenate_axis1", "g2(lambda a, b: jnp.concatenate([a, b], axis=1))",
     "(mixed(2, 3), pts(2, 1))"),
    ("join/concatenate_none", "g2(lambda a, b: jnp.concatenate([a, b], axis=None))",
     "(mixed(2, 2), pts(3))"),
    ("join/concat", "g2(lambda a, b: jnp.concat([a, b], axis=0))", "(mixed(2, 2), pts(1, 2))"),
    ("join/stack", "g2(lambda a, b: jnp.stack([a, b]))", "(mixed(3), pts(3))"),
    ("join/stack_axis", "g2(lambda a, b: jnp.stack([a, b, a], axis=-1))",
     "(mixed(2, 2), pts(2, 2))"),
    ("join/hstack", "g2(lambda a, b: jnp.hstack([a, b]))", "(mixed(3), pts(2))"),
    ("join/vstack", "g2(lambda a, b: jnp.vstack([a, b]))", "(mixed(3), pts(2, 3))"),
    ("join/dstack", "g2(lambda a, b: jnp.dstack([a, b]))", "(mixed(2, 2), pts(2, 2))"),
    ("join/column_stack", "g2(lambda a, b: jnp.column_stack([a, b]))", "(mixed(3), pts(3, 2))"),
    ("join/append", "g2(lambda a, b: jnp.append(a, b))", "(mixed(2, 2), pts(3))"),
    ("join/split", "g(lambda x: jnp.split(x, 3)[1] * jnp.split(x, 3)[2])", "(mixed(6),)"),
    ("join/split_indices", "g(lambda x: jnp.concatenate([p * (i + 1) for i, p in "
     "enumerate(jnp.split(x, [1, 4]))]))", "(mixed(6),)"),
    ("join/split_axis1", "g(lambda x: jnp.split(x, 2, axis=1)[0])", "(mixed(3, 4),)"),
    ("join/array_split", "g(lambda x: jnp.array_split(x, 3)[0] ** 2)", "(mixed(7),)"),
    ("join/hsplit", "g(lambda x: jnp.hsplit(x, 2)[1])", "(mixed(2, 4),)"),
    ("join/vsplit", "g(lambda x: jnp.vsplit(x, 2)[0] * 3)", "(mixed(4, 2),)"),
    ("join/dsplit", "g(lambda x: jnp.dsplit(x, 2)[1])", "(mixed(2, 1, 4),)"),
    ("join/unstack", "g(lambda x: jnp.unstack(x)[1] * jnp.unstack(x)[0])", "(mixed(3, 2),)"),
    ("join/lax_concatenate", "g2(lambda a, b: lax.concatenate([a, b], 0))", "(mixed(2), pts(3))"),
    ("join/pad_constant", "g(lambda x: jnp.pad(x, (1, 2)))", "(mixed(3),)"),
    ("join/pad_constant_value", "g2(lambda x, c: jnp.pad(x, ((1, 0), (0, 2)), "
     "constant_values=c))", "(mixed(2, 2), 1.5)"),
    ("join/pad_edge", "g(lambda x: jnp.pad(x, 2, mode='edge'))", "(mixed(3),)"),
    ("join/pad_reflect", "g(lambda x: jnp.pad(x, (2, 3), mode='reflect'))", "(mixed(4),)"),
    ("join/pad_symmetric", "g(lambda x: jnp.pad(x, (3, 1), mode='symmetric'))", "(mixed(3),)"),
    ("join/pad_wrap", "g(lambda x: jnp.pad(x, ((1, 1), (2, 0)), mode='wrap'))", "(mixed(2, 3),)"),
    ("join/pad_linear_ramp", "g(lambda x: jnp.pad(x, 2, mode='linear_ramp', end_values=1.0))",
     "(mixed(3),)"),
    ("join/pad_maximum", "g(lambda x: jnp.pad(x, 1, mode='maximum'))", "(mixed(4),)"),
    ("join/pad_mean", "g(lambda x: jnp.pad(x, (1, 2), mode='mean'))", "(mixed(4),)"),
    ("join/pad_minimum_2d", "g(lambda x: jnp.pad(x, ((0, 1), (1, 0)), mode='minimum'))",
     "(mixed(2, 3),)"),
    ("join/pad_median", "g(lambda x: jnp.pad(x, 1, mode='median'))", "(mixed(5),)"),
    ("join/lax_pad_interior", "g2(lambda x, c: lax.pad(x, c, [(1, -1, 1)]))", "(mixed(4), 0.5)"),
    ("join/lax_pad_negative", "g(lambda x: lax.pad(x, 0.0, [(-1, 2, 0), (1, -2, 1)]))",
     "(mixed(3, 3),)"),
    ("join/roll", "g(lambda x: jnp.roll(x, 2) * jnp.arange(5))", "(mixed(5),)"),
    ("join/roll_axis", "g(lambda x: jnp.roll(x, -1, axis=1) * jnp.arange(4))", "(mixed(3, 4),)"),
    ("join/roll_none_axis", "g(lambda x: jnp.roll(x, 3) * jnp.arange(6).reshape(2, 3))",
     "(mixed(2, 3),)"),
    ("join/roll_multi", "g(lambda x: jnp.roll(x, (1, -1), axis=(0, 1)) * jnp.arange(6).reshape(2, "
     "3))", "(mixed(2, 3),)"),
    ("join/flip", "g(lambda x: jnp.flip(x) * jnp.arange(6).reshape(2, 3))", "(mixed(2, 3),)"),
    ("join/flip_axis", "g(lambda x: jnp.flip(x, axis=1) * jnp.arange(6).reshape(2, 3))",
     "(mixed(2, 3),)"),
    ("join/fliplr_flipud", "g(lambda x: jnp.fliplr(x) * jnp.flipud(x))", "(mixed(2, 3),)"),
    ("join/rot90", "g(lambda x: jnp.rot90(x) * jnp.arange(6).reshape(3, 2))", "(mixed(2, 3),)"),
    ("join/rot90_k", "g(lambda x: jnp.rot90(x, k=3, axes=(1, 0)) * jnp.arange(6).reshape(3, 2))",
     "(mixed(2, 3),)"),
    ("join/tile", "g(lambda x: jnp.tile(x, 3) * jnp.arange(6))", "(mixed(2),)"),
    ("join/tile_2d", "g(lambda x: jnp.tile(x, (2, 1, 2)))", "(mixed(2, 3),)"),
    ("join/repeat", "g(lambda x: jnp.repeat(x, 2) * jnp.arange(6))", "(mixed(3),)"),
    ("join/repeat_axis", "g(lambda x: jnp.repeat(x, 3, axis=1))", "(mixed(2, 2),)"),
    ("join/repeat_array", "g(lambda x: jnp.repeat(x, jnp.array([1, 0, 3])))", "(mixed(3),)"),
    ("join/repeat_total_length", "g(lambda x: jnp.repeat(x, jnp.array([2, 1, 2]), "
     "total_repeat_length=4))", "(mixed(3),)"),
    ("join/resize", "g(lambda x: jnp.resize(x, (3, 3)))", "(mixed(2, 2),)"),
    ("join/broadcast_arrays", "g2(lambda a, b: jnp.broadcast_arrays(a, b)[0] * "
     "jnp.broadcast_arrays(a, b)[1])", "(mixed(3, 1), pts(4))"),
    ("join/meshgrid", "g2(lambda a, b: jnp.meshgrid(a, b)[0] - jnp.meshgrid(a, b)[1] ** 2)",
     "(mixed(3), pts(2))"),
    ("join/meshgrid_ij", "g2(lambda a, b: jnp.meshgrid(a, b, indexing='ij')[1] * a[:, None])",
     "(mixed(3), pts(2))"),
]

SHAPES: list[Case] = [
    ("shape/reshape", "g(lambda x: x.reshape(3, 2) * jnp.arange(2))", "(mixed(2, 3),)"),
    ("shape/reshape_minus_one", "g(lambda x: jnp.reshape(x, (-1,)) * jnp.arange(6))",
     "(mixed(2, 3),)"),
    ("shape/reshape_fortran", "g(lambda x: jnp.reshape(x, (3, 2), order='F') * jnp.arange(2))",
     "(mixed(2, 3),)"),
    ("shape/ravel", "g(lambda x: jnp.ravel(x) * jnp.arange(6))", "(mixed(3, 2),)"),
    ("shape/ravel_fortran", "g(lambda x: jnp.ravel(x, order='F') * jnp.arange(6))",
     "(mixed(3, 2),)"),
    ("shape/transpose", "g(lambda x: x.T * jnp.arange(2))", "(mixed(2, 3),)"),
    ("shape/transpose_axes", "g(lambda x: jnp.transpose(x, (2, 0, 1)) * jnp.arange(3))",
     "(mixed(2, 3, 2),)"),
    ("shape/permute_dims", "g(lambda x: jnp.permute_dims(x, (1, 0)) ** 2)", "(mixed(2, 3),)"),
    ("shape/matrix_transpose", "g(lambda x: jnp.matrix_transpose(x) * jnp.arange(2))",
     "(mixed(2, 2, 3),)"),
    ("shape/moveaxis", "g(lambda x: jnp.moveaxis(x, 0, -1) * jnp.arange(2))", "(mixed(2, 3, 2),)"),
    ("shape/moveaxis_multi", "g(lambda x: jnp.moveaxis(x, (0, 1), (2, 0)) * jnp.arange(2))",
     "(mixed(2, 3, 3),)"),
    ("shape/swapaxes", "g(lambda x: jnp.swapaxes(x, 0, 2) * jnp.arange(2))", "(mixed(2, 3, 2),)"),
    ("shape/rollaxis", "g(lambda x: jnp.rollaxis(x, 2) * jnp.arange(3)[:, None, None])",
     "(mixed(2, 2, 3),)"),
    ("shape/squeeze", "g(lambda x: jnp.squeeze(x) * jnp.arange(3))", "(mixed(1, 3, 1),)"),
    ("shape/squeeze_axis", "g(lambda x: jnp.squeeze(x, axis=0) * jnp.arange(3))",
     "(mixed(1, 3, 1),)"),
    ("shape/expand_dims", "g(lambda x: jnp.expand_dims(x, (0, 2)) * jnp.arange(3))",
     "(mixed(3),)"),
    ("shape/broadcast_to", "g(lambda x: jnp.broadcast_to(x, (2, 3)) * jnp.arange(3))",
     "(mixed(3),)"),
    ("shape/broadcast_to_col", "g(lambda x: jnp.broadcast_to(x, (2, 3)) * jnp.arange(2)[:, None])",
     "(mixed(2, 1),)"),
    ("shape/atleast_2d", "g(lambda x: jnp.atleast_2d(x) * jnp.arange(3))", "(mixed(3),)"),
    ("shape/atleast_3d", "g(lambda x: jnp.atleast_3d(x) ** 2)", "(mixed(3),)"),
    ("shape/atleast_1d_scalar", "g(lambda x: jnp.atleast_1d(x) * 3.0)", "(2.0,)"),
    ("shape/astype_float16", "g(lambda x: x.astype(jnp.float16) * 3)", "(mixed(3),)"),
    ("shape/astype_int_zero", "g(lambda x: x.astype(jnp.int32) * x)", "(mixed(3, scale=3.0),)"),
    ("shape/astype_complex_real", "g(lambda x: jnp.real(x.astype(jnp.complex64) * (1 + 2j)))",
     "(mixed(3),)"),
    ("shape/lax_reshape_dims", "g(lambda x: lax.reshape(x, (3, 2), dimensions=(1, 0)) * "
     "jnp.arange(2))", "(mixed(2, 3),)"),
    ("shape/lax_rev", "g(lambda x: lax.rev(x, (0,)) * jnp.arange(4))", "(mixed(4),)"),
    ("shape/lax_broadcast_in_dim", "g(lambda x: lax.broadcast_in_dim(x, (2, 3, 2), (1,)) * "
     "jnp.arange(2))", "(mixed(3),)"),
    ("shape/lax_slice", "g(lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)))", "(mixed(3, 4),)"),
    ("shape/copy", "g(lambda x: jnp.copy(x) * x)", "(mixed(3),)"),
]

TENSOR: list[Case] = [
    ("tensor/matmul", "g2(jnp.matmul)", "(mixed(2, 3), pts(3, 4))"),
    ("tensor/matmul_operator", "g2(lambda a, b: a @ b)", "(mixed(3, 3), pts(3, 2))"),
    ("tensor/matmul_vec_mat", "g2(jnp.matmul)", "(mixed(3), pts(3, 2))"),
    ("tensor/matmul_mat_vec", "g2(jnp.matmul)", "(mixed(2, 3), pts(3))"),
    ("tensor/matmul_vec_vec", "g2(jnp.matmul)", "(mixed(3), pts(3))"),
    ("tensor/matmul_batched", "g2(jnp.matmul)", "(mixed(2, 2, 3), pts(3, 2))"),
    ("tensor/matmul_broadcast_batch", "g2(jnp.matmul)", "(mixed(2, 1, 2, 3), pts(3, 3, 2))"),
    ("tensor/dot_vectors", "g2(jnp.dot)", "(mixed(4), pts(4))"),
    ("tensor/dot_matrices", "g2(jnp.dot)", "(mixed(2, 3), pts(3, 2))"),
    ("tensor/dot_nd", "g2(jnp.dot)", "(mixed(2, 3), pts(2, 3, 2))"),
    ("tensor/dot_scalar", "g2(jnp.dot)", "(2.0, pts(3))"),
    ("tensor/vdot", "g2(jnp.vdot)", "(mixed(2, 2), pts(4))"),
    ("tensor/inner", "g2(jnp.inner)", "(mixed(2, 3), pts(4, 3))"),
    ("tensor/outer", "g2(jnp.outer)", "(mixed(3), pts(2))"),
    ("tensor/kron", "g2(jnp.kron)", "(mixed(2, 2), pts(2, 1))"),
    ("tensor/cross", "g2(jnp.cross)", "(mixed(2, 3), pts(3))"),
    ("tensor/cross_2d", "g2(jnp.cross)", "(mixed(2), pts(2))"),
    ("tensor/matvec", "g2(jnp.matvec)", "(mixed(2, 3), pts(3))"),
    ("tensor/vecmat", "g2(jnp.vecmat)", "(mixed(3), pts(3, 2))"),
    ("tensor/vecdot", "g2(jnp.vecdot)", "(mixed(2, 3), pts(3))"),
    ("tensor/tensordot_1", "g2(lambda a, b: jnp.tensordot(a, b, axes=1))",
     "(mixed(2, 3), pts(3, 2))"),
    ("tensor/tensordot_2", "g2(lambda a, b: jnp.tensordot(a, b, axes=2))",
     "(mixed(2, 2, 3), pts(2, 3))"),
    ("tensor/tensordot_pairs", "g2(lambda a, b: jnp.tensordot(a, b, axes=((0,), (1,))))",
     "(mixed(3, 2), pts(2, 3))"),
    ("tensor/einsum_matmul", "g2(lambda a, b: jnp.einsum('ij,jk->ik', a, b))",
     "(mixed(2, 3), pts(3, 2))"),
    ("tensor/einsum_trace", "g(lambda a: jnp.einsum('ii', a))", "(mixed(3, 3),)"),
    ("tensor/einsum_diag", "g(lambda a: jnp.einsum('ii->i', a))", "(mixed(3, 3),)"),
    ("tensor/einsum_sum", "g(lambda a: jnp.einsum('ij->', a))", "(mixed(2, 3),)"),
    ("tensor/einsum_transpose", "g(lambda a: jnp.einsum('ijk->kji', a))", "(mixed(2, 1, 3),)"),
    ("tensor/einsum_batch", "g2(lambda a, b: jnp.einsum('bij,bjk->bik', a, b))",
     "(mixed(2, 2, 3), pts(2, 3, 2))"),
    ("tensor/einsum_rowdot", "g2(lambda a, b: jnp.einsum('ij,ij->i', a, b))",
     "(mixed(2, 3), pts(2, 3))"),
    ("tensor/einsum_outer", "g2(lambda a, b: jnp.einsum('i,j->ij', a, b))", "(mixed(3), pts(2))"),
    ("tensor/einsum_three", "jax.grad(lambda a, b, c: wsum(jnp.einsum('ij,jk,k->i', a, b, c)), "
     "argnums=(0, 1, 2))", "(mixed(2, 3), pts(3, 2), grid(2))"),
    ("tensor/einsum_ellipsis", "g2(lambda a, b: jnp.einsum('...ij,...j->...i', a, b))",
     "(mixed(2, 2, 3), pts(2, 3))"),
    ("tensor/convolve_full", "g2(jnp.convolve)", "(mixed(5), pts(3))"),
    ("tensor/convolve_same", "g2(lambda a, b: jnp.convolve(a, b, mode='same'))",
     "(mixed(5), pts(3))"),
    ("tensor/convolve_valid", "g2(lambda a, b: jnp.convolve(a, b, mode='valid'))",
     "(mixed(5), pts(2))"),
    ("tensor/correlate_valid", "g2(jnp.correlate)", "(mixed(5), pts(3))"),
    ("tensor/correlate_full", "g2(lambda a, b: jnp.correlate(a, b, mode='full'))",
     "(mixed(4), pts(3))"),
    ("tensor/lax_dot_general", "g2(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), "
     "(0,)))))", "(mixed(2, 2, 3), pts(2, 3, 2))"),
    ("tensor/lax_dot_preferred", "g2(lambda a, b: lax.dot(a, b, "
     "preferred_element_type=jnp.float32))",
     "(jnp.asarray(mixed(2, 3), jnp.float16), jnp.asarray(pts(3, 2), jnp.float16))"),
    ("tensor/lax_conv", "g2(lambda x, w: lax.conv(x, w, (1, 1), 'SAME'))",
     "(mixed(1, 2, 4, 4), pts(3, 2, 3, 3))"),
    ("tensor/lax_conv_strided_valid", "g2(lambda x, w: lax.conv(x, w, (2, 1), 'VALID'))",
     "(mixed(2, 1, 5, 4), pts(2, 1, 2, 2))"),
    ("tensor/lax_conv_dilated", "g2(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "
     "[(1, 1), (0, 2)], lhs_dilation=(2, 1), rhs_dilation=(1, 2)))",
     "(mixed(1, 1, 3, 3), pts(2, 1, 2, 2))"),
    ("tensor/lax_conv_groups", "g2(lambda x, w: lax.conv_general_dilated(x, w, (1,), 'SAME', "
     "feature_group_count=2))", "(mixed(1, 4, 5), pts(4, 2, 3))"),
    ("tensor/lax_conv_nhwc", "g2(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'SAME', "
     "dimension_numbers=('NHWC', 'HWIO', 'NHWC')))", "(mixed(1, 3, 3, 2), pts(2, 2, 2, 3))"),
    ("tensor/lax_conv_transpose", "g2(lambda x, w: lax.conv_transpose(x, w, (2,), 'SAME', "
     "dimension_numbers=('NHC', 'HIO', 'NHC')))", "(mixed(1, 3, 2), pts(3, 2, 2))"),
    ("tensor/lax_reduce_window_sum", "g(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), "
     "(1, 2), 'SAME'))", "(mixed(4, 4),)"),
    ("tensor/lax_reduce_window_max", "g(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (3,), "
     "(1,), 'VALID'))", "(mixed(6),)"),
    ("tensor/lax_reduce_window_min_pad", "g(lambda x: lax.reduce_window(x, jnp.inf, lax.min, "
     "(2,), (2,), [(1, 0)]))", "(mixed(5),)"),
]

NUMERIC: list[Case] = [
    ("numeric/interp_x", "g(lambda x: jnp.interp(x, arr([0.0, 1.0, 3.0]), arr([1.0, -1.0, "
     "2.0])))", "(arr([-1.0, 0.5, 1.0, 2.0, 4.0]),)"),
    ("numeric/interp_all", "jax.grad(lambda x, xp, fp: wsum(jnp.interp(x, xp, fp)), "
     "argnums=(0, 1, 2))", "(arr([0.25, 1.5, 2.5]), arr([0.0, 1.0, 3.0]), arr([1.0, -1.0, "
     "2.0]))"),
    ("numeric/interp_left_right", "jax.grad(lambda x, l, r: wsum(jnp.interp(x, arr([0.0, 1.0]), "
     "arr([2.0, 3.0]), left=l, right=r)), argnums=(0, 1, 2))",
     "(arr([-1.0, 0.5, 2.0]), 5.0, 7.0)"),
    ("numeric/interp_period", "g(lambda x: jnp.interp(x, arr([0.0, 1.0, 2.0]), arr([0.0, 2.0, "
     "1.0]), period=3.0))", "(arr([-0.5, 2.5, 4.25]),)"),
    ("numeric/interp_at_knots", "jax.grad(lambda fp: wsum(jnp.interp(arr([0.0, 1.0, 3.0]), "
     "arr([0.0, 1.0, 3.0]), fp)))", "(arr([1.0, -1.0, 2.0]),)"),
    ("numeric/diff", "g(jnp.diff)", "(mixed(5),)"),
    ("numeric/diff_n2", "g(lambda x: jnp.diff(x, n=2))", "(mixed(6),)"),
    ("numeric/diff_axis0", "g(lambda x: jnp.diff(x, axis=0))", "(mixed(3, 4),)"),
    ("numeric/diff_prepend", "jax.grad(lambda x, p: wsum(jnp.diff(x, prepend=p, append=2.0)), "
     "argnums=(0, 1))", "(mixed(4), 1.5)"),
    ("numeric/ediff1d", "g(lambda x: jnp.ediff1d(x, to_begin=jnp.array([1.0]), to_end=2.0))",
     "(mixed(4),)"),
    ("numeric/trapezoid", "g(jnp.trapezoid)", "(mixed(5),)"),
    ("numeric/trapezoid_x", "g2(lambda y, x: jnp.trapezoid(y, x))", "(mixed(5), grid(5))"),
    ("numeric/trapezoid_dx", "jax.grad(lambda y, dx: jnp.trapezoid(y, dx=dx), argnums=(0, 1))",
     "(mixed(5), 0.5)"),
    ("numeric/trapezoid_axis", "g(lambda y: jnp.trapezoid(y, axis=0))", "(mixed(3, 4),)"),
    ("numeric/gradient", "g(jnp.gradient)", "(mixed(5),)"),
    ("numeric/gradient_spacing", "g(lambda x: jnp.gradient(x, 0.5))", "(mixed(5),)"),
    ("numeric/gradient_2d", "g(lambda x: jnp.gradient(x)[0] * jnp.gradient(x)[1])",
     "(mixed(3, 4),)"),
    ("numeric/linspace_endpoints", "jax.grad(lambda a, b: wsum(jnp.linspace(a, b, 5)), "
     "argnums=(0, 1))", "(1.0, 3.0)"),
    ("numeric/linspace_no_endpoint", "jax.grad(lambda a, b: wsum(jnp.linspace(a, b, 4, "
     "endpoint=False)), argnums=(0, 1))", "(-1.0, 2.0)"),
    ("numeric/linspace_arrays", "g2(lambda a, b: jnp.linspace(a, b, 3, axis=1))",
     "(mixed(2), pts(2))"),
    ("numeric/linspace_retstep", "jax.grad(lambda a, b: jnp.linspace(a, b, 5, retstep=True)[1], "
     "argnums=(0, 1))", "(0.0, 2.0)"),
    ("numeric/logspace", "jax.grad(lambda a, b: wsum(jnp.logspace(a, b, 4)), argnums=(0, 1))",
     "(0.0, 1.0)"),
    ("numeric/geomspace", "jax.grad(lambda a, b: wsum(jnp.geomspace(a, b, 4)), argnums=(0, 1))",
     "(1.0, 8.0)"),
    ("numeric/polyval", "g2(jnp.polyval)", "(mixed(4), pts(5))"),
    ("numeric/polyval_scalar_x", "g2(jnp.polyval)", "(mixed(3), 1.5)"),
    ("numeric/vander", "g(lambda x: jnp.vander(x, 3))", "(mixed(4),)"),
    ("numeric/vander_increasing", "g(lambda x: jnp.vander(x, increasing=True))", "(mixed(3),)"),
    ("numeric/sinc_array", "g(jnp.sinc)", "(mixed(5, scale=2.0),)"),
    ("numeric/degrees_radians", "g(lambda x: jnp.degrees(x) + jnp.radians(x) ** 2)",
     "(mixed(3),)"),
    ("numeric/around", "g(lambda x: jnp.around(x, 2) * x)", "(mixed(3),)"),
    ("numeric/angle_real", "g(jnp.angle)", "(arr([-1.0, 0.0, 2.0]),)"),
]

NN: list[Case] = [
    ("nn/relu", "g(nn.relu)", "(mixed(5),)"),
    ("nn/relu6", "g(nn.relu6)", "(mixed(5, scale=8.0),)"),
    ("nn/gelu_approximate", "g(nn.gelu)", "(pts(7, lo=-3.0, hi=3.0),)"),
    ("nn/gelu_exact", "g(lambda x: nn.gelu(x, approximate=False))", "(pts(7, lo=-3.0, hi=3.0),)"),
    ("nn/gelu_at_zero", "g(lambda x: nn.gelu(x) + nn.gelu(x, approximate=False))",
     "(arr([0.0]),)"),
    ("nn/silu", "g(nn.silu)", "(pts(7, lo=-4.0, hi=4.0),)"),
    ("nn/swish", "g(nn.swish)", "(pts(5),)"),
    ("nn/sigmoid", "g(nn.sigmoid)", "(pts(7, lo=-6.0, hi=6.0),)"),
    ("nn/log_sigmoid", "g(nn.log_sigmoid)", "(arr([-100.0, -2.0, 0.0, 3.0, 100.0]),)"),
    ("nn/softplus", "g(nn.softplus)", "(arr([-100.0, -1.0, 0.0, 2.0, 100.0]),)"),
    ("nn/sparse_plus", "g(nn.sparse_plus)", "(arr([-2.0, -1.0, -0.5, 0.0, 1.0, 2.0]),)"),
    ("nn/soft_sign", "g(nn.soft_sign)", "(arr([-2.0, 0.0, 0.5]),)"),
    ("nn/elu", "g(nn.elu)", "(arr([-2.0, 0.0, 1.5]),)"),
    ("nn/elu_alpha", "g(lambda x: nn.elu(x, alpha=0.5))", "(arr([-2.0, -0.1, 1.5]),)"),
    ("nn/celu", "g(lambda x: nn.celu(x, alpha=2.0))", "(arr([-2.0, 0.0, 1.5]),)"),
    ("nn/selu", "g(nn.selu)", "(arr([-2.0, 0.0, 1.5]),)"),
    ("nn/leaky_relu", "g(nn.leaky_relu)", "(arr([-2.0, 0.0, 1.5]),)"),
    ("nn/leaky_relu_slope", "g(lambda x: nn.leaky_relu(x, negative_slope=0.2))",
     "(arr([-2.0, 0.0, 1.5]),)"),
    ("nn/hard_tanh", "g(nn.hard_tanh)", "(arr([-2.0, -1.0, 0.0, 1.0, 2.0]),)"),
    ("nn/hard_sigmoid", "g(nn.hard_sigmoid)", "(arr([-4.0, -3.0, 0.0, 3.0, 4.0]),)"),
    ("nn/hard_silu", "g(nn.hard_silu)", "(arr([-4.0, -3.0, 0.0, 3.0, 4.0]),)"),
    ("nn/hard_swish", "g(nn.hard_swish)", "(arr([-1.0, 2.0]),)"),
    ("nn/mish", "g(nn.mish)", "(pts(5, lo=-3.0, hi=3.0),)"),
    ("nn/squareplus", "g(nn.squareplus)", "(pts(5),)"),
    ("nn/squareplus_b", "g2(nn.squareplus)", "(pts(3), 2.0)"),
    ("nn/glu", "g(nn.glu)", "(mixed(2, 4),)"),
    ("nn/glu_axis0", "g(lambda x: nn.glu(x, axis=0))", "(mixed(4, 3),)"),
    ("nn/identity", "g(lambda x: nn.identity(x) * 2)", "(mixed(3),)"),
    ("nn/softmax", "g(nn.softmax)", "(mixed(2, 4),)"),
    ("nn/softmax_axis0", "g(lambda x: nn.softmax(x, axis=0))", "(mixed(3, 4),)"),
    ("nn/softmax_axes", "g(lambda x: nn.softmax(x, axis=(0, 1)))", "(mixed(2, 3),)"),
    ("nn/softmax_where", "g(lambda x: nn.softmax(x, where=jnp.arange(4) != 1))", "(mixed(2, 4),)"),
    ("nn/softmax_neg_inf", "g(nn.softmax)", "(arr([0.0, -np.inf, 1.0]),)"),
    ("nn/softmax_large", "g(nn.softmax)", "(arr([1000.0, 1001.0, 999.0]),)"),
    ("nn/log_softmax", "g(nn.log_softmax)", "(mixed(2, 4),)"),
    ("nn/log_softmax_axis0", "g(lambda x: nn.log_softmax(x, axis=0))", "(mixed(3, 2),)"),
    ("nn/log_softmax_where", "g(lambda x: nn.log_softmax(x, where=jnp.arange(4) < 3))",
     "(mixed(2, 4),)"),
    ("nn/log_softmax_neg_inf", "g(lambda x: jnp.where(jnp.isfinite(x), nn.log_softmax(x), 0.0))",
     "(arr([0.0, -np.inf, 1.0]),)"),
    ("nn/logsumexp", "g(nn.logsumexp)", "(mixed(2, 3),)"),
    ("nn/logsumexp_axis_keepdims", "g(lambda x: nn.logsumexp(x, axis=1, keepdims=True))",
     "(mixed(2, 3),)"),
    ("nn/standardize", "g(nn.standardize)", "(mixed(2, 4),)"),
    ("nn/standardize_axis0", "g(lambda x: nn.standardize(x, axis=0, epsilon=1e-3))",
     "(mixed(3, 2),)"),
    ("nn/standardize_given", "jax.grad(lambda x, m, v: wsum(nn.standardize(x, mean=m, "
     "variance=v)), argnums=(0, 1, 2))", "(mixed(4), 0.5, 2.0)"),
    ("nn/standardize_where", "g(lambda x: nn.standardize(x, where=jnp.arange(4) < 3))",
     "(mixed(2, 4),)"),
    ("nn/one_hot_times_x", "g(lambda x: nn.one_hot(jnp.array([0, 2, 1]), 3) * x)",
     "(mixed(3, 3),)"),
    ("nn/one_hot_of_float", "g(lambda x: nn.one_hot(x, 4) * x[:, None])",
     "(arr([0.0, 2.0, 3.5]),)"),
    ("nn/one_hot_axis0", "g(lambda x: nn.one_hot(jnp.array([1, 0]), 3, axis=0) @ x)",
     "(mixed(2, 2),)"),
    ("nn/cross_entropy", "jax.grad(lambda logits: -jnp.mean(jnp.sum(nn.one_hot(jnp.array([1, 0, "
     "3]), 4) * nn.log_softmax(logits), axis=-1)))", "(mixed(3, 4),)"),
]

SPECIAL: list[Case] = [
    ("special/logsumexp", "g(sp.logsumexp)", "(mixed(5),)"),
    ("special/logsumexp_axis", "g(lambda x: sp.logsumexp(x, axis=0))", "(mixed(3, 4),)"),
    ("special/logsumexp_b", "g2(lambda x, b: sp.logsumexp(x, b=b))", "(mixed(4), grid(4))"),
    ("special/logsumexp_b_negative", "g2(lambda x, b: sp.logsumexp(x, axis=1, b=b))",
     "(mixed(2, 3), arr([0.5, 1.0, 2.0]))"),
    ("special/logsumexp_b_zero", "g2(lambda x, b: sp.logsumexp(x, b=b))",
     "(mixed(3), arr([0.0, 1.0, 2.0]))"),
    ("special/logsumexp_where", "g(lambda x: sp.logsumexp(x, axis=1, where=jnp.arange(3) > 0))",
     "(mixed(2, 3),)"),
    ("special/logsumexp_return_sign", "g2(lambda x, b: sp.logsumexp(x, b=b, return_sign=True)[0])",
     "(mixed(3), arr([1.0, -2.0, 0.5]))"),
    ("special/logsumexp_all_neg_inf", "g(sp.logsumexp)", "(arr([-np.inf, -np.inf]),)"),
    ("special/logsumexp_inf", "g(sp.logsumexp)", "(arr([np.inf, 0.0]),)"),
    ("special/logsumexp_keepdims", "g(lambda x: sp.logsumexp(x, axis=(0, 1), keepdims=True))",
     "(mixed(2, 2, 2),)"),
    ("special/xlogy", "g2(sp.xlogy)", "(mixed(4), grid(4))"),
    ("special/xlogy_zeros", "g2(sp.xlogy)", "(arr([0.0, 0.0, 1.0]), arr([0.0, 1.0, 0.0]))"),
    ("special/xlog1py", "g2(sp.xlog1py)", "(mixed(4), grid(4))"),
    ("special/xlog1py_zeros", "g2(sp.xlog1py)", "(arr([0.0, 0.0, 1.0]), arr([-1.0, 0.0, -1.0]))"),
    ("special/erf", "g(sp.erf)", "(pts(5),)"),
    ("special/erfc", "g(sp.erfc)", "(pts(5),)"),
    ("special/erfinv", "g(sp.erfinv)", "(pts(7, lo=-0.99, hi=0.99),)"),
    ("special/erfinv_second", "gg(sp.erfinv)", "(pts(5, lo=-0.9, hi=0.9),)"),
    ("special/gammaln", "g(sp.gammaln)", "(pts(7, lo=0.1, hi=6.0),)"),
    ("special/gammaln_negative", "g(sp.gammaln)", "(arr([-0.5, -1.5, -2.25]),)"),
    ("special/digamma", "g(sp.digamma)", "(pts(6, lo=0.2, hi=5.0),)"),
    ("special/logit", "g(sp.logit)", "(pts(7, lo=0.01, hi=0.99),)"),
    ("special/logit_ends", "g(sp.logit)", "(arr([0.0, 0.5, 1.0]),)"),
    ("special/expit", "g(sp.expit)", "(pts(5, lo=-5.0, hi=5.0),)"),
    ("special/entr", "g(sp.entr)", "(arr([0.25, 0.5, 1.0, 2.0]),)"),
    ("special/entr_edges", "g(sp.entr)", "(arr([0.0, -1.0]),)"),
    ("special/ndtr", "g(sp.ndtr)", "(pts(5, lo=-3.0, hi=3.0),)"),
    ("special/gammaln_second", "gg(sp.gammaln)", "(pts(4, lo=0.5, hi=3.0),)"),
    ("special/logit_expit_roundtrip", "g(lambda x: sp.logit(sp.expit(x)))", "(pts(5),)"),
]

TRANSFORMS: list[Case] = [
    ("transform/jvp_sin", "lambda x, t: jax.jvp(jnp.sin, (x,), (t,))", "(pts(4), grid(4))"),
    ("transform/jvp_softmax", "lambda x, t: jax.jvp(nn.softmax, (x,), (t,))",
     "(mixed(2, 3), pts(2, 3))"),
    ("transform/jvp_two_args", "lambda x, y: jax.jvp(jnp.arctan2, (x, y), (y, x))",
     "(mixed(3), grid(3))"),
    ("transform/jvp_sort", "lambda x: jax.jvp(jnp.sort, (x,), (jnp.arange(5.0),))",
     "(mixed(5),)"),
    ("transform/jvp_cumprod", "lambda x: jax.jvp(jnp.cumprod, (x,), (jnp.ones_like(x),))",
     "(mixed(4),)"),
    ("transform/jvp_python_scalar", "lambda: jax.jvp(lambda x: x ** 3, (2.0,), (1.0,))", "()"),
    ("transform/vjp_matmul", "lambda a, b: jax.vjp(jnp.matmul, a, b)[1](jnp.ones((2, 2)))",
     "(mixed(2, 3), pts(3, 2))"),
    ("transform/vjp_log_softmax", "lambda x: jax.vjp(nn.log_softmax, x)[1](jnp.arange(4.0))",
     "(mixed(4),)"),
    ("transform/vjp_outputs", "lambda x: jax.vjp(lambda v: (jnp.tanh(v), jnp.sum(v ** 2)), x)[0]",
     "(mixed(3),)"),
    ("transform/vjp_median", "lambda x: jax.vjp(jnp.median, x)[1](2.0)", "(mixed(6),)"),
    ("transform/value_and_grad", "jax.value_and_grad(lambda x: nn.logsumexp(x) * 2)",
     "(mixed(4),)"),
    ("transform/value_and_grad_aux", "jax.value_and_grad(lambda x: (jnp.sum(x ** 2), "
     "jnp.max(x)), has_aux=True)", "(mixed(4),)"),
    ("transform/grad_argnums_tuple", "jax.grad(lambda a, b, c: jnp.sum(a * b) + c, "
     "argnums=(2, 0))", "(mixed(3), pts(3), 2.0)"),
    ("transform/grad_pytree", "jax.grad(lambda p: jnp.sum(p['w'] @ p['x']) + p['b'][0] ** 2)",
     "({'w': mixed(2, 3), 'x': pts(3), 'b': [1.5]},)"),
    ("transform/jacfwd_softmax", "jax.jacfwd(nn.softmax)", "(mixed(3),)"),
    ("transform/jacrev_softmax", "jax.jacrev(nn.softmax)", "(mixed(3),)"),
    ("transform/jacrev_sort", "jax.jacrev(jnp.sort)", "(mixed(4),)"),
    ("transform/jacfwd_cumsum", "jax.jacfwd(jnp.cumsum)", "(mixed(4),)"),
    ("transform/jacrev_matmul", "jax.jacrev(lambda w: w @ pts(3))", "(mixed(2, 3),)"),
    ("transform/jacrev_take_along", "jax.jacrev(lambda x: jnp.take_along_axis(x, jnp.array([2, "
     "0, 0]), axis=0))", "(mixed(3),)"),
    ("transform/jacobian_argnums", "jax.jacobian(lambda x, y: x * y[0] + jnp.roll(y, 1), "
     "argnums=(0, 1))", "(mixed(3), pts(3))"),
    ("transform/jacrev_input_dtype", "jax.jacrev(lambda x: x.astype(jnp.float32) * 2.5)",
     "(jnp.asarray(mixed(2), jnp.float16),)"),
    ("transform/jacfwd_output_dtype", "jax.jacfwd(lambda x: x.astype(jnp.float16) * 2.5)",
     "(mixed(2),)"),
    ("transform/jacrev_complex_input_real_output", "jax.jacrev(lambda z: jnp.abs(z))",
     "(cplx(2),)"),
    ("transform/jacfwd_interp", "jax.jacfwd(lambda x: jnp.interp(x, arr([0.0, 1.0, 2.0]), "
     "arr([0.0, 3.0, 1.0])))", "(arr([0.5, 1.5]),)"),
    ("transform/hessian_logsumexp", "jax.hessian(nn.logsumexp)", "(mixed(3),)"),
    ("transform/hessian_cube", "jax.hessian(lambda x: jnp.sum(x ** 3))", "(mixed(3),)"),
    ("transform/hessian_prod", "jax.hessian(jnp.prod)", "(grid(3),)"),
    ("transform/hessian_polyval", "jax.hessian(lambda p: jnp.polyval(p, 1.5))", "(mixed(3),)"),
    ("transform/hessian_softplus", "jax.hessian(lambda x: jnp.sum(nn.softplus(x)))",
     "(mixed(3),)"),
    ("transform/hessian_norm", "jax.hessian(lambda x: jnp.sqrt(jnp.sum(x ** 2)))", "(grid(3),)"),
    ("transform/hessian_var", "jax.hessian(jnp.var)", "(mixed(4),)"),
    ("transform/hessian_max", "jax.hessian(jnp.max)", "(mixed(3),)"),
    ("transform/second_relu", "gg(nn.relu)", "(arr([-1.0, 0.0, 1.0]),)"),
    ("transform/second_abs", "gg(jnp.abs)", "(arr([-1.0, 0.0, 1.0]),)"),
    ("transform/second_gelu", "gg(nn.gelu)", "(pts(5),)"),
    ("transform/second_gelu_exact", "gg(lambda x: nn.gelu(x, approximate=False))", "(pts(5),)"),
    ("transform/second_sigmoid", "gg(nn.sigmoid)", "(pts(5),)"),
    ("transform/second_tan", "gg(jnp.tan)", "(pts(5, lo=-1.0, hi=1.0),)"),
    ("transform/second_arcsin", "gg(jnp.arcsin)", "(pts(5, lo=-0.8, hi=0.8),)"),
    ("transform/second_logaddexp", "gg(lambda x: jnp.logaddexp(x, 0.5))", "(pts(5),)"),
    ("transform/second_xlogy", "gg(lambda x: sp.xlogy(x, x))", "(grid(4),)"),
    ("transform/second_entr", "gg(sp.entr)", "(grid(4),)"),
    ("transform/second_log_softmax", "gg(lambda x: nn.log_softmax(x)[0])", "(mixed(3),)"),
    ("transform/second_lgamma", "gg(lax.lgamma)", "(grid(4),)"),
    ("transform/third_sin", "jax.grad(jax.grad(jax.grad(jnp.sin)))", "(0.7,)"),
    ("transform/linearize", "lambda x: jax.linearize(lambda v: jnp.sum(jnp.exp(v) * v), x)[1]("
     "jnp.ones_like(x))", "(mixed(3),)"),
    ("transform/linearize_int_primal", "lambda: jax.linearize(lambda n: n * 2.0, 3)[0]", "()"),
    ("transform/linearize_out", "lambda x: jax.linearize(nn.softmax, x)[0]", "(mixed(3),)"),
    ("transform/hvp_forward_over_reverse", "lambda x, v: jax.jvp(jax.grad(lambda y: "
     "jnp.sum(jnp.tanh(y) ** 2)), (x,), (v,))[1]", "(mixed(4), pts(4))"),
    ("transform/reverse_over_forward", "lambda x: jax.grad(lambda y: jax.jvp(jnp.sin, (y,), "
     "(jnp.ones_like(y),))[1].sum())(x)", "(mixed(3),)"),
    ("transform/grad_stop_gradient", "g(lambda x: x * lax.stop_gradient(x) + "
     "lax.stop_gradient(jnp.exp(x)))", "(mixed(3),)"),
    ("transform/grad_custom_jvp", "g(lambda x: sp.logit(x) + nn.relu(x))",
     "(pts(4, lo=0.1, hi=0.9),)"),
    ("transform/grad_allow_int",
     "jax.grad(lambda x, n: jnp.sum(x * n), argnums=(0, 1), allow_int=True)",
     "(pts(3), jnp.arange(3))"),
    ("transform/grad_complex_holomorphic", "jax.grad(lambda z: jnp.sum(jnp.exp(z) * z), "
     "holomorphic=True)", "(jnp.asarray(np.array([1 + 1j, -0.5j])),)"),
    ("transform/grad_complex_to_real", "jax.grad(lambda z: jnp.sum(jnp.abs(z) ** 2 + "
     "jnp.real(z) * jnp.imag(z)))", "(jnp.asarray(np.array([1 + 2j, -0.5 + 0.25j])),)"),
    ("transform/grad_complex_angle", "jax.grad(lambda z: jnp.sum(jnp.angle(z)))",
     "(jnp.asarray(np.array([1 + 2j, -1 + 0.5j])),)"),
    ("transform/grad_weak_scalar_out", "jax.grad(lambda x: jnp.sum(x) * 0.5 + 1)", "(pts(3),)"),
    ("transform/grad_of_constant", "jax.grad(lambda x: 3.0)", "(pts(2),)"),
    ("transform/grad_unused_arg", "jax.grad(lambda x, y: jnp.sum(x ** 2), argnums=1)",
     "(pts(2), pts(3))"),
]

CASES: list[Case] = (UNARY + KINKS + BINARY + REDUCTIONS + SORTING + INDEXING + SELECTION
                     + JOINING + SHAPES + TENSOR + NUMERIC + NN + SPECIAL + TRANSFORMS + CONCRETE
                     + COMPLEX + HIGHER + FORWARD + LOW_PRECISION + WEAK + METHODS + EMPTY
                     + VARIANTS + SPECIAL_VALUES + BUILD + X64 + ERRORS)
