"""Vectorized programs over jax.numpy / jax.nn / jax.scipy.special / lax, whose values and
printed jaxprs real JAX recorded (`record_vmap_golden.py`, compared by
`tests/test_vmap_programs.py`).

`PRELUDE` is executed with `jax`, `jnp`, `lax` and `np` bound (to real JAX when recording, to
justjax in the tests). Each case is `(title, function source, arguments source)`: the test
evaluates `function(*arguments)` and compares the result pytree (or the exception raised), and
compares `make_jaxpr(function)(*arguments)` with the text JAX printed. Titles are
"<group>/<what>"; programs under "error/" are expected to raise.

Inputs are built from NumPy values (`mixed`, `pts`, `grid`, `ints`), so JAX and justjax see
bit-identical inputs with distinct values (no ties for sorting and max).
"""
from __future__ import annotations

Case = tuple[str, str, str]

PRELUDE = '''
sp = jax.scipy.special
nn = jax.nn
vmap = jax.vmap

def mixed(*shape, scale=1.0):
    """Distinct values in [-scale, scale] in a scrambled order (no ties), in `shape`."""
    n = int(np.prod(shape))
    return jnp.asarray(((np.arange(n) * 37 % 101 - 50) / 50.0 * scale).reshape(shape))

def pts(*shape, lo=-2.0, hi=2.0):
    """Evenly spaced values from lo to hi in the default float dtype, in `shape`."""
    n = int(np.prod(shape))
    return jnp.asarray(np.linspace(lo, hi, n).reshape(shape))

def grid(*shape):
    """Small distinct positive values 0.5, 0.75, 1.0, ... in a scrambled order."""
    n = int(np.prod(shape))
    return jnp.asarray((0.5 + (np.arange(n) * 7 % n) / 4.0).reshape(shape))

def ints(*shape, hi=5):
    """int32 values in [0, hi) in a scrambled order."""
    n = int(np.prod(shape))
    return jnp.asarray((np.arange(n) * 7 % 11 % hi).reshape(shape).astype(np.int32))

def arr(values):
    """A default-float array of literal values."""
    return jnp.asarray(np.asarray(values, dtype=np.float64))

def bools(*shape):
    n = int(np.prod(shape))
    return jnp.asarray((np.arange(n) * 7 % 3 == 1).reshape(shape))

def mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]

def mlp_loss(params, x, y):
    return jnp.sum((mlp(params, x) - y) ** 2)

def xent_loss(params, x, label):
    logits = mlp(params, x)
    return -nn.log_softmax(logits)[label]

def linear_loss(w, b, x, y):
    return (jnp.dot(x, w) + b - y) ** 2

def params():
    return {"w1": mixed(3, 4, scale=0.5), "b1": mixed(4, scale=0.1),
            "w2": mixed(4, 2, scale=0.5), "b2": mixed(2, scale=0.1)}

@jax.custom_jvp
def clip_grad(x):
    return jnp.sin(x)

@clip_grad.defjvp
def _clip_grad_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), jnp.where(jnp.abs(x) < 1.0, jnp.cos(x), 0.0) * t

@jax.custom_vjp
def scaled(x, y):
    return x * y

def _scaled_fwd(x, y):
    return x * y, (x, y)

def _scaled_bwd(res, g):
    x, y = res
    return (2.0 * g * y, 3.0 * g * x)

scaled.defvjp(_scaled_fwd, _scaled_bwd)

@jax.custom_jvp
def safe_log(x):
    return jnp.log(x)

safe_log.defjvps(lambda t, ans, x: t / jnp.maximum(x, 1e-3))

def attention(q, k, v):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    return nn.softmax(s, axis=-1) @ v
'''


def _cases(group: str, rows: list[tuple[str, str, str]]) -> list[Case]:
    return [(f"{group}/{name}", fun, args) for name, fun, args in rows]


# ---- the vmap API: in_axes / out_axes / pytrees / kwargs / axis_size -----------------------
API = _cases("api", [
    ("in0", "vmap(jnp.sin)", "(mixed(3, 4),)"),
    ("in1", "vmap(jnp.sin, in_axes=1)", "(mixed(3, 4),)"),
    ("in_neg1", "vmap(jnp.sin, in_axes=-1)", "(mixed(3, 4),)"),
    ("in_neg2", "vmap(jnp.sin, in_axes=-2)", "(mixed(3, 4),)"),
    ("in2_3d", "vmap(lambda x: x.sum(0), in_axes=2)", "(mixed(2, 3, 4),)"),
    ("out1", "vmap(lambda x: x * 2, out_axes=1)", "(mixed(3, 4),)"),
    ("out_neg1", "vmap(lambda x: x * 2, out_axes=-1)", "(mixed(3, 4, 2),)"),
    ("out_neg2", "vmap(lambda x: x + 1, out_axes=-2)", "(mixed(3, 4, 2),)"),
    ("in1_out1", "vmap(jnp.cumsum, in_axes=1, out_axes=1)", "(mixed(3, 4),)"),
    ("in1_out0", "vmap(jnp.cumsum, in_axes=1, out_axes=0)", "(mixed(3, 4),)"),
    ("out_none_unbatched", "vmap(lambda x, y: (x + y, y * 2), in_axes=(0, None), "
     "out_axes=(0, None))", "(mixed(3, 2), mixed(2))"),
    ("out_none_const", "vmap(lambda x: (x, jnp.ones(2)), out_axes=(0, None))", "(mixed(3),)"),
    ("in_none_first", "vmap(lambda x, y: x * y, in_axes=(None, 0))", "(mixed(4), mixed(3, 4))"),
    ("in_none_second", "vmap(lambda x, y: x - y, in_axes=(0, None))", "(mixed(3, 4), mixed(4))"),
    ("in_mixed_axes", "vmap(lambda x, y: x * y, in_axes=(1, 0))", "(mixed(4, 3), mixed(3, 4))"),
    ("in_list", "vmap(lambda x, y: x + y, in_axes=[0, 1])", "(mixed(3, 4), mixed(4, 3))"),
    ("scalar_args", "vmap(lambda x, y: x * y + 1.0)", "(mixed(5), mixed(5))"),
    ("python_scalar_none", "vmap(lambda x, s: x * s, in_axes=(0, None))", "(mixed(3, 2), 2.5)"),
    ("int_arg", "vmap(lambda n: n * 2 + 1)", "(ints(4),)"),
    ("bool_arg", "vmap(lambda b, x: jnp.where(b, x, -x))", "(bools(4, 2), mixed(4, 2))"),
    ("all_none_axis_size", "vmap(lambda x: x * 2, in_axes=None, axis_size=3)", "(mixed(2),)"),
    ("no_args_axis_size", "vmap(lambda: jnp.ones(2), axis_size=3)", "()"),
    ("axis_size_matches", "vmap(jnp.sin, axis_size=3)", "(mixed(3, 2),)"),
    ("const_output", "vmap(lambda x: 1.0)", "(mixed(3),)"),
    ("const_array_output", "vmap(lambda x: jnp.arange(3))", "(mixed(2),)"),
    ("identity", "vmap(lambda x: x)", "(mixed(3, 2),)"),
    ("identity_out1", "vmap(lambda x: x, in_axes=1, out_axes=1)", "(mixed(3, 2),)"),
    ("identity_move", "vmap(lambda x: x, in_axes=1, out_axes=0)", "(mixed(3, 2),)"),
    ("dict_in", "vmap(lambda d: d['a'] * d['b'])", "({'a': mixed(3, 2), 'b': mixed(3, 2)},)"),
    ("dict_in_axes", "vmap(lambda d: d['a'] + d['b'], in_axes=({'a': 0, 'b': 1},))",
     "({'a': mixed(3, 2), 'b': mixed(2, 3)},)"),
    ("dict_in_none", "vmap(lambda d: d['a'] + d['b'], in_axes=({'a': 0, 'b': None},))",
     "({'a': mixed(3, 2), 'b': mixed(2)},)"),
    ("tuple_in_prefix", "vmap(lambda t, y: t[0] * t[1] + y, in_axes=((0, 1), None))",
     "((mixed(3, 2), mixed(2, 3)), mixed(2))"),
    ("nested_prefix", "vmap(lambda p: p['w'][0] + p['w'][1] * p['s'], "
     "in_axes=({'w': (0, 1), 's': None},))",
     "({'w': (mixed(3, 2), mixed(2, 3)), 's': 2.0},)"),
    ("prefix_whole_tuple", "vmap(lambda t: t[0] + t[1], in_axes=(1,))",
     "((mixed(2, 3), mixed(2, 3)),)"),
    ("dict_out", "vmap(lambda x: {'s': jnp.sin(x), 'c': jnp.cos(x)})", "(mixed(3, 2),)"),
    ("dict_out_axes", "vmap(lambda x: {'s': jnp.sin(x), 'c': jnp.cos(x)}, "
     "out_axes={'s': 0, 'c': 1})", "(mixed(3, 2),)"),
    ("tuple_out_axes", "vmap(lambda x: (x, x.sum(), x * 2), out_axes=(1, 0, -1))",
     "(mixed(3, 2),)"),
    ("nested_out_axes", "vmap(lambda x: ({'a': x, 'b': (x, x[0])}, x.sum()), "
     "out_axes=({'a': 1, 'b': (0, None)}, 0), in_axes=(None,), axis_size=2)", "(mixed(3),)"),
    ("list_out", "vmap(lambda x: [x, x + 1])", "(mixed(3, 2),)"),
    ("none_leaf_out", "vmap(lambda x: (x, None))", "(mixed(3),)"),
    ("kwargs", "lambda x, y: vmap(lambda a, b: a * b)(x, b=y)", "(mixed(3, 2), mixed(3, 2))"),
    ("kwargs_only", "lambda x: vmap(lambda a=1.0: a * 2)(a=x)", "(mixed(3),)"),
    ("kwargs_with_in_axes", "lambda x, y: vmap(lambda a, b: a - b, in_axes=(1,))(x, b=y)",
     "(mixed(2, 3), mixed(3, 2))"),
    ("empty_batch", "vmap(jnp.sin)", "(jnp.zeros((0, 3)),)"),
    ("size_one_batch", "vmap(lambda x: x @ x)", "(mixed(1, 3),)"),
    ("weak_scalar_out", "vmap(lambda x: x * 0 + 2.0, in_axes=None, axis_size=2)", "(1.0,)"),
    ("weak_in_none", "vmap(lambda x, y: x + y, in_axes=(0, None))", "(mixed(3), 1.0)"),
    ("dtype_preserve_f16", "vmap(lambda x: x * 2)", "(jnp.asarray(mixed(3, 2), jnp.float16),)"),
    ("int8", "vmap(lambda x, y: x + y)", "(jnp.asarray(ints(3, 2), jnp.int8), "
     "jnp.asarray(ints(3, 2), jnp.int8))"),
    ("complex", "vmap(lambda z: z * z + jnp.conj(z))",
     "(jnp.asarray(mixed(3, 2)) + 1j * jnp.asarray(pts(3, 2)),)"),
    ("returns_shape_info", "vmap(lambda x: jnp.zeros(x.shape) + x.ndim)", "(mixed(3, 4),)"),
    ("spmd_axis_name", "vmap(lambda x: x + 1, spmd_axis_name='d')", "(mixed(3),)"),
    ("axis_name_unused", "vmap(lambda x: x + 1, axis_name='i')", "(mixed(3),)"),
    ("vmap_of_jnp_array", "vmap(lambda x: jnp.array([x, 2 * x]))", "(mixed(3),)"),
    ("vmap_of_stack_lit", "vmap(lambda x: jnp.stack([x, jnp.zeros_like(x)], -1))",
     "(mixed(3, 2),)"),
    ("astype", "vmap(lambda x: x.astype(jnp.int32))", "(pts(3, 2, lo=-4.0, hi=4.0),)"),
    ("methods", "vmap(lambda x: x.T.reshape(-1).sum() + x.mean() * x.max())", "(mixed(3, 2, 4),)"),
    ("full_like", "vmap(lambda x: jnp.full_like(x, 3.0) + jnp.zeros_like(x))", "(mixed(3, 2),)"),
    ("ones_dynamic_batch", "vmap(lambda x: jnp.ones_like(x) * x.sum())", "(mixed(3, 2),)"),
])

