"""Programs using structured control flow (`lax.cond`, `lax.switch`, `lax.while_loop`,
`lax.fori_loop`, `lax.scan`, `lax.map`, `lax.associative_scan`), whose printed jaxprs, values,
errors and StableHLO real JAX recorded (`record_control_flow_golden.py`, issue #6).

Cases have the shape and conventions of `jit_program_corpus.py` (`Case(title, source, args)`,
the same `PRELUDE` helpers `arange`, `mixed`, `ints`): `source` defines `f`, `args` is an
expression for its argument tuple. Titles are "<group>/<what>"; the groups are cond, switch,
while, fori, scan, map, assoc (plain and under jit), grad, jvp, vmap, nested, realistic and error.
"""
from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from jit_program_corpus import PRELUDE, Case  # noqa: E402,F401 -- PRELUDE is re-exported

# A function of a scalar used as a smooth loop body in several groups.
_SMOOTH = "def step(c, x):\n    c = jnp.sin(c) * x + c * 0.5\n    return c, c * c\n"


def _cond() -> list[Case]:
    return [
        Case("cond/bool_pred", "def f(p, x):\n    return lax.cond(p, lambda x: x + 1.0, "
             "lambda x: x * 2.0, x)", "(jnp.bool_(True), arange(3))"),
        Case("cond/bool_pred_false", "def f(p, x):\n    return lax.cond(p, lambda x: x + 1.0, "
             "lambda x: x * 2.0, x)", "(jnp.bool_(False), arange(3))"),
        Case("cond/int_pred_nonzero", "def f(p, x):\n    return lax.cond(p, jnp.sin, jnp.cos, x)",
             "(jnp.int32(3), arange(3))"),
        Case("cond/int_pred_zero", "def f(p, x):\n    return lax.cond(p, jnp.sin, jnp.cos, x)",
             "(jnp.int32(0), arange(3))"),
        Case("cond/pred_from_data", "def f(x):\n    return lax.cond(jnp.sum(x) > 3.0, "
             "lambda x: x - 1.0, lambda x: -x, x)", "(arange(3),)"),
        Case("cond/python_bool_pred", "def f(x):\n    return lax.cond(True, lambda x: x + 1.0, "
             "lambda x: x - 1.0, x)", "(arange(3),)"),
        Case("cond/no_operands", "def f(p):\n    return lax.cond(p, lambda: jnp.float32(1.0), "
             "lambda: jnp.float32(2.0))", "(jnp.bool_(True),)"),
        Case("cond/two_operands", "def f(p, x, y):\n    return lax.cond(p, lambda a, b: a * b, "
             "lambda a, b: a - b, x, y)", "(jnp.bool_(False), arange(3), mixed(3))"),
        Case("cond/pytree_operand", "def f(p, d):\n    return lax.cond(p, lambda d: d['a'] + "
             "d['b'][0], lambda d: d['a'] * d['b'][1], d)",
             "(jnp.bool_(True), {'a': arange(2), 'b': (mixed(2), arange(2))})"),
        Case("cond/pytree_output", "def f(p, x):\n    return lax.cond(p, lambda x: "
             "{'s': jnp.sum(x), 'v': (x, x * 2.0)}, lambda x: {'s': jnp.max(x), "
             "'v': (-x, x)}, x)", "(jnp.bool_(False), arange(3))"),
        Case("cond/closure_const", "c = mixed(3)\ndef f(p, x):\n    return lax.cond(p, "
             "lambda x: x + c, lambda x: x * c, x)", "(jnp.bool_(True), arange(3))"),
        Case("cond/closure_traced", "def f(p, x, y):\n    return lax.cond(p, lambda x: x + y, "
             "lambda x: x * 3.0, x)", "(jnp.bool_(True), arange(3), mixed(3))"),
        Case("cond/int_dtype", "def f(p, x):\n    return lax.cond(p, lambda x: x // 2, "
             "lambda x: x * 3, x)", "(jnp.bool_(True), ints(4))"),
        Case("cond/mixed_dtypes", "def f(p, x, i):\n    return lax.cond(p, lambda x, i: "
             "(x, i + 1), lambda x, i: (x * 2.0, i), x, i)",
             "(jnp.bool_(False), arange(2), ints(2))"),
        Case("cond/branch_ignores_operand", "def f(p, x):\n    return lax.cond(p, "
             "lambda x: jnp.zeros(3), lambda x: x, x)", "(jnp.bool_(True), arange(3))"),
        Case("cond/jit", "f = jax.jit(lambda p, x: lax.cond(p, jnp.exp, jnp.tanh, x))",
             "(jnp.bool_(False), mixed(3))"),
        Case("cond/jit_int_pred", "f = jax.jit(lambda p, x: lax.cond(p, jnp.exp, jnp.tanh, x))",
             "(jnp.int32(-2), mixed(3))"),
        Case("cond/jit_scalar_operand", "@jax.jit\ndef f(x):\n    return lax.cond(x > 0.0, "
             "lambda x: x * x, lambda x: -x, x)", "(jnp.float32(-1.5),)"),
        Case("cond/nested_cond", "def f(p, q, x):\n    return lax.cond(p, lambda x: lax.cond(q, "
             "jnp.sin, jnp.cos, x), lambda x: x, x)",
             "(jnp.bool_(True), jnp.bool_(False), arange(3))"),
        Case("cond/weak_typed_output", "def f(p):\n    return lax.cond(p, lambda: 1.0, "
             "lambda: 2.0)", "(jnp.bool_(False),)"),
        Case("cond/float_pred_accepted", "def f(p, x):\n"
             "    return lax.cond(p, jnp.sin, jnp.cos, x)",
             "(jnp.float32(1.0), arange(2))"),
    ]


