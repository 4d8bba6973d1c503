"""Programs using `jax.random` (keys, bits, every distribution, under jit, vmap, grad, scan and
fori_loop, and JAX's errors), whose printed jaxprs, values, errors and StableHLO real JAX 0.10.2
recorded (`record_random_golden.py`, issue #7).

Cases have the conventions of `jit_program_corpus.py`: `source` defines `f`, `args` is an
expression for its argument tuple, both run in a namespace holding `jax`, `jnp`, `lax`, `np`,
`functools`, `random` (= `jax.random`) and the `PRELUDE` helpers (`arange`, `mixed`, `ints` and
`rawkey`). Titles are "<group>/<what>": keys, bits, legacy, x64, one group per distribution,
jit, vmap, grad, scan and error.

A case may run under flags (`Case.config`, merged over `GROUP_CONFIG`): the group `legacy` runs
with `jax_threefry_partitionable=False`, the group `x64` with `jax_enable_x64=True`. The flags
are set around executing the source, building the arguments and every recorded part, and
restored afterwards, by the recorder with JAX's config and by the test with justjax's.

Programs return key data (`random.key_data(k)`) rather than typed key arrays, except a few
whose jaxpr (`key<fry>[...]` types) is the point; the recorder encodes a typed key leaf as its
key type, shape and key data.
"""
from __future__ import annotations

import pathlib
import sys
from typing import Any, NamedTuple

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from jit_program_corpus import PRELUDE as _JIT_PRELUDE  # noqa: E402


class Case(NamedTuple):
    title: str
    source: str
    args: str
    config: tuple[tuple[str, Any], ...] = ()


# Flags a whole group runs under.
GROUP_CONFIG: dict[str, dict[str, Any]] = {
    "legacy": {"jax_threefry_partitionable": False},
    "x64": {"jax_enable_x64": True},
}

PRELUDE = _JIT_PRELUDE + '''
def rawkey(seed):
    """The raw key `PRNGKey(seed)` gives for 0 <= seed < 2**64, built with NumPy so arguments
    do not depend on the library under test."""
    return jnp.asarray(np.array([seed >> 32 & 0xFFFFFFFF, seed & 0xFFFFFFFF], dtype=np.uint32))
'''

K0 = "(rawkey(0),)"
K42 = "(rawkey(42),)"
TYPED1 = "(random.key(1),)"


def case_config(case: Case) -> dict[str, Any]:
    """The flags `case` runs under: its group's, then its own."""
    config = dict(GROUP_CONFIG.get(case.title.split("/")[0], {}))
    config.update(dict(case.config))
    return config


def _k(title: str, body: str, args: str = K0, config: tuple = ()) -> Case:
    """A program of one key `k` returning `body`."""
    return Case(title, f"def f(k):\n    return {body}", args, config)


def _thunk(title: str, body: str, config: tuple = ()) -> Case:
    """A program of no arguments returning `body`."""
    return Case(title, f"def f():\n    return {body}", "()", config)


