"""Programs using `jax.jit`, whose printed jaxprs, values, trace counts and StableHLO real JAX
recorded (`record_jit_golden.py`, compared by `tests/test_jit_programs.py`).

`PRELUDE` is executed with `jax`, `jnp`, `lax`, `np` and `functools` bound (to real JAX when
recording, to justjax in the tests). Each case is `Case(title, source, args, calls)`:
- `source` is executed in a fresh copy of the namespace and must define `f`, the function
  examined (often already jitted, or a transformation of a jitted function);
- `args` is an expression for the argument tuple: the test compares
  `make_jaxpr(f)(*args)`, `f(*args)` and `jax.jit(f).lower(*args).as_text()`;
- `calls`, when given, is an expression for a list of argument tuples: `f` is called on each in
  turn and `TRACES[0]` (which the source's traced function increments) is compared after the
  last call, i.e. how many times jit traced.
Titles are "<group>/<what>". Inputs are built from NumPy values so both libraries see the same
bits.
"""
from __future__ import annotations

from typing import NamedTuple


class Case(NamedTuple):
    title: str
    source: str
    args: str
    calls: str | None = None


PRELUDE = '''
TRACES = [0]

def arange(*shape, dtype=np.float32):
    """Distinct small values 0.5, 1.0, ... in a scrambled order, in `shape`."""
    n = int(np.prod(shape))
    return jnp.asarray((0.5 + (np.arange(n) * 7 % (n + 3)) / 2.0).reshape(shape).astype(dtype))

def mixed(*shape):
    """Distinct values in [-1, 1] in a scrambled order."""
    n = int(np.prod(shape))
    return jnp.asarray(((np.arange(n) * 37 % 101 - 50) / 50.0).reshape(shape).astype(np.float32))

def ints(*shape, hi=5):
    n = int(np.prod(shape))
    return jnp.asarray((np.arange(n) * 7 % 11 % hi).reshape(shape).astype(np.int32))
'''


def _basic() -> list[Case]:
    return [
        Case("basic/lambda", "f = jax.jit(lambda x: x * 2.0 + 1.0)", "(arange(5),)"),
        Case("basic/named", "def g(x):\n    return jnp.sin(x) * x\nf = jax.jit(g)",
             "(arange(3),)"),
        Case("basic/decorator", "@jax.jit\ndef f(x, y):\n    return x @ y + 1.0",
             "(arange(2, 3), arange(3, 4))"),
        Case("basic/identity", "f = jax.jit(lambda x: x)", "(arange(3),)"),
        Case("basic/two_outputs", "f = jax.jit(lambda x: (x + 1.0, x * 2.0))", "(arange(3),)"),
        Case("basic/unused_arg", "f = jax.jit(lambda x, y: x + 1.0)", "(arange(3), arange(2))"),
        Case("basic/constant_output", "f = jax.jit(lambda x: 3.0)", "(arange(3),)"),
        Case("basic/int_input", "f = jax.jit(lambda x: x * 3 + 1)", "(ints(4),)"),
        Case("basic/bool_output", "f = jax.jit(lambda x: x > 1.0)", "(arange(4),)"),
        Case("basic/python_scalar_arg", "f = jax.jit(lambda x, s: x * s)", "(arange(3), 2.0)"),
        Case("basic/python_int_arg", "f = jax.jit(lambda x, n: x + n)", "(arange(3), 3)"),
        Case("basic/scalar_only", "f = jax.jit(lambda x: x * x)", "(3.0,)"),
        Case("basic/float16", "f = jax.jit(lambda x: x * 2 + 1)",
             "(arange(3, dtype=np.float16),)"),
        Case("basic/bfloat16", "f = jax.jit(lambda x: jnp.exp(x))",
             "(arange(3).astype(jnp.bfloat16),)"),
        Case("basic/reduce", "f = jax.jit(lambda x: jnp.sum(x, axis=0))", "(arange(2, 3),)"),
        Case("basic/reshape_transpose", "f = jax.jit(lambda x: x.reshape(3, 2).T)",
             "(arange(2, 3),)"),
        Case("basic/indexing", "f = jax.jit(lambda x, i: x[i])", "(arange(5), 2)"),
        Case("basic/dynamic_index", "f = jax.jit(lambda x, i: x[i])",
             "(arange(5), jnp.int32(3))"),
        Case("basic/at_set", "f = jax.jit(lambda x: x.at[1].set(0.0))", "(arange(4),)"),
        Case("basic/mlp",
             "@jax.jit\ndef f(w, b, x):\n    return jnp.maximum(x @ w + b, 0.0)",
             "(arange(3, 4), arange(4), arange(2, 3))"),
    ]


