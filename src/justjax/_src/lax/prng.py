"""PRNG keys as JAX has them: the `key<fry>` dtype, key arrays, the `random_*` primitives
and the `threefry2x32` hash (Random123's Threefry-2x32, 20 rounds).

A key array of shape S is stored as a "base" uint32 array of shape S + (2,). Tracing sees
the logical type (`key<fry>[S]`, as jaxprs print it); lowering and the backends see the
physical one (`tensor<S x 2 x ui32>`): each `random_*` primitive lowers by tracing its
physical implementation (written with lax on base arrays, every leading key dimension
handled by broadcasting), and shape primitives on keys (slice, reshape, broadcast,
gather, ...) lower through `physical_lowerings` with one trailing dimension more.

Partitionable threefry (JAX's default, config `jax_threefry_partitionable`): element i of
a result uses the counter pair (i >> 32, i & 0xFFFFFFFF); the legacy mode hashes the
counters 0..n-1 split into two halves.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import elementwise as ew
from justjax._src.lax import gather_scatter, reductions, selection, slicing, structural
from justjax._src.lax.utils import broadcast_shapes, broadcast_shapes_or_error
from justjax._src.runtime.array import Array

__all__ = ["KeyTy", "PRNGImpl", "PRNGKeyArray", "random_bits", "random_bits_p",
           "random_clone", "random_clone_p", "random_fold_in", "random_fold_in_p",
           "random_seed", "random_seed_p", "random_split", "random_split_p", "random_unwrap",
           "random_unwrap_p", "random_wrap", "random_wrap_p", "threefry2x32_p",
           "threefry_2x32", "threefry_prng_impl"]

UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


# ---------------------------------------------------------------------------------------------
# threefry2x32: the hash, elementwise over its four uint32 operands (broadcast as lax does).

threefry2x32_p = core.Primitive("threefry2x32", multiple_results=True)


def _threefry2x32_abstract_eval(*avals: ShapedArray) -> list[ShapedArray]:
    if any(a.dtype != dtypes.uint32 for a in avals):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {list(avals)}")
    shapes = [a.shape for a in avals if a.shape] or [()]
    shape = broadcast_shapes_or_error("threefry2x32", *shapes)
    return [ShapedArray(shape, dtypes.uint32)] * 2


threefry2x32_p.def_abstract_eval(_threefry2x32_abstract_eval)
dispatch.def_backend_impl(threefry2x32_p)
batching.defbroadcasting(threefry2x32_p)

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _u32(value: int) -> np.ndarray:
    return np.array(value, np.uint32)


def _rotate_left(x: Any, d: int) -> Any:
    return ew.bitwise_or(ew.shift_left(x, _u32(d)), ew.shift_right_logical(x, _u32(32 - d)))


def _threefry2x32_rounds(key1: Any, key2: Any, x1: Any, x2: Any) -> list[Any]:
    """The 20 rounds, unrolled: five groups of four, the key schedule injected after each."""
    shape = broadcast_shapes(*[np.shape(v) for v in (key1, key2, x1, x2)])
    # lax broadcasting: a scalar, or an operand of the same rank with size-1 dimensions.
    key1, key2, x1, x2 = [
        v if np.shape(v) == shape else
        structural.broadcast_in_dim(v, shape, tuple(range(np.ndim(v))))
        for v in (key1, key2, x1, x2)]
    ks = [key1, key2, ew.bitwise_xor(ew.bitwise_xor(key1, key2), _u32(0x1BD11BDA))]
    x = [ew.add(x1, ks[0]), ew.add(x2, ks[1])]
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x[0] = ew.add(x[0], x[1])
            x[1] = ew.bitwise_xor(x[0], _rotate_left(x[1], r))
        x[0] = ew.add(x[0], ks[(group + 1) % 3])
        x[1] = ew.add(ew.add(x[1], ks[(group + 2) % 3]), _u32(group + 1))
    return x


# Straight-line uint32 adds, rotates and xors (no loop: XLA's CPU code for it is a loop of
# five steps; unrolled, every op is a plain elementwise op for the fuser).
lowering.register_lowering(threefry2x32_p, lowering.lower_fun(_threefry2x32_rounds))


def threefry_2x32(keypair: Any, count: Any) -> Any:
    """The Threefry-2x32 hash of the uint32 array `count` under the uint32[2] key `keypair`:
    the flattened counters (padded to even length) are split into two halves hashed as
    pairs, then joined back into `count`'s shape (JAX's `threefry_2x32`)."""
    key1 = structural.squeeze(slicing.slice(keypair, (0,), (1,)), (0,))
    key2 = structural.squeeze(slicing.slice(keypair, (1,), (2,)), (0,))
    flat = structural.reshape(count, (math.prod(np.shape(count)),))
    odd = flat.shape[0] % 2
    if odd:
        flat = structural.concatenate([flat, np.zeros((1,), np.uint32)], 0)
    half = flat.shape[0] // 2
    y1, y2 = threefry2x32_p.bind(key1, key2, slicing.slice(flat, (0,), (half,)),
                                 slicing.slice(flat, (half,), (2 * half,)))
    out = structural.concatenate([y1, y2], 0)
    if odd:
        out = slicing.slice(out, (0,), (2 * half - 1,))
    return structural.reshape(out, np.shape(count))


# ---------------------------------------------------------------------------------------------
# The threefry implementation on base arrays with any leading key dimensions: `keys` has
# shape K + (2,); results have K first.

def _key_words(keys: Any, trailing: int) -> tuple[Any, Any]:
    """The two key words of shape K, with `trailing` size-1 dimensions after them."""
    shape = np.shape(keys)[:-1]
    words = []
    for i in range(2):
        word = structural.squeeze(
            slicing.slice(keys, (*(0,) * len(shape), i), (*shape, i + 1), None), (len(shape),))
        words.append(structural.reshape(word, (*shape, *(1,) * trailing)))
    return words[0], words[1]


def _iota_2x32(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The counter pair (i >> 32, i & 0xFFFFFFFF) of each element's flat index i. Arrays of
    2**32 elements and more do not fit in memory here, so the high words are zeros."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise ValueError(f"random bits array of size {size} exceeds 2 ** 32 elements")
    flat = structural.iota(np.uint32, size)
    lo = structural.reshape(flat, shape)
    return structural.broadcast_in_dim(_u32(0), shape, ()), lo


def _hash_batched(keys: Any, hi: Any, lo: Any) -> tuple[Any, Any]:
    """threefry2x32 of every key (shape K) with every counter pair (shape S): K + S."""
    k_shape = np.shape(keys)[:-1]
    c_shape = np.shape(lo)
    k1, k2 = _key_words(keys, len(c_shape))
    out_shape = (*k_shape, *c_shape)
    dims = tuple(range(len(k_shape), len(out_shape)))
    k1, k2 = [structural.broadcast_in_dim(k, out_shape, tuple(range(len(out_shape))))
              for k in (k1, k2)]
    hi, lo = [structural.broadcast_in_dim(c, out_shape, dims) for c in (hi, lo)]
    y1, y2 = threefry2x32_p.bind(k1, k2, hi, lo)
    return y1, y2


def _hash_counts_legacy(keys: Any, count: Any) -> Any:
    """`threefry_2x32(key, count)` for every key (shape K) and a 1-d `count`: K + count."""
    k_shape = np.shape(keys)[:-1]
    n = np.shape(count)[0]
    odd = n % 2
    if odd:
        count = structural.concatenate([count, np.zeros((1,), np.uint32)], 0)
    half = (n + odd) // 2
    first = slicing.slice(count, (0,), (half,))
    second = slicing.slice(count, (half,), (2 * half,))
    y1, y2 = _hash_batched(keys, structural.reshape(first, (half,)),
                           structural.reshape(second, (half,)))
    out = structural.concatenate([y1, y2], len(k_shape))
    if odd:
        out = slicing.slice(out, (0,) * (len(k_shape) + 1), (*k_shape, n), None)
    return out


def _stack_last(a: Any, b: Any) -> Any:
    shape = (*np.shape(a), 1)
    return structural.concatenate([structural.reshape(a, shape), structural.reshape(b, shape)],
                                  len(shape) - 1)


def threefry_seed(seeds: Any) -> Any:
    """Base arrays (shape + (2,)) of keys made from integer seeds: the high and low 32-bit
    words of each seed (the high word 0 for seeds of 32 bits or fewer).

    Raises:
      TypeError: the seeds are not integers (checked here, when the keys are computed, as
        JAX does: tracing `random_seed` of a float succeeds).
    """
    seeds_dtype = np.dtype(seeds.dtype)
    if not dtypes.is_int(seeds_dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds!r}")
    lo = structural.convert_element_type(seeds, np.uint32)
    if seeds_dtype.itemsize == 8:
        shifted = ew.shift_right_logical(seeds, np.array(32, seeds_dtype))
        hi = structural.convert_element_type(shifted, np.uint32)
    else:
        hi = structural.broadcast_in_dim(_u32(0), np.shape(seeds), ())
    return _stack_last(hi, lo)


def threefry_split(keys: Any, shape: tuple[int, ...]) -> Any:
    """Base arrays K + shape + (2,) of new keys split from each key."""
    # `split(k, 2.0)` traces (as in JAX) and fails here, when the keys are computed.
    shape = tuple(operator.index(d) for d in shape)
    k_shape = np.shape(keys)[:-1]
    if config.read("jax_threefry_partitionable"):
        y1, y2 = _hash_batched(keys, *_iota_2x32(shape))
        return _stack_last(y1, y2)
    num = math.prod(shape)
    bits = _hash_counts_legacy(keys, structural.iota(np.uint32, num * 2))
    return structural.reshape(bits, (*k_shape, *shape, 2))


def threefry_fold_in(keys: Any, msgs: Any) -> Any:
    """Base arrays of keys with uint32 `msgs` (shape K) folded in: the hash of the counter
    pair (0, msg)."""
    shape = np.shape(keys)[:-1]
    k1, k2 = _key_words(keys, 0)
    zeros = structural.broadcast_in_dim(_u32(0), shape, ())
    y1, y2 = threefry2x32_p.bind(k1, k2, zeros, msgs)
    return _stack_last(y1, y2)


def threefry_random_bits(keys: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """`bit_width`-bit random unsigned integers of shape K + `shape` from each key."""
    dtype = UINT_DTYPES[bit_width]
    k_shape = np.shape(keys)[:-1]
    if config.read("jax_threefry_partitionable"):
        y1, y2 = _hash_batched(keys, *_iota_2x32(shape))
        if bit_width == 64:
            hi = structural.convert_element_type(y1, dtype)
            lo = structural.convert_element_type(y2, dtype)
            return ew.bitwise_or(ew.shift_left(hi, np.array(32, dtype)), lo)
        bits = ew.bitwise_xor(y1, y2)
        return bits if bit_width == 32 else structural.convert_element_type(bits, dtype)
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    if words >= 2 ** 32 - 1:
        raise ValueError(f"random bits array of {words} 32-bit words exceeds 2 ** 32 - 1")
    bits = _hash_counts_legacy(keys, structural.iota(np.uint32, words))
    if bit_width == 64:
        half = words // 2
        starts = (0,) * len(k_shape)
        hi = slicing.slice(bits, (*starts, 0), (*k_shape, half), None)
        lo = slicing.slice(bits, (*starts, half), (*k_shape, words), None)
        hi, lo = [structural.convert_element_type(v, dtype) for v in (hi, lo)]
        bits = ew.bitwise_or(ew.shift_left(hi, np.array(32, dtype)), lo)
    elif bit_width in (8, 16):
        # Each 32-bit word gives 32 // bit_width values, lowest bits first (a little-endian
        # view of the words as narrower integers).
        per_word = 32 // bit_width
        spread = structural.broadcast_in_dim(bits, (*k_shape, words, per_word),
                                             tuple(range(len(k_shape) + 1)))
        offsets = ew.mul(_u32(bit_width), structural.broadcasted_iota(
            np.uint32, (*k_shape, words, per_word), len(k_shape) + 1))
        parts = ew.bitwise_and(ew.shift_right_logical(spread, offsets),
                               _u32(np.iinfo(dtype).max))
        parts = structural.reshape(parts, (*k_shape, words * per_word))
        parts = structural.convert_element_type(parts, dtype)
        bits = slicing.slice(parts, (0,) * (len(k_shape) + 1), (*k_shape, size), None)
    return structural.reshape(bits, (*k_shape, *shape))


class PRNGImpl:
    """A PRNG implementation: its key shape, name and tag, and its functions on base arrays
    (each taking any leading key dimensions)."""

    def __init__(self, key_shape: tuple[int, ...], seed: Callable, split: Callable,
                 random_bits: Callable, fold_in: Callable, name: str, tag: str) -> None:
        self.key_shape = key_shape
        self.seed = seed
        self.split = split
        self.random_bits = random_bits
        self.fold_in = fold_in
        self.name = name
        self.tag = tag

    def __str__(self) -> str:
        # How a jaxpr prints the `impl` param: `random_wrap[impl=fry]`.
        return self.tag

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={_field_repr(getattr(self, name))}"
            for name in ("key_shape", "seed", "split", "random_bits", "fold_in", "name", "tag"))
        return f"PRNGImpl({fields})"


def _field_repr(value: Any) -> str:
    if callable(value):
        return f"<function {value.__name__} at {hex(id(value))}>"
    return repr(value)


threefry_prng_impl = PRNGImpl(key_shape=(2,), seed=threefry_seed, split=threefry_split,
                              random_bits=threefry_random_bits, fold_in=threefry_fold_in,
                              name="threefry2x32", tag="fry")
PRNG_IMPLS = {threefry_prng_impl.name: threefry_prng_impl}


# ---------------------------------------------------------------------------------------------
# The key dtype and key arrays.

class KeyTy(dtypes.ExtendedDType):
    """The dtype of keys of one PRNG implementation: `key<fry>`."""

    type = dtypes.prng_key

    def __init__(self, impl: PRNGImpl) -> None:
        self._impl = impl
        self.name = f"key<{impl.tag}>"
        self.physical_shape = impl.key_shape
        self.physical_dtype = dtypes.uint32

    def __eq__(self, other: object) -> bool:
        return type(other) is KeyTy and other._impl is self._impl

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl.name))


def keys_aval(impl: PRNGImpl, shape: tuple[int, ...]) -> ShapedArray:
    return ShapedArray(shape, KeyTy(impl))


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The type of the base array of a key aval (other avals unchanged)."""
    dtype = aval.dtype
    if not isinstance(dtype, KeyTy):
        return aval
    return ShapedArray((*aval.shape, *dtype.physical_shape), dtype.physical_dtype)