# ---- elementwise: unary ufuncs with several in_axes; binary with mixes ---------------------
_UNARY = [
    ("sin", "jnp.sin", "mixed"), ("cos", "jnp.cos", "mixed"), ("tan", "jnp.tan", "mixed"),
    ("tanh", "jnp.tanh", "mixed"), ("exp", "jnp.exp", "mixed"), ("expm1", "jnp.expm1", "mixed"),
    ("log", "jnp.log", "grid"), ("log1p", "jnp.log1p", "grid"), ("sqrt", "jnp.sqrt", "grid"),
    ("rsqrt", "lax.rsqrt", "grid"), ("cbrt", "jnp.cbrt", "mixed"),
    ("arcsin", "jnp.arcsin", "mixed"), ("arctan", "jnp.arctan", "mixed"),
    ("arcsinh", "jnp.arcsinh", "mixed"), ("abs", "jnp.abs", "mixed"),
    ("sign", "jnp.sign", "mixed"), ("floor", "jnp.floor", "mixed"),
    ("round", "jnp.round", "mixed"), ("square", "jnp.square", "mixed"),
    ("reciprocal", "jnp.reciprocal", "grid"), ("logistic", "lax.logistic", "mixed"),
    ("erf", "lax.erf", "mixed"), ("erf_inv", "lax.erf_inv", "mixed"),
    ("lgamma", "lax.lgamma", "grid"), ("digamma", "lax.digamma", "grid"),
    ("isfinite", "jnp.isfinite", "mixed"), ("signbit", "jnp.signbit", "mixed"),
    ("exp2", "jnp.exp2", "mixed"), ("log2", "jnp.log2", "grid"), ("sinc", "jnp.sinc", "mixed"),
    ("deg2rad", "jnp.deg2rad", "mixed"), ("nan_to_num", "jnp.nan_to_num", "mixed"),
]
UNARY = [(f"unary/{name}_in{ax}", f"vmap({fun}, in_axes={ax})", f"({src}(3, 4),)")
         for name, fun, src in _UNARY for ax in ((0,) if name in ("signbit", "sinc") else (0, -1))]

_BINARY = [
    ("add", "jnp.add"), ("subtract", "jnp.subtract"), ("multiply", "jnp.multiply"),
    ("divide", "jnp.divide"), ("power", "lambda a, b: jnp.power(jnp.abs(a) + 0.5, b)"),
    ("maximum", "jnp.maximum"), ("minimum", "jnp.minimum"), ("arctan2", "jnp.arctan2"),
    ("hypot", "jnp.hypot"), ("logaddexp", "jnp.logaddexp"), ("greater", "jnp.greater"),
    ("equal", "lambda a, b: a == b"), ("copysign", "jnp.copysign"), ("fmod", "jnp.fmod"),
    ("remainder", "jnp.remainder"), ("nextafter", "jnp.nextafter"),
    ("floor_divide", "jnp.floor_divide"), ("heaviside", "jnp.heaviside"),
]
_BINARY_AXES = [("00", "(0, 0)", "(mixed(3, 4), mixed(3, 4, scale=2.0) + 0.01)"),
                ("10", "(1, 0)", "(mixed(4, 3), mixed(3, 4, scale=2.0) + 0.01)"),
                ("0none", "(0, None)", "(mixed(3, 4), mixed(4, scale=2.0) + 0.01)"),
                ("none_m1", "(None, -1)", "(mixed(4), mixed(4, 3, scale=2.0) + 0.01)")]
BINARY = [(f"binary/{name}_{tag}", f"vmap({fun}, in_axes={axes})", args)
          for i, (name, fun) in enumerate(_BINARY)
          for j, (tag, axes, args) in enumerate(_BINARY_AXES) if j in (0, 1 + i % 3)]
BINARY += _cases("binary", [
    ("int_ops", "vmap(lambda a, b: (a & b, a | b, a ^ b, a << 1, a >> 1), in_axes=(0, None))",
     "(ints(3, 4, hi=9), ints(4, hi=9))"),
    ("gcd_lcm", "vmap(lambda a, b: (jnp.gcd(a, b), jnp.lcm(a, b)))",
     "(ints(3, 4, hi=9) + 1, ints(3, 4, hi=7) + 2)"),
    ("logical", "vmap(lambda a, b: (jnp.logical_and(a, b), jnp.logical_xor(a, b), ~a))",
     "(bools(3, 4), bools(3, 4)[::-1])"),
    ("rank_broadcast", "vmap(lambda a, b: a + b)", "(mixed(3, 2, 4), mixed(3, 4))"),
    ("rank_broadcast_in1", "vmap(lambda a, b: a * b, in_axes=(1, 0))",
     "(mixed(2, 3, 4), mixed(3, 1))"),
    ("scalar_batched_with_vec", "vmap(lambda s, v: s * v, in_axes=(0, None))",
     "(mixed(3), mixed(4))"),
    ("where_three", "vmap(jnp.where, in_axes=(0, 1, None))",
     "(bools(3, 4), mixed(4, 3), mixed(4))"),
    ("clip", "vmap(lambda x, lo, hi: jnp.clip(x, lo, hi), in_axes=(0, 0, None))",
     "(mixed(3, 4), mixed(3, 1, scale=0.3) - 0.3, 0.5)"),
    ("divmod", "vmap(jnp.divmod)", "(mixed(3, 4, scale=5.0), grid(3, 4))"),
    ("ldexp", "vmap(jnp.ldexp)", "(mixed(3, 4), ints(3, 4))"),
    ("float_power", "vmap(jnp.float_power)", "(grid(3, 4), mixed(3, 4))"),
    ("isclose", "vmap(jnp.isclose, in_axes=(0, None))", "(mixed(3, 4), mixed(4))"),
    ("polyval", "vmap(jnp.polyval, in_axes=(0, None))", "(mixed(3, 4), pts(5))"),
    ("polyval_x", "vmap(jnp.polyval, in_axes=(None, 0))", "(mixed(4), pts(5))"),
    ("interp", "vmap(jnp.interp, in_axes=(0, None, None))",
     "(mixed(3, 4), arr([-1.0, 0.0, 1.0]), arr([2.0, -1.0, 0.5]))"),
    ("interp_fp", "vmap(jnp.interp, in_axes=(None, None, 0))",
     "(mixed(4), arr([-1.0, 0.0, 1.0]), mixed(3, 3))"),
])

# ---- reductions / cumulative / statistics ----------------------------------------------------
REDUCTIONS = _cases("reduce", [
    ("sum", "vmap(jnp.sum)", "(mixed(3, 4),)"),
    ("sum_in1", "vmap(jnp.sum, in_axes=1)", "(mixed(3, 4),)"),
    ("sum_axis0", "vmap(lambda x: jnp.sum(x, axis=0))", "(mixed(3, 4, 2),)"),
    ("sum_axis_neg1_in1", "vmap(lambda x: jnp.sum(x, axis=-1), in_axes=1)", "(mixed(3, 4, 2),)"),
    ("sum_keepdims", "vmap(lambda x: jnp.sum(x, axis=1, keepdims=True), in_axes=2)",
     "(mixed(3, 4, 2),)"),
    ("sum_int", "vmap(jnp.sum)", "(ints(3, 4),)"),
    ("sum_bool", "vmap(jnp.sum)", "(bools(3, 4),)"),
    ("prod", "vmap(jnp.prod, in_axes=1)", "(grid(3, 4),)"),
    ("max", "vmap(jnp.max)", "(mixed(3, 4),)"),
    ("max_axis", "vmap(lambda x: jnp.max(x, axis=0), in_axes=1)", "(mixed(3, 4, 2),)"),
    ("min", "vmap(jnp.min, in_axes=-1)", "(mixed(3, 4),)"),
    ("amax_initial", "vmap(lambda x: jnp.max(x, initial=0.2))", "(mixed(3, 4),)"),
    ("argmax", "vmap(jnp.argmax)", "(mixed(3, 4),)"),
    ("argmax_in1", "vmap(jnp.argmax, in_axes=1)", "(mixed(3, 4),)"),
    ("argmax_axis", "vmap(lambda x: jnp.argmax(x, axis=1))", "(mixed(3, 4, 2),)"),
    ("argmin_keepdims", "vmap(lambda x: jnp.argmin(x, axis=0, keepdims=True), in_axes=2)",
     "(mixed(3, 4, 2),)"),
    ("lax_argmax", "vmap(lambda x: lax.argmax(x, 0, jnp.int32), in_axes=1)", "(mixed(3, 4),)"),
    ("nanargmax", "vmap(jnp.nanargmax)", "(mixed(3, 4),)"),
    ("any", "vmap(jnp.any)", "(bools(3, 4),)"),
    ("all_axis", "vmap(lambda b: jnp.all(b, axis=0), in_axes=1)", "(bools(3, 4, 2),)"),
    ("count_nonzero", "vmap(jnp.count_nonzero)", "(mixed(3, 4) > 0,)"),
    ("mean", "vmap(jnp.mean)", "(mixed(3, 4),)"),
    ("mean_axis_where", "vmap(lambda x, w: jnp.mean(x, where=w))",
     "(mixed(3, 4), mixed(3, 4) > -0.5)"),
    ("var", "vmap(jnp.var, in_axes=1)", "(mixed(3, 4),)"),
    ("std_ddof", "vmap(lambda x: jnp.std(x, ddof=1))", "(mixed(3, 4),)"),
    ("average_weights", "vmap(lambda x, w: jnp.average(x, weights=w), in_axes=(0, None))", "(mixed(3, 4), grid(4))"),
    ("median", "vmap(jnp.median)", "(mixed(3, 5),)"),
    ("quantile", "vmap(lambda x: jnp.quantile(x, 0.3))", "(mixed(3, 5),)"),
    ("percentile_axis", "vmap(lambda x: jnp.percentile(x, 40.0, axis=0), in_axes=2)",
     "(mixed(5, 2, 3),)"),
    ("ptp", "vmap(jnp.ptp)", "(mixed(3, 4),)"),
    ("nansum", "vmap(jnp.nansum)", "(jnp.where(mixed(3, 4) > 0.5, jnp.nan, mixed(3, 4)),)"),
    ("nanmean", "vmap(jnp.nanmean, in_axes=1)",
     "(jnp.where(mixed(3, 4) > 0.5, jnp.nan, mixed(3, 4)),)"),
    ("nanmax", "vmap(jnp.nanmax)", "(jnp.where(mixed(3, 4) > 0.5, jnp.nan, mixed(3, 4)),)"),
    ("logsumexp", "vmap(nn.logsumexp)", "(mixed(3, 4),)"),
    ("logsumexp_axis", "vmap(lambda x: nn.logsumexp(x, axis=0), in_axes=1)", "(mixed(3, 4, 2),)"),
    ("logsumexp_b", "vmap(lambda x, b: sp.logsumexp(x, b=b), in_axes=(0, None))",
     "(mixed(3, 4), grid(4))"),
    ("lax_reduce_sum", "vmap(lambda x: lax.reduce_sum(x, (0,)), in_axes=1)", "(mixed(3, 4, 2),)"),
    ("lax_reduce_max", "vmap(lambda x: lax.reduce_max(x, (1,)))", "(mixed(3, 4, 2),)"),
    ("lax_reduce_and", "vmap(lambda b: lax.reduce_and(b, (0,)), in_axes=1)", "(bools(3, 4),)"),
    ("lax_reduce_xor", "vmap(lambda a: lax.reduce_xor(a, (0,)))", "(ints(3, 4, hi=9),)"),
    ("lax_reduce_generic", "vmap(lambda x: lax.reduce(x, 0.0, lax.add, (0,)), in_axes=1)",
     "(mixed(3, 4),)"),
    ("lax_reduce_two", "vmap(lambda x, y: lax.reduce((x, y), (0.0, 1.0), "
     "lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,)))", "(mixed(3, 4), grid(3, 4))"),
    ("cumsum", "vmap(jnp.cumsum)", "(mixed(3, 4),)"),
    ("cumsum_in1", "vmap(jnp.cumsum, in_axes=1)", "(mixed(3, 4),)"),
    ("cumsum_axis", "vmap(lambda x: jnp.cumsum(x, axis=0), in_axes=2)", "(mixed(3, 4, 2),)"),
    ("cumprod", "vmap(jnp.cumprod, in_axes=-1)", "(grid(3, 4),)"),
    ("cummax_lax", "vmap(lambda x: lax.cummax(x, axis=0, reverse=True))", "(mixed(3, 4),)"),
    ("cummin_lax", "vmap(lambda x: lax.cummin(x, axis=1), in_axes=1)", "(mixed(3, 4, 2),)"),
    ("cumlogsumexp", "vmap(lambda x: lax.cumlogsumexp(x, axis=0))", "(mixed(3, 4),)"),
    ("lax_cumsum_reverse", "vmap(lambda x: lax.cumsum(x, axis=0, reverse=True), in_axes=1)",
     "(mixed(3, 4),)"),
    ("nancumsum", "vmap(jnp.nancumsum)", "(jnp.where(mixed(3, 4) > 0.5, jnp.nan, mixed(3, 4)),)"),
    ("diff", "vmap(jnp.diff)", "(mixed(3, 4),)"),
    ("diff_in1_n2", "vmap(lambda x: jnp.diff(x, n=2), in_axes=1)", "(mixed(5, 3),)"),
    ("ediff1d", "vmap(jnp.ediff1d)", "(mixed(3, 4),)"),
    ("trapezoid", "vmap(jnp.trapezoid)", "(mixed(3, 4),)"),
    ("gradient", "vmap(jnp.gradient)", "(mixed(3, 5),)"),
    ("norm_like", "vmap(lambda x: jnp.sqrt(jnp.sum(x * x, axis=-1)), in_axes=1)",
     "(mixed(3, 4, 2),)"),
])