def _nested() -> list[Case]:
    return [
        Case("nested/inner_jit", "inner = jax.jit(lambda x: x * 2.0)\n"
             "f = jax.jit(lambda x: inner(x) + 1.0)", "(arange(3),)"),
        Case("nested/inner_twice_shared", "inner = jax.jit(lambda x: jnp.sin(x))\n"
             "def f(x):\n    return inner(x) + inner(x * 2.0)", "(arange(3),)"),
        Case("nested/inner_two_shapes", "inner = jax.jit(lambda x: jnp.sum(x * x))\n"
             "def f(x, y):\n    return inner(x) + inner(y)", "(arange(3), arange(2, 2))"),
        Case("nested/named_inner", "@jax.jit\ndef square(x):\n    return x * x\n"
             "@jax.jit\ndef f(x):\n    return square(x) + square(square(x))", "(arange(3),)"),
        Case("nested/three_levels", "a = jax.jit(lambda x: x + 1.0)\n"
             "b = jax.jit(lambda x: a(x) * 2.0)\nf = jax.jit(lambda x: b(x) - a(x))",
             "(arange(3),)"),
        Case("nested/jit_of_jit", "f = jax.jit(jax.jit(lambda x: x * 3.0))", "(arange(3),)"),
        Case("nested/not_jitted_outer", "inner = jax.jit(lambda x, y: x * y)\n"
             "def f(x):\n    return inner(x, 2.0) + inner(x, x)", "(arange(3),)"),
        Case("nested/inner_multiple_outputs",
             "inner = jax.jit(lambda x: (x + 1.0, jnp.sum(x)))\n"
             "def f(x):\n    a, b = inner(x)\n    return a * b", "(arange(3),)"),
        Case("nested/inner_drops_output", "inner = jax.jit(lambda x: (x + 1.0, x * 5.0))\n"
             "def f(x):\n    return inner(x)[0]", "(arange(3),)"),
        Case("nested/inner_python_scalar", "inner = jax.jit(lambda x, s: x * s)\n"
             "def f(x):\n    return inner(x, 3.0)", "(arange(3),)"),
        Case("nested/inner_constant_input", "inner = jax.jit(lambda x, y: x + y)\n"
             "def f(x):\n    return inner(x, jnp.ones(3))", "(arange(3),)"),
        Case("nested/big_inner", "@jax.jit\ndef inner(x):\n    y = x\n"
             "    for _ in range(6):\n        y = jnp.sin(y) * 2.0 + y\n    return y\n"
             "def f(x):\n    return inner(x) + 1.0", "(arange(3),)"),
    ]


def _static() -> list[Case]:
    return [
        Case("static/argnums", "def g(x, n):\n    return x ** n\n"
             "f = functools.partial(jax.jit(g, static_argnums=1), n=3)", "(arange(3),)"),
        Case("static/argnums_positional",
             "g = jax.jit(lambda x, n: x * n, static_argnums=(1,))\n"
             "def f(x):\n    return g(x, 2) + g(x, 3)", "(arange(3),)"),
        Case("static/argnames", "g = jax.jit(lambda x, axis: jnp.sum(x, axis), "
             "static_argnames='axis')\ndef f(x):\n    return g(x, axis=1)", "(arange(2, 3),)"),
        Case("static/argnames_by_position",
             "def g(x, axis):\n    return jnp.max(x, axis)\n"
             "h = jax.jit(g, static_argnames='axis')\ndef f(x):\n    return h(x, 0)",
             "(arange(2, 3),)"),
        Case("static/bool_flag", "def g(x, double):\n    return x * 2.0 if double else x\n"
             "h = jax.jit(g, static_argnums=1)\ndef f(x):\n    return h(x, True) + h(x, False)",
             "(arange(3),)"),
        Case("static/string", "def g(x, op):\n    return jnp.sin(x) if op == 'sin' else jnp.cos(x)\n"
             "h = jax.jit(g, static_argnames=('op',))\ndef f(x):\n    return h(x, op='cos')",
             "(arange(3),)"),
        Case("static/tuple_shape", "def g(x, shape):\n    return jnp.reshape(x, shape)\n"
             "h = jax.jit(g, static_argnums=1)\ndef f(x):\n    return h(x, (3, 2))",
             "(arange(6),)"),
        Case("static/negative_argnum", "h = jax.jit(lambda x, k: x + k, static_argnums=-1)\n"
             "def f(x):\n    return h(x, 4)", "(arange(3),)"),
        Case("static/kwargs_dynamic", "@jax.jit\ndef g(x, *, scale):\n    return x * scale\n"
             "def f(x):\n    return g(x, scale=x)", "(arange(3),)"),
        Case("static/defaults", "@jax.jit\ndef g(x, y=2.0):\n    return x * y\n"
             "def f(x):\n    return g(x) + g(x, 3.0)", "(arange(3),)"),
        Case("static/partial_static", "def g(x, n):\n    return jnp.tile(x, n)\n"
             "h = functools.partial(jax.jit, static_argnums=1)(g)\ndef f(x):\n    return h(x, 2)",
             "(arange(3),)"),
    ]