class PRNGKeyArray:
    """A concrete array of typed PRNG keys, `Array((), dtype=key<fry>)`: a uint32 base
    array of shape `shape + (2,)` and the implementation that interprets it."""

    __slots__ = ("_impl", "_base_array", "aval")
    __array_priority__ = 100

    def __init__(self, impl: PRNGImpl, base_array: Array) -> None:
        self._impl = impl
        self._base_array = base_array
        shape = base_array.shape[:base_array.ndim - len(impl.key_shape)]
        self.aval = keys_aval(impl, shape)

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.itemsize)
    weak_type = False
    device = property(lambda self: self._base_array.device)
    sharding = property(lambda self: self._base_array.sharding)
    committed = property(lambda self: self._base_array.committed)

    def devices(self) -> set:
        return self._base_array.devices()

    def block_until_ready(self) -> PRNGKeyArray:
        self._base_array.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return self._base_array.is_deleted()

    def delete(self) -> None:
        self._base_array.delete()

    def unsafe_buffer_pointer(self) -> int:
        """The address of the buffer holding the key data (its base array's)."""
        return self._base_array.unsafe_buffer_pointer()

    def copy(self) -> PRNGKeyArray:
        return self

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'PRNGKeyArray'")

    def __repr__(self) -> str:
        return (f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n"
                f"{np.asarray(self._base_array)}")

    __str__ = __repr__