def _switch() -> list[Case]:
    branches = "br = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: jnp.sin(x)]\n"
    return [
        Case("switch/index0", branches + "def f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.int32(0), arange(3))"),
        Case("switch/index2", branches + "def f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.int32(2), arange(3))"),
        Case("switch/clamp_high", branches + "def f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.int32(7), arange(3))"),
        Case("switch/clamp_negative", branches + "def f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.int32(-4), arange(3))"),
        Case("switch/python_index", branches + "def f(x):\n    return lax.switch(1, br, x)",
             "(arange(3),)"),
        Case("switch/single_branch", "def f(i, x):\n    return lax.switch(i, [jnp.cos], x)",
             "(jnp.int32(3), arange(3))"),
        Case("switch/two_branches", "def f(i, x):\n    return lax.switch(i, [jnp.cos, jnp.sin], x)",
             "(jnp.int32(1), arange(3))"),
        Case("switch/pytree", "br = [lambda a, b: (a + b, a), lambda a, b: (a * b, b), "
             "lambda a, b: (a, a - b)]\ndef f(i, x, y):\n    return lax.switch(i, br, x, y)",
             "(jnp.int32(1), arange(2), mixed(2))"),
        Case("switch/jit", branches + "f = jax.jit(lambda i, x: lax.switch(i, br, x))",
             "(jnp.int32(5), arange(3))"),
        Case("switch/int8_index", branches + "def f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.int8(1), arange(3))"),
        Case("switch/uint_index", branches + "def f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.uint32(9), arange(3))"),
        Case("switch/closure_consts", "c = mixed(3)\nd = arange(3)\nbr = [lambda x: x + c, "
             "lambda x: x * d, lambda x: x - c * d]\ndef f(i, x):\n    return lax.switch(i, br, x)",
             "(jnp.int32(2), arange(3))"),
    ]


def _while() -> list[Case]:
    return [
        Case("while/count", "def f(n):\n    return lax.while_loop(lambda i: i < n, "
             "lambda i: i + 1, 0)", "(jnp.int32(5),)"),
        Case("while/zero_trips", "def f(x):\n    return lax.while_loop(lambda c: c > 10.0, "
             "lambda c: c * 2.0, x)", "(jnp.float32(1.0),)"),
        Case("while/doubling", "def f(x):\n    return lax.while_loop(lambda c: c < 100.0, "
             "lambda c: c * 2.0, x)", "(jnp.float32(1.5),)"),
        Case("while/tuple_carry", "def f(x):\n    def body(c):\n        i, v = c\n"
             "        return i + 1, v * 0.5 + 1.0\n    return lax.while_loop(lambda c: c[0] < 4, "
             "body, (0, x))", "(arange(3),)"),
        Case("while/dict_carry", "def f(x):\n    def body(c):\n        return {'i': c['i'] + 1, "
             "'acc': c['acc'] + x * c['i']}\n    return lax.while_loop(lambda c: c['i'] < 3, body, "
             "{'i': jnp.int32(0), 'acc': jnp.zeros_like(x)})", "(arange(3),)"),
        Case("while/closure_consts", "c = mixed(3)\ndef f(x):\n    return lax.while_loop("
             "lambda v: jnp.sum(v) < 20.0, lambda v: v + jnp.abs(c) + 0.1, x)", "(arange(3),)"),
        Case("while/closure_in_cond", "def f(x, limit):\n    return lax.while_loop("
             "lambda v: jnp.max(v) < limit, lambda v: v * 1.5, x)",
             "(arange(3), jnp.float32(10.0))"),
        Case("while/collatz", "def f(n):\n    def body(c):\n        k, s = c\n"
             "        k = jnp.where(k % 2 == 0, k // 2, 3 * k + 1)\n        return k, s + 1\n"
             "    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))", "(jnp.int32(27),)"),
        Case("while/gcd", "def f(a, b):\n    return lax.while_loop(lambda c: c[1] != 0, "
             "lambda c: (c[1], c[0] % c[1]), (a, b))[0]", "(jnp.int32(84), jnp.int32(36))"),
        Case("while/jit", "f = jax.jit(lambda x: lax.while_loop(lambda c: c[0] < 6, "
             "lambda c: (c[0] + 1, c[1] + c[0]), (0, x)))", "(jnp.float32(0.5),)"),
        Case("while/jit_int_bound", "@jax.jit\ndef f(x, n):\n    return lax.while_loop("
             "lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.cos(c[1])), (0, x))[1]",
             "(arange(3), jnp.int32(4))"),
        Case("while/python_cond_consts", "def f(x):\n    return lax.while_loop(lambda c: True & "
             "(c < 3.0), lambda c: c + 1.0, x)", "(jnp.float32(0.0),)"),
        Case("while/sqrt_babylon", "def f(a):\n    def body(c):\n        x, _ = c\n"
             "        return (x + a / x) * 0.5, x\n    return lax.while_loop(lambda c: "
             "jnp.abs(c[0] - c[1]) > 1e-6, body, (a, a + 1.0))[0]", "(jnp.float32(2.0),)"),
        Case("while/weak_int_init_promoted", "def f(x):\n    return lax.while_loop(lambda c: "
             "c < 3, lambda c: c + 1.0, 0)", "(arange(2),)"),
    ]