def _pytrees() -> list[Case]:
    return [
        Case("pytree/dict_in", "f = jax.jit(lambda p: p['w'] * p['b'])",
             "({'w': arange(3), 'b': arange(3)},)"),
        Case("pytree/dict_out", "f = jax.jit(lambda x: {'double': x * 2.0, 'sum': jnp.sum(x)})",
             "(arange(3),)"),
        Case("pytree/tuple_in_out", "f = jax.jit(lambda t: (t[1], t[0] + t[1]))",
             "((arange(2), arange(2)),)"),
        Case("pytree/list_out", "f = jax.jit(lambda x: [x, x + 1.0, x * 3.0])", "(arange(2),)"),
        Case("pytree/nested", "f = jax.jit(lambda p: {'a': [p['x'][0] + 1.0], "
             "'b': (p['y'], {'c': p['x'][1]})})",
             "({'x': [arange(2), arange(3)], 'y': ints(2)},)"),
        Case("pytree/none_leaf", "f = jax.jit(lambda p: p['a'] * 2.0)",
             "({'a': arange(2), 'b': None},)"),
        Case("pytree/none_output", "f = jax.jit(lambda x: (x, None))", "(arange(2),)"),
        Case("pytree/unsorted_dict_keys", "f = jax.jit(lambda p: p['z'] - p['a'])",
             "({'z': arange(2), 'a': mixed(2)},)"),
        Case("pytree/namedtuple",
             "import collections\nPoint = collections.namedtuple('Point', 'x y')\n"
             "f = jax.jit(lambda p: Point(p.y, p.x * 2.0))", "(Point(arange(2), arange(3)),)"),
        Case("pytree/params_mlp",
             "@jax.jit\ndef f(params, x):\n    h = jnp.tanh(x @ params['w1'] + params['b1'])\n"
             "    return h @ params['w2']",
             "({'w1': mixed(3, 4), 'b1': mixed(4), 'w2': mixed(4, 2)}, arange(2, 3))"),
        Case("pytree/empty_tuple_arg", "f = jax.jit(lambda x, t: x + 1.0)", "(arange(2), ())"),
    ]


def _closures() -> list[Case]:
    return [
        Case("closure/array_const", "c = arange(3)\nf = jax.jit(lambda x: x + c)",
             "(arange(3),)"),
        Case("closure/numpy_const", "c = np.arange(3, dtype=np.float32)\n"
             "f = jax.jit(lambda x: x * c)", "(arange(3),)"),
        Case("closure/scalar_const", "c = 2.5\nf = jax.jit(lambda x: x * c)", "(arange(3),)"),
        Case("closure/inner_closure", "c = mixed(3)\ninner = jax.jit(lambda x: x * c)\n"
             "def f(x):\n    return inner(x) + inner(x + 1.0)", "(arange(3),)"),
        Case("closure/two_consts", "a = arange(2)\nb = mixed(2)\n"
             "f = jax.jit(lambda x: x * a + b)", "(arange(2),)"),
        Case("closure/numpy_scalar", "c = np.float32(3.0)\nf = jax.jit(lambda x: x - c)",
             "(arange(2),)"),
        Case("closure/const_in_grad", "c = arange(3)\n"
             "f = jax.grad(jax.jit(lambda x: jnp.sum(jnp.sin(x) * c)))", "(arange(3),)"),
    ]