core.pytype_aval_mappings[PRNGKeyArray] = lambda x: x.aval
# Key arrays are `jax.Array`s, as in JAX.
Array.register(PRNGKeyArray)


def _physical_value(x: PRNGKeyArray) -> Array:
    return x._base_array


core.physical_value_handlers[PRNGKeyArray] = _physical_value


def _wrap_physical(aval: ShapedArray, base: Array) -> PRNGKeyArray:
    return PRNGKeyArray(aval.dtype._impl, base)


core.logical_value_handlers[KeyTy] = _wrap_physical


# ---------------------------------------------------------------------------------------------
# The primitives. Each lowers by tracing the implementation's function on base arrays.

def _lower_physical(fun: Callable[..., Any]) -> lowering.LoweringRule:
    """A lowering rule tracing `fun(*base arrays, **params)` on the physical avals."""
    inner = lowering.lower_fun(fun, multiple_results=False)

    def rule(ctx: lowering.LoweringRuleContext, *args: ir.Value, **params: Any) -> ir.Value:
        physical = ctx.replace(avals_in=tuple(physical_aval(a) for a in ctx.avals_in),
                               avals_out=tuple(physical_aval(a) for a in ctx.avals_out))
        return inner(physical, *args, **params)

    return rule


def _key_impl(aval: ShapedArray, name: str) -> PRNGImpl:
    if not isinstance(aval.dtype, KeyTy):
        raise TypeError(f"{name} takes a key array operand, got dtype "
                        f"{dtypes.dtype_name(aval.dtype)}")
    return aval.dtype._impl