def _fori() -> list[Case]:
    return [
        Case("fori/concrete", "def f(x):\n    return lax.fori_loop(0, 5, "
             "lambda i, c: c * 0.9 + i, x)", "(arange(3),)"),
        Case("fori/concrete_nonzero_start", "def f(x):\n    return lax.fori_loop(2, 6, "
             "lambda i, c: c + i * x, jnp.zeros_like(x))", "(arange(3),)"),
        Case("fori/empty_range", "def f(x):\n    return lax.fori_loop(4, 2, "
             "lambda i, c: c + 1.0, x)", "(arange(3),)"),
        Case("fori/traced_upper", "def f(x, n):\n    return lax.fori_loop(0, n, "
             "lambda i, c: c * 2.0, x)", "(arange(3), jnp.int32(3))"),
        Case("fori/traced_both", "def f(x, lo, hi):\n    return lax.fori_loop(lo, hi, "
             "lambda i, c: c + i.astype(jnp.float32), x)",
             "(arange(3), jnp.int32(1), jnp.int32(4))"),
        Case("fori/tuple_carry", "def f(x):\n    return lax.fori_loop(0, 4, lambda i, c: "
             "(c[1], c[0] + c[1]), (x, x + 1.0))", "(arange(2),)"),
        Case("fori/unroll", "def f(x):\n    return lax.fori_loop(0, 6, lambda i, c: "
             "jnp.sin(c) + 1.0, x, unroll=2)", "(arange(3),)"),
        Case("fori/unroll_true", "def f(x):\n    return lax.fori_loop(0, 3, lambda i, c: "
             "c * c, x, unroll=True)", "(mixed(3),)"),
        Case("fori/int_carry", "def f(n):\n    return lax.fori_loop(0, 10, "
             "lambda i, s: s + i * n, 0)", "(jnp.int32(3),)"),
        Case("fori/jit", "f = jax.jit(lambda x: lax.fori_loop(0, 4, "
             "lambda i, c: c @ c * 0.5, x))", "(mixed(2, 2),)"),
        Case("fori/jit_traced_bound", "f = jax.jit(lambda x, n: lax.fori_loop(0, n, "
             "lambda i, c: c + x, x))", "(arange(3), jnp.int32(5))"),
        Case("fori/index_update", "def f(x):\n    return lax.fori_loop(0, 3, lambda i, c: "
             "c.at[i].set(c[i] * 10.0), x)", "(arange(5),)"),
        Case("fori/weak_int_init_promoted", "def f(x):\n    return lax.fori_loop(0, 3, "
             "lambda i, c: c + 0.5, 1)", "(arange(2),)"),
        Case("fori/float_bounds_accepted", "def f(x):\n    return lax.fori_loop(0.0, 3.0, "
             "lambda i, c: c + 1.0, x)", "(arange(2),)"),
    ]


def _scan() -> list[Case]:
    return [
        Case("scan/cumsum", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, c + x), "
             "0.0, xs)", "(arange(5),)"),
        Case("scan/cumsum_f32_init", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, c), "
             "jnp.float32(0.0), xs)", "(arange(5),)"),
        Case("scan/reverse", "def f(xs):\n    return lax.scan(lambda c, x: (c * 0.5 + x, c), "
             "jnp.float32(1.0), xs, reverse=True)", "(arange(4),)"),
        Case("scan/xs_none", "def f(c):\n    return lax.scan(lambda c, _: (c * 1.1, c), c, "
             "None, length=4)", "(arange(2),)"),
        Case("scan/length_with_xs", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, x * 2.0),"
             " jnp.zeros(2), xs, length=3)", "(arange(3, 2),)"),
        Case("scan/unroll2", "def f(xs):\n    return lax.scan(lambda c, x: (jnp.sin(c) + x, c), "
             "jnp.float32(0.0), xs, unroll=2)", "(arange(5),)"),
        Case("scan/unroll_true", "def f(xs):\n    return lax.scan(lambda c, x: (c * x, c), "
             "jnp.float32(1.0), xs, unroll=True)", "(arange(3),)"),
        Case("scan/matrix_rows", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, "
             "jnp.dot(c, x)), jnp.zeros(3), xs)", "(arange(4, 3),)"),
        Case("scan/pytree_carry", "def f(xs):\n    def body(c, x):\n        a, b = c\n"
             "        return (b, a + b * x), {'a': a, 'b': b}\n"
             "    return lax.scan(body, (jnp.float32(0.0), jnp.float32(1.0)), xs)",
             "(arange(5),)"),
        Case("scan/pytree_xs", "def f(d):\n    return lax.scan(lambda c, x: (c + x['u'] * "
             "x['v'], x['u'] - x['v']), jnp.zeros(2), d)",
             "({'u': arange(3, 2), 'v': mixed(3, 2)},)"),
        Case("scan/no_ys", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, None), "
             "jnp.float32(0.0), xs)", "(arange(4),)"),
        Case("scan/empty_carry", "def f(xs):\n    return lax.scan(lambda c, x: (c, x * x), "
             "(), xs)[1]", "(arange(4),)"),
        Case("scan/closure_const", "w = mixed(3, 3)\ndef f(xs):\n    return lax.scan(lambda c, x:"
             " (jnp.tanh(w @ c + x), c), jnp.zeros(3), xs)", "(arange(4, 3),)"),
        Case("scan/closure_traced", "def f(w, xs):\n    return lax.scan(lambda c, x: "
             "(c * w + x, c), jnp.float32(0.0), xs)", "(jnp.float32(0.9), arange(4))"),
        Case("scan/int_carry", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, c * x), "
             "jnp.int32(0), xs)", "(ints(5),)"),
        Case("scan/mixed_carry", "def f(xs):\n    return lax.scan(lambda c, x: ((c[0] + 1, "
             "c[1] + x * c[0]), c[0]), (jnp.int32(0), jnp.float32(0.0)), xs)", "(arange(4),)"),
        Case("scan/length_zero", "def f(c):\n    return lax.scan(lambda c, _: (c + 1.0, c), c, "
             "None, length=0)", "(arange(2),)"),
        Case("scan/jit", "f = jax.jit(lambda xs: lax.scan(lambda c, x: (c * x + 1.0, c), "
             "jnp.float32(1.0), xs))", "(mixed(4),)"),
        Case("scan/jit_reverse_unroll", "f = jax.jit(lambda xs: lax.scan(lambda c, x: "
             "(c + jnp.exp(x), c), jnp.zeros(2), xs, reverse=True, unroll=3))",
             "(mixed(5, 2),)"),
        Case("scan/cumulative_lax", "def f(x):\n    return lax.cumsum(x), lax.cumprod(x), "
             "lax.cummax(x, reverse=True)", "(mixed(5),)"),
        Case("scan/jnp_cumsum", "def f(x):\n    return jnp.cumsum(x, axis=1)", "(arange(2, 3),)"),
        Case("scan/multiple_ys", "def f(xs):\n    return lax.scan(lambda c, x: (c + x, "
             "(c, x * 2, jnp.sin(c))), jnp.float32(0.0), xs)", "(arange(3),)"),
        Case("scan/weak_float_init_to_float16", "def f(xs):\n    return lax.scan(lambda c, x: "
             "(c * x, c), 1.0, xs)", "(arange(3, dtype=np.float16),)"),
        Case("scan/weak_int_init_promoted", "def f(xs):\n    return lax.scan(lambda c, x: "
             "(c + x, c), 0, xs)", "(arange(3),)"),
    ]