# ---- sorting / selection -----------------------------------------------------------------------
SORTING = _cases("sort", [
    ("sort", "vmap(jnp.sort)", "(mixed(3, 5),)"),
    ("sort_in1", "vmap(jnp.sort, in_axes=1)", "(mixed(5, 3),)"),
    ("sort_axis0", "vmap(lambda x: jnp.sort(x, axis=0))", "(mixed(3, 4, 2),)"),
    ("sort_desc", "vmap(lambda x: jnp.sort(x, descending=True), in_axes=-1)", "(mixed(5, 3),)"),
    ("argsort", "vmap(jnp.argsort)", "(mixed(3, 5),)"),
    ("argsort_in1", "vmap(jnp.argsort, in_axes=1)", "(mixed(5, 3),)"),
    ("lax_sort_multi", "vmap(lambda k, v: lax.sort((k, v), num_keys=1))",
     "(mixed(3, 5), ints(3, 5))"),
    ("lax_sort_multi_none", "vmap(lambda k, v: lax.sort((k, v), num_keys=1), in_axes=(0, None))",
     "(mixed(3, 5), ints(5))"),
    ("sort_key_val_in1", "vmap(lambda k, v: lax.sort_key_val(k, v), in_axes=(1, 0))",
     "(mixed(5, 3), mixed(3, 5))"),
    ("top_k", "vmap(lambda x: lax.top_k(x, 2))", "(mixed(3, 5),)"),
    ("top_k_in1", "vmap(lambda x: lax.top_k(x, 3), in_axes=1)", "(mixed(5, 3),)"),
    ("top_k_2d", "vmap(lambda x: lax.top_k(x, 2), in_axes=0)", "(mixed(2, 3, 5),)"),
    ("partition", "vmap(lambda x: jnp.partition(x, 2))", "(mixed(3, 5),)"),
    ("argpartition", "vmap(lambda x: jnp.argpartition(x, 1), in_axes=1)", "(mixed(5, 3),)"),
    ("searchsorted", "vmap(jnp.searchsorted, in_axes=(None, 0))",
     "(arr([-1.0, -0.2, 0.3, 0.9]), mixed(3, 4))"),
    ("searchsorted_sorted_batched", "vmap(jnp.searchsorted, in_axes=(0, None))",
     "(jnp.sort(mixed(3, 5), axis=1), arr([0.0, 0.5]))"),
    ("searchsorted_right", "vmap(lambda a, v: jnp.searchsorted(a, v, side='right'))",
     "(jnp.sort(mixed(3, 5), axis=1), mixed(3, 2))"),
    ("digitize", "vmap(jnp.digitize, in_axes=(0, None))",
     "(mixed(3, 4), arr([-0.5, 0.0, 0.5]))"),
    ("lexsort", "vmap(lambda a, b: jnp.lexsort((a, b)))", "(ints(3, 5), ints(3, 5, hi=2))"),
    ("sort_complex", "vmap(jnp.sort_complex)",
     "(jnp.asarray(mixed(3, 4)) + 1j * jnp.asarray(pts(3, 4)),)"),
    ("unique_size", "vmap(lambda x: jnp.unique(x, size=4, fill_value=-1))", "(ints(3, 6),)"),
    ("nonzero_size", "vmap(lambda x: jnp.nonzero(x > 0, size=3, fill_value=-1))",
     "(mixed(3, 5),)"),
    ("argwhere_size", "vmap(lambda x: jnp.argwhere(x > 0, size=2))", "(mixed(3, 5),)"),
    ("flatnonzero_size", "vmap(lambda x: jnp.flatnonzero(x, size=2))", "(mixed(3, 5) > 0,)"),
    ("compress_size", "vmap(lambda x, c: jnp.compress(c, x, size=2))",
     "(mixed(3, 5), mixed(3, 5) > 0)"),
])

# ---- shapes and joining ----------------------------------------------------------------------
SHAPES = _cases("shape", [
    ("reshape", "vmap(lambda x: x.reshape(2, 3))", "(mixed(4, 6),)"),
    ("reshape_in1", "vmap(lambda x: x.reshape(-1), in_axes=1)", "(mixed(2, 4, 3),)"),
    ("reshape_in2", "vmap(lambda x: jnp.reshape(x, (3, 2)), in_axes=2)", "(mixed(2, 3, 4),)"),
    ("ravel", "vmap(jnp.ravel, in_axes=1)", "(mixed(2, 3, 4),)"),
    ("transpose", "vmap(jnp.transpose)", "(mixed(4, 2, 3),)"),
    ("transpose_in1", "vmap(lambda x: jnp.transpose(x, (1, 0)), in_axes=1)", "(mixed(2, 4, 3),)"),
    ("swapaxes", "vmap(lambda x: jnp.swapaxes(x, 0, 2), in_axes=2)", "(mixed(2, 3, 4, 5),)"),
    ("moveaxis", "vmap(lambda x: jnp.moveaxis(x, 0, -1), in_axes=-1)", "(mixed(2, 3, 4),)"),
    ("matrix_transpose", "vmap(jnp.matrix_transpose)", "(mixed(4, 2, 3),)"),
    ("expand_dims", "vmap(lambda x: jnp.expand_dims(x, 0), in_axes=1)", "(mixed(2, 3),)"),
    ("expand_dims_neg", "vmap(lambda x: x[..., None])", "(mixed(3, 2),)"),
    ("squeeze", "vmap(jnp.squeeze, in_axes=2)", "(mixed(1, 3, 4),)"),
    ("squeeze_axis", "vmap(lambda x: jnp.squeeze(x, axis=1))", "(mixed(3, 2, 1),)"),
    ("broadcast_to", "vmap(lambda x: jnp.broadcast_to(x, (2, 3)))", "(mixed(4, 3),)"),
    ("broadcast_to_in1", "vmap(lambda x: jnp.broadcast_to(x[:, None], (3, 2)), in_axes=1)",
     "(mixed(3, 4),)"),
    ("lax_broadcast", "vmap(lambda x: lax.broadcast(x, (2,)), in_axes=1)", "(mixed(3, 4),)"),
    ("lax_broadcast_in_dim", "vmap(lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)))",
     "(mixed(5, 3, 4),)"),
    ("lax_broadcast_in_dim_1", "vmap(lambda x: lax.broadcast_in_dim(x, (3, 4), (1,)), "
     "in_axes=1)", "(mixed(4, 5),)"),
    ("broadcast_arrays", "vmap(jnp.broadcast_arrays, in_axes=(0, None))",
     "(mixed(3, 4, 1), mixed(2))"),
    ("atleast_2d", "vmap(jnp.atleast_2d)", "(mixed(3, 4),)"),
    ("concatenate", "vmap(lambda a, b: jnp.concatenate([a, b]))", "(mixed(3, 2), mixed(3, 4))"),
    ("concatenate_none", "vmap(lambda a, b: jnp.concatenate([a, b]), in_axes=(0, None))",
     "(mixed(3, 2), mixed(4))"),
    ("concatenate_axis1", "vmap(lambda a, b: jnp.concatenate([a, b], axis=1), in_axes=(1, 0))",
     "(mixed(2, 3, 2), mixed(3, 2, 1))"),
    ("stack", "vmap(lambda a, b: jnp.stack([a, b]), in_axes=(0, 1))", "(mixed(3, 4), mixed(4, 3))"),
    ("stack_axis1", "vmap(lambda a, b: jnp.stack([a, b], axis=1), in_axes=(None, 0))",
     "(mixed(4), mixed(3, 4))"),
    ("hstack", "vmap(lambda a, b: jnp.hstack([a, b]))", "(mixed(3, 2), mixed(3, 3))"),
    ("vstack", "vmap(lambda a, b: jnp.vstack([a, b]), in_axes=(1, None))",
     "(mixed(2, 3), mixed(2))"),
    ("column_stack", "vmap(lambda a, b: jnp.column_stack([a, b]))", "(mixed(3, 4), mixed(3, 4))"),
    ("append", "vmap(jnp.append, in_axes=(0, None))", "(mixed(3, 2), 7.0)"),
    ("lax_concatenate", "vmap(lambda a, b: lax.concatenate([a, b], 0), in_axes=(1, None))",
     "(mixed(2, 3), mixed(4))"),
    ("split", "vmap(lambda x: jnp.split(x, 2))", "(mixed(3, 4),)"),
    ("split_in1_axis1", "vmap(lambda x: jnp.split(x, [1, 3], axis=1), in_axes=1)",
     "(mixed(2, 3, 4),)"),
    ("array_split", "vmap(lambda x: jnp.array_split(x, 3), in_axes=-1)", "(mixed(5, 3),)"),
    ("unstack", "vmap(jnp.unstack)", "(mixed(3, 2, 4),)"),
    ("lax_split", "vmap(lambda x: lax.split(x, (1, 3), axis=0), in_axes=1)", "(mixed(4, 3),)"),
    ("pad", "vmap(lambda x: jnp.pad(x, (1, 2)))", "(mixed(3, 4),)"),
    ("pad_in1", "vmap(lambda x: jnp.pad(x, ((1, 0), (0, 2))), in_axes=1)", "(mixed(2, 3, 4),)"),
    ("pad_edge", "vmap(lambda x: jnp.pad(x, 2, mode='edge'))", "(mixed(3, 4),)"),
    ("pad_reflect", "vmap(lambda x: jnp.pad(x, 1, mode='reflect'), in_axes=1)", "(mixed(4, 3),)"),
    ("lax_pad_batched_value", "vmap(lambda x, v: lax.pad(x, v, ((1, 1, 1),)))",
     "(mixed(3, 4), mixed(3))"),
    ("lax_pad_negative", "vmap(lambda x: lax.pad(x, 0.0, ((-1, 2, 0),)), in_axes=1)",
     "(mixed(4, 3),)"),
    ("roll", "vmap(lambda x: jnp.roll(x, 2))", "(mixed(3, 5),)"),
    ("roll_axis", "vmap(lambda x: jnp.roll(x, -1, axis=1), in_axes=1)", "(mixed(2, 3, 4),)"),
    ("flip", "vmap(jnp.flip)", "(mixed(3, 4, 2),)"),
    ("flip_axis_in1", "vmap(lambda x: jnp.flip(x, 0), in_axes=1)", "(mixed(4, 3),)"),
    ("lax_rev", "vmap(lambda x: lax.rev(x, (0, 1)), in_axes=2)", "(mixed(2, 3, 4),)"),
    ("rot90", "vmap(jnp.rot90)", "(mixed(3, 2, 4),)"),
    ("tile", "vmap(lambda x: jnp.tile(x, 2))", "(mixed(3, 4),)"),
    ("tile_2d", "vmap(lambda x: jnp.tile(x, (2, 1)), in_axes=1)", "(mixed(4, 3),)"),
    ("repeat", "vmap(lambda x: jnp.repeat(x, 2))", "(mixed(3, 4),)"),
    ("repeat_axis", "vmap(lambda x: jnp.repeat(x, 2, axis=0), in_axes=1)", "(mixed(4, 3),)"),
    ("repeat_array", "vmap(lambda x: jnp.repeat(x, jnp.array([1, 0, 2]), total_repeat_length=3))",
     "(mixed(2, 3),)"),
    ("resize", "vmap(lambda x: jnp.resize(x, (5,)))", "(mixed(3, 4),)"),
    ("diag", "vmap(jnp.diag)", "(mixed(2, 3, 3),)"),
    ("diag_vec", "vmap(jnp.diag)", "(mixed(2, 3),)"),
    ("diagonal", "vmap(jnp.diagonal, in_axes=2)", "(mixed(3, 4, 2),)"),
    ("diagonal_offset", "vmap(lambda x: jnp.diagonal(x, 1))", "(mixed(2, 3, 4),)"),
    ("trace", "vmap(jnp.trace)", "(mixed(2, 3, 3),)"),
    ("tril", "vmap(jnp.tril)", "(mixed(2, 3, 3),)"),
    ("triu_k", "vmap(lambda x: jnp.triu(x, 1), in_axes=1)", "(mixed(3, 2, 3),)"),
    ("fill_diagonal", "vmap(lambda x: jnp.fill_diagonal(x, 0.0, inplace=False))",
     "(mixed(2, 3, 3),)"),
    ("vander", "vmap(jnp.vander)", "(mixed(2, 3),)"),
    ("meshgrid", "vmap(jnp.meshgrid)", "(mixed(2, 3), mixed(2, 4))"),
    ("delete", "vmap(lambda x: jnp.delete(x, 1))", "(mixed(3, 4),)"),
    ("insert", "vmap(lambda x: jnp.insert(x, 1, 9.0))", "(mixed(3, 4),)"),
    ("lax_squeeze", "vmap(lambda x: lax.squeeze(x, (0,)), in_axes=1)", "(mixed(1, 3, 2),)"),
    ("lax_expand_dims", "vmap(lambda x: lax.expand_dims(x, (0, 2)))", "(mixed(3, 2),)"),
    ("lax_transpose", "vmap(lambda x: lax.transpose(x, (2, 0, 1)), in_axes=1)",
     "(mixed(2, 3, 4, 5),)"),
    ("lax_reshape_dims", "vmap(lambda x: lax.reshape(x, (6,), dimensions=(1, 0)))",
     "(mixed(4, 2, 3),)"),
    ("lax_tile", "vmap(lambda x: lax.tile(x, (2,)), in_axes=1)", "(mixed(3, 4),)"),
    ("lax_stack", "vmap(lambda a, b: lax.stack([a, b], axis=1), in_axes=(0, None))",
     "(mixed(3, 4), mixed(4))"),
    ("lax_unstack", "vmap(lambda x: lax.unstack(x, axis=1), in_axes=1)", "(mixed(2, 3, 4),)"),
    ("lax_iota_batched_user", "vmap(lambda x: x + lax.iota(jnp.float32, 4))", "(mixed(3, 4),)"),
    ("indices", "vmap(lambda x: jnp.indices((2, 3)).sum(0) * x)", "(mixed(3),)"),
    ("convert", "vmap(lambda x: lax.convert_element_type(x, jnp.int32))", "(mixed(3, 4, scale=5.0),)"),
    ("bitcast", "vmap(lambda x: lax.bitcast_convert_type(x, jnp.int32), in_axes=1)",
     "(mixed(3, 4),)"),
    ("bitcast_shrink", "vmap(lambda x: lax.bitcast_convert_type(x, jnp.uint8))", "(mixed(3, 2),)"),
    ("reduce_precision", "vmap(lambda x: lax.reduce_precision(x, 5, 10))", "(mixed(3, 4),)"),
])