random_seed_p = core.Primitive("random_seed")


def _random_seed_abstract_eval(seeds: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    return keys_aval(impl, seeds.shape)


random_seed_p.def_abstract_eval(_random_seed_abstract_eval)
dispatch.def_backend_impl(random_seed_p)
ad.defjvp_zero(random_seed_p)
batching.defvectorized(random_seed_p)
lowering.register_lowering(random_seed_p, _lower_physical(
    lambda seeds, *, impl: impl.seed(seeds)))


def random_seed(seeds: Any, impl: PRNGImpl) -> Any:
    """Keys made from integer seeds (JAX's `random_seed`)."""
    return random_seed_p.bind(seeds, impl=impl)


random_split_p = core.Primitive("random_split")


def _random_split_abstract_eval(keys: ShapedArray, *, shape: tuple[int, ...]) -> ShapedArray:
    impl = _key_impl(keys, "random_split")
    return keys_aval(impl, (*keys.shape, *shape))


random_split_p.def_abstract_eval(_random_split_abstract_eval)


def _random_split_impl(keys: Any, *, shape: tuple[int, ...]) -> Any:
    # Checked before the compiled-program cache, where (2.0,) would find (2,)'s program.
    shape = tuple(operator.index(d) for d in shape)
    return dispatch.apply_primitive(random_split_p, keys, shape=shape)


core.impl_rules[random_split_p] = _random_split_impl
ad.defjvp_zero(random_split_p)
batching.defvectorized(random_split_p)


def _random_split_lowering(ctx: lowering.LoweringRuleContext, keys: ir.Value, *,
                           shape: tuple[int, ...]) -> ir.Value:
    impl = ctx.avals_in[0].dtype._impl
    return _lower_physical(lambda k, *, shape: impl.split(k, shape))(ctx, keys, shape=shape)


lowering.register_lowering(random_split_p, _random_split_lowering)


def random_split(keys: Any, shape: tuple[int, ...]) -> Any:
    return random_split_p.bind(keys, shape=tuple(shape))


random_fold_in_p = core.Primitive("random_fold_in")


def _random_fold_in_abstract_eval(keys: ShapedArray, msgs: ShapedArray) -> ShapedArray:
    impl = _key_impl(keys, "random_fold_in")
    try:
        shape = broadcast_shapes(keys.shape, msgs.shape)
    except ValueError:
        raise TypeError("random_fold_in got incompatible shapes for broadcasting: "
                        f"{keys.shape}, {msgs.shape}.") from None
    return keys_aval(impl, tuple(shape))


random_fold_in_p.def_abstract_eval(_random_fold_in_abstract_eval)
dispatch.def_backend_impl(random_fold_in_p)
ad.defjvp_zero(random_fold_in_p)
batching.defbroadcasting(random_fold_in_p)


def _fold_in_physical(keys: Any, msgs: Any, *, impl: PRNGImpl) -> Any:
    shape = broadcast_shapes(np.shape(keys)[:-1], np.shape(msgs))
    keys = structural.broadcast_in_dim(
        keys, (*shape, *impl.key_shape),
        tuple(range(len(shape) + 1 - np.ndim(keys), len(shape) + 1)))
    if np.shape(msgs) != shape:
        msgs = structural.broadcast_in_dim(
            msgs, shape, tuple(range(len(shape) - np.ndim(msgs), len(shape))))
    return impl.fold_in(keys, msgs)


def _random_fold_in_lowering(ctx: lowering.LoweringRuleContext, keys: ir.Value,
                             msgs: ir.Value) -> ir.Value:
    impl = ctx.avals_in[0].dtype._impl
    return _lower_physical(lambda k, m: _fold_in_physical(k, m, impl=impl))(ctx, keys, msgs)


lowering.register_lowering(random_fold_in_p, _random_fold_in_lowering)


def random_fold_in(keys: Any, msgs: Any) -> Any:
    return random_fold_in_p.bind(keys, msgs)


random_bits_p = core.Primitive("random_bits")


def _random_bits_abstract_eval(keys: ShapedArray, *, bit_width: int, shape: tuple[int, ...]
                               ) -> ShapedArray:
    _key_impl(keys, "random_bits")
    return ShapedArray((*keys.shape, *shape), UINT_DTYPES[bit_width])


random_bits_p.def_abstract_eval(_random_bits_abstract_eval)
dispatch.def_backend_impl(random_bits_p)
ad.defjvp_zero(random_bits_p)
batching.defvectorized(random_bits_p)


def _random_bits_lowering(ctx: lowering.LoweringRuleContext, keys: ir.Value, *,
                          bit_width: int, shape: tuple[int, ...]) -> ir.Value:
    impl = ctx.avals_in[0].dtype._impl
    return _lower_physical(lambda k: impl.random_bits(k, bit_width, shape))(ctx, keys)


lowering.register_lowering(random_bits_p, _random_bits_lowering)


def random_bits(keys: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    return random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))