def _map_assoc() -> list[Case]:
    return [
        Case("map/plain", "def f(xs):\n    return lax.map(lambda x: jnp.sum(x * x), xs)",
             "(arange(4, 3),)"),
        Case("map/pytree", "def f(xs, ys):\n    return lax.map(lambda t: (t[0] + t[1], "
             "t[0] * t[1]), (xs, ys))", "(arange(3, 2), mixed(3, 2))"),
        Case("map/batch_size_divides", "def f(xs):\n    return lax.map(jnp.sin, xs, batch_size=2)",
             "(arange(6, 2),)"),
        Case("map/batch_size_remainder", "def f(xs):\n    return lax.map(lambda x: x @ x, xs, "
             "batch_size=3)", "(arange(7, 2),)"),
        Case("map/batch_size_larger", "def f(xs):\n    return lax.map(jnp.cos, xs, batch_size=8)",
             "(arange(5),)"),
        Case("map/jit", "f = jax.jit(lambda xs: lax.map(lambda x: jnp.max(x), xs))",
             "(mixed(4, 3),)"),
        Case("assoc/add", "def f(x):\n    return lax.associative_scan(jnp.add, x)",
             "(arange(7),)"),
        Case("assoc/add_reverse", "def f(x):\n    return lax.associative_scan(jnp.add, x, "
             "reverse=True)", "(arange(6),)"),
        Case("assoc/max_axis1", "def f(x):\n    return lax.associative_scan(jnp.maximum, x, "
             "axis=1)", "(mixed(2, 5),)"),
        Case("assoc/mul_axis0_2d", "def f(x):\n    return lax.associative_scan(jnp.multiply, x)",
             "(arange(4, 2),)"),
        Case("assoc/pytree_linear_recurrence", "def op(a, b):\n    return (a[0] * b[0], "
             "b[0] * a[1] + b[1])\ndef f(a, b):\n    return lax.associative_scan(op, (a, b))",
             "(mixed(5), arange(5))"),
        Case("assoc/length_one", "def f(x):\n    return lax.associative_scan(jnp.add, x)",
             "(arange(1),)"),
        Case("assoc/negative_axis_reverse", "def f(x):\n    return lax.associative_scan("
             "jnp.add, x, reverse=True, axis=-1)", "(arange(3, 4),)"),
        Case("assoc/negative_axis", "def f(x):\n    return lax.associative_scan(jnp.add, x, "
             "axis=-1)", "(arange(3, 4),)"),
        Case("assoc/jit", "f = jax.jit(lambda x: lax.associative_scan(jnp.add, x))",
             "(arange(9),)"),
        Case("assoc/int", "def f(x):\n    return lax.associative_scan(jnp.add, x)",
             "(ints(6),)"),
    ]


def _grad() -> list[Case]:
    return [
        Case("grad/cond", "f = jax.grad(lambda x, p: jnp.sum(lax.cond(p, jnp.sin, "
             "lambda x: x * x, x)))", "(arange(3), jnp.bool_(True))"),
        Case("grad/cond_false", "f = jax.grad(lambda x, p: jnp.sum(lax.cond(p, jnp.sin, "
             "lambda x: x * x, x)))", "(arange(3), jnp.bool_(False))"),
        Case("grad/cond_closure", "def g(x, y):\n    return lax.cond(x > 0.0, lambda: x * y, "
             "lambda: jnp.exp(y))\nf = jax.grad(g, argnums=(0, 1))",
             "(jnp.float32(2.0), jnp.float32(0.5))"),
        Case("grad/switch", "br = [jnp.sin, jnp.cos, jnp.tanh]\n"
             "f = jax.grad(lambda x, i: jnp.sum(lax.switch(i, br, x)))",
             "(mixed(3), jnp.int32(1))"),
        Case("grad/scan", "def g(c0, xs):\n    c, ys = lax.scan(lambda c, x: (jnp.sin(c) * x, "
             "c * c), c0, xs)\n    return c + jnp.sum(ys)\nf = jax.grad(g, argnums=(0, 1))",
             "(jnp.float32(0.5), mixed(4))"),
        Case("grad/scan_reverse", "def g(xs):\n    return jnp.sum(lax.scan(lambda c, x: "
             "(c * x + 1.0, c), jnp.float32(1.0), xs, reverse=True)[1])\nf = jax.grad(g)",
             "(mixed(4),)"),
        Case("grad/scan_closure_param", "def g(w, xs):\n    return lax.scan(lambda c, x: "
             "(jnp.tanh(w * c + x), None), jnp.float32(0.0), xs)[0]\nf = jax.grad(g)",
             "(jnp.float32(0.7), mixed(5))"),
        Case("grad/scan_pytree", "def g(p, xs):\n    def body(c, x):\n"
             "        return (c[0] * p['a'] + x, c[1] + c[0] * p['b']), None\n"
             "    c, _ = lax.scan(body, (jnp.float32(1.0), jnp.float32(0.0)), xs)\n"
             "    return c[1]\nf = jax.grad(g)",
             "({'a': jnp.float32(0.9), 'b': jnp.float32(1.5)}, mixed(4))"),
        Case("grad/scan_unroll", "f = jax.grad(lambda x: lax.scan(lambda c, _: (jnp.sin(c) * 1.1,"
             " None), x, None, length=5, unroll=2)[0])", "(jnp.float32(0.3),)"),
        Case("grad/fori_concrete", "f = jax.grad(lambda x: lax.fori_loop(0, 4, "
             "lambda i, c: jnp.sin(c) + c * i, x))", "(jnp.float32(0.4),)"),
        Case("grad/fori_vector", "f = jax.grad(lambda x: jnp.sum(lax.fori_loop(0, 3, "
             "lambda i, c: c * x, jnp.ones(3))))", "(mixed(3),)"),
        Case("grad/jit_scan", "f = jax.jit(jax.grad(lambda xs: jnp.sum(lax.cumsum(xs * xs))))",
             "(mixed(4),)"),
        Case("grad/map", "f = jax.grad(lambda xs: jnp.sum(lax.map(lambda x: jnp.sin(x) * x, "
             "xs)))", "(mixed(4),)"),
        Case("grad/associative_scan", "f = jax.grad(lambda x: jnp.sum(lax.associative_scan("
             "jnp.multiply, x)))", "(arange(5),)"),
        Case("grad/value_and_grad_scan", _SMOOTH + "f = jax.value_and_grad(lambda c, xs: "
             "jnp.sum(lax.scan(step, c, xs)[1]))", "(jnp.float32(0.3), mixed(4))"),
        Case("grad/vjp_cond", "def f(x, p):\n    y, vjp = jax.vjp(lambda x: lax.cond(p, jnp.exp,"
             " jnp.sin, x), x)\n    return y, vjp(jnp.ones_like(y))",
             "(mixed(3), jnp.bool_(False))"),
        Case("grad/hessian_scan", "f = jax.hessian(lambda x: lax.scan(lambda c, w: (c * jnp.sin"
             "(w * c), None), jnp.float32(1.0), x)[0])", "(mixed(3),)"),
    ]