# ---- indexing, gather, scatter, dynamic slicing ---------------------------------------------
INDEXING = _cases("index", [
    ("static_int", "vmap(lambda x: x[1])", "(mixed(3, 4),)"),
    ("static_neg", "vmap(lambda x: x[-1], in_axes=1)", "(mixed(3, 4),)"),
    ("static_slice", "vmap(lambda x: x[1:3])", "(mixed(3, 5),)"),
    ("static_slice_step", "vmap(lambda x: x[::2, 1:], in_axes=1)", "(mixed(5, 3, 4),)"),
    ("static_reverse", "vmap(lambda x: x[::-1])", "(mixed(3, 4),)"),
    ("ellipsis_newaxis", "vmap(lambda x: x[..., None, 0])", "(mixed(3, 2, 4),)"),
    ("batched_index", "vmap(lambda x, i: x[i])", "(mixed(3, 5), ints(3))"),
    ("batched_index_unbatched_operand", "vmap(lambda x, i: x[i], in_axes=(None, 0))",
     "(mixed(5, 2), ints(3))"),
    ("batched_operand_unbatched_index", "vmap(lambda x, i: x[i], in_axes=(1, None))",
     "(mixed(5, 3), 2)"),
    ("batched_index_array", "vmap(lambda x, i: x[i])", "(mixed(3, 5), ints(3, 2))"),
    ("index_array_none_operand", "vmap(lambda x, i: x[i], in_axes=(None, 0))",
     "(mixed(5), ints(3, 4))"),
    ("two_index_arrays", "vmap(lambda x, i, j: x[i, j])", "(mixed(3, 4, 5), ints(3, 2), ints(3, 2))"),
    ("index_second_axis", "vmap(lambda x, i: x[:, i])", "(mixed(3, 2, 5), ints(3))"),
    ("negative_index", "vmap(lambda x, i: x[-i - 1])", "(mixed(3, 5), ints(3))"),
    ("bool_mask_where", "vmap(lambda x: jnp.where(x > 0, x, 0.0).sum())", "(mixed(3, 5),)"),
    ("dynamic_slice", "vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))", "(mixed(3, 5), ints(3))"),
    ("dynamic_slice_none_idx", "vmap(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), "
     "in_axes=(1, None))", "(mixed(4, 3, 3), 1)"),
    ("dynamic_slice_none_operand", "vmap(lambda x, i: lax.dynamic_slice(x, (i,), (3,)), "
     "in_axes=(None, 0))", "(mixed(6), ints(4))"),
    ("dynamic_slice_in_dim", "vmap(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))",
     "(mixed(3, 2, 5), ints(3))"),
    ("dynamic_index_in_dim", "vmap(lambda x, i: lax.dynamic_index_in_dim(x, i, keepdims=False))",
     "(mixed(3, 5), ints(3))"),
    ("dynamic_update_slice", "vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)))",
     "(mixed(3, 5), mixed(3, 2), ints(3))"),
    ("dynamic_update_slice_none_update", "vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, "
     "(i,)), in_axes=(0, None, None))", "(mixed(3, 5), mixed(2), 1)"),
    ("dynamic_update_slice_none_operand", "vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, "
     "(i,)), in_axes=(None, 0, 0))", "(mixed(5), mixed(3, 2), ints(3))"),
    ("dynamic_update_index_in_dim", "vmap(lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, "
     "i, 0), in_axes=(1, 0, 0))", "(mixed(4, 3), mixed(3), ints(3))"),
    ("at_set", "vmap(lambda x: x.at[1].set(0.0))", "(mixed(3, 4),)"),
    ("at_set_batched_value", "vmap(lambda x, v: x.at[1].set(v))", "(mixed(3, 4), mixed(3))"),
    ("at_set_batched_index", "vmap(lambda x, i: x.at[i].set(9.0))", "(mixed(3, 4), ints(3))"),
    ("at_set_none_operand", "vmap(lambda x, i, v: x.at[i].set(v), in_axes=(None, 0, 0))",
     "(mixed(4), ints(3), mixed(3))"),
    ("at_set_none_operand_value_only", "vmap(lambda x, v: x.at[2].set(v), in_axes=(None, 0))",
     "(mixed(4), mixed(3))"),
    ("at_add", "vmap(lambda x, i, v: x.at[i].add(v))", "(mixed(3, 4), ints(3, 2), mixed(3, 2))"),
    ("at_add_dupes", "vmap(lambda x, i: x.at[i].add(1.0), in_axes=(None, 0))",
     "(mixed(4), jnp.array([[0, 0, 1], [2, 2, 2]]))"),
    ("at_mul", "vmap(lambda x, i: x.at[i].multiply(2.0), in_axes=(1, 0))",
     "(mixed(4, 3), ints(3))"),
    ("at_min", "vmap(lambda x, v: x.at[::2].min(v), in_axes=(0, None))", "(mixed(3, 4), 0.0)"),
    ("at_max", "vmap(lambda x, i, v: x.at[i].max(v))", "(mixed(3, 4), ints(3), mixed(3))"),
    ("at_get", "vmap(lambda x, i: x.at[i].get(mode='fill', fill_value=-1.0))",
     "(mixed(3, 4), ints(3) + 2)"),
    ("at_set_slice", "vmap(lambda x, v: x.at[1:3].set(v), in_axes=(1, 0))",
     "(mixed(4, 3), mixed(3, 2))"),
    ("at_set_2d", "vmap(lambda x, i, j: x.at[i, j].set(0.0))",
     "(mixed(3, 4, 4), ints(3, hi=4), ints(3, hi=4))"),
    ("at_set_oob_dropped", "vmap(lambda x, i: x.at[i].set(5.0))", "(mixed(3, 4), jnp.array([1, 7, -9]))"),
    ("take", "vmap(jnp.take, in_axes=(0, None))", "(mixed(3, 5), jnp.array([0, 4, 2]))"),
    ("take_axis", "vmap(lambda x, i: jnp.take(x, i, axis=1))", "(mixed(3, 2, 5), ints(3, 2))"),
    ("take_along_axis", "vmap(lambda x, i: jnp.take_along_axis(x, i, axis=0))",
     "(mixed(3, 5), ints(3, 2))"),
    ("take_along_axis_2d", "vmap(lambda x, i: jnp.take_along_axis(x, i, axis=1), in_axes=(0, None))",
     "(mixed(3, 2, 5), ints(2, 1))"),
    ("put_along_axis", "vmap(lambda x, i: jnp.put_along_axis(x, i, 0.0, axis=0, inplace=False))",
     "(mixed(3, 5), ints(3, 2))"),
    ("one_hot", "vmap(lambda i: nn.one_hot(i, 4))", "(ints(3, 2, hi=4),)"),
    ("choose", "vmap(lambda i, a, b: jnp.choose(i, [a, b], mode='clip'))", "(ints(3, 4, hi=2), mixed(3, 4), grid(3, 4))"),
    ("select_n", "vmap(lambda p, a, b: lax.select_n(p, a, b), in_axes=(0, None, 1))",
     "(bools(3, 4), mixed(4), mixed(4, 3))"),
    ("select_n_int", "vmap(lambda p, a, b, c: lax.select_n(p, a, b, c))",
     "(ints(3, 4, hi=3), mixed(3, 4), grid(3, 4), pts(3, 4))"),
    ("select_scalar_pred", "vmap(lambda p, a, b: lax.select(p, a, b))",
     "(bools(3), mixed(3, 4), grid(3, 4))"),
    ("select_scalar_pred_none_branches", "vmap(lambda p, a, b: lax.select(p, a, b), "
     "in_axes=(0, None, None))", "(bools(3), mixed(4), grid(4))"),
    ("clamp_batched_bounds", "vmap(lambda lo, x, hi: lax.clamp(lo, x, hi), in_axes=(0, 1, None))",
     "(mixed(3, scale=0.2) - 0.5, mixed(4, 3), 0.4)"),
    ("gather_lax", "vmap(lambda x, idx: lax.gather(x, idx, lax.GatherDimensionNumbers("
     "offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 2)))",
     "(mixed(3, 5, 2), ints(3, 4, 1))"),
    ("gather_lax_none_idx", "vmap(lambda x, idx: lax.gather(x, idx, lax.GatherDimensionNumbers("
     "offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (1,)), in_axes=(1, None))",
     "(mixed(5, 3), ints(4, 1))"),
    ("scatter_add_lax", "vmap(lambda x, idx, u: lax.scatter_add(x, idx, u, "
     "lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
     "scatter_dims_to_operand_dims=(0,))), in_axes=(0, None, 0))",
     "(mixed(3, 5), ints(4, 1), mixed(3, 4))"),
    ("scatter_lax_batched_idx", "vmap(lambda x, idx, u: lax.scatter(x, idx, u, "
     "lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
     "scatter_dims_to_operand_dims=(0,)), unique_indices=True), in_axes=(None, 0, None))",
     "(mixed(5), jnp.array([[[0], [3]], [[1], [2]]]), arr([7.0, 8.0]))"),
    ("ravel_multi_index", "vmap(lambda i, j: jnp.ravel_multi_index((i, j), (4, 5), mode='clip'))",
     "(ints(3, hi=4), ints(3))"),
    ("unravel_index", "vmap(lambda i: jnp.unravel_index(i, (3, 4)))", "(ints(3, hi=12),)"),
    ("extract_size", "vmap(lambda c, x: jnp.extract(c, x, size=2))", "(bools(3, 4), mixed(3, 4))"),
])