def _keys() -> list[Case]:
    kd = "random.key_data"
    return [
        _thunk("keys/prngkey_0", "random.PRNGKey(0)"),
        _thunk("keys/prngkey_minus_1", "random.PRNGKey(-1)"),
        _thunk("keys/prngkey_2pow32_plus_5", "random.PRNGKey(2**32 + 5)"),
        _thunk("keys/prngkey_2pow63_minus_1", "random.PRNGKey(2**63 - 1)"),
        _thunk("keys/prngkey_numpy_int64_seed", "random.PRNGKey(np.int64(2**40 + 3))"),
        Case("keys/prngkey_traced_int32", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.int32(42),)"),
        Case("keys/prngkey_traced_negative", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.int32(-7),)"),
        Case("keys/prngkey_uint32_seed", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.uint32(4000000000),)"),
        Case("keys/prngkey_int8_seed", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.int8(-3),)"),
        _thunk("keys/key_0", f"{kd}(random.key(0))"),
        _thunk("keys/key_bool_seed", f"{kd}(random.key(True))"),
        Case("keys/key_traced_seed", f"def f(s):\n    return {kd}(random.key(s))",
             "(jnp.int32(123456),)"),
        _thunk("keys/key_typed_output", "random.key(42)"),
        _k("keys/key_data_of_raw_key", f"{kd}(k)", K42),
        _k("keys/key_data_of_typed_key", f"{kd}(k)", TYPED1),
        _k("keys/key_impl_typed", "jnp.asarray(random.key_impl(k) == 'threefry2x32')", TYPED1),
        _k("keys/key_impl_raw", "jnp.asarray(random.key_impl(k) == 'threefry2x32')"),
        _thunk("keys/key_dtype", "jnp.asarray(str(random.key_dtype()) == 'key<fry>')"),
        Case("keys/wrap_key_data", "def f(d):\n    return random.wrap_key_data(d)",
             "(jnp.asarray(np.array([1, 2], np.uint32)),)"),
        Case("keys/wrap_key_data_batch", f"def f(d):\n    return {kd}(random.split("
             "random.wrap_key_data(d)[1], 3))",
             "(jnp.asarray(np.arange(6, dtype=np.uint32).reshape(3, 2)),)"),
        _k("keys/split_default", "random.split(k)"),
        _k("keys/split_3", "random.split(k, 3)", K42),
        _k("keys/split_0", "random.split(k, 0)"),
        _k("keys/split_shape_2x3", "random.split(k, (2, 3))"),
        _k("keys/split_typed", f"{kd}(random.split(k, 4))", TYPED1),
        _k("keys/split_typed_output", "random.split(k, (2, 2))", TYPED1),
        _k("keys/fold_in_0", "random.fold_in(k, 0)"),
        _k("keys/fold_in_4", "random.fold_in(k, 4)"),
        _k("keys/fold_in_2pow31_plus_5", "random.fold_in(k, 2**31 + 5)", K42),
        _k("keys/fold_in_2pow32_minus_1", "random.fold_in(k, 2**32 - 1)"),
        _k("keys/fold_in_float_data", "random.fold_in(k, 1.5)"),
        Case("keys/fold_in_traced_int32", "def f(k, d):\n    return random.fold_in(k, d)",
             "(rawkey(0), jnp.int32(-5))"),
        Case("keys/fold_in_traced_uint32", "def f(k, d):\n    return random.fold_in(k, d)",
             "(rawkey(7), jnp.uint32(3000000000))"),
        _k("keys/fold_in_typed", f"{kd}(random.fold_in(k, 17))", TYPED1),
        _k("keys/clone", f"{kd}(random.clone(k))", TYPED1),
        _k("keys/index", f"{kd}(random.split(k, 4)[1])", TYPED1),
        _k("keys/slice", f"{kd}(random.split(k, 4)[1:3])", TYPED1),
        _k("keys/reshape", f"{kd}(random.split(k, 6).reshape(2, 3))", TYPED1),
        _thunk("keys/stack", f"{kd}(jnp.stack([random.key(0), random.key(1)]))"),
        _thunk("keys/concatenate", f"{kd}(jnp.concatenate([random.split(random.key(0)), "
               "random.split(random.key(5), 3)]))"),
        _k("keys/where", f"{kd}(jnp.where(jnp.array([True, False]), random.split(k), "
           "random.split(random.fold_in(k, 1))))", TYPED1),
        _k("keys/equal", "random.split(k) == random.split(k)[jnp.array([0, 0])]", TYPED1),
        _k("keys/shape_of_key_array", "jnp.array(random.split(k, (2, 3)).shape)", TYPED1),
        _k("keys/raw_vs_typed", "(random.split(k), random.key_data(random.split("
           "random.wrap_key_data(k))))"),
    ]


def _bits() -> list[Case]:
    return [
        _k("bits/scalar", "random.bits(k)"),
        _k("bits/shape_4", "random.bits(k, (4,))"),
        _k("bits/shape_2x3", "random.bits(k, (2, 3))", K42),
        _k("bits/shape_list", "random.bits(k, [2, 2])"),
        _k("bits/odd_count", "random.bits(k, (7,))"),
        _k("bits/empty", "random.bits(k, (0, 3))"),
        _k("bits/uint8", "random.bits(k, (5,), jnp.uint8)"),
        _k("bits/uint16", "random.bits(k, (2, 3), jnp.uint16)"),
        _k("bits/uint32_explicit", "random.bits(k, (3,), jnp.uint32)"),
        _k("bits/uint64_truncated_without_x64", "random.bits(k, (3,), jnp.uint64)"),
        _k("bits/typed_key", "random.bits(k, (4,))", TYPED1),
        _k("bits/after_split", "random.bits(random.split(k)[0], (3,))"),
    ]


def _legacy() -> list[Case]:
    x64 = (("jax_enable_x64", True),)
    return [
        _thunk("legacy/prngkey_0", "random.PRNGKey(0)"),
        _k("legacy/split_2", "random.split(k)"),
        _k("legacy/split_3", "random.split(k, 3)"),
        _k("legacy/split_shape_2x2", "random.split(k, (2, 2))", K42),
        _k("legacy/fold_in", "random.fold_in(k, 4)"),
        _k("legacy/bits_4", "random.bits(k, (4,))"),
        _k("legacy/bits_odd_count", "random.bits(k, (5,))", K42),
        _k("legacy/bits_uint8", "random.bits(k, (7,), jnp.uint8)"),
        _k("legacy/bits_uint16", "random.bits(k, (3,), jnp.uint16)"),
        _k("legacy/bits_uint64_x64", "random.bits(k, (3,), jnp.uint64)", config=x64),
        _k("legacy/uniform", "random.uniform(k, (3,))"),
        _k("legacy/normal", "random.normal(k, (2, 3))"),
        _k("legacy/randint", "random.randint(k, (3, 3), 0, 8)"),
        _k("legacy/permutation", "random.permutation(k, 6)"),
        _k("legacy/gamma", "random.gamma(k, jnp.array([0.5, 2.0, 9.0]))"),
        _k("legacy/typed_split", "random.key_data(random.split(k, 3))", TYPED1),
        Case("legacy/vmap_normal", "def f(ks):\n    return jax.vmap(lambda k: random.normal(k, "
             "(2,)))(ks)", "(jnp.asarray(np.arange(6, dtype=np.uint32).reshape(3, 2)),)"),
    ]