def _jvp() -> list[Case]:
    return [
        Case("jvp/while", "def f(x, t):\n    return jax.jvp(lambda x: lax.while_loop(lambda c: "
             "c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 2.0), (0, x))[1], (x,), (t,))",
             "(mixed(3), arange(3))"),
        Case("jvp/while_data_dependent", "def f(x, t):\n    return jax.jvp(lambda x: "
             "lax.while_loop(lambda c: c < 10.0, lambda c: c * 1.7, x), (x,), (t,))",
             "(jnp.float32(0.5), jnp.float32(1.0))"),
        Case("jvp/fori_traced", "def f(x, n):\n    return jax.jvp(lambda x: lax.fori_loop(0, n, "
             "lambda i, c: c * x, x), (x,), (jnp.float32(1.0),))",
             "(jnp.float32(1.1), jnp.int32(4))"),
        Case("jvp/cond", "def f(x, p):\n    return jax.jvp(lambda x: lax.cond(p, jnp.sin, jnp.cos,"
             " x), (x,), (jnp.ones_like(x),))", "(mixed(3), jnp.bool_(True))"),
        Case("jvp/scan", _SMOOTH + "def f(c, xs):\n    return jax.jvp(lambda c, xs: "
             "lax.scan(step, c, xs), (c, xs), (jnp.float32(1.0), jnp.ones_like(xs)))",
             "(jnp.float32(0.2), mixed(4))"),
        Case("jvp/jacfwd_while", "f = jax.jacfwd(lambda x: lax.while_loop(lambda c: c[1] < 5, "
             "lambda c: (c[0] * x, c[1] + 1), (x, 0))[0])", "(mixed(2),)"),
        Case("jvp/linearize_cond", "def f(x):\n    y, lin = jax.linearize(lambda x: lax.cond("
             "jnp.sum(x) > 0.0, jnp.sin, jnp.exp, x), x)\n    return y, lin(jnp.ones_like(x))",
             "(arange(3),)"),
    ]


def _vmap() -> list[Case]:
    return [
        Case("vmap/cond_batched_pred", "f = jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, "
             "x))", "(jnp.asarray([True, False, True]), arange(3))"),
        Case("vmap/cond_unbatched_pred", "f = jax.vmap(lambda x, p: lax.cond(p, jnp.sin, jnp.cos,"
             " x), in_axes=(0, None))", "(arange(3, 2), jnp.bool_(False))"),
        Case("vmap/cond_pred_from_data", "f = jax.vmap(lambda x: lax.cond(x > 1.0, "
             "lambda x: x * 10.0, lambda x: x - 10.0, x))", "(arange(4),)"),
        Case("vmap/switch_batched_index", "br = [jnp.sin, jnp.cos, lambda x: x * 3.0]\n"
             "f = jax.vmap(lambda i, x: lax.switch(i, br, x))",
             "(jnp.asarray([0, 2, 1, 5, -1], jnp.int32), arange(5))"),
        Case("vmap/while_batched_trip_counts", "f = jax.vmap(lambda n: lax.while_loop("
             "lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, jnp.float32(1.0))))",
             "(jnp.asarray([0, 3, 1, 5], jnp.int32),)"),
        Case("vmap/while_batched_carry_only", "f = jax.vmap(lambda x: lax.while_loop("
             "lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x)))", "(arange(3),)"),
        Case("vmap/while_data_pred", "f = jax.vmap(lambda x: lax.while_loop(lambda c: c < 10.0,"
             " lambda c: c * 2.0, x))", "(arange(4),)"),
        Case("vmap/fori_traced_bound", "f = jax.vmap(lambda x, n: lax.fori_loop(0, n, "
             "lambda i, c: c + x, 0.0 * x))", "(arange(4), jnp.asarray([1, 0, 3, 2], jnp.int32))"),
        Case("vmap/scan", "f = jax.vmap(lambda xs: lax.scan(lambda c, x: (c + x, c * x), "
             "jnp.float32(0.0), xs))", "(arange(2, 4),)"),
        Case("vmap/scan_in_axes1", "f = jax.vmap(lambda xs: lax.scan(lambda c, x: (c * x, c), "
             "jnp.float32(1.0), xs)[1], in_axes=1)", "(mixed(4, 3),)"),
        Case("vmap/scan_batched_init_only", "f = jax.vmap(lambda c, xs: lax.scan(lambda c, x: "
             "(c + x, c), c, xs), in_axes=(0, None))", "(arange(3), arange(4))"),
        Case("vmap/map", "f = jax.vmap(lambda xs: lax.map(jnp.sum, xs))", "(arange(2, 3, 4),)"),
        Case("vmap/associative_scan", "f = jax.vmap(lambda x: lax.associative_scan(jnp.add, x))",
             "(arange(3, 5),)"),
        Case("vmap/jit_cond", "f = jax.jit(jax.vmap(lambda p, x: lax.cond(p, lambda x: x + 1.0,"
             " lambda x: x * 2.0, x)))", "(jnp.asarray([False, True]), arange(2, 3))"),
        Case("vmap/cond_int_pred_batched", "f = jax.vmap(lambda p, x: lax.cond(p, jnp.exp, "
             "jnp.negative, x))", "(jnp.asarray([0, 3, -1], jnp.int32), mixed(3))"),
    ]