# ---- contractions and convolutions ---------------------------------------------------------------
DOT = _cases("dot", [
    ("dot_vv", "vmap(jnp.dot)", "(mixed(3, 4), mixed(3, 4))"),
    ("dot_vv_none", "vmap(jnp.dot, in_axes=(0, None))", "(mixed(3, 4), mixed(4))"),
    ("dot_mv", "vmap(jnp.dot, in_axes=(None, 0))", "(mixed(2, 4), mixed(3, 4))"),
    ("dot_mv_in1", "vmap(jnp.dot, in_axes=(None, 1))", "(mixed(2, 4), mixed(4, 3))"),
    ("dot_mm_batched_lhs", "vmap(jnp.dot, in_axes=(0, None))", "(mixed(3, 2, 4), mixed(4, 5))"),
    ("dot_mm_batched_rhs", "vmap(jnp.dot, in_axes=(None, 0))", "(mixed(2, 4), mixed(3, 4, 5))"),
    ("dot_mm_both", "vmap(jnp.dot)", "(mixed(3, 2, 4), mixed(3, 4, 5))"),
    ("dot_mm_lhs_in1", "vmap(jnp.dot, in_axes=(1, None))", "(mixed(2, 3, 4), mixed(4, 5))"),
    ("dot_mm_rhs_in2", "vmap(jnp.dot, in_axes=(None, 2))", "(mixed(2, 4), mixed(4, 5, 3))"),
    ("dot_mm_both_in_mixed", "vmap(jnp.dot, in_axes=(2, 0))", "(mixed(2, 4, 3), mixed(3, 4, 5))"),
    ("matmul", "vmap(jnp.matmul)", "(mixed(3, 2, 4), mixed(3, 4, 5))"),
    ("matmul_op_out1", "vmap(lambda a, b: a @ b, out_axes=1)", "(mixed(3, 2, 4), mixed(3, 4, 5))"),
    ("matmul_batched_inner", "vmap(jnp.matmul, in_axes=(1, None))",
     "(mixed(2, 3, 4, 5), mixed(2, 5, 3))"),
    ("matmul_vec", "vmap(lambda A, x: A @ x, in_axes=(None, 0))", "(mixed(3, 4), mixed(5, 4))"),
    ("vecmat", "vmap(jnp.vecmat, in_axes=(0, None))", "(mixed(3, 4), mixed(4, 2))"),
    ("matvec", "vmap(jnp.matvec, in_axes=(None, 1))", "(mixed(2, 4), mixed(4, 3))"),
    ("vecdot", "vmap(jnp.vecdot)", "(mixed(3, 2, 4), mixed(3, 2, 4))"),
    ("vdot", "vmap(jnp.vdot)", "(mixed(3, 4), mixed(3, 4))"),
    ("inner", "vmap(jnp.inner, in_axes=(0, None))", "(mixed(3, 2, 4), mixed(5, 4))"),
    ("outer", "vmap(jnp.outer)", "(mixed(3, 2), mixed(3, 4))"),
    ("kron", "vmap(jnp.kron, in_axes=(None, 0))", "(mixed(2, 2), mixed(3, 2, 2))"),
    ("cross", "vmap(jnp.cross)", "(jnp.asarray(ints(4, 3), jnp.float32), jnp.asarray(ints(4, 3, hi=3), jnp.float32))"),
    ("tensordot", "vmap(lambda a, b: jnp.tensordot(a, b, axes=1))",
     "(mixed(3, 2, 4), mixed(3, 4, 5))"),
    ("tensordot_axes", "vmap(lambda a, b: jnp.tensordot(a, b, axes=([0], [1])), in_axes=(1, None))",
     "(mixed(4, 3, 2), mixed(5, 4))"),
    ("einsum_ij_jk", "vmap(lambda a, b: jnp.einsum('ij,jk->ik', a, b))",
     "(mixed(3, 2, 4), mixed(3, 4, 5))"),
    ("einsum_none", "vmap(lambda a, b: jnp.einsum('ij,j->i', a, b), in_axes=(None, 0))",
     "(mixed(2, 4), mixed(3, 4))"),
    ("einsum_trace", "vmap(lambda a: jnp.einsum('ii->', a))", "(mixed(3, 4, 4),)"),
    ("einsum_outer", "vmap(lambda a, b: jnp.einsum('i,j->ij', a, b), in_axes=(1, 0))",
     "(mixed(2, 3), mixed(3, 4))"),
    ("einsum_batch", "vmap(lambda a, b: jnp.einsum('bij,bjk->bik', a, b))",
     "(mixed(3, 2, 2, 4), mixed(3, 2, 4, 2))"),
    ("einsum_ellipsis", "vmap(lambda a, b: jnp.einsum('...i,i->...', a, b), in_axes=(2, None))",
     "(mixed(2, 4, 3), mixed(4))"),
    ("dot_general_batch", "vmap(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))))",
     "(mixed(3, 2, 2, 4), mixed(3, 2, 4, 5))"),
    ("dot_general_batch_in1", "vmap(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),"
     " in_axes=(1, 1))", "(mixed(2, 3, 4), mixed(4, 3, 5))"),
    ("dot_general_int", "vmap(lambda a, b: lax.dot_general(a, b, (((0,), (0,)), ((), ()))))",
     "(ints(3, 4), ints(3, 4, 2))"),
    ("dot_general_pref", "vmap(lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float32))",
     "(jnp.asarray(mixed(3, 2, 4), jnp.float16), jnp.asarray(mixed(3, 4), jnp.float16))"),
    ("batch_matmul", "vmap(lax.batch_matmul, in_axes=(0, None))",
     "(mixed(3, 2, 2, 4), mixed(2, 4, 3))"),
    ("attention", "vmap(attention)", "(mixed(2, 3, 4), mixed(2, 5, 4), mixed(2, 5, 2))"),
    ("attention_shared_kv", "vmap(attention, in_axes=(0, None, None))",
     "(mixed(2, 3, 4), mixed(5, 4), mixed(5, 2))"),
    ("convolve", "vmap(jnp.convolve)", "(mixed(3, 5), mixed(3, 3))"),
    ("convolve_none_kernel", "vmap(lambda x, k: jnp.convolve(x, k, mode='same'), in_axes=(0, None))",
     "(mixed(3, 5), arr([1.0, -1.0, 0.5]))"),
    ("correlate_valid", "vmap(lambda x, k: jnp.correlate(x, k), in_axes=(None, 0))",
     "(mixed(6), mixed(3, 3))"),
    ("conv_lhs", "vmap(lambda x, w: lax.conv(x, w, (1, 1), 'SAME'), in_axes=(0, None))",
     "(mixed(2, 1, 2, 5, 5), mixed(3, 2, 3, 3))"),
    ("conv_rhs", "vmap(lambda x, w: lax.conv(x, w, (1, 1), 'VALID'), in_axes=(None, 0))",
     "(mixed(1, 2, 4, 4), mixed(2, 3, 2, 2, 2))"),
    ("conv_both", "vmap(lambda x, w: lax.conv(x, w, (2, 1), 'VALID'))",
     "(mixed(2, 1, 2, 5, 4), mixed(2, 3, 2, 2, 2))"),
    ("conv_lhs_in_axis1", "vmap(lambda x, w: lax.conv(x, w, (1,), 'SAME'), in_axes=(1, None))",
     "(mixed(2, 3, 1, 6), mixed(2, 1, 3))"),
    ("conv_general_nhwc", "vmap(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'SAME', "
     "dimension_numbers=('NHWC', 'HWIO', 'NHWC')), in_axes=(0, None))",
     "(mixed(2, 1, 4, 4, 2), mixed(2, 2, 2, 3))"),
    ("conv_groups", "vmap(lambda x, w: lax.conv_general_dilated(x, w, (1,), 'VALID', "
     "feature_group_count=2), in_axes=(None, 0))", "(mixed(1, 4, 5), mixed(2, 4, 2, 2))"),
    ("conv_dilated", "vmap(lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 1),), "
     "lhs_dilation=(2,), rhs_dilation=(1,)))", "(mixed(2, 1, 1, 4), mixed(2, 2, 1, 2))"),
    ("conv_transpose", "vmap(lambda x, w: lax.conv_transpose(x, w, (2,), 'SAME', "
     "dimension_numbers=('NCH', 'OIH', 'NCH')), in_axes=(0, None))",
     "(mixed(2, 1, 2, 4), mixed(3, 2, 3))"),
])

# ---- windowed reductions --------------------------------------------------------------------------
WINDOW = _cases("window", [
    ("max_pool", "vmap(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), 'VALID'))",
     "(mixed(3, 4, 4),)"),
    ("max_pool_in1", "vmap(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2,), (1,), 'SAME'),"
     " in_axes=1)", "(mixed(5, 3),)"),
    ("sum_pool", "vmap(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), 'VALID'))",
     "(mixed(3, 4, 2),)"),
    ("min_pool_in2", "vmap(lambda x: lax.reduce_window(x, jnp.inf, lax.min, (1, 3), (1, 2), "
     "((0, 0), (1, 1))), in_axes=2)", "(mixed(1, 6, 3),)"),
    ("avg_pool_padded", "vmap(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "
     "((0, 1), (1, 0))) / 4.0)", "(mixed(2, 3, 3),)"),
    ("window_dilation", "vmap(lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1,), 'VALID', "
     "window_dilation=(2,)))", "(mixed(3, 6),)"),
    ("generic_window", "vmap(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,), (1,), 'VALID'))",
     "(grid(3, 5),)"),
    ("two_operand_window", "vmap(lambda x, y: lax.reduce_window((x, y), (0.0, 0.0), "
     "lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (2,), (1,), 'VALID'))",
     "(mixed(3, 5), grid(3, 5))"),
])

# ---- jax.nn and jax.scipy.special ----------------------------------------------------------------
_NN = ["relu", "relu6", "sigmoid", "softplus", "soft_sign", "silu", "log_sigmoid", "elu", "celu",
       "selu", "gelu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu", "mish",
       "squareplus", "sparse_plus", "identity"]
NN = [(f"nn/{name}", f"vmap(nn.{name}, in_axes={i % 2})", "(mixed(3, 4, scale=3.0),)")
      for i, name in enumerate(_NN)]