def _transforms() -> list[Case]:
    return [
        Case("transform/grad_of_jit", "g = jax.jit(lambda x: jnp.sum(jnp.sin(x) * x))\n"
             "f = jax.grad(g)", "(arange(3),)"),
        Case("transform/jit_of_grad",
             "f = jax.jit(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)))", "(arange(3),)"),
        Case("transform/value_and_grad_of_jit",
             "g = jax.jit(lambda x: jnp.sum(x ** 3))\nf = jax.value_and_grad(g)",
             "(arange(3),)"),
        Case("transform/grad_inner_jit", "inner = jax.jit(lambda x: jnp.exp(x) * x)\n"
             "f = jax.grad(lambda x: jnp.sum(inner(x) + inner(2.0 * x)))", "(arange(3),)"),
        Case("transform/grad_two_args", "g = jax.jit(lambda x, y: jnp.sum(x * y + jnp.sin(x)))\n"
             "f = jax.grad(g, argnums=(0, 1))", "(arange(3), mixed(3))"),
        Case("transform/grad_int_arg", "g = jax.jit(lambda x, n: jnp.sum(x * n))\n"
             "f = jax.grad(g)", "(arange(3), ints(3))"),
        Case("transform/grad_static", "g = jax.jit(lambda x, p: jnp.sum(x ** p), "
             "static_argnums=1)\nf = jax.grad(lambda x: g(x, 3))", "(arange(3),)"),
        Case("transform/vmap_of_jit", "g = jax.jit(lambda x: jnp.sum(x * x))\nf = jax.vmap(g)",
             "(arange(4, 3),)"),
        Case("transform/jit_of_vmap", "f = jax.jit(jax.vmap(lambda x, y: x @ y))",
             "(arange(2, 3), arange(2, 3))"),
        Case("transform/vmap_in_axes", "g = jax.jit(lambda x, y: x * y)\n"
             "f = jax.vmap(g, in_axes=(0, None))", "(arange(4, 3), arange(3))"),
        Case("transform/vmap_out_axes", "g = jax.jit(lambda x: x + 1.0)\n"
             "f = jax.vmap(g, out_axes=1)", "(arange(4, 3),)"),
        Case("transform/vmap_unbatched_out", "g = jax.jit(lambda x, c: (x * 2.0, c + 1.0))\n"
             "f = jax.vmap(g, in_axes=(0, None))", "(arange(4, 3), arange(3))"),
        Case("transform/jvp_of_jit", "g = jax.jit(lambda x: jnp.sin(x) * x)\n"
             "f = lambda x, t: jax.jvp(g, (x,), (t,))", "(arange(3), mixed(3))"),
        Case("transform/jvp_one_of_two",
             "g = jax.jit(lambda x, y: x * y + jnp.cos(y))\n"
             "f = lambda x, y, t: jax.jvp(lambda a: g(a, y), (x,), (t,))",
             "(arange(3), mixed(3), arange(3))"),
        Case("transform/linearize_of_jit", "g = jax.jit(lambda x: jnp.exp(x) * x)\n"
             "def f(x, t):\n    y, lin = jax.linearize(g, x)\n    return y, lin(t)",
             "(arange(3), mixed(3))"),
        Case("transform/vjp_of_jit", "g = jax.jit(lambda x: (jnp.sin(x), jnp.sum(x ** 2)))\n"
             "def f(x, ct):\n    y, pull = jax.vjp(g, x)\n    return pull((ct, 1.0))",
             "(arange(3), mixed(3))"),
        Case("transform/hessian_of_jit", "g = jax.jit(lambda x: jnp.sum(jnp.sin(x) * x ** 2))\n"
             "f = jax.hessian(g)", "(arange(3),)"),
        Case("transform/jacfwd_of_jit", "g = jax.jit(lambda x: jnp.tanh(x) * x[0])\n"
             "f = jax.jacfwd(g)", "(arange(3),)"),
        Case("transform/jacrev_of_jit", "g = jax.jit(lambda x: jnp.tanh(x) * x[0])\n"
             "f = jax.jacrev(g)", "(arange(3),)"),
        Case("transform/jit_of_jacrev",
             "f = jax.jit(jax.jacrev(lambda x: jnp.sin(x) * jnp.sum(x)))", "(arange(3),)"),
        Case("transform/grad_of_grad_of_jit", "g = jax.jit(lambda x: jnp.sin(x) * x ** 3)\n"
             "f = jax.grad(jax.grad(g))", "(1.5,)"),
        Case("transform/vmap_grad_jit", "g = jax.jit(lambda w, x: jnp.sum(jnp.tanh(x @ w)))\n"
             "f = jax.vmap(jax.grad(g), in_axes=(None, 0))", "(mixed(3, 2), arange(4, 3))"),
        Case("transform/grad_through_nested", "a = jax.jit(lambda x: jnp.sin(x))\n"
             "b = jax.jit(lambda x: a(x) * a(2.0 * x))\nf = jax.grad(lambda x: jnp.sum(b(x)))",
             "(arange(3),)"),
        Case("transform/grad_with_aux", "g = jax.jit(lambda x: (jnp.sum(x ** 2), x * 2.0))\n"
             "f = jax.grad(g, has_aux=True)", "(arange(3),)"),
        Case("transform/grad_unused_output",
             "g = jax.jit(lambda x: (jnp.sum(x ** 2), jnp.cos(x)))\n"
             "f = jax.grad(lambda x: g(x)[0])", "(arange(3),)"),
        Case("transform/grad_pytree_params",
             "@jax.jit\ndef loss(p, x):\n    return jnp.sum((x @ p['w'] + p['b']) ** 2)\n"
             "f = jax.grad(loss)", "({'w': mixed(3, 2), 'b': mixed(2)}, arange(4, 3))"),
        Case("transform/eval_shape", "g = jax.jit(lambda x: jnp.concatenate([x, x]))\n"
             "f = lambda x: g(x) * 1.0", "(arange(3),)"),
        Case("transform/grad_closure_const", "w = mixed(3)\n"
             "g = jax.jit(lambda x: jnp.sum(jnp.sin(x * w)))\nf = jax.grad(g)", "(arange(3),)"),
        Case("transform/vmap_of_nested", "inner = jax.jit(lambda x: x * 2.0)\n"
             "f = jax.vmap(jax.jit(lambda x: inner(x) + inner(x + 1.0)))", "(arange(2, 3),)"),
        Case("transform/jvp_integer_input", "g = jax.jit(lambda x, n: x * n)\n"
             "f = lambda x, n, t: jax.jvp(lambda a: g(a, n), (x,), (t,))",
             "(arange(3), ints(3), mixed(3))"),
    ]


def _options() -> list[Case]:
    return [
        Case("options/donate_argnums", "f = jax.jit(lambda x, y: x + y, donate_argnums=0)",
             "(arange(3), arange(3))"),
        Case("options/donate_argnames",
             "def g(x, y):\n    return x * y\nf = jax.jit(g, donate_argnames='y')",
             "(arange(3), arange(3))"),
        Case("options/donate_nested", "inner = jax.jit(lambda x: x * 2.0, donate_argnums=0)\n"
             "def f(x):\n    return inner(x + 1.0)", "(arange(3),)"),
        Case("options/keep_unused", "f = jax.jit(lambda x, y: x * 2.0, keep_unused=True)",
             "(arange(3), arange(2))"),
        Case("options/keep_unused_nested",
             "inner = jax.jit(lambda x, y: x * 2.0, keep_unused=True)\n"
             "def f(x, y):\n    return inner(x, y)", "(arange(3), arange(2))"),
        Case("options/inline", "inner = jax.jit(lambda x: jnp.sin(x) + 1.0, inline=True)\n"
             "def f(x):\n    return inner(x) * 2.0", "(arange(3),)"),
        Case("options/inline_twice", "inner = jax.jit(lambda x: x * x, inline=True)\n"
             "f = jax.jit(lambda x: inner(inner(x)))", "(arange(3),)"),
        Case("options/inline_in_grad", "inner = jax.jit(lambda x: jnp.sin(x) * x, inline=True)\n"
             "f = jax.grad(lambda x: jnp.sum(inner(x)))", "(arange(3),)"),
        Case("options/inline_in_vmap", "inner = jax.jit(lambda x: jnp.sum(x * x), inline=True)\n"
             "f = jax.vmap(inner)", "(arange(2, 3),)"),
        Case("options/keep_unused_in_grad",
             "g = jax.jit(lambda x, y: jnp.sum(x * 2.0), keep_unused=True)\n"
             "f = jax.grad(g)", "(arange(3), arange(3))"),
    ]