def _nested() -> list[Case]:
    return [
        Case("nested/scan_in_cond", "def f(p, xs):\n    return lax.cond(p, lambda xs: "
             "lax.scan(lambda c, x: (c + x, c), 0.0, xs)[1], lambda xs: xs * 2.0, xs)",
             "(jnp.bool_(True), arange(4))"),
        Case("nested/cond_in_scan", "def f(xs):\n    def body(c, x):\n        c = lax.cond("
             "x > 1.0, lambda c: c + x, lambda c: c * x, c)\n        return c, c\n"
             "    return lax.scan(body, jnp.float32(1.0), xs)", "(arange(5),)"),
        Case("nested/while_in_scan", "def f(xs):\n    def body(c, x):\n"
             "        y = lax.while_loop(lambda v: v < x, lambda v: v * 2.0 + 0.1, c)\n"
             "        return y * 0.1, y\n    return lax.scan(body, jnp.float32(0.5), xs)",
             "(arange(4),)"),
        Case("nested/scan_in_scan", "def f(xss):\n    def outer(c, xs):\n"
             "        c2, ys = lax.scan(lambda d, x: (d * 0.5 + x, d), c, xs)\n"
             "        return c2, jnp.sum(ys)\n    return lax.scan(outer, jnp.float32(0.0), xss)",
             "(arange(3, 4),)"),
        Case("nested/fori_in_while", "def f(x):\n    return lax.while_loop(lambda c: c[0] < 3, "
             "lambda c: (c[0] + 1, lax.fori_loop(0, 2, lambda i, v: v * 1.5, c[1])), (0, x))",
             "(arange(2),)"),
        Case("nested/grad_vmap_cond_scan",
             "def inner(p, x, w):\n    return lax.cond(p, lambda x: lax.scan(lambda c, xi: "
             "(jnp.sin(c * w + xi), None), jnp.float32(0.0), x)[0], lambda x: jnp.sum(x) * w, x)\n"
             "def loss(w, ps, xs):\n    return jnp.sum(jax.vmap(inner, in_axes=(0, 0, None))"
             "(ps, xs, w))\nf = jax.grad(loss)",
             "(jnp.float32(0.8), jnp.asarray([True, False, True]), mixed(3, 4))"),
        Case("nested/jit_grad_vmap_cond_scan",
             "def inner(p, x, w):\n    return lax.cond(p, lambda x: lax.scan(lambda c, xi: "
             "(c * w + xi, None), jnp.float32(0.0), x)[0], lambda x: jnp.max(x) * w, x)\n"
             "f = jax.jit(jax.grad(lambda w, ps, xs: jnp.sum(jax.vmap(inner, in_axes=(0, 0, None))"
             "(ps, xs, w))))", "(jnp.float32(0.8), jnp.asarray([False, True]), mixed(2, 3))"),
        Case("nested/vmap_while_in_cond", "f = jax.vmap(lambda p, x: lax.cond(p, lambda x: "
             "lax.while_loop(lambda c: c < 5.0, lambda c: c + 1.5, x), jnp.negative, x))",
             "(jnp.asarray([True, False, True]), arange(3))"),
        Case("nested/vmap_vmap_scan", "f = jax.vmap(jax.vmap(lambda xs: lax.cumsum(xs)))",
             "(arange(2, 3, 4),)"),
        Case("nested/grad_grad_cond", "f = jax.grad(jax.grad(lambda x: lax.cond(x > 0.0, "
             "lambda x: x ** 3, lambda x: jnp.sin(x), x)))", "(jnp.float32(0.7),)"),
        Case("nested/switch_in_fori", "br = [lambda c: c + 1.0, lambda c: c * 2.0, "
             "lambda c: c - 3.0]\ndef f(x):\n    return lax.fori_loop(0, 6, lambda i, c: "
             "lax.switch(i % 3, br, c), x)", "(arange(2),)"),
        Case("nested/map_of_scan", "f = lambda xs: lax.map(lambda r: lax.scan(lambda c, x: "
             "(c + x, None), 0.0, r)[0], xs)", "(arange(3, 4),)"),
        Case("nested/grad_scan_in_scan", "def g(w):\n    def outer(c, _):\n"
             "        c2, _ = lax.scan(lambda d, _: (jnp.sin(d * w), None), c, None, length=3)\n"
             "        return c2 + 0.1, None\n    return lax.scan(outer, jnp.float32(0.5), None, "
             "length=2)[0]\nf = jax.grad(g)", "(jnp.float32(1.3),)"),
        Case("nested/checkpoint_scan_body", "def g(xs):\n    body = jax.checkpoint(lambda c, x:"
             " (jnp.sin(c) * x, None))\n    return lax.scan(body, jnp.float32(1.0), xs)[0]\n"
             "f = jax.grad(g)", "(mixed(4),)"),
        Case("nested/checkpoint_cond", "def g(x):\n    return jnp.sum(lax.cond(jnp.sum(x) > 0, "
             "lambda x: jnp.sin(x) * x, lambda x: jnp.exp(-x) @ x * x, x))\n"
             "f = jax.grad(jax.checkpoint(g))", "(mixed(3),)"),
        Case("nested/checkpoint_cond_dots_saveable", "def g(x, w):\n    return jnp.sum(lax.cond("
             "x[0] > 0, lambda x: jnp.tanh(w @ x), lambda x: jnp.sin(x) * 2.0, x))\n"
             "f = jax.grad(jax.checkpoint(g, policy=jax.checkpoint_policies.dots_saveable))",
             "(mixed(3), mixed(3, 3))"),
        Case("nested/checkpoint_cond_everything_saveable", "def g(x):\n    a, b = lax.cond("
             "x[0] > 0, lambda x: (jnp.sin(x), x * 2.0), lambda x: (x, jnp.cos(x)), x)\n"
             "    return jnp.sum(a * b)\nf = jax.grad(jax.checkpoint(g, "
             "policy=jax.checkpoint_policies.everything_saveable))", "(mixed(3),)"),
    ]