def _x64() -> list[Case]:
    return [
        _thunk("x64/prngkey_2pow63_minus_1", "random.PRNGKey(2**63 - 1)"),
        _thunk("x64/prngkey_2pow32_plus_5", "random.PRNGKey(2**32 + 5)"),
        _thunk("x64/prngkey_minus_1", "random.PRNGKey(-1)"),
        Case("x64/prngkey_traced_int64", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.int64(-(2**40) - 9),)"),
        Case("x64/prngkey_uint64_seed", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.uint64(2**63 + 12345),)"),
        _thunk("x64/key_2pow40", "random.key_data(random.key(2**40 + 1))"),
        Case("x64/fold_in_int64_data", "def f(k, d):\n    return random.fold_in(k, d)",
             "(rawkey(0), jnp.int64(2**40 + 1))"),
        _k("x64/bits_uint64", "random.bits(k, (3,), jnp.uint64)"),
        _k("x64/uniform_float64", "random.uniform(k, (3,), jnp.float64)"),
        _k("x64/uniform_bounds_float64", "random.uniform(k, (2, 2), jnp.float64, "
           "jnp.array([-1.0, 0.0]), 10.0)"),
        _k("x64/normal_float64", "random.normal(k, (4,), jnp.float64)"),
        _k("x64/normal_complex128", "random.normal(k, (2,), jnp.complex128)"),
        _k("x64/randint_int64", "random.randint(k, (4,), -2**40, 2**40, jnp.int64)"),
        _k("x64/randint_default_dtype", "random.randint(k, (4,), 0, 10)"),
        _k("x64/randint_uint64", "random.randint(k, (3,), 0, 2**62, jnp.uint64)"),
        _k("x64/gamma_float64", "random.gamma(k, jnp.array([0.3, 1.0, 4.0]), dtype=jnp.float64)"),
        _k("x64/truncated_normal_float64", "random.truncated_normal(k, -1.0, 2.0, (4,), "
           "jnp.float64)"),
        _k("x64/poisson_default_dtype", "random.poisson(k, 4.0, (4,))"),
        _k("x64/permutation", "random.permutation(k, 6)"),
        _k("x64/choice", "random.choice(k, 10, (4,), replace=False)"),
        _k("x64/categorical", "random.categorical(k, jnp.log(jnp.array([0.1, 0.2, 0.7])), "
           "shape=(5,))"),
        _k("x64/bernoulli", "random.bernoulli(k, 0.3, (5,))"),
        _k("x64/multivariate_normal_float64", "random.multivariate_normal(k, jnp.zeros(2), "
           "jnp.array([[2.0, 0.5], [0.5, 1.0]]), (3,), jnp.float64)"),
        _k("x64/orthogonal_float64", "random.orthogonal(k, 3, dtype=jnp.float64)"),
    ]


def _uniform_normal_randint() -> list[Case]:
    return [
        _k("uniform/scalar", "random.uniform(k)"),
        _k("uniform/shape_2x3", "random.uniform(k, (2, 3))", K42),
        _k("uniform/bounds", "random.uniform(k, (4,), minval=-2.0, maxval=3.0)"),
        _k("uniform/bounds_arrays", "random.uniform(k, (2, 3), minval=jnp.array([0.0, 1.0, "
           "2.0]), maxval=jnp.array([[3.0], [4.0]]))"),
        _k("uniform/float16", "random.uniform(k, (4,), jnp.float16)"),
        _k("uniform/bfloat16", "random.uniform(k, (4,), jnp.bfloat16, 1.0, 2.0)"),
        _k("uniform/typed_key", "random.uniform(k, (3,))", TYPED1),
        _k("normal/shape_3", "random.normal(k, (3,))"),
        _k("normal/shape_2x2_key42", "random.normal(k, (2, 2))", K42),
        _k("normal/float16", "random.normal(k, (4,), jnp.float16)"),
        _k("normal/bfloat16", "random.normal(k, (4,), jnp.bfloat16)"),
        _k("normal/complex64", "random.normal(k, (3,), jnp.complex64)"),
        _k("normal/typed_key", "random.normal(k)", TYPED1),
        _k("randint/known_3x3", "random.randint(k, (3, 3), 0, 8)"),
        _k("randint/negative_bounds", "random.randint(k, (5,), -10, -3)", K42),
        _k("randint/int8_beyond_dtype", "random.randint(k, (6,), -300, 300, jnp.int8)"),
        _k("randint/uint8_maxval_256", "random.randint(k, (6,), 0, 256, jnp.uint8)"),
        _k("randint/int16", "random.randint(k, (4,), -1000, 1000, jnp.int16)"),
        _k("randint/array_bounds", "random.randint(k, (2, 3), jnp.array([0, 10, 100]), "
           "jnp.array([[5], [1000]]))"),
        _k("randint/empty_range", "random.randint(k, (4,), 5, 2)"),
        _k("randint/full_int32_range", "random.randint(k, (4,), -2**31, 2**31 - 1)"),
    ]