random_wrap_p = core.Primitive("random_wrap")


def _random_wrap_abstract_eval(base: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    key_shape = impl.key_shape
    if base.dtype not in (dtypes.uint32, dtypes.float0):
        raise TypeError(f"random_wrap expects a uint32 base array, got {base.dtype}")
    if base.shape[len(base.shape) - len(key_shape):] != key_shape:
        raise TypeError("random_wrap: base array shape must end with the key shape "
                        f"{key_shape}, got {base.shape}")
    return keys_aval(impl, base.shape[:len(base.shape) - len(key_shape)])


random_wrap_p.def_abstract_eval(_random_wrap_abstract_eval)
core.impl_rules[random_wrap_p] = lambda base, *, impl: PRNGKeyArray(impl, base)
ad.defjvp_zero(random_wrap_p)
lowering.register_lowering(random_wrap_p, lambda ctx, base, *, impl: base)


def _random_wrap_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                         dims: Sequence[int | None], *, impl: PRNGImpl) -> tuple[Any, int]:
    base = batching.bdim_at_front(vals[0], dims[0], axis_data.size)
    return random_wrap_p.bind(base, impl=impl), 0


batching.primitive_batchers[random_wrap_p] = _random_wrap_batcher


def random_wrap(base: Any, *, impl: PRNGImpl) -> Any:
    """Typed keys whose data is the uint32 array `base` (trailing dims the key shape)."""
    if not all(hasattr(base, attr) for attr in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {base}")
    aval = core.get_aval(base)
    if aval.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={aval.ndim}")
    if aval.shape[max(aval.ndim - len(impl.key_shape), 0):] != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {impl.key_shape}; got shape={aval.shape} for "
                        f"impl={impl!r}")
    if aval.dtype not in (dtypes.uint32, dtypes.float0):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={dtypes.dtype_name(aval.dtype)}")
    return random_wrap_p.bind(base, impl=impl)