def _checkpoint_custom() -> list[Case]:
    return [
        Case("remat/jit_inside_checkpoint", "inner = jax.jit(lambda x: jnp.sin(jnp.sin(x)))\n"
             "g = jax.checkpoint(lambda x: inner(x) * x)\nf = jax.grad(lambda x: jnp.sum(g(x)))",
             "(arange(3),)"),
        Case("remat/checkpoint_inside_jit",
             "f = jax.jit(jax.checkpoint(lambda x: jnp.sum(jnp.cos(x) * x)))", "(arange(3),)"),
        Case("remat/grad_jit_checkpoint",
             "f = jax.grad(jax.jit(jax.checkpoint(lambda x: jnp.sum(jnp.exp(x) ** 2))))",
             "(arange(3),)"),
        Case("remat/make_jaxpr_checkpoint_jit",
             "inner = jax.jit(lambda x: x * 3.0)\nf = jax.checkpoint(lambda x: inner(x) + 1.0)",
             "(arange(3),)"),
        Case("custom/jvp_jitted",
             "@jax.custom_jvp\ndef softsign(x):\n    return x / (1.0 + jnp.abs(x))\n"
             "@softsign.defjvp\ndef _jvp(primals, tangents):\n    (x,), (t,) = primals, tangents\n"
             "    return softsign(x), t / (1.0 + jnp.abs(x)) ** 2\n"
             "f = jax.jit(softsign)", "(mixed(4),)"),
        Case("custom/jvp_grad_of_jit",
             "@jax.custom_jvp\ndef h(x):\n    return jnp.sin(x)\n"
             "h.defjvps(lambda t, ans, x: 2.0 * t)\n"
             "f = jax.grad(jax.jit(lambda x: jnp.sum(h(x))))", "(arange(3),)"),
        Case("custom/jvp_of_jitted_body",
             "@jax.custom_jvp\n@jax.jit\ndef h(x):\n    return x ** 3\n"
             "h.defjvps(lambda t, ans, x: 3.0 * x ** 2 * t)\n"
             "f = jax.grad(lambda x: jnp.sum(h(x)))", "(arange(3),)"),
        Case("custom/vjp_jitted",
             "@jax.custom_vjp\ndef clip_grad(x):\n    return x\n"
             "def fwd(x):\n    return x, None\n"
             "def bwd(_, g):\n    return (jnp.clip(g, -0.5, 0.5),)\n"
             "clip_grad.defvjp(fwd, bwd)\n"
             "f = jax.grad(jax.jit(lambda x: jnp.sum(clip_grad(x) * 3.0)))", "(arange(3),)"),
        Case("custom/vjp_in_jit_make_jaxpr",
             "@jax.custom_vjp\ndef sq(x):\n    return x * x\n"
             "sq.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))\n"
             "f = jax.jit(lambda x: sq(x) + 1.0)", "(arange(3),)"),
        Case("custom/jit_inside_custom_jvp_rule",
             "inner = jax.jit(lambda x: jnp.cos(x))\n"
             "@jax.custom_jvp\ndef h(x):\n    return jnp.sin(x)\n"
             "@h.defjvp\ndef _jvp(p, t):\n    return h(p[0]), inner(p[0]) * t[0]\n"
             "f = jax.grad(lambda x: jnp.sum(h(x)))", "(arange(3),)"),
    ]


def _callables() -> list[Case]:
    return [
        Case("callable/method",
             "class Model:\n    def __init__(self, w):\n        self.w = w\n"
             "    def apply(self, x):\n        return x @ self.w\n"
             "m = Model(mixed(3, 2))\nf = jax.jit(m.apply)", "(arange(2, 3),)"),
        Case("callable/static_self",
             "class Scaler:\n    def __init__(self, k):\n        self.k = k\n"
             "    def __hash__(self):\n        return hash(self.k)\n"
             "    def __eq__(self, other):\n        return self.k == other.k\n"
             "    def apply(self, x):\n        return x * self.k\n"
             "g = jax.jit(Scaler.apply, static_argnums=0)\n"
             "def f(x):\n    return g(Scaler(3.0), x)", "(arange(3),)"),
        Case("callable/partial", "def g(x, y, scale):\n    return (x - y) * scale\n"
             "f = jax.jit(functools.partial(g, scale=2.0))", "(arange(3), mixed(3))"),
        Case("callable/partial_positional", "def g(a, x):\n    return a * x\n"
             "f = jax.jit(functools.partial(g, arange(3)))", "(mixed(3),)"),
        Case("callable/callable_object",
             "class Poly:\n    def __call__(self, x):\n        return x ** 2 + 1.0\n"
             "f = jax.jit(Poly())", "(arange(3),)"),
        Case("callable/lambda_kwargs", "g = jax.jit(lambda x, **kw: x * kw['a'] + kw['b'])\n"
             "f = lambda x: g(x, a=2.0, b=x)", "(arange(3),)"),
        Case("callable/varargs", "g = jax.jit(lambda *xs: sum(xs))\n"
             "f = lambda x: g(x, x * 2.0, 1.0)", "(arange(3),)"),
        Case("callable/jit_decorated_with_options",
             "@functools.partial(jax.jit, static_argnames=('n',))\n"
             "def g(x, n):\n    return jnp.sum(x ** n)\nf = lambda x: g(x, n=2) + g(x, n=3)",
             "(arange(3),)"),
        Case("callable/builtin_jnp", "f = jax.jit(jnp.tanh)", "(mixed(3),)"),
        Case("callable/jitted_jnp_function", "f = jax.jit(jnp.cumsum)", "(arange(4),)"),
    ]