def _discrete() -> list[Case]:
    logits = "jnp.log(jnp.array([0.1, 0.2, 0.3, 0.4]))"
    return [
        _k("bernoulli/default", "random.bernoulli(k)"),
        _k("bernoulli/shape", "random.bernoulli(k, 0.3, (2, 4))"),
        _k("bernoulli/p_array", "random.bernoulli(k, jnp.array([0.0, 0.25, 0.5, 1.0]))", K42),
        _k("bernoulli/p_array_broadcast", "random.bernoulli(k, jnp.array([0.1, 0.9]), (3, 2))"),
        _k("bernoulli/mode_high", "random.bernoulli(k, 0.5, (5,), mode='high')"),
        _k("categorical/shape", f"random.categorical(k, {logits}, shape=(6,))"),
        _k("categorical/batched_logits", "random.categorical(k, mixed(3, 4))"),
        _k("categorical/axis_0", "random.categorical(k, mixed(3, 4), axis=0)", K42),
        _k("categorical/neg_inf_logits", "random.categorical(k, jnp.array([0.0, -jnp.inf, "
           "1.0, -jnp.inf]), shape=(6,))"),
        _k("categorical/replace_false", f"random.categorical(k, {logits}, shape=(3,), "
           "replace=False)"),
        _k("categorical/shape_with_batch", "random.categorical(k, mixed(2, 3), shape=(4, 2))"),
        _k("categorical/mode_high", f"random.categorical(k, {logits}, shape=(4,), mode='high')"),
        _k("choice/int_replace", "random.choice(k, 5, (6,))"),
        _k("choice/int_no_replace", "random.choice(k, 10, (4,), replace=False)", K42),
        _k("choice/array_with_p", "random.choice(k, arange(4), (5,), p=jnp.array([0.1, 0.2, "
           "0.3, 0.4]))"),
        _k("choice/no_replace_with_p", "random.choice(k, arange(5), (3,), replace=False, "
           "p=jnp.array([0.1, 0.1, 0.2, 0.3, 0.3]))"),
        _k("choice/axis_1", "random.choice(k, arange(2, 5), (3,), axis=1)"),
        _k("choice/scalar_shape", "random.choice(k, ints(6))"),
        _k("choice/mode_high", "random.choice(k, 8, (3,), replace=False, mode='high')"),
        _k("permutation/int", "random.permutation(k, 6)"),
        _k("permutation/array", "random.permutation(k, arange(5))", K42),
        _k("permutation/axis_1", "random.permutation(k, arange(2, 4), axis=1)"),
        _k("permutation/independent", "random.permutation(k, arange(3, 4), axis=1, "
           "independent=True)"),
        _k("permutation/typed_key", "random.permutation(k, 4)", TYPED1),
        # `shuffle`, permutation's deprecated twin, is gone in 0.10.2.
        _thunk("permutation/shuffle_removed", "jnp.asarray(hasattr(random, 'shuffle'))"),
        _k("poisson/lam_3", "random.poisson(k, 3.0, (5,))"),
        _k("poisson/small_and_large", "random.poisson(k, jnp.array([0.0, 0.5, 5.0, 50.0, "
           "500.0]))", K42),
        _k("poisson/large_lam", "random.poisson(k, 1000.0, (4,))"),
        _k("poisson/int8", "random.poisson(k, 2.0, (4,), jnp.int8)"),
        _k("binomial/scalar_params", "random.binomial(k, 10.0, 0.3, (4,))"),
        _k("binomial/array_params", "random.binomial(k, jnp.array([5.0, 20.0, 100.0]), "
           "jnp.array([0.9, 0.5, 0.05]))", K42),
        _k("geometric/p_scalar", "random.geometric(k, 0.3, (5,))"),
        _k("geometric/p_array", "random.geometric(k, jnp.array([0.9, 0.5, 0.01]))"),
        _k("multinomial/one", "random.multinomial(k, 10.0, jnp.array([0.2, 0.3, 0.5]))"),
        _k("multinomial/shape", "random.multinomial(k, 10.0, jnp.array([0.2, 0.3, 0.5]), "
           "shape=(2, 3))", K42),
        _k("rademacher/int32", "random.rademacher(k, (6,))"),
        _k("rademacher/int8", "random.rademacher(k, (2, 3), jnp.int8)"),
    ]