random_unwrap_p = core.Primitive("random_unwrap")


def _random_unwrap_abstract_eval(keys: ShapedArray) -> ShapedArray:
    _key_impl(keys, "random_unwrap")
    return physical_aval(keys)


random_unwrap_p.def_abstract_eval(_random_unwrap_abstract_eval)
core.impl_rules[random_unwrap_p] = lambda keys: keys._base_array
ad.defjvp_zero(random_unwrap_p)
batching.defvectorized(random_unwrap_p)
lowering.register_lowering(random_unwrap_p, lambda ctx, keys: keys)


def random_unwrap(keys: Any) -> Any:
    if not dtypes.issubdtype(core.get_aval(keys).dtype, dtypes.prng_key):
        raise TypeError("random_unwrap takes key array operand, got "
                        f"keys.dtype={dtypes.dtype_name(core.get_aval(keys).dtype)}")
    return random_unwrap_p.bind(keys)


random_clone_p = core.Primitive("random_clone")
random_clone_p.def_abstract_eval(lambda keys: keys)
core.impl_rules[random_clone_p] = lambda keys: keys
ad.defjvp_zero(random_clone_p)
batching.defvectorized(random_clone_p)
lowering.register_lowering(random_clone_p, lambda ctx, keys: keys)


def random_clone(keys: Any) -> Any:
    return random_clone_p.bind(keys)