NN += _cases("nn", [
    ("gelu_exact", "vmap(lambda x: nn.gelu(x, approximate=False))", "(mixed(3, 4, scale=3.0),)"),
    ("softmax", "vmap(nn.softmax)", "(mixed(3, 4),)"),
    ("softmax_in1", "vmap(nn.softmax, in_axes=1)", "(mixed(3, 4),)"),
    ("softmax_axis0", "vmap(lambda x: nn.softmax(x, axis=0), in_axes=2)", "(mixed(3, 4, 2),)"),
    ("log_softmax", "vmap(nn.log_softmax)", "(mixed(3, 4),)"),
    ("log_softmax_where", "vmap(lambda x, m: nn.log_softmax(x, where=m))",
     "(mixed(3, 4), mixed(3, 4) > -0.5)"),
    ("glu", "vmap(nn.glu, in_axes=1)", "(mixed(4, 3),)"),
    ("standardize", "vmap(nn.standardize)", "(mixed(3, 4),)"),
    ("standardize_axis", "vmap(lambda x: nn.standardize(x, axis=0), in_axes=1)", "(mixed(3, 4, 2),)"),
    ("one_hot_axis0", "vmap(lambda i: nn.one_hot(i, 3, axis=0))", "(ints(4, 2, hi=3),)"),
    ("logsumexp_return_sign", "vmap(lambda x: nn.logsumexp(x, b=-1.0, return_sign=True))",
     "(mixed(3, 4),)"),
    ("relu_grad_batched", "vmap(jax.grad(nn.relu))", "(arr([-1.0, 0.0, 2.0]),)"),
    ("softplus_grad_batched", "vmap(jax.grad(nn.softplus))", "(mixed(5, scale=3.0),)"),
])
_SPECIAL = [("erf", "mixed"), ("erfc", "mixed"), ("erfinv", "mixed"), ("expit", "mixed"),
            ("logit", "lambda *s: grid(*s) / 5.0"), ("gammaln", "grid"), ("digamma", "grid"),
            ("entr", "grid"), ("ndtr", "mixed")]
SPECIAL = [(f"special/{name}", f"vmap(sp.{name}, in_axes={i % 2})", f"(({src})(3, 4),)")
           for i, (name, src) in enumerate(_SPECIAL)]
SPECIAL += _cases("special", [
    ("xlogy", "vmap(sp.xlogy, in_axes=(0, None))", "(mixed(3, 4), grid(4))"),
    ("xlog1py", "vmap(sp.xlog1py)", "(mixed(3, 4), grid(3, 4))"),
    ("polygamma", "vmap(lambda x: lax.polygamma(1.0, x))", "(grid(3, 4),)"),
    ("polygamma_batched_n", "vmap(lax.polygamma, in_axes=(0, None))", "(arr([0.0, 1.0, 2.0]), grid(4))"),
    ("logsumexp", "vmap(sp.logsumexp, in_axes=1)", "(mixed(3, 4),)"),
])

# ---- lax odds and ends -----------------------------------------------------------------------------
LAX = _cases("lax", [
    ("integer_pow", "vmap(lambda x: lax.integer_pow(x, 3))", "(mixed(3, 4),)"),
    ("pow_batched_exp", "vmap(lax.pow, in_axes=(None, 0))", "(grid(4), mixed(3, 4))"),
    ("population_count", "vmap(lax.population_count)", "(ints(3, 4, hi=9),)"),
    ("clz", "vmap(lax.clz, in_axes=1)", "(ints(3, 4, hi=9),)"),
    ("shift_right_logical", "vmap(lax.shift_right_logical, in_axes=(0, None))",
     "(ints(3, 4, hi=9), jnp.int32(1))"),
    ("nextafter", "vmap(lax.nextafter)", "(mixed(3, 4), grid(3, 4))"),
    ("complex", "vmap(lax.complex, in_axes=(0, None))", "(mixed(3, 4), mixed(4))"),
    ("real_imag", "vmap(lambda z: (lax.real(z), lax.imag(z)))",
     "(jnp.asarray(mixed(3, 4)) + 1j * jnp.asarray(pts(3, 4)),)"),
    ("round_even", "vmap(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))",
     "(pts(3, 4, lo=-3.0, hi=3.0),)"),
    ("atan2", "vmap(lax.atan2, in_axes=(1, 0))", "(mixed(4, 3), mixed(3, 4))"),
    ("rem", "vmap(lax.rem)", "(mixed(3, 4, scale=5.0), grid(3, 4))"),
    ("sign_int", "vmap(lax.sign)", "(ints(3, 4) - 2,)"),
    ("stop_gradient", "vmap(lax.stop_gradient)", "(mixed(3, 4),)"),
    ("copy", "vmap(jnp.copy, in_axes=1)", "(mixed(3, 4),)"),
    ("slice", "vmap(lambda x: lax.slice(x, (1,), (4,), (2,)))", "(mixed(3, 5),)"),
    ("slice_in1", "vmap(lambda x: lax.slice(x, (0, 1), (2, 3)), in_axes=1)", "(mixed(2, 3, 4),)"),
    ("slice_in_dim", "vmap(lambda x: lax.slice_in_dim(x, 1, 3, axis=1))", "(mixed(3, 2, 4),)"),
    ("index_in_dim", "vmap(lambda x: lax.index_in_dim(x, 2, axis=0, keepdims=False), in_axes=1)",
     "(mixed(4, 3),)"),
    ("broadcasted_iota_const", "vmap(lambda x: x * lax.broadcasted_iota(jnp.int32, (2, 3), 1))",
     "(ints(4, 2, 3),)"),
    ("full_dynamic", "vmap(lambda x: jnp.full((3,), x))", "(mixed(4),)"),
    ("arange_like", "vmap(lambda x: jnp.arange(3.0) * x)", "(mixed(4),)"),
    ("eye_mul", "vmap(lambda x: jnp.eye(3) * x)", "(mixed(2),)"),
    ("linspace_batched_ends", "vmap(lambda a, b: jnp.linspace(a, b, 4))", "(mixed(3), grid(3))"),
    ("tri_mask", "vmap(lambda x: jnp.where(jnp.tri(3, dtype=bool), x, 0.0))", "(mixed(2, 3, 3),)"),
    ("piecewise_like", "vmap(lambda x: jnp.select([x < 0, x < 0.5], [-x, x * 2], 1.0))",
     "(mixed(3, 4),)"),
    ("frexp", "vmap(jnp.frexp)", "(mixed(3, 4, scale=7.0),)"),
    ("modf", "vmap(jnp.modf, in_axes=1)", "(mixed(3, 4, scale=7.0),)"),
    ("spacing", "vmap(jnp.spacing)", "(mixed(3, 4),)"),
    ("bitwise_count", "vmap(jnp.bitwise_count)", "(ints(3, 4, hi=9),)"),
])

# ---- nested vmaps and closures ---------------------------------------------------------------------
NESTED = _cases("nested", [
    ("vmap_vmap_dot", "vmap(vmap(jnp.dot))", "(mixed(2, 3, 4), mixed(2, 3, 4))"),
    ("vmap_vmap_dot_pairwise", "vmap(vmap(jnp.dot, in_axes=(None, 0)), in_axes=(0, None))",
     "(mixed(2, 4), mixed(3, 4))"),
    ("vmap_vmap_in_axes_differ", "vmap(vmap(lambda a, b: a * b, in_axes=(1, None)), "
     "in_axes=(0, 0))", "(mixed(2, 3, 4), mixed(2))"),
    ("vmap_vmap_out_axes", "vmap(vmap(lambda x: x * 2, out_axes=1), out_axes=2)",
     "(mixed(2, 3, 4),)"),
    ("vmap_vmap_sum", "vmap(vmap(jnp.sum, in_axes=1), in_axes=2)", "(mixed(2, 3, 4, 5),)"),
    ("vmap_vmap_sort", "vmap(vmap(jnp.sort), in_axes=1)", "(mixed(2, 3, 4),)"),
    ("vmap_vmap_index", "vmap(vmap(lambda x, i: x[i], in_axes=(0, None)), in_axes=(None, 0))",
     "(mixed(3, 5), ints(2))"),
    ("vmap_vmap_matmul", "vmap(vmap(jnp.matmul, in_axes=(0, None)), in_axes=(None, 0))",
     "(mixed(2, 3, 4), mixed(5, 4, 2))"),
    ("vmap_vmap_distance", "vmap(vmap(lambda a, b: jnp.sqrt(jnp.sum((a - b) ** 2)), "
     "in_axes=(None, 0)), in_axes=(0, None))", "(mixed(3, 2), mixed(4, 2))"),
    ("vmap_vmap_vmap", "vmap(vmap(vmap(lambda a, b: a * b + 1.0)))",
     "(mixed(2, 3, 4), mixed(2, 3, 4))"),
    ("vmap_vmap_vmap_axes", "vmap(vmap(vmap(jnp.sin, in_axes=1), in_axes=1), in_axes=1)",
     "(mixed(2, 3, 4, 5),)"),
    ("vmap_vmap_dict", "vmap(vmap(lambda d: d['x'] @ d['y'], in_axes=({'x': 0, 'y': None},)))",
     "({'x': mixed(2, 3, 4), 'y': mixed(2, 4)},)"),
    ("vmap_vmap_conv", "vmap(vmap(lambda x, w: jnp.convolve(x, w)), in_axes=(0, None))",
     "(mixed(2, 3, 5), mixed(3, 2))"),
    ("vmap_vmap_top_k", "vmap(vmap(lambda x: lax.top_k(x, 2)), in_axes=2, out_axes=0)",
     "(mixed(2, 4, 3),)"),
    ("vmap_vmap_at_set", "vmap(vmap(lambda x, i: x.at[i].set(0.0), in_axes=(0, None)))",
     "(mixed(2, 3, 4), ints(2))"),
    ("vmap_vmap_cumsum_none", "vmap(vmap(jnp.cumsum, in_axes=None, axis_size=2), in_axes=1)",
     "(mixed(3, 4),)"),
    ("inner_vmap_of_outer_tracer", "vmap(lambda x: vmap(lambda y: x * y)(jnp.arange(3.0)))",
     "(mixed(4),)"),
])
CLOSURE = _cases("closure", [
    ("closed_outer_batched", "vmap(lambda x: vmap(lambda y: x + y)(x))", "(mixed(3, 4),)"),
    ("closed_outer_scalar", "vmap(lambda s: vmap(lambda v: v * s)(jnp.ones((2, 3))))",
     "(mixed(4),)"),
    ("closed_over_const", "lambda w: vmap(lambda x: x @ w)(mixed(5, 3))", "(mixed(3, 2),)"),
    ("closed_in_grad", "lambda w: jax.grad(lambda w: vmap(lambda x: jnp.tanh(x @ w))(mixed(5, 3))"
     ".sum())(w)", "(mixed(3, 2),)"),
    ("closed_over_grad_tracer", "jax.grad(lambda a: vmap(lambda x: jnp.sin(a * x))(mixed(4)).sum())",
     "(0.7,)"),
    ("closed_jvp_tracer", "lambda a: jax.jvp(lambda a: vmap(lambda x: a * x ** 2)(mixed(3)), "
     "(a,), (1.0,))", "(0.5,)"),
    ("closed_mixed_levels", "vmap(lambda a: vmap(lambda b: vmap(lambda c: a * b + c)(mixed(2)))("
     "mixed(3)))", "(mixed(4),)"),
    ("closed_index_array", "lambda idx: vmap(lambda x: x[idx])(mixed(3, 5))", "(ints(2),)"),
])