def _continuous() -> list[Case]:
    return [
        _k("truncated_normal/scalar_bounds", "random.truncated_normal(k, -1.0, 2.0, (4,))"),
        _k("truncated_normal/array_bounds", "random.truncated_normal(k, jnp.array([-3.0, "
           "0.0, 1.0]), jnp.array([-2.0, 0.5, 4.0]))", K42),
        _k("truncated_normal/float16", "random.truncated_normal(k, -2.0, 2.0, (3,), "
           "jnp.float16)"),
        _k("exponential/shape", "random.exponential(k, (4,))"),
        _k("exponential/float16", "random.exponential(k, (3,), jnp.float16)"),
        _k("exponential/bfloat16", "random.exponential(k, (3,), jnp.bfloat16)", K42),
        _k("gumbel/default", "random.gumbel(k, (4,))"),
        _k("gumbel/mode_low", "random.gumbel(k, (4,), mode='low')"),
        _k("gumbel/mode_high", "random.gumbel(k, (4,), mode='high')"),
        _k("laplace/shape", "random.laplace(k, (4,))"),
        _k("laplace/bfloat16", "random.laplace(k, (3,), jnp.bfloat16)"),
        _k("logistic/shape", "random.logistic(k, (4,))"),
        _k("logistic/float16", "random.logistic(k, (3,), jnp.float16)"),
        _k("cauchy/shape", "random.cauchy(k, (4,))"),
        _k("cauchy/key42", "random.cauchy(k, (2, 2))", K42),
        _k("gamma/alpha_below_1", "random.gamma(k, 0.3, (4,))"),
        _k("gamma/alpha_array", "random.gamma(k, jnp.array([0.1, 1.0, 5.0, 50.0]))", K42),
        _k("gamma/alpha_broadcast", "random.gamma(k, jnp.array([0.5, 3.0]), (3, 2))"),
        _k("gamma/float16", "random.gamma(k, 2.0, (3,), jnp.float16)"),
        _k("loggamma/small_alpha", "random.loggamma(k, 0.05, (3,))"),
        _k("loggamma/alpha_array", "random.loggamma(k, jnp.array([0.5, 2.0, 20.0]))"),
        _k("beta/scalar", "random.beta(k, 2.0, 3.0, (4,))"),
        _k("beta/arrays", "random.beta(k, jnp.array([0.5, 1.0, 5.0]), jnp.array([0.5, 2.0, "
           "1.0]))", K42),
        _k("dirichlet/alpha_3", "random.dirichlet(k, jnp.array([1.0, 2.0, 3.0]))"),
        _k("dirichlet/shape", "random.dirichlet(k, jnp.array([0.5, 0.5]), (3,))", K42),
        _k("dirichlet/small_alpha", "random.dirichlet(k, jnp.array([0.01, 0.05, 0.1]))"),
        _k("multivariate_normal/cholesky", "random.multivariate_normal(k, jnp.array([1.0, "
           "-1.0]), jnp.array([[2.0, 0.5], [0.5, 1.0]]), (3,))"),
        _k("multivariate_normal/eigh", "random.multivariate_normal(k, jnp.zeros(3), "
           "jnp.diag(jnp.array([1.0, 2.0, 3.0])) + 0.1, (2,), method='eigh')"),
        _k("multivariate_normal/svd", "random.multivariate_normal(k, jnp.zeros(2), "
           "jnp.array([[2.0, 0.5], [0.5, 1.0]]), (2,), method='svd')", K42),
        _k("multivariate_normal/batched", "random.multivariate_normal(k, arange(2, 2), "
           "jnp.stack([jnp.eye(2), jnp.array([[1.0, 0.9], [0.9, 1.0]])]))"),
        _k("multivariate_normal/default_shape", "random.multivariate_normal(k, jnp.zeros(2), "
           "jnp.eye(2))"),
        _k("orthogonal/n_3", "random.orthogonal(k, 3)"),
        _k("orthogonal/batch", "random.orthogonal(k, 2, (2,))", K42),
        _k("orthogonal/m_2", "random.orthogonal(k, 3, m=2)"),
        _k("ball/d_3", "random.ball(k, 3)"),
        _k("ball/p_1_shape", "random.ball(k, 2, p=1, shape=(3,))"),
        _k("pareto/scalar_b", "random.pareto(k, 3.0, (4,))"),
        _k("weibull_min/params", "random.weibull_min(k, 1.0, 2.0, (4,))"),
        _k("t/df_3", "random.t(k, 3.0, (4,))"),
        _k("chisquare/df_2", "random.chisquare(k, 2.0, (4,))"),
        _k("f/dfs", "random.f(k, 3.0, 5.0, (4,))"),
        _k("generalized_normal/p_1_5", "random.generalized_normal(k, 1.5, (4,))"),
        _k("generalized_normal/p_3", "random.generalized_normal(k, 3.0, (3,))", K42),
        _k("double_sided_maxwell/params", "random.double_sided_maxwell(k, 1.0, 2.0, (4,))"),
        _k("maxwell/shape", "random.maxwell(k, (4,))"),
        _k("rayleigh/scale_2", "random.rayleigh(k, 2.0, (4,))"),
        _k("wald/mean", "random.wald(k, 1.5, (4,))"),
        _k("triangular/params", "random.triangular(k, 0.0, 0.5, 1.0, (4,))"),
        _k("lognormal/default", "random.lognormal(k, shape=(4,))"),
        _k("lognormal/sigma", "random.lognormal(k, 0.5, (3,))", K42),
    ]