def _realistic() -> list[Case]:
    rnn = ("def rnn_loss(params, xs, target):\n"
           "    def cell(h, x):\n"
           "        h = jnp.tanh(params['Wh'] @ h + params['Wx'] @ x + params['b'])\n"
           "        return h, params['Wo'] @ h\n"
           "    h, ys = lax.scan(cell, jnp.zeros(4), xs)\n"
           "    return jnp.mean((ys - target) ** 2)\n"
           "params = {'Wh': mixed(4, 4) * 0.5, 'Wx': mixed(4, 3), 'b': mixed(4) * 0.1, "
           "'Wo': mixed(2, 4)}\n"
           "xs = jnp.asarray(np.sin(np.arange(300, dtype=np.float32) * 0.1).reshape(100, 3))\n"
           "target = jnp.asarray(np.cos(np.arange(200, dtype=np.float32) * 0.05)"
           ".reshape(100, 2))\n")
    rk4 = ("def rhs(y, k):\n    return jnp.stack([y[1], -k * y[0] - 0.1 * y[1]])\n"
           "def rk4(k, y0, dt=0.05, n=40):\n"
           "    def step(y, _):\n"
           "        k1 = rhs(y, k)\n        k2 = rhs(y + dt / 2 * k1, k)\n"
           "        k3 = rhs(y + dt / 2 * k2, k)\n        k4 = rhs(y + dt * k3, k)\n"
           "        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)\n        return y, y[0]\n"
           "    return lax.scan(step, y0, None, length=n)\n")
    newton = ("def newton_sqrt(a):\n"
              "    def body(c):\n        x, i = c\n"
              "        return x - (x * x - a) / (2 * x), i + 1\n"
              "    def cond(c):\n        x, i = c\n"
              "        return (jnp.abs(x * x - a) > 1e-5 * a) & (i < 50)\n"
              "    return lax.while_loop(cond, body, (jnp.maximum(a, 1.0), 0))\n")
    kmeans = ("def kmeans(points, centers, iters=5):\n"
              "    def step(c, _):\n"
              "        d = jnp.sum((points[:, None, :] - c[None, :, :]) ** 2, axis=-1)\n"
              "        assign = jnp.argmin(d, axis=1)\n"
              "        onehot = jax.nn.one_hot(assign, c.shape[0])\n"
              "        counts = jnp.sum(onehot, axis=0)\n"
              "        sums = onehot.T @ points\n"
              "        c = jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1.0)[:, None],"
              " c)\n"
              "        return c, jnp.sum(jnp.min(d, axis=1))\n"
              "    return lax.scan(step, centers, None, length=iters)\n"
              "pts = jnp.asarray(np.concatenate([np.sin(np.arange(12) * 1.3)[:, None] * 0.3 + "
              "np.repeat([0.0, 2.0, 4.0], 4)[:, None], np.cos(np.arange(12) * 0.7)[:, None] * "
              "0.3 + np.repeat([0.0, 3.0, 0.0], 4)[:, None]], axis=1).astype(np.float32))\n")
    return [
        Case("realistic/rnn_100_loss", rnn + "f = rnn_loss", "(params, xs, target)"),
        Case("realistic/rnn_100_grad", rnn + "f = jax.grad(rnn_loss)", "(params, xs, target)"),
        Case("realistic/rnn_100_jit_value_and_grad", rnn +
             "f = jax.jit(jax.value_and_grad(rnn_loss))", "(params, xs, target)"),
        Case("realistic/rk4_trajectory", rk4 + "f = rk4",
             "(jnp.float32(2.0), jnp.asarray([1.0, 0.0], jnp.float32))"),
        Case("realistic/rk4_grad_param", rk4 + "def loss(k, y0):\n"
             "    yT, traj = rk4(k, y0)\n    return yT[0] ** 2 + jnp.sum(traj ** 2) * 0.01\n"
             "f = jax.grad(loss)", "(jnp.float32(2.0), jnp.asarray([1.0, 0.0], jnp.float32))"),
        Case("realistic/rk4_jit_grad_param", rk4 + "f = jax.jit(jax.grad(lambda k, y0: "
             "rk4(k, y0)[0][0]))", "(jnp.float32(1.5), jnp.asarray([0.5, 0.5], jnp.float32))"),
        Case("realistic/newton_sqrt", newton + "f = newton_sqrt", "(jnp.float32(10.0),)"),
        Case("realistic/newton_sqrt_vmap", newton + "f = jax.vmap(newton_sqrt)",
             "(jnp.asarray([0.25, 2.0, 9.0, 1e4, 1.0], jnp.float32),)"),
        Case("realistic/newton_sqrt_jit_vmap", newton + "f = jax.jit(jax.vmap(newton_sqrt))",
             "(jnp.asarray([3.0, 0.5, 100.0], jnp.float32),)"),
        Case("realistic/newton_jvp", newton + "f = lambda a, t: jax.jvp(lambda a: "
             "newton_sqrt(a)[0], (a,), (t,))", "(jnp.float32(4.0), jnp.float32(1.0))"),
        Case("realistic/kmeans", kmeans + "f = kmeans",
             "(pts, jnp.asarray([[0.0, 0.0], [1.0, 1.0], [3.0, 1.0]], jnp.float32))"),
        Case("realistic/kmeans_jit", kmeans + "f = jax.jit(kmeans, static_argnames='iters')",
             "(pts, jnp.asarray([[0.5, 0.5], [2.0, 2.5], [4.0, 0.5]], jnp.float32))"),
        Case("realistic/bisection_while", "def f(lo, hi):\n    g = lambda x: x ** 3 - 2.0\n"
             "    def body(c):\n        lo, hi = c\n        mid = (lo + hi) / 2\n"
             "        return jnp.where(g(mid) > 0, lo, mid), jnp.where(g(mid) > 0, mid, hi)\n"
             "    return lax.while_loop(lambda c: c[1] - c[0] > 1e-4, body, (lo, hi))",
             "(jnp.float32(0.0), jnp.float32(2.0))"),
        Case("realistic/ema_scan_grad", "def g(a, xs):\n    return jnp.sum(lax.scan(lambda m, x:"
             " (a * m + (1 - a) * x, m), xs[0], xs)[1])\nf = jax.grad(g)",
             "(jnp.float32(0.9), mixed(10))"),
        Case("realistic/power_iteration", "def f(a):\n    def body(i, v):\n"
             "        w = a @ v\n        return w / jnp.linalg.norm(w)\n"
             "    v = lax.fori_loop(0, 20, body, jnp.ones(a.shape[0]))\n    return v, v @ a @ v",
             "(jnp.asarray([[2.0, 1.0], [1.0, 3.0]], jnp.float32),)"),
        Case("realistic/linear_recurrence_assoc", "def f(a, b):\n"
             "    op = lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1])\n"
             "    par = lax.associative_scan(op, (a, b))[1]\n"
             "    seq = lax.scan(lambda h, ab: (ab[0] * h + ab[1], ab[0] * h + ab[1]), 0.0, "
             "(a, b))[1]\n    return par, seq", "(mixed(8) * 0.5, arange(8))"),
    ]