# Library functions JAX wraps in a non-inlined jit: (title, expression in x, args).
_LIBRARY = [
    ("where", "jnp.where(x > 1.0, x, 0.0)", "(arange(4),)"),
    ("where_int", "jnp.where(x > 1, x, -1)", "(ints(4),)"),
    ("clip", "jnp.clip(x, 0.5, 2.0)", "(arange(4),)"),
    ("clip_min_only", "jnp.clip(x, min=1.0)", "(arange(4),)"),
    ("sort", "jnp.sort(x)", "(mixed(5),)"),
    ("sort_descending", "jnp.sort(x, descending=True)", "(mixed(5),)"),
    ("argsort", "jnp.argsort(x)", "(mixed(5),)"),
    ("cumsum", "jnp.cumsum(x)", "(arange(4),)"),
    ("cumsum_axis", "jnp.cumsum(x, axis=1)", "(arange(2, 3),)"),
    ("cumprod", "jnp.cumprod(x, axis=0)", "(arange(2, 3),)"),
    ("take_along_axis", "jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)",
     "(mixed(2, 3),)"),
    ("take", "jnp.take(x, jnp.array([0, 2]))", "(arange(4),)"),
    ("floor_divide", "x // 2.0", "(arange(4),)"),
    ("floor_divide_int", "x // 3", "(ints(4),)"),
    ("remainder", "x % 3", "(ints(4),)"),
    ("fmod", "jnp.fmod(x, 1.5)", "(mixed(4),)"),
    ("divmod", "jnp.divmod(x, 2)", "(ints(4),)"),
    ("round", "jnp.round(x, 1)", "(mixed(4),)"),
    ("trunc", "jnp.trunc(x)", "(mixed(4) * 3.0,)"),
    ("isinf", "jnp.isinf(x)", "(mixed(3),)"),
    ("nan_to_num", "jnp.nan_to_num(x)", "(mixed(3),)"),
    ("hypot", "jnp.hypot(x, 2.0)", "(arange(3),)"),
    ("sinc", "jnp.sinc(x)", "(mixed(3),)"),
    ("copysign", "jnp.copysign(x, -1.0)", "(arange(3),)"),
    ("signbit", "jnp.signbit(x)", "(mixed(3),)"),
    ("heaviside", "jnp.heaviside(x, 0.5)", "(mixed(3),)"),
    ("fmax", "jnp.fmax(x, 0.0)", "(mixed(3),)"),
    ("arccosh", "jnp.arccosh(x + 1.0)", "(arange(3),)"),
    ("var", "jnp.var(x)", "(arange(5),)"),
    ("std_axis", "jnp.std(x, axis=0)", "(arange(3, 2),)"),
    ("ptp", "jnp.ptp(x, axis=1)", "(arange(2, 3),)"),
    ("count_nonzero", "jnp.count_nonzero(x)", "(ints(5),)"),
    ("nansum", "jnp.nansum(x)", "(arange(4),)"),
    ("nanmax", "jnp.nanmax(x, axis=0)", "(arange(2, 2),)"),
    ("nanargmax", "jnp.nanargmax(x)", "(mixed(4),)"),
    ("median", "jnp.median(x)", "(mixed(5),)"),
    ("quantile", "jnp.quantile(x, 0.25)", "(mixed(5),)"),
    ("flip", "jnp.flip(x)", "(arange(3),)"),
    ("fliplr", "jnp.fliplr(x)", "(arange(2, 3),)"),
    ("rot90", "jnp.rot90(x)", "(arange(2, 3),)"),
    ("roll", "jnp.roll(x, 1)", "(arange(4),)"),
    ("tril", "jnp.tril(x)", "(arange(3, 3),)"),
    ("triu_k", "jnp.triu(x, k=1)", "(arange(3, 3),)"),
    ("trace", "jnp.trace(x)", "(arange(3, 3),)"),
    ("diag_vector", "jnp.diag(x)", "(arange(3),)"),
    ("append", "jnp.append(x, 1.0)", "(arange(3),)"),
    ("atleast_2d", "jnp.atleast_2d(x)", "(arange(3),)"),
    ("pad", "jnp.pad(x, 1)", "(arange(3),)"),
    ("pad_constant", "jnp.pad(x, (1, 2), constant_values=5.0)", "(arange(3),)"),
    ("isclose", "jnp.isclose(x, 1.0)", "(arange(3),)"),
    ("allclose", "jnp.allclose(x, x)", "(arange(3),)"),
    ("diff", "jnp.diff(x)", "(arange(4),)"),
    ("kron", "jnp.kron(x, x)", "(arange(2),)"),
    ("convolve", "jnp.convolve(x, jnp.array([1.0, 0.5]))", "(arange(4),)"),
    ("linspace", "jnp.linspace(0.0, x, 4)", "(2.0,)"),
    ("searchsorted_compare_all", "jnp.searchsorted(jnp.array([0.0, 1.0, 2.0]), x, "
     "method='compare_all')", "(arange(3),)"),
    ("nn_relu", "jax.nn.relu(x)", "(mixed(4),)"),
    ("nn_relu6", "jax.nn.relu6(x * 8.0)", "(mixed(4),)"),
    ("nn_softplus", "jax.nn.softplus(x)", "(mixed(4),)"),
    ("nn_silu", "jax.nn.silu(x)", "(mixed(4),)"),
    ("nn_elu", "jax.nn.elu(x)", "(mixed(4),)"),
    ("nn_leaky_relu", "jax.nn.leaky_relu(x)", "(mixed(4),)"),
    ("nn_log_softmax", "jax.nn.log_softmax(x)", "(mixed(2, 3),)"),
    ("nn_log_sigmoid", "jax.nn.log_sigmoid(x)", "(mixed(3),)"),
    ("nn_one_hot", "jax.nn.one_hot(x, 4)", "(ints(3, hi=4),)"),
    ("nn_standardize", "jax.nn.standardize(x)", "(arange(2, 3),)"),
    ("nn_glu", "jax.nn.glu(x)", "(mixed(2, 4),)"),
    ("nn_hard_tanh", "jax.nn.hard_tanh(x * 2.0)", "(mixed(4),)"),
]