# ---- autodiff with vmap ------------------------------------------------------------------------------
AD = _cases("ad", [
    ("per_example_grad", "vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0))",
     "(params(), mixed(5, 3), mixed(5, 2))"),
    ("per_example_grad_x", "vmap(jax.grad(mlp_loss, argnums=1), in_axes=(None, 0, 0))",
     "(params(), mixed(5, 3), mixed(5, 2))"),
    ("per_example_value_and_grad", "vmap(jax.value_and_grad(mlp_loss), in_axes=(None, 0, 0))",
     "(params(), mixed(4, 3), mixed(4, 2))"),
    ("per_example_xent", "vmap(jax.grad(xent_loss), in_axes=(None, 0, 0))",
     "(params(), mixed(4, 3), jnp.array([0, 1, 1, 0]))"),
    ("per_example_linear", "vmap(jax.grad(linear_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))",
     "(mixed(3), 0.5, mixed(4, 3), mixed(4))"),
    ("per_example_in1", "vmap(jax.grad(linear_loss), in_axes=(None, None, 1, 0))",
     "(mixed(3), 0.5, mixed(3, 4), mixed(4))"),
    ("per_example_batched_params", "vmap(jax.grad(mlp_loss), in_axes=({'w1': 0, 'b1': None, "
     "'w2': None, 'b2': None}, 0, None))",
     "(dict(params(), w1=mixed(2, 3, 4)), mixed(2, 3), mixed(2))"),
    ("grad_of_vmap_sum", "jax.grad(lambda p, x, y: vmap(mlp_loss, in_axes=(None, 0, 0))(p, x, y)"
     ".sum())", "(params(), mixed(5, 3), mixed(5, 2))"),
    ("grad_of_vmap_mean_x", "jax.grad(lambda x: vmap(jnp.dot)(x, x).mean())", "(mixed(3, 4),)"),
    ("grad_of_vmap_sort", "jax.grad(lambda x: (vmap(jnp.sort)(x) * jnp.arange(4.0)).sum())",
     "(mixed(3, 4),)"),
    ("grad_of_vmap_index", "jax.grad(lambda x, i: vmap(lambda a, j: a[j])(x, i).sum())",
     "(mixed(3, 4), ints(3))"),
    ("grad_of_vmap_in1", "jax.grad(lambda x: (vmap(jnp.cumsum, in_axes=1, out_axes=1)(x) ** 2)"
     ".sum())", "(mixed(3, 4),)"),
    ("grad_of_vmap_max", "jax.grad(lambda x: vmap(jnp.max)(x).sum())", "(mixed(3, 4),)"),
    ("grad_of_vmap_softmax", "jax.grad(lambda x: (vmap(nn.softmax)(x) * mixed(3, 4)).sum())",
     "(mixed(3, 4),)"),
    ("vmap_grad_scalar_fn", "vmap(jax.grad(lambda x: jnp.sin(x) * x ** 2))", "(mixed(5),)"),
    ("vmap_grad_grad", "vmap(jax.grad(jax.grad(lambda x: jnp.tanh(x) ** 3)))", "(mixed(5),)"),
    ("vmap_grad_in1", "vmap(jax.grad(lambda x: jnp.sum(x ** 3)), in_axes=1, out_axes=1)",
     "(mixed(3, 4),)"),
    ("vmap_grad_has_aux", "vmap(jax.grad(lambda x: (jnp.sum(x ** 2), x.max()), has_aux=True))",
     "(mixed(3, 4),)"),
    ("vmap_grad_argnums", "vmap(jax.grad(lambda x, y: jnp.sum(x * y ** 2), argnums=(0, 1)), "
     "in_axes=(0, None))", "(mixed(3, 4), mixed(4))"),
    ("vmap_grad_conv", "vmap(jax.grad(lambda w, x: jnp.sum(jnp.convolve(x, w) ** 2)), "
     "in_axes=(None, 0))", "(mixed(3), mixed(4, 6))"),
    ("vmap_grad_attention", "vmap(jax.grad(lambda q, k, v: attention(q, k, v).sum()), "
     "in_axes=(0, None, None))", "(mixed(2, 3, 4), mixed(5, 4), mixed(5, 2))"),
    ("vmap_grad_gather", "vmap(jax.grad(lambda x, i: jnp.sum(x[i] ** 2)), in_axes=(None, 0))",
     "(mixed(5), ints(3, 2))"),
    ("vmap_grad_scatter", "vmap(jax.grad(lambda x, v: jnp.sum(x.at[1].set(v) ** 2), argnums=(0, 1)))",
     "(mixed(3, 4), mixed(3))"),
    ("vmap_grad_pool", "vmap(jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2,), (1,),"
     " 'VALID').sum()))", "(mixed(3, 5),)"),
    ("vmap_grad_cumprod", "vmap(jax.grad(lambda x: jnp.cumprod(x).sum()))", "(grid(3, 4),)"),
    ("vmap_grad_dynamic_slice", "vmap(jax.grad(lambda x, i: jnp.sum(lax.dynamic_slice(x, (i,), "
     "(2,)) ** 2)))", "(mixed(3, 5), ints(3))"),
    ("vmap_jvp", "vmap(lambda x, t: jax.jvp(jnp.sin, (x,), (t,)))", "(mixed(3, 4), grid(3, 4))"),
    ("vmap_jvp_tangent_batched", "vmap(lambda t: jax.jvp(lambda x: jnp.exp(x) * x, (mixed(4),), "
     "(t,))[1])", "(jnp.eye(4),)"),
    ("vmap_jvp_in1", "vmap(lambda x, t: jax.jvp(jnp.cumsum, (x,), (t,)), in_axes=(1, None))",
     "(mixed(4, 3), grid(4))"),
    ("vmap_vjp", "vmap(lambda x, ct: jax.vjp(jnp.tanh, x)[1](ct))", "(mixed(3, 4), grid(3, 4))"),
    ("vmap_vjp_ct_batched", "vmap(lambda ct: jax.vjp(lambda x: x @ mixed(4, 3), mixed(2, 4))[1](ct),"
     " in_axes=1)", "(mixed(2, 5, 3),)"),
    ("vmap_vjp_pytree", "vmap(lambda x: jax.vjp(lambda d: d['a'] * d['b'], {'a': x, 'b': x + 1})[1]"
     "(jnp.ones_like(x)))", "(mixed(3, 2),)"),
    ("vmap_linearize", "vmap(lambda x: jax.linearize(jnp.sin, x)[1](jnp.ones_like(x)))",
     "(mixed(3, 4),)"),
    ("jacfwd_vec", "jax.jacfwd(lambda x: jnp.sin(x) * x[0])", "(mixed(3),)"),
    ("jacrev_vec", "jax.jacrev(lambda x: jnp.sin(x) * x[0])", "(mixed(3),)"),
    ("jacfwd_matrix_fn", "jax.jacfwd(lambda x: x @ mixed(3, 2))", "(mixed(3),)"),
    ("jacrev_softmax", "jax.jacrev(nn.softmax)", "(mixed(4),)"),
    ("jacfwd_softmax", "jax.jacfwd(nn.softmax)", "(mixed(4),)"),
    ("jacrev_2d_input", "jax.jacrev(lambda x: jnp.tanh(x).sum(0))", "(mixed(2, 3),)"),
    ("jacfwd_argnums", "jax.jacfwd(lambda x, y: x * y + jnp.sin(x), argnums=(0, 1))",
     "(mixed(3), grid(3))"),
    ("jacrev_pytree_in", "jax.jacrev(lambda d: d['a'] * d['b'].sum())",
     "({'a': mixed(3), 'b': grid(2)},)"),
    ("jacrev_pytree_out", "jax.jacrev(lambda x: {'s': jnp.sin(x), 't': (x ** 2).sum()})", "(mixed(3),)"),
    ("jacfwd_pytree_out", "jax.jacfwd(lambda x: (jnp.sin(x), x[:2] * 3.0))", "(mixed(3),)"),
    ("jacrev_has_aux", "jax.jacrev(lambda x: (jnp.cumsum(x), x.sum()), has_aux=True)", "(mixed(3),)"),
    ("jacrev_sort", "jax.jacrev(jnp.sort)", "(mixed(4),)"),
    ("jacfwd_index", "jax.jacfwd(lambda x: x[jnp.array([2, 0, 0])])", "(mixed(3),)"),
    ("jacrev_matmul_2d", "jax.jacrev(lambda a: a @ mixed(3, 2))", "(mixed(2, 3),)"),
    ("jacrev_conv", "jax.jacrev(lambda x: jnp.convolve(x, arr([1.0, -2.0])))", "(mixed(4),)"),
    ("jacrev_cumsum", "jax.jacrev(jnp.cumsum)", "(mixed(4),)"),
    ("jacfwd_cumprod", "jax.jacfwd(jnp.cumprod)", "(grid(4),)"),
    ("jacrev_scalar_in", "jax.jacrev(lambda s: jnp.array([s, s ** 2, jnp.sin(s)]))", "(0.3,)"),
    ("jacobian_mlp", "jax.jacobian(mlp, argnums=1)", "(params(), mixed(3))"),
    ("jacrev_mlp_params", "jax.jacrev(mlp)", "(params(), mixed(3))"),
    ("hessian_quadratic", "jax.hessian(lambda x: x @ mixed(3, 3) @ x)", "(mixed(3),)"),
    ("hessian_logsumexp", "jax.hessian(nn.logsumexp)", "(mixed(4),)"),
    ("hessian_mlp_x", "jax.hessian(lambda x: mlp_loss(params(), x, mixed(2)))", "(mixed(3),)"),
    ("hessian_pytree", "jax.hessian(lambda d: jnp.sum(d['a'] ** 2 * d['b']))",
     "({'a': mixed(2), 'b': grid(2)},)"),
    ("hessian_prod", "jax.hessian(jnp.prod)", "(grid(3),)"),
    ("vmap_hessian", "vmap(jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x)))", "(mixed(3, 2),)"),
    ("vmap_jacrev", "vmap(jax.jacrev(lambda x: jnp.tanh(x) * x.sum()))", "(mixed(3, 2),)"),
    ("vmap_jacfwd_in1", "vmap(jax.jacfwd(jnp.cumsum), in_axes=1)", "(mixed(3, 2),)"),
    ("jacfwd_of_vmap", "jax.jacfwd(vmap(lambda x: jnp.sin(x) * 2.0))", "(mixed(3),)"),
    ("jacrev_of_vmap_dot", "jax.jacrev(lambda x: vmap(jnp.dot, in_axes=(0, None))(x, mixed(2)))",
     "(mixed(3, 2),)"),
    ("hvp_batched_vectors", "vmap(lambda v: jax.jvp(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)),"
     " (mixed(3),), (v,))[1])", "(jnp.eye(3),)"),
    ("grad_of_vmap_of_grad", "jax.grad(lambda w: vmap(jax.grad(lambda w, x: jnp.sin(w * x).sum()),"
     " in_axes=(None, 0))(w, mixed(4, 3)).sum())", "(mixed(3),)"),
    ("vmap_stop_gradient_grad", "vmap(jax.grad(lambda x: x * lax.stop_gradient(x)))", "(mixed(4),)"),
    ("vmap_value_and_grad_dict", "vmap(jax.value_and_grad(lambda d: jnp.sum(d['w'] * d['x'])), "
     "in_axes=({'w': None, 'x': 0},))", "({'w': mixed(3), 'x': mixed(4, 3)},)"),
])

