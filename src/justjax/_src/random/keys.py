"""`jax.random`'s keys: `key` (typed keys, `key<fry>[]`) and `PRNGKey` (raw uint32[2] keys),
`split`, `fold_in`, `clone`, `key_data`, `wrap_key_data`, `key_impl`, and `bits`, the source
of every distribution.

Every function accepts both kinds of key: a raw key is wrapped (`random_wrap`) on the way in
and the result unwrapped on the way out, so jaxprs show the typed primitives either way, as
in JAX.
"""
from __future__ import annotations

import warnings
from typing import Any, Hashable, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.lax import prng
from justjax._src.numpy import array_creation
from justjax._src.random.layout import lays_out

__all__ = ["PRNGKey", "bits", "clone", "fold_in", "key", "key_data", "key_dtype", "key_impl",
           "split", "wrap_key_data"]

_LEGACY_KEY_MESSAGE = ("Legacy uint32 key array passed as key to jax.random function. Please "
                       "create keys using jax.random.key(). If use of a raw key array was "
                       "intended, set jax_legacy_prng_key=\"allow\".")


def default_prng_impl() -> prng.PRNGImpl:
    """The implementation `jax_default_prng_impl` names."""
    return prng.PRNG_IMPLS[config.read("jax_default_prng_impl")]


class PRNGSpec:
    """Specifies a PRNG key implementation (what `key_impl` returns for unregistered ones)."""

    __slots__ = ("_impl",)

    def __init__(self, impl: prng.PRNGImpl) -> None:
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self) -> str:
        return str(self._impl)

    def __hash__(self) -> int:
        return hash(self._impl)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def resolve_prng_impl(impl_spec: Any) -> prng.PRNGImpl:
    """The implementation named by `impl_spec`: None (the default), a name, a `PRNGSpec`, a
    key dtype or an implementation."""
    if impl_spec is None:
        return default_prng_impl()
    if type(impl_spec) is prng.PRNGImpl:
        return impl_spec
    if type(impl_spec) is PRNGSpec:
        return impl_spec._impl
    if isinstance(impl_spec, prng.KeyTy):
        return impl_spec._impl
    if type(impl_spec) is str:
        if impl_spec in prng.PRNG_IMPLS:
            return prng.PRNG_IMPLS[impl_spec]
        names = ", ".join(f'"{s}"' for s in prng.PRNG_IMPLS)
        raise ValueError(f'unrecognized PRNG implementation "{impl_spec}". '
                         f"Did you mean one of: {names}?")
    raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")


def key_dtype(impl_spec: Hashable | None = None) -> prng.KeyTy:
    """The dtype of keys of a PRNG implementation."""
    return prng.KeyTy(resolve_prng_impl(impl_spec))


def is_typed_key(x: Any) -> bool:
    aval = getattr(x, "aval", None)
    return aval is not None and dtypes.issubdtype(aval.dtype, dtypes.prng_key)


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """`key` as a typed key array, and whether it was a raw key (wrapped here).

    Raises:
      TypeError: `key` is not an array.
      ValueError: a batch of keys where one key is expected, or a raw key while
        `jax_legacy_prng_key` is "error".
    """
    if is_typed_key(key):
        typed, wrapped = key, False
    elif _arraylike(key):
        typed = prng.random_wrap(key, impl=default_prng_impl())
        wrapped = True
        mode = config.read("jax_legacy_prng_key")
        if mode == "error":
            raise ValueError(_LEGACY_KEY_MESSAGE)
        if mode == "warn":
            warnings.warn(_LEGACY_KEY_MESSAGE, stacklevel=3)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and core.get_aval(typed).ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{np.shape(key)} != (). Use jax.vmap for batching.")
    return typed, wrapped


def _arraylike(x: Any) -> bool:
    # As JAX's test: arrays and anything NumPy calls a scalar (strings too, which then fail
    # random_wrap's key data check).
    return isinstance(x, np.ndarray) or hasattr(x, "aval") or np.isscalar(x)


def return_prng_keys(was_wrapped: bool, keys: Any) -> Any:
    """Keys in the kind they came in: raw if the caller gave a raw key."""
    return prng.random_unwrap(keys) if was_wrapped else keys