def _library() -> list[Case]:
    cases = []
    for name, expr, args in _LIBRARY:
        cases.append(Case(f"library/{name}", f"f = lambda x: {expr}", args))
    # Under jit, under grad and under vmap: the nested library jits transform as calls.
    for name, expr in [("where", "jnp.where(x > 1.0, x, 0.0)"), ("clip", "jnp.clip(x, 0.5, 2.0)"),
                       ("sort", "jnp.sort(x)"), ("cumsum", "jnp.cumsum(x)"),
                       ("relu", "jax.nn.relu(x)"), ("softplus", "jax.nn.softplus(x)"),
                       ("log_softmax", "jax.nn.log_softmax(x)"), ("var", "jnp.var(x)")]:
        cases.append(Case(f"library_jit/{name}", f"f = jax.jit(lambda x: {expr})",
                          "(arange(4),)"))
        cases.append(Case(f"library_grad/{name}",
                          f"f = jax.grad(lambda x: jnp.sum({expr}))", "(mixed(4) * 2.0,)"))
        cases.append(Case(f"library_vmap/{name}", f"f = jax.vmap(lambda x: {expr})",
                          "(mixed(2, 4),)"))
    return cases


def _traces() -> list[Case]:
    """Trace counts: `g` increments TRACES[0] each time jit traces it."""
    body = "def g(x):\n    TRACES[0] += 1\n    return x * 2.0\n"
    cases = [
        Case("traces/same_shape_twice", body + "f = jax.jit(g)", "(arange(3),)",
             "[(arange(3),), (mixed(3),)]"),
        Case("traces/new_shape", body + "f = jax.jit(g)", "(arange(3),)",
             "[(arange(3),), (arange(4),), (arange(3),)]"),
        Case("traces/new_dtype", body + "f = jax.jit(g)", "(arange(3),)",
             "[(arange(3),), (arange(3, dtype=np.float16),), (ints(3),)]"),
        Case("traces/weak_type", body + "f = jax.jit(g)", "(1.0,)",
             "[(1.0,), (jnp.float32(1.0),), (2.0,), (jnp.asarray(3.0),)]"),
        Case("traces/python_int_vs_float", body + "f = jax.jit(g)", "(1,)",
             "[(1,), (1.0,), (2,)]"),
        Case("traces/numpy_vs_jax_array", body + "f = jax.jit(g)", "(arange(3),)",
             "[(arange(3),), (np.ones(3, np.float32),)]"),
        Case("traces/static_values",
             "def g(x, n):\n    TRACES[0] += 1\n    return x * n\n"
             "f = jax.jit(g, static_argnums=1)", "(arange(3), 2)",
             "[(arange(3), 2), (arange(3), 3), (arange(3), 2), (mixed(3), 3)]"),
        Case("traces/static_argnames_kw",
             "def g(x, n):\n    TRACES[0] += 1\n    return x * n\n"
             "f = jax.jit(g, static_argnames='n')", "(arange(3), 2)",
             "[(arange(3), 2), (arange(3), 2)]"),
        Case("traces/pytree_structure",
             "def g(p):\n    TRACES[0] += 1\n    return sum(jax.tree_util.tree_leaves(p))\n"
             "f = jax.jit(g)", "((arange(2), arange(2)),)",
             "[((arange(2), arange(2)),), ([arange(2), arange(2)],), ((mixed(2), mixed(2)),)]"),
        Case("traces/dict_keys",
             "def g(p):\n    TRACES[0] += 1\n    return p['a'] + 1.0\n"
             "f = jax.jit(g)", "({'a': arange(2)},)",
             "[({'a': arange(2)},), ({'a': arange(2), 'b': arange(2)},)]"),
        Case("traces/nested_reuse",
             "def h(x):\n    TRACES[0] += 1\n    return x + 1.0\ninner = jax.jit(h)\n"
             "f = jax.jit(lambda x: inner(x) * inner(x * 2.0))", "(arange(3),)",
             "[(arange(3),), (mixed(3),), (arange(4),)]"),
        Case("traces/jit_twice_same_function", body + "f = lambda x: jax.jit(g)(x)",
             "(arange(3),)", "[(arange(3),), (arange(3),), (arange(3),)]"),
        Case("traces/bool_and_int_inputs", body + "f = jax.jit(g)", "(ints(3),)",
             "[(ints(3),), (jnp.asarray([True, False, True]),), (ints(3),)]"),
        Case("traces/scalar_shapes", body + "f = jax.jit(g)", "(jnp.float32(1.0),)",
             "[(jnp.float32(1.0),), (arange(1),), (arange(1, 1),)]"),
        Case("traces/grad_of_jit",
             "def h(x):\n    TRACES[0] += 1\n    return jnp.sum(jnp.sin(x))\n"
             "g = jax.jit(h)\nf = jax.grad(g)", "(arange(3),)",
             "[(arange(3),), (mixed(3),)]"),
        Case("traces/vmap_of_jit",
             "def h(x):\n    TRACES[0] += 1\n    return x * x\n"
             "g = jax.jit(h)\nf = jax.vmap(g)", "(arange(2, 3),)",
             "[(arange(2, 3),), (arange(2, 3),), (arange(4, 3),)]"),
        Case("traces/kwargs_vs_positional",
             "def h(x, y):\n    TRACES[0] += 1\n    return x - y\n"
             "g = jax.jit(h)\nf = g", "(arange(2), arange(2))",
             "[(arange(2), arange(2))]"),
        Case("traces/library_where_shapes", "f = lambda x: jnp.where(x > 1.0, x, 0.0)",
             "(arange(3),)", "[(arange(3),), (arange(4),)]"),
    ]
    return cases


