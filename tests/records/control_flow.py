"""Op records for the control-flow primitives (`cond`, `while`, `scan`) and the library
functions on them (`switch`, `fori_loop`, `map`, `associative_scan`), so the generic record
checks run them too: against NumPy, traced and jitted against eager, gradients to second
order against finite differences, vmap along every axis pattern, and (test_lowering_xla)
their StableHLO on real XLA. The control-flow specific columns (batched trip counts, grad of
a while raising, nestings) are in tests/test_control_flow.py."""
from __future__ import annotations

import numpy as np

import justjax.numpy as jnp
from justjax import lax
from tests.harness import BOOL, F32, I32, OpRecord, rand_default, rand_small_int


def _second(*dtypes_in: np.dtype) -> np.dtype:
    """The result has the dtype of the second argument (the first is a predicate/index)."""
    return dtypes_in[1]


def _cond(p, x):
    return lax.cond(p, lambda x: jnp.sin(x) * 2.0, jnp.cos, x)


def _np_cond(p, x):
    return np.sin(x) * 2.0 if p else np.cos(x)


_BRANCHES = (lambda x, y: x * y, lambda x, y: jnp.tanh(x) + y, lambda x, y: x - jnp.exp(y))
_NP_BRANCHES = (lambda x, y: x * y, lambda x, y: np.tanh(x) + y, lambda x, y: x - np.exp(y))


def _switch(i, x, y):
    return lax.switch(i, _BRANCHES, x, y)


def _np_switch(i, x, y):
    # rand_small_int draws 0..3: index 3 is out of range and clamps to the last branch.
    return _NP_BRANCHES[min(int(i), len(_NP_BRANCHES) - 1)](x, y)


def _while(n, x):
    body = lambda c: (c[0] + 1, jnp.sin(c[1]) * 0.5 + c[1])  # noqa: E731
    return lax.while_loop(lambda c: c[0] < n, body, (0, x))[1]


def _np_while(n, x):
    for _ in range(int(n)):
        x = np.sin(x) * 0.5 + x
    return x


def _fori(x):
    return lax.fori_loop(1, 4, lambda i, c: c * jnp.cos(c) + i, x)


def _np_fori(x):
    for i in range(1, 4):
        x = x * np.cos(x) + i
    return x


def _scan(c, xs):
    return lax.scan(lambda c, x: (c * jnp.tanh(x) + 0.5, c + x), c, xs)


def _np_scan(c, xs):
    ys = []
    for x in xs:
        c, y = c * np.tanh(x) + 0.5, c + x
        ys.append(y)
    return c, np.stack(ys)


def _map(xs):
    return lax.map(lambda r: r * jnp.sum(jnp.sin(r)), xs)


def _np_map(xs):
    return np.stack([r * np.sum(np.sin(r)) for r in xs])


def _cumsum(x):
    return lax.associative_scan(lambda a, b: a + b, x, axis=-1)


RECORDS = [
    OpRecord("control_flow_cond", _cond, _np_cond, [[(), (3,)], [(), (2, 3)]], [(BOOL, F32)],
             make_args=rand_default, expected_dtype=_second),
    OpRecord("control_flow_switch", _switch, _np_switch, [[(), (3,), (3,)]], [(I32, F32, F32)],
             make_args=[rand_small_int, rand_default, rand_default], expected_dtype=_second),
    OpRecord("control_flow_while", _while, _np_while, [[(), (3,)]], [(I32, F32)],
             make_args=[rand_small_int, rand_default], expected_dtype=_second,
             grad_modes=("fwd",)),
    OpRecord("control_flow_fori_loop", _fori, _np_fori, [[(3,)], [(2, 2)]], [F32]),
    OpRecord("control_flow_scan", _scan, _np_scan, [[(3,), (4, 3)], [(), (5,)]], [F32]),
    OpRecord("control_flow_map", _map, _np_map, [[(4, 3)]], [F32]),
    OpRecord("control_flow_associative_scan", _cumsum, lambda x: np.cumsum(x, axis=-1),
             [[(6,)], [(3, 5)]], [F32, I32]),
]