def _jit() -> list[Case]:
    def jitted(title: str, body: str, args: str = K0) -> Case:
        return Case(f"jit/{title}", f"f = jax.jit(lambda k: {body})", args)
    return [
        jitted("split", "random.split(k, 3)"),
        jitted("uniform", "random.uniform(k, (3,))"),
        jitted("normal", "random.normal(k, (2, 2))"),
        jitted("randint", "random.randint(k, (4,), 0, 100)"),
        jitted("gamma", "random.gamma(k, jnp.array([0.5, 2.0]))"),
        jitted("categorical", "random.categorical(k, mixed(2, 5))"),
        jitted("permutation", "random.permutation(k, 5)"),
        jitted("typed_key_arg", "random.normal(k, (3,))", TYPED1),
        Case("jit/traced_fold_in_data", "@jax.jit\ndef f(k, i):\n    return random.uniform("
             "random.fold_in(k, i), (2,))", "(rawkey(0), jnp.int32(3))"),
        Case("jit/static_shape", "g = jax.jit(lambda k, n: random.normal(k, (n,)), "
             "static_argnums=1)\ndef f(k):\n    return g(k, 4)", K0),
        Case("jit/traced_seed", "f = jax.jit(lambda s: random.normal(random.PRNGKey(s), (3,)))",
             "(jnp.int32(5),)"),
    ]


_KEYS3 = "jnp.asarray(np.array([[0, 0], [0, 1], [5, 7]], np.uint32))"


def _vmap() -> list[Case]:
    def vm(title: str, body: str, args: str = f"({_KEYS3},)") -> Case:
        return Case(f"vmap/{title}", f"def f(ks):\n    return jax.vmap(lambda k: {body})(ks)",
                    args)
    return [
        vm("normal_over_keys", "random.normal(k, (2,))"),
        vm("split_over_keys", "random.split(k)"),
        vm("randint_over_keys", "random.randint(k, (2,), 0, 10)"),
        vm("gamma_over_keys", "random.gamma(k, 0.7, (2,))"),
        vm("permutation_over_keys", "random.permutation(k, 4)"),
        vm("typed_keys", "random.normal(k, (2,))", "(random.split(random.key(0), 3),)"),
        Case("vmap/split_keys_from_split", "def f(k):\n    return jax.vmap(lambda k: "
             "random.exponential(k, (2,)))(random.split(k, 4))", K0),
        Case("vmap/fold_in_over_data", "def f(k, d):\n    return jax.vmap(random.fold_in, "
             "in_axes=(None, 0))(k, d)", "(rawkey(0), jnp.arange(4, dtype=jnp.uint32))"),
        Case("vmap/prngkey_over_seeds", "def f(s):\n    return jax.vmap(random.PRNGKey)(s)",
             "(jnp.array([0, 1, -1, 42], dtype=jnp.int32),)"),
        Case("vmap/key_over_seeds", "def f(s):\n    return random.key_data(jax.vmap(random.key)"
             "(s))", "(jnp.array([3, 4], dtype=jnp.int32),)"),
        Case("vmap/gamma_over_alpha", "def f(k, a):\n    return jax.vmap(lambda a: "
             "random.gamma(k, a, (2,)))(a)", "(rawkey(0), jnp.array([0.2, 1.0, 8.0]))"),
        Case("vmap/uniform_over_bounds", "def f(k, lo, hi):\n    return jax.vmap(lambda lo, "
             "hi: random.uniform(k, (2,), minval=lo, maxval=hi))(lo, hi)",
             "(rawkey(0), jnp.array([0.0, -1.0, 5.0]), jnp.array([1.0, 1.0, 6.0]))"),
        Case("vmap/poisson_over_lam", "def f(k, lam):\n    return jax.vmap(lambda lam: "
             "random.poisson(k, lam, (2,)))(lam)", "(rawkey(0), jnp.array([1.0, 10.0, 200.0]))"),
        Case("vmap/bernoulli_keys_and_p", "def f(ks, p):\n    return jax.vmap(lambda k, p: "
             "random.bernoulli(k, p, (3,)))(ks, p)",
             f"({_KEYS3}, jnp.array([0.1, 0.5, 0.9]))"),
        Case("vmap/truncated_normal_bounds", "def f(k, lo):\n    return jax.vmap(lambda lo: "
             "random.truncated_normal(k, lo, lo + 1.0, (2,)), in_axes=0)(lo)",
             "(rawkey(0), jnp.array([-2.0, 0.0, 3.0]))"),
        Case("vmap/nested", "def f(k):\n    ks = random.split(k, (2, 3))\n    return "
             "jax.vmap(jax.vmap(lambda k: random.uniform(k, (2,))))(ks)", K0),
    ]