# ---------------------------------------------------------------------------------------------
# Shape primitives on key arrays lower as the same primitive on the base arrays, whose params
# gain the trailing key dimensions.

def _physical_lowering(physical_fun: Callable[..., Callable[..., Any]]) -> lowering.LoweringRule:
    """A rule lowering `physical_fun(key_shape, aval_in, aval_out, **params)`, a function of
    the base arrays, traced on the physical avals."""
    def rule(ctx: lowering.LoweringRuleContext, *args: ir.Value, **params: Any) -> Any:
        key_dtype = next(a.dtype for a in (*ctx.avals_in, *ctx.avals_out)
                         if isinstance(a.dtype, KeyTy))
        fun = physical_fun(key_dtype.physical_shape, ctx.avals_in, ctx.avals_out, **params)
        physical = ctx.replace(avals_in=tuple(physical_aval(a) for a in ctx.avals_in),
                               avals_out=tuple(physical_aval(a) for a in ctx.avals_out))
        return lowering.lower_fun(fun, multiple_results=False)(physical, *args)

    return rule


def _trailing(ks: tuple[int, ...], start: int) -> tuple[int, ...]:
    return tuple(range(start, start + len(ks)))


def _broadcast_in_dim_physical(ks, avals_in, avals_out, *, shape, broadcast_dimensions,
                               sharding):
    return lambda x: structural.broadcast_in_dim_p.bind(
        x, shape=(*shape, *ks), sharding=None,
        broadcast_dimensions=(*broadcast_dimensions, *_trailing(ks, len(shape))))


def _reshape_physical(ks, avals_in, avals_out, *, new_sizes, dimensions, sharding):
    def fun(x: Any) -> Any:
        if dimensions is not None:
            x = structural.transpose(x, (*dimensions, *_trailing(ks, len(dimensions))))
        return structural.reshape_p.bind(x, new_sizes=(*new_sizes, *ks), dimensions=None,
                                         sharding=None)
    return fun