def _errors_and_misc() -> list[Case]:
    return [
        Case("misc/tree_map_inside", "f = jax.jit(lambda p: jax.tree_util.tree_map("
             "lambda a: a * 2.0, p))", "({'a': arange(2), 'b': (arange(3),)},)"),
        Case("misc/astype", "f = jax.jit(lambda x: x.astype(jnp.int32) + 1)", "(arange(3),)"),
        Case("misc/dot_general", "f = jax.jit(lambda a, b: jnp.einsum('ij,jk->ik', a, b))",
             "(arange(2, 3), arange(3, 2))"),
        Case("misc/iota_const", "f = jax.jit(lambda x: x + jnp.arange(3.0))", "(arange(3),)"),
        Case("misc/zeros_like", "f = jax.jit(lambda x: jnp.zeros_like(x) + x)", "(arange(3),)"),
        Case("misc/concatenate", "f = jax.jit(lambda x, y: jnp.concatenate([x, y]))",
             "(arange(2), arange(3))"),
        Case("misc/select", "f = jax.jit(lambda p, x, y: lax.select(p, x, y))",
             "(jnp.asarray([True, False]), arange(2), mixed(2))"),
        Case("misc/lax_ops", "f = jax.jit(lambda x: lax.exp(x) + lax.rsqrt(x))",
             "(arange(3),)"),
        Case("misc/integer_pow", "f = jax.jit(lambda x: x ** 3 + x ** -1)", "(arange(3),)"),
        Case("misc/max_reduction", "f = jax.jit(lambda x: jnp.max(x, axis=-1, keepdims=True))",
             "(mixed(2, 3),)"),
        Case("misc/softmax", "f = jax.jit(lambda x: jax.nn.softmax(x))", "(mixed(2, 3),)"),
        Case("misc/logsumexp", "f = jax.jit(lambda x: jax.nn.logsumexp(x, axis=1))",
             "(mixed(2, 3),)"),
        Case("misc/mean_var", "f = jax.jit(lambda x: (jnp.mean(x), jnp.var(x)))",
             "(arange(4),)"),
        Case("misc/broadcast_add", "f = jax.jit(lambda x, y: x + y)", "(arange(2, 3), arange(3))"),
        Case("misc/stop_gradient", "f = jax.grad(jax.jit(lambda x: jnp.sum("
             "lax.stop_gradient(x) * x)))", "(arange(3),)"),
        Case("misc/complex", "f = jax.jit(lambda x: jnp.abs(x * (1.0 + 2.0j)))", "(arange(3),)"),
        Case("misc/int8_overflow", "f = jax.jit(lambda x: x * x)",
             "(jnp.asarray(np.array([100, 20, 3], np.int8)),)"),
        Case("misc/uint32", "f = jax.jit(lambda x: x >> 1)",
             "(jnp.asarray(np.array([7, 8, 9], np.uint32)),)"),
    ]


CASES: list[Case] = [*_basic(), *_nested(), *_static(), *_pytrees(), *_closures(),
                     *_transforms(), *_options(), *_checkpoint_custom(), *_callables(),
                     *_library(), *_traces(), *_errors_and_misc()]