def _grad() -> list[Case]:
    key = "k = rawkey(0)\n"
    return [
        Case("grad/normal_loc_scale", key + "def f(loc, scale):\n    return jax.grad(lambda l, "
             "s: jnp.sum(jnp.sin(l + s * random.normal(k, (3,)))), argnums=(0, 1))(loc, scale)",
             "(jnp.float32(0.5), jnp.float32(2.0))"),
        Case("grad/uniform_bounds", key + "def f(lo, hi):\n    return jax.grad(lambda lo, hi: "
             "jnp.sum(random.uniform(k, (3,), minval=lo, maxval=hi) ** 2), argnums=(0, 1))"
             "(lo, hi)", "(jnp.float32(-1.0), jnp.float32(2.0))"),
        Case("grad/gamma_alpha", key + "def f(a):\n    return jax.grad(lambda a: "
             "jnp.sum(random.gamma(k, a)))(a)", "(jnp.array([0.3, 1.0, 4.0]),)"),
        Case("grad/gamma_alpha_scalar_jaxpr", key + "def f(a):\n    return jax.grad(lambda a: "
             "random.gamma(k, a))(a)", "(jnp.float32(2.5),)"),
        Case("grad/loggamma_alpha", key + "def f(a):\n    return jax.grad(lambda a: "
             "jnp.sum(random.loggamma(k, a, (2,))))(a)", "(jnp.float32(0.5),)"),
        Case("grad/beta_a", key + "def f(a, b):\n    return jax.grad(lambda a, b: "
             "jnp.sum(random.beta(k, a, b, (3,))), argnums=(0, 1))(a, b)",
             "(jnp.float32(2.0), jnp.float32(3.0))"),
        Case("grad/dirichlet_alpha", key + "def f(alpha):\n    return jax.grad(lambda a: "
             "random.dirichlet(k, a)[0])(alpha)", "(jnp.array([1.0, 2.0, 3.0]),)"),
        Case("grad/truncated_normal_bounds", key + "def f(lo, hi):\n    return jax.grad("
             "lambda lo, hi: jnp.sum(random.truncated_normal(k, lo, hi, (3,))), "
             "argnums=(0, 1))(lo, hi)", "(jnp.float32(-1.0), jnp.float32(1.5))"),
        Case("grad/exponential_rate", key + "def f(rate):\n    return jax.grad(lambda r: "
             "jnp.sum(random.exponential(k, (4,)) / r))(rate)", "(jnp.float32(2.0),)"),
        Case("grad/multivariate_normal_mean_cov", key + "def f(mean, cov):\n    return "
             "jax.grad(lambda m, c: jnp.sum(random.multivariate_normal(k, m, c, (2,)) ** 2), "
             "argnums=(0, 1))(mean, cov)",
             "(jnp.array([0.5, -0.5]), jnp.array([[2.0, 0.3], [0.3, 1.0]]))"),
        Case("grad/jvp_gamma", key + "def f(a, t):\n    return jax.jvp(lambda a: "
             "random.gamma(k, a), (a,), (t,))", "(jnp.array([0.5, 3.0]), jnp.array([1.0, 1.0]))"),
        Case("grad/value_and_grad_laplace_scale", key + "def f(s):\n    return "
             "jax.value_and_grad(lambda s: jnp.sum(s * random.laplace(k, (3,))))(s)",
             "(jnp.float32(1.5),)"),
    ]


def _scan() -> list[Case]:
    return [
        Case("scan/over_split_raw_keys", "def f(k):\n    def body(c, k):\n        x = "
             "random.normal(k)\n        return c + x, x\n    return lax.scan(body, 0.0, "
             "random.split(k, 4))", K0),
        Case("scan/over_split_typed_keys", "def f(k):\n    def body(c, k):\n        x = "
             "random.uniform(k, (2,))\n        return c * x, x\n    return lax.scan(body, "
             "jnp.ones(2), random.split(k, 3))", TYPED1),
        Case("scan/key_carry", "def f(k):\n    def body(k, _):\n        k, sub = random.split(k)"
             "\n        return k, random.randint(sub, (), 0, 100)\n    return lax.scan(body, k, "
             "None, length=4)", K0),
        Case("scan/typed_key_carry", "def f(k):\n    def body(k, _):\n        k, sub = "
             "random.split(k)\n        return k, random.bits(sub)\n    k, out = lax.scan(body, "
             "k, None, length=3)\n    return random.key_data(k), out", TYPED1),
        Case("scan/fori_fold_in", "def f(k):\n    return lax.fori_loop(0, 5, lambda i, acc: "
             "acc + random.uniform(random.fold_in(k, i)), 0.0)", K0),
        Case("scan/fori_split_carry", "def f(k):\n    def body(i, c):\n        k, x = c\n"
             "        k, sub = random.split(k)\n        return k, x + random.normal(sub, (2,))\n"
             "    return lax.fori_loop(0, 3, body, (k, jnp.zeros(2)))", K42),
        Case("scan/while_until_small", "def f(k):\n    def body(c):\n        k, x, n = c\n"
             "        k, sub = random.split(k)\n        return k, random.uniform(sub), n + 1\n"
             "    return lax.while_loop(lambda c: c[1] > 0.2, body, (k, 1.0, 0))", K0),
    ]