def _errors() -> list[Case]:
    return [
        Case("error/while_carry_dtype_change", "def f(x):\n    return lax.while_loop(lambda c: "
             "c < 3, lambda c: c + 1.0, jnp.int32(0))", "(arange(2),)"),
        Case("error/scan_carry_dtype_change", "def f(xs):\n    return lax.scan(lambda c, x: "
             "(c + x, c), jnp.int32(0), xs)", "(arange(3),)"),
        Case("error/fori_carry_dtype_change", "def f(x):\n    return lax.fori_loop(0, 3, "
             "lambda i, c: c + 0.5, jnp.int32(1))", "(arange(2),)"),
        Case("error/while_carry_shape_change", "def f(x):\n    return lax.while_loop(lambda c: "
             "jnp.sum(c) < 3.0, lambda c: jnp.concatenate([c, c]), x)", "(arange(2),)"),
        Case("error/while_cond_not_scalar", "def f(x):\n    return lax.while_loop(lambda c: "
             "c < 3.0, lambda c: c + 1.0, x)", "(arange(2),)"),
        Case("error/while_cond_not_bool", "def f(x):\n    return lax.while_loop(lambda c: "
             "jnp.sum(c), lambda c: c + 1.0, x)", "(arange(2),)"),
        Case("error/while_pytree_structure_change", "def f(x):\n    return lax.while_loop("
             "lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1], c[1]), (0, x))", "(arange(2),)"),
        Case("error/scan_carry_pytree_path", "def f(xs):\n    return lax.scan(lambda c, x: "
             "({'a': c['a'] + x, 'b': c['b'] * x}, None), {'a': jnp.float32(0.0), "
             "'b': jnp.int32(1)}, xs)", "(arange(3),)"),
        Case("error/scan_carry_shape_change", "def f(xs):\n    return lax.scan(lambda c, x: "
             "(c * x, None), jnp.float32(1.0), xs)", "(arange(3, 2),)"),
        Case("error/scan_length_mismatch", "def f(xs, ys):\n    return lax.scan(lambda c, x: "
             "(c, x[0] + x[1]), 0.0, (xs, ys))", "(arange(3), arange(4))"),
        Case("error/scan_length_arg_mismatch", "def f(xs):\n    return lax.scan(lambda c, x: "
             "(c, x), 0.0, xs, length=5)", "(arange(3),)"),
        Case("error/scan_no_length", "def f(c):\n    return lax.scan(lambda c, x: (c, c), c, "
             "None)", "(arange(2),)"),
        Case("error/scan_body_not_pair", "def f(xs):\n    return lax.scan(lambda c, x: c + x, "
             "0.0, xs)", "(arange(3),)"),
        Case("error/cond_branch_dtype_mismatch", "def f(p, x):\n    return lax.cond(p, "
             "lambda x: x, lambda x: x.astype(jnp.int32), x)", "(jnp.bool_(True), arange(2))"),
        Case("error/cond_branch_shape_mismatch", "def f(p, x):\n    return lax.cond(p, "
             "lambda x: x, lambda x: x[:1], x)", "(jnp.bool_(True), arange(2))"),
        Case("error/cond_branch_structure_mismatch", "def f(p, x):\n    return lax.cond(p, "
             "lambda x: (x, x), lambda x: x, x)", "(jnp.bool_(True), arange(2))"),
        Case("error/cond_pred_not_scalar", "def f(p, x):\n    return lax.cond(p, jnp.sin, "
             "jnp.cos, x)", "(jnp.asarray([True, False]), arange(2))"),
        Case("error/switch_float_index", "def f(i, x):\n    return lax.switch(i, [jnp.sin, "
             "jnp.cos], x)", "(jnp.float32(1.0), arange(2))"),
        Case("error/switch_no_branches", "def f(i, x):\n    return lax.switch(i, [], x)",
             "(jnp.int32(0), arange(2))"),
        Case("error/switch_branch_mismatch", "def f(i, x):\n    return lax.switch(i, "
             "[lambda x: x, lambda x: jnp.sum(x)], x)", "(jnp.int32(0), arange(2))"),
        Case("error/grad_while_loop", "f = jax.grad(lambda x: lax.while_loop(lambda c: c < 10.0,"
             " lambda c: c * 2.0, x))", "(jnp.float32(1.0),)"),
        Case("error/grad_fori_traced_bound", "f = jax.grad(lambda x, n: lax.fori_loop(0, n, "
             "lambda i, c: c * x, x))", "(jnp.float32(1.1), jnp.int32(3))"),
        Case("error/vjp_while", "def f(x):\n    y, vjp = jax.vjp(lambda x: lax.while_loop("
             "lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * c[1]), (0, x))[1], x)\n"
             "    return vjp(jnp.ones_like(y))", "(mixed(2),)"),
        Case("error/associative_scan_axis_mismatch", "def f(a, b):\n    return "
             "lax.associative_scan(lambda x, y: (x[0] + y[0], x[1] + y[1]), (a, b))",
             "(arange(3), arange(4))"),
        Case("error/map_mismatched_leading", "def f(a, b):\n    return lax.map(lambda t: t[0] + "
             "t[1][0], (a, b))", "(arange(3), arange(4, 1))"),
    ]


CASES: list[Case] = [*_cond(), *_switch(), *_while(), *_fori(), *_scan(), *_map_assoc(),
                     *_grad(), *_jvp(), *_vmap(), *_nested(), *_realistic(), *_errors()]