# ---- custom derivatives and checkpoint --------------------------------------------------------------
CUSTOM = _cases("custom", [
    ("custom_jvp_value", "vmap(clip_grad)", "(mixed(4),)"),
    ("custom_jvp_grad", "vmap(jax.grad(clip_grad))", "(mixed(4, scale=3.0),)"),
    ("custom_jvp_jvp", "vmap(lambda x: jax.jvp(clip_grad, (x,), (jnp.ones_like(x),)))",
     "(mixed(3, 2, scale=3.0),)"),
    ("custom_jvp_grad_of_vmap", "jax.grad(lambda x: vmap(clip_grad)(x).sum())", "(mixed(4, scale=3.0),)"),
    ("custom_jvp_in1", "vmap(lambda x: clip_grad(x).sum(), in_axes=1)", "(mixed(3, 4),)"),
    ("custom_jvp_defjvps", "vmap(jax.grad(safe_log))", "(grid(4) / 1000.0,)"),
    ("custom_vjp_value", "vmap(scaled)", "(mixed(4), grid(4))"),
    ("custom_vjp_none", "vmap(scaled, in_axes=(0, None))", "(mixed(4), 2.0)"),
    ("custom_vjp_grad", "vmap(jax.grad(scaled, argnums=(0, 1)))", "(mixed(4), grid(4))"),
    ("custom_vjp_grad_none", "vmap(jax.grad(lambda x, y: scaled(x, y).sum(), argnums=(0, 1)), "
     "in_axes=(0, None))", "(mixed(4, 3), grid(3))"),
    ("custom_vjp_grad_of_vmap", "jax.grad(lambda x, y: vmap(scaled)(x, y).sum(), argnums=(0, 1))",
     "(mixed(4), grid(4))"),
    ("custom_vjp_vjp", "vmap(lambda x, ct: jax.vjp(lambda a: scaled(a, jnp.full_like(a, 3.0)), x)[1](ct))",
     "(mixed(3, 2), grid(3, 2))"),
    ("nn_relu_grad_per_example", "vmap(jax.grad(lambda x: nn.relu(x).sum()))", "(mixed(3, 4),)"),
    ("nn_softplus_jacfwd", "vmap(jax.jacfwd(nn.softplus))", "(mixed(2, 3),)"),
    ("logsumexp_grad_per_example", "vmap(jax.grad(nn.logsumexp), in_axes=1)", "(mixed(3, 4),)"),
    ("logsumexp_hessian_batched", "vmap(jax.hessian(nn.logsumexp))", "(mixed(2, 3),)"),
    ("gelu_grad", "vmap(jax.grad(lambda x: nn.gelu(x).sum()), in_axes=1)", "(mixed(3, 4),)"),
    ("logit_grad", "vmap(jax.grad(sp.logit))", "(grid(4) / 4.0,)"),
    ("nested_vmap_custom_jvp", "vmap(vmap(clip_grad))", "(mixed(2, 3),)"),
    ("custom_vjp_nested_vmap_grad", "vmap(vmap(jax.grad(lambda x: scaled(x, x))))", "(mixed(2, 3),)"),
])
CHECKPOINT = _cases("checkpoint", [
    ("vmap_checkpoint", "vmap(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))))", "(mixed(3, 4),)"),
    ("vmap_checkpoint_in1", "vmap(jax.checkpoint(lambda x: jnp.cumsum(x) * 2.0), in_axes=1)",
     "(mixed(3, 4),)"),
    ("vmap_grad_checkpoint", "vmap(jax.grad(jax.checkpoint(lambda x: jnp.sum(jnp.sin(x) ** 2))))",
     "(mixed(3, 4),)"),
    ("grad_vmap_checkpoint", "jax.grad(lambda x: vmap(jax.checkpoint(lambda y: jnp.tanh(y) @ y))(x)"
     ".sum())", "(mixed(3, 4),)"),
    ("vmap_checkpoint_none", "vmap(jax.checkpoint(lambda x, w: jnp.tanh(x @ w)), in_axes=(0, None))",
     "(mixed(3, 4), mixed(4, 2))"),
    ("vmap_remat_policy", "vmap(jax.grad(jax.checkpoint(lambda x: jnp.sum(jnp.exp(x) * x), "
     "policy=jax.checkpoint_policies.nothing_saveable)))", "(mixed(3, 4),)"),
    ("checkpoint_of_vmap", "jax.grad(jax.checkpoint(lambda x: vmap(jnp.dot)(x, x).sum()))",
     "(mixed(3, 4),)"),
])

# ---- collectives over a named vmap axis ----------------------------------------------------------------
COLLECTIVES = _cases("collective", [
    ("psum", "vmap(lambda x: lax.psum(x, 'i'), axis_name='i')", "(mixed(3, 4),)"),
    ("psum_in1", "vmap(lambda x: x - lax.psum(x, 'i'), axis_name='i', in_axes=1)", "(mixed(3, 4),)"),
    ("psum_unbatched", "vmap(lambda x, y: x + lax.psum(y, 'i'), in_axes=(0, None), axis_name='i')",
     "(mixed(3), mixed(2))"),
    ("psum_pytree", "vmap(lambda d: lax.psum(d, 'i'), axis_name='i')",
     "({'a': mixed(3, 2), 'b': ints(3)},)"),
    ("pmean", "vmap(lambda x: x / lax.pmean(x, 'i'), axis_name='i')", "(grid(4, 2),)"),
    ("pmax", "vmap(lambda x: lax.pmax(x, 'i'), axis_name='i')", "(mixed(3, 4),)"),
    ("pmin", "vmap(lambda x: lax.pmin(x, 'i'), axis_name='i', in_axes=1)", "(mixed(3, 4),)"),
    ("all_gather", "vmap(lambda x: lax.all_gather(x, 'i'), axis_name='i')", "(mixed(3, 2),)"),
    ("all_gather_axis1", "vmap(lambda x: lax.all_gather(x, 'i', axis=1), axis_name='i')",
     "(mixed(3, 2),)"),
    ("all_gather_tiled", "vmap(lambda x: lax.all_gather(x, 'i', tiled=True), axis_name='i')",
     "(mixed(3, 2),)"),
    ("axis_index", "vmap(lambda x: x * lax.axis_index('i'), axis_name='i')", "(mixed(4, 2),)"),
    ("axis_index_only", "vmap(lambda x: lax.axis_index('i'), axis_name='i')", "(mixed(4),)"),
    ("axis_size_none_in_axes", "vmap(lambda x: lax.psum(1, 'i') * x, in_axes=None, axis_size=3, "
     "axis_name='i')", "(mixed(2),)"),
    ("psum_constant", "vmap(lambda x: x + lax.psum(1.0, 'i'), axis_name='i')", "(mixed(5),)"),
    ("nested_named_inner", "vmap(vmap(lambda x: lax.psum(x, 'j'), axis_name='j'), axis_name='i')",
     "(mixed(2, 3),)"),
    ("nested_named_outer", "vmap(vmap(lambda x: lax.psum(x, 'i'), axis_name='j'), axis_name='i')",
     "(mixed(2, 3),)"),
    ("nested_named_both", "vmap(vmap(lambda x: lax.psum(x, ('i', 'j')), axis_name='j'), "
     "axis_name='i')", "(mixed(2, 3),)"),
    ("nested_axis_index", "vmap(vmap(lambda x: lax.axis_index('i') * 10 + lax.axis_index('j'), "
     "axis_name='j'), axis_name='i')", "(mixed(2, 3),)"),
    ("normalize_batch", "vmap(lambda x: (x - lax.pmean(x, 'b')) / jnp.sqrt(lax.pmean(x ** 2, 'b')), "
     "axis_name='b')", "(mixed(4, 3),)"),
    ("grad_psum", "vmap(jax.grad(lambda x: lax.psum(x ** 2, 'i').sum()), axis_name='i')",
     "(mixed(3, 2),)"),
    ("psum_of_grads", "vmap(lambda x, y: lax.pmean(jax.grad(linear_loss)(mixed(3), 0.5, x, y), 'b'),"
     " axis_name='b')", "(mixed(4, 3), mixed(4))"),
    ("ppermute_like_all_gather_index", "vmap(lambda x: lax.all_gather(x, 'i')[(lax.axis_index('i')"
     " + 1) % 3], axis_name='i')", "(mixed(3, 2),)"),
])

# ---- errors ---------------------------------------------------------------------------------------------------
ERRORS = _cases("error", [
    ("inconsistent_sizes", "vmap(lambda x, y: x + y)", "(mixed(2, 3), mixed(3))"),
    ("inconsistent_sizes_three", "vmap(lambda a, b, c: a + b + c)", "(mixed(2), mixed(3), mixed(4))"),
    ("inconsistent_sizes_in_axes", "vmap(lambda x, y: x * y, in_axes=(1, 0))",
     "(mixed(2, 3), mixed(2, 3))"),
    ("inconsistent_sizes_dict", "vmap(lambda d: d['a'] + d['b'])", "({'a': mixed(2), 'b': mixed(3)},)"),
    ("inconsistent_sizes_kwargs", "lambda x, y: vmap(lambda a, b: a + b)(x, b=y)",
     "(mixed(2), mixed(3))"),
    ("inconsistent_sizes_nested", "vmap(lambda t: t[0][0] + t[1])",
     "(((mixed(2),), mixed(4)),)"),
    ("axis_size_mismatch", "vmap(jnp.sin, axis_size=4)", "(mixed(3, 2),)"),
    ("no_mapped_axis", "vmap(lambda x: x * 2, in_axes=None)", "(mixed(3),)"),
    ("no_args", "vmap(lambda: 1.0)", "()"),
    ("in_axes_tuple_length", "vmap(lambda x, y: x + y, in_axes=(0,))", "(mixed(2), mixed(2))"),
    ("in_axes_bad_type", "vmap(jnp.sin, in_axes='a')", "(mixed(3),)"),
    ("in_axes_float_leaf", "vmap(jnp.sin, in_axes=(1.0,))", "(mixed(3),)"),
    ("in_axes_dict_top", "vmap(jnp.sin, in_axes={'a': 0})", "(mixed(3),)"),
    ("in_axes_structure_mismatch", "vmap(lambda d: d['a'], in_axes=({'b': 0},))", "({'a': mixed(3)},)"),
    ("in_axes_tuple_vs_list", "vmap(lambda t: t[0], in_axes=((0, 0, 0),))", "((mixed(3), mixed(3)),)"),
    ("in_axes_out_of_range", "vmap(jnp.sin, in_axes=2)", "(mixed(3, 4),)"),
    ("in_axes_out_of_range_neg", "vmap(jnp.sin, in_axes=-3)", "(mixed(3, 4),)"),
    ("in_axes_scalar_arg", "vmap(jnp.sin)", "(1.0,)"),
    ("in_axes_scalar_array", "vmap(lambda x, y: x + y)", "(mixed(3), jnp.float32(2.0))"),
    ("out_axes_out_of_range", "vmap(lambda x: x * 2, out_axes=2)", "(mixed(3, 4),)"),
    ("out_axes_out_of_range_neg", "vmap(lambda x: x * 2, out_axes=-3)", "(mixed(3, 4),)"),
    ("out_axes_none_batched", "vmap(lambda x: x * 2, out_axes=None)", "(mixed(3),)"),
    ("out_axes_none_batched_tuple", "vmap(lambda x, y: (x, y), in_axes=(None, 0), "
     "out_axes=(None, None))", "(mixed(2), mixed(3))"),
    ("out_axes_structure", "vmap(lambda x: (x, x), out_axes=(0, 0, 0))", "(mixed(3),)"),
    ("out_axes_bad_type", "vmap(lambda x: x, out_axes='x')", "(mixed(3),)"),
    ("tracer_bool", "vmap(lambda x: x if x.sum() > 0 else -x)", "(mixed(3, 2),)"),
    ("tracer_bool_if", "vmap(lambda x: 1.0 if x > 0 else 2.0)", "(mixed(3),)"),
    ("tracer_int_conversion", "vmap(lambda x: jnp.zeros(int(x)))", "(ints(3),)"),
    ("tracer_index_conversion", "vmap(lambda x, n: jnp.ones(3)[:n])", "(mixed(2), ints(2))"),
    ("unbound_axis_name", "vmap(lambda x: lax.psum(x, 'j'), axis_name='i')", "(mixed(3),)"),
    ("unbound_axis_name_no_vmap", "lambda x: lax.psum(x, 'i')", "(mixed(3),)"),
    ("unbound_axis_index", "vmap(lambda x: x + lax.axis_index('k'))", "(mixed(3),)"),
    ("not_callable", "lambda x: vmap(3)(x)", "(mixed(3),)"),
    ("non_array_arg", "vmap(lambda s: s)", "('abc',)"),
    ("shape_error_inside", "vmap(lambda x, y: x @ y)", "(mixed(2, 3), mixed(2, 4))"),
    ("nonzero_without_size", "vmap(jnp.nonzero)", "(mixed(3, 4),)"),
    ("grad_non_scalar_per_example", "vmap(jax.grad(lambda x: x * 2))", "(mixed(3, 2),)"),
    ("jacrev_int_input", "jax.jacrev(lambda x: x * 2)", "(ints(3),)"),
])

CASES: list[Case] = (API + UNARY + BINARY + REDUCTIONS + SORTING + SHAPES + INDEXING + DOT + WINDOW
                     + NN + SPECIAL + LAX + NESTED + CLOSURE + AD + CUSTOM + CHECKPOINT
                     + COLLECTIVES + ERRORS)