def _key(ctor_name: str, seed: Any, impl_spec: Any) -> Any:
    impl = resolve_prng_impl(impl_spec)
    if is_typed_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    # A Python int (or bool) goes through int64 first, so large hashes wrap rather than
    # overflow without x64 (as JAX does). A non-integer seed fails when the keys are made.
    if isinstance(seed, int):
        seeds = array_creation.asarray(np.int64(seed) if -2 ** 63 <= seed < 2 ** 63
                                       else np.uint64(seed))
    else:
        seeds = array_creation.asarray(seed)
    return prng.random_seed(seeds, impl=impl)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """A typed PRNG key (`key<fry>[]`) made from an integer seed.

    Args:
      seed: a 64- or 32-bit integer.
      impl: the PRNG implementation (deprecated in favour of `dtype`).
      dtype: a key dtype or implementation name, e.g. "threefry2x32".
    Returns:
      A scalar key array.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 -- JAX's name
    """A raw (legacy) PRNG key, a uint32[2] array: the seed's high and low 32-bit words.

    Args:
      seed: a 64- or 32-bit integer.
      impl: the PRNG implementation.
    Returns:
      The key data, uint32[2].
    """
    return return_prng_keys(True, _key("PRNGKey", seed, impl))


def fold_in(key: Any, data: Any) -> Any:
    """A new key that is a function of `key` and the 32-bit integer `data`."""
    typed, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    out = prng.random_fold_in(typed, array_creation.asarray(data, dtype="uint32"))
    return return_prng_keys(wrapped, out)


def split_typed(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`split` on a typed key, for use within samplers."""
    if core.get_aval(key).ndim:
        raise TypeError("split accepts a single key, but was given a key array of shape "
                        f"{core.get_aval(key).shape} != (). Use jax.vmap for batching.")
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return prng.random_split(key, shape)


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """Splits a key into `num` new keys (a new leading axis; a tuple gives a shape).

    Args:
      key: a key (from `key`, `PRNGKey`, `split`, `fold_in`).
      num: a positive integer, or a tuple of them, the number (shape) of keys.
    Returns:
      The new keys, typed or raw like `key`.
    """
    typed, wrapped = check_prng_key("split", key)
    return return_prng_keys(wrapped, split_typed(typed, num))


def clone(key: Any) -> Any:
    """A copy of `key` that may be consumed separately (an identity outside stateful
    backends)."""
    typed, wrapped = check_prng_key("clone", key, allow_batched=True)
    return return_prng_keys(wrapped, prng.random_clone(typed))


def key_impl(keys: Any) -> Any:
    """The name of the implementation of `keys` ("threefry2x32")."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    impl = core.get_aval(typed).dtype._impl
    return impl.name if impl.name in prng.PRNG_IMPLS else PRNGSpec(impl)


def key_data(keys: Any) -> Any:
    """The uint32 data underlying a key array (shape `keys.shape + (2,)`)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return prng.random_unwrap(typed)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """Typed keys from their uint32 data (trailing dimensions the implementation's key
    shape)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    return prng.random_wrap(key_bits_array, impl=resolve_prng_impl(impl))


def random_bits(key: Any, bit_width: int, shape: Sequence[int]) -> Any:
    """Bits from a typed key, for the samplers."""
    return prng.random_bits(key, bit_width, tuple(shape))


@lays_out
def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None, *,
         out_sharding: Any = None) -> Any:
    """Uniform random bits as unsigned integers.

    Args:
      key: a key.
      shape: the result shape.
      dtype: an unsigned integer dtype (uint64 under x64, else uint32, by default).
    Returns:
      An array of `shape` and `dtype`.
    """
    typed, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.check_user_dtype(dtype)
    if not dtypes.is_unsigned(dtype):
        raise ValueError("dtype argument to `bits` must be an unsigned int dtype, got "
                         f"{dtypes.dtype_name(dtype)}")
    shape = core.canonicalize_shape(shape)
    return random_bits(typed, dtype.itemsize * 8, shape)