def _same_params(primitive: core.Primitive) -> Callable[..., Callable[..., Any]]:
    """Primitives whose params name only leading dimensions (squeeze, concatenate, rev)."""
    return lambda ks, avals_in, avals_out, **params: (
        lambda *xs: primitive.bind(*xs, **params))


def _transpose_physical(ks, avals_in, avals_out, *, permutation):
    return lambda x: structural.transpose_p.bind(
        x, permutation=(*permutation, *_trailing(ks, len(permutation))))


def _slice_physical(ks, avals_in, avals_out, *, start_indices, limit_indices, strides):
    return lambda x: slicing.slice_p.bind(
        x, start_indices=(*start_indices, *(0,) * len(ks)), limit_indices=(*limit_indices, *ks),
        strides=None if strides is None else (*strides, *(1,) * len(ks)))


def _zero_index(index: Any) -> Any:
    return np.zeros((), core.get_aval(index).dtype)


def _dynamic_slice_physical(ks, avals_in, avals_out, *, slice_sizes):
    return lambda x, *idx: slicing.dynamic_slice_p.bind(
        x, *idx, *[_zero_index(idx[0])] * len(ks), slice_sizes=(*slice_sizes, *ks))


def _dynamic_update_slice_physical(ks, avals_in, avals_out):
    return lambda x, update, *idx: slicing.dynamic_update_slice_p.bind(
        x, update, *idx, *[_zero_index(idx[0])] * len(ks))


def _select_n_physical(ks, avals_in, avals_out):
    def fun(which: Any, *cases: Any) -> Any:
        if np.ndim(which):
            shape = np.shape(cases[0])
            which = structural.broadcast_in_dim(which, shape, tuple(range(np.ndim(which))))
        return selection.select_n_p.bind(which, *cases)
    return fun


def _gather_physical(ks, avals_in, avals_out, *, dimension_numbers, slice_sizes, **params):
    out_ndim = len(avals_out[0].shape)
    dn = dimension_numbers._replace(
        offset_dims=(*dimension_numbers.offset_dims, *_trailing(ks, out_ndim)))
    return lambda x, idx: gather_scatter.gather_p.bind(x, idx, dimension_numbers=dn,
                                                slice_sizes=(*slice_sizes, *ks), **params)


def _compare_physical(primitive: core.Primitive, reduce: Callable[..., Any]):
    """Keys are equal when all their words are: compare the base arrays (broadcast to the
    result's shape), then reduce over the key dimensions."""
    def make(ks, avals_in, avals_out):
        shape = avals_out[0].shape
        full = (*shape, *ks)

        def fun(x: Any, y: Any) -> Any:
            x, y = [structural.broadcast_in_dim(v, full, tuple(
                range(len(full) - np.ndim(v), len(full)))) if np.shape(v) != full else v
                for v in (x, y)]
            return reduce(primitive.bind(x, y), _trailing(ks, len(shape)))
        return fun
    return make


for _prim, _fun in [
        (ew.eq_p, _compare_physical(ew.eq_p, reductions.reduce_and)),
        (ew.ne_p, _compare_physical(ew.ne_p, reductions.reduce_or)),
        (structural.broadcast_in_dim_p, _broadcast_in_dim_physical),
        (structural.reshape_p, _reshape_physical),
        (structural.squeeze_p, _same_params(structural.squeeze_p)),
        (structural.concatenate_p, _same_params(structural.concatenate_p)),
        (structural.copy_p, _same_params(structural.copy_p)),
        (slicing.rev_p, _same_params(slicing.rev_p)),
        (structural.transpose_p, _transpose_physical),
        (slicing.slice_p, _slice_physical),
        (slicing.dynamic_slice_p, _dynamic_slice_physical),
        (slicing.dynamic_update_slice_p, _dynamic_update_slice_physical),
        (selection.select_n_p, _select_n_physical),
        (gather_scatter.gather_p, _gather_physical)]:
    lowering.physical_lowerings[_prim] = _physical_lowering(_fun)