def _errors() -> list[Case]:
    return [
        _k("error/uniform_int_dtype", "random.uniform(k, (3,), jnp.int32)"),
        _k("error/normal_int_dtype", "random.normal(k, (3,), jnp.int32)"),
        _k("error/randint_float_dtype", "random.randint(k, (3,), 0, 5, jnp.float32)"),
        _k("error/bits_signed_dtype", "random.bits(k, (2,), jnp.int32)"),
        _k("error/gamma_int_dtype", "random.gamma(k, 1.0, (2,), jnp.int32)"),
        _k("error/truncated_normal_int_dtype", "random.truncated_normal(k, 0.0, 1.0, (2,), "
           "jnp.int32)"),
        _k("error/poisson_float_dtype", "random.poisson(k, 1.0, (2,), jnp.float32)"),
        _k("error/choice_too_many", "random.choice(k, 3, (5,), replace=False)"),
        _k("error/choice_p_wrong_size", "random.choice(k, 5, (3,), p=jnp.ones(4) / 4)"),
        _k("error/choice_empty_population", "random.choice(k, 0, (2,))"),
        _k("error/categorical_bad_axis", "random.categorical(k, jnp.zeros(3), axis=2)"),
        _k("error/categorical_shape_mismatch", "random.categorical(k, jnp.zeros((2, 3)), "
           "shape=(4,))"),
        _k("error/uniform_shape_not_broadcastable", "random.uniform(k, (3,), "
           "minval=jnp.zeros(4))"),
        _k("error/bernoulli_shape_mismatch", "random.bernoulli(k, jnp.full(3, 0.5), (2,))"),
        _k("error/multivariate_normal_bad_method", "random.multivariate_normal(k, "
           "jnp.zeros(2), jnp.eye(2), method='qr')"),
        _k("error/dirichlet_scalar_alpha", "random.dirichlet(k, jnp.float32(1.0))"),
        _k("error/orthogonal_negative_n", "random.orthogonal(k, -1)"),
        _k("error/split_float_key", "random.split(k)", "(jnp.zeros(2),)"),
        _k("error/split_wrong_shape_raw_key", "random.split(k)",
           "(jnp.zeros(3, dtype=jnp.uint32),)"),
        _k("error/split_key_array", "random.split(random.split(k), 2)", TYPED1),
        _k("error/split_float_num", "random.split(k, 2.0)"),
        _k("error/split_negative_num", "random.split(k, -1)"),
        _k("error/key_data_float_array", "random.key_data(k)", "(jnp.zeros(2),)"),
        _k("error/wrap_key_data_typed_key", "random.wrap_key_data(k)", TYPED1),
        _k("error/wrap_key_data_int32", "random.wrap_key_data(k)",
           "(jnp.zeros(2, dtype=jnp.int32),)"),
        _k("error/typed_key_arithmetic", "k + 1", TYPED1),
        _k("error/index_scalar_key", "k[0]", TYPED1),
        _k("error/fold_in_python_int_overflow", "random.fold_in(k, 2**32 + 3)"),
        _k("error/fold_in_negative_python_int", "random.fold_in(k, -1)"),
        Case("error/prngkey_float_seed", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.float32(1.5),)"),
        Case("error/prngkey_array_seed", "def f(s):\n    return random.PRNGKey(s)",
             "(jnp.arange(3),)"),
        Case("error/key_array_seed", "def f(s):\n    return random.key(s)",
             "(jnp.arange(3),)"),
        _k("error/randint_uint64_maxval_overflow", "random.randint(k, (3,), 0, 2**64, "
           "jnp.uint64)", config=(("jax_enable_x64", True),)),
        _k("error/permutation_independent_int", "random.permutation(k, 5, independent=True)"),
    ]


CASES: list[Case] = [*_keys(), *_bits(), *_legacy(), *_x64(), *_uniform_normal_randint(),
                     *_discrete(), *_continuous(), *_jit(), *_vmap(), *_grad(), *_scan(),
                     *_errors()]
