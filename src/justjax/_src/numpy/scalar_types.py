"""jax.numpy's dtype objects: scalar types (`jnp.float32`, ...), dtype predicates and promotion.

JAX has no scalar objects: `jnp.float32(3)` is a 0-d Array, and `jnp.float32([1, 2])` an
array. The scalar types are classes (so they can be used wherever NumPy accepts a dtype:
`np.dtype(jnp.float32)`, `x.astype(jnp.float32)`) whose metaclass makes calling them build
arrays, and which compare and hash equal to the NumPy scalar types they stand for.
"""
from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np
from numpy import (  # NumPy's abstract scalar classes and constants, re-exported as jnp does.
    character as character,
    complexfloating as complexfloating,
    dtype as dtype,
    e as e,
    euler_gamma as euler_gamma,
    flexible as flexible,
    floating as floating,
    generic as generic,
    inexact as inexact,
    inf as inf,
    integer as integer,
    nan as nan,
    newaxis as newaxis,
    number as number,
    object_ as object_,
    pi as pi,
    signedinteger as signedinteger,
    unsignedinteger as unsignedinteger,
)

from justjax._src.config import config
from justjax._src.core import core, dtypes

__all__ = [
    "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4",
    "int_", "uint", "float_", "complex_", "single", "double", "csingle", "cdouble",
    "character", "complexfloating", "flexible", "floating", "generic", "inexact", "integer",
    "number", "object_", "signedinteger", "unsignedinteger",
    "dtype", "promote_types", "result_type", "issubdtype", "isdtype", "can_cast", "finfo",
    "iinfo", "pi", "e", "inf", "nan", "euler_gamma", "newaxis",
]

# Where the scalar types live publicly, so that pickling and repr find them.
_PUBLIC_MODULE = "justjax.numpy"


class _ScalarMeta(type):
    """Metaclass of the jnp scalar types: calling one makes an Array of that dtype."""

    dtype: np.dtype

    @property
    def __numpy_dtype__(cls) -> np.dtype:
        return cls.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        # Imported here: array_creation uses the dtype helpers of this module.
        from justjax._src.numpy.array_creation import asarray
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        # JAX's spelling, which its messages embed; `__module__` stays importable for pickle.
        return f"<class 'jax.numpy.{cls.__name__}'>"


def _scalar_meta_aval(x: Any) -> Any:
    raise TypeError(f"JAX scalar type {x} cannot be interpreted as a JAX array.")


core.pytype_aval_mappings[_ScalarMeta] = _scalar_meta_aval


def _make_scalar_type(np_scalar_type: type) -> _ScalarMeta:
    name = np_scalar_type.__name__
    scalar_type = _ScalarMeta(name, (object,), {"dtype": np.dtype(np_scalar_type)})
    scalar_type.__module__ = _PUBLIC_MODULE
    scalar_type.__doc__ = (
        f"A JAX scalar constructor of type {name}.\n\n"
        "  While NumPy defines scalar types for each data type, JAX represents\n"
        "  scalars as zero-dimensional arrays.\n  ")
    return scalar_type


bool_ = _make_scalar_type(np.bool_)
bool = bool_  # noqa: A001 -- jnp.bool is the same object as jnp.bool_
int8 = _make_scalar_type(np.int8)
int16 = _make_scalar_type(np.int16)
int32 = _make_scalar_type(np.int32)
int64 = _make_scalar_type(np.int64)
uint8 = _make_scalar_type(np.uint8)
uint16 = _make_scalar_type(np.uint16)
uint32 = _make_scalar_type(np.uint32)
uint64 = _make_scalar_type(np.uint64)
bfloat16 = _make_scalar_type(ml_dtypes.bfloat16)
float4_e2m1fn = _make_scalar_type(ml_dtypes.float4_e2m1fn)
float6_e2m3fn = _make_scalar_type(ml_dtypes.float6_e2m3fn)
float6_e3m2fn = _make_scalar_type(ml_dtypes.float6_e3m2fn)
float8_e3m4 = _make_scalar_type(ml_dtypes.float8_e3m4)
float8_e4m3 = _make_scalar_type(ml_dtypes.float8_e4m3)
float8_e4m3b11fnuz = _make_scalar_type(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _make_scalar_type(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz = _make_scalar_type(ml_dtypes.float8_e4m3fnuz)
float8_e5m2 = _make_scalar_type(ml_dtypes.float8_e5m2)
float8_e5m2fnuz = _make_scalar_type(ml_dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _make_scalar_type(ml_dtypes.float8_e8m0fnu)
int1 = _make_scalar_type(ml_dtypes.int1)
int2 = _make_scalar_type(ml_dtypes.int2)
int4 = _make_scalar_type(ml_dtypes.int4)
uint1 = _make_scalar_type(ml_dtypes.uint1)
uint2 = _make_scalar_type(ml_dtypes.uint2)
uint4 = _make_scalar_type(ml_dtypes.uint4)
float16 = _make_scalar_type(np.float16)
float32 = single = _make_scalar_type(np.float32)
float64 = double = _make_scalar_type(np.float64)
complex64 = csingle = _make_scalar_type(np.complex64)
complex128 = cdouble = _make_scalar_type(np.complex128)
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128

# A user's `dtype=` argument: checked and canonicalized in core (the lax layer needs it too).
check_and_canonicalize_user_dtype = dtypes.check_user_dtype


# ---------------------------------------------------------------------------------------------
# Promotion.

def _is_weak_python_type(x: Any) -> builtins.bool:
    return any(x is t for t in (int, float, complex))


def promote_types(a: Any, b: Any) -> np.dtype:
    """`jnp.promote_types`: the dtype both arguments promote to in JAX's lattice.

    Python `int`/`float`/`complex` stand for weak types, so `promote_types('uint8', int)` is
    uint8. 64-bit inputs are not canonicalized, but without x64 the lattice avoids forming a
    64-bit type from narrower ones (uint32 with a signed type gives int32, as in JAX).
    """
    a_node = a if _is_weak_python_type(a) else np.dtype(a)
    b_node = b if _is_weak_python_type(b) else np.dtype(b)
    result = dtypes.promote_types(a_node, b_node)
    strong = {n for n in (a_node, b_node) if not _is_weak_python_type(n)}
    if (result == dtypes.int64 and not config.read("jax_enable_x64")
            and dtypes.uint32 in strong and not strong & {dtypes.int64, dtypes.uint64}):
        # Without x64, JAX's lattice has the edge uint32 -> int32 where it otherwise has
        # uint32 -> int64; int64 can only come from that edge here.
        return dtypes.int32
    return result


def result_type(*args: Any) -> Any:
    """`jnp.result_type`: the canonical dtype that combining `args` gives.

    Python scalars and Python scalar types are weak; `None` stands for the default float type.
    """
    return dtypes_result_type(*args)


def dtypes_result_type(*args: Any, return_weak_type_flag: builtins.bool = False) -> Any:
    """`jax.dtypes.result_type`: `jnp.result_type`, and with `return_weak_type_flag=True`
    `(dtype, weak_type)`."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    canonical = [_canonical_promotion_arg(a) for a in args]
    out, weak = dtypes.result_type_and_weak(*canonical)
    return (out, weak) if return_weak_type_flag else out


def _canonical_promotion_arg(x: Any) -> Any:
    """Canonicalizes dtype-likes before promotion (as JAX does), keeping weak Python types."""
    if x is None:
        return dtypes.default_float_dtype()
    if _is_weak_python_type(x) or dtypes.is_python_scalar(x):
        return x
    if isinstance(x, core.Tracer) or hasattr(x, "aval"):
        return x
    return dtypes.dtype(x)


# ---------------------------------------------------------------------------------------------
# Predicates and type information.

def _scalar_type(x: Any) -> type:
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return np.dtype(x).type


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """`jnp.issubdtype`: like NumPy's, and ml_dtypes' types have their kinds (bfloat16 and
    float8_* are floating, int4 a signed integer ...); extended dtypes (PRNG keys) are
    subtypes of `jax.dtypes.extended` and `jax.dtypes.prng_key`."""
    if dtypes.is_extended(arg1) or dtypes.is_extended(arg2):
        return dtypes.issubdtype(arg1, arg2)
    if isinstance(arg2, type) and issubclass(arg2, dtypes.extended):
        return False
    return dtypes.issubdtype(_scalar_type(arg1), _scalar_type(arg2))


DTYPE_KINDS: dict[str, set[np.dtype]] = {
    "bool": {dtypes.bool_},
    "signed integer": set(dtypes.SIGNED_TYPES),
    "unsigned integer": set(dtypes.UNSIGNED_TYPES),
    "integral": set(dtypes.INT_TYPES),
    "real floating": set(dtypes.FLOAT_TYPES),
    "complex floating": set(dtypes.COMPLEX_TYPES),
    "numeric": set(dtypes.INT_TYPES + dtypes.FLOAT_TYPES + dtypes.COMPLEX_TYPES),
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """`jnp.isdtype`: whether a dtype is of a kind ('bool', 'integral', 'real floating', ...),
    equal to a given dtype, or either for a tuple of kinds.

    Args:
      dtype: the dtype-like to classify.
      kind: a kind name, a dtype-like, or a tuple of them.
    Returns:
      Whether `dtype` is of (any of) `kind`.
    """
    the_dtype = np.dtype(dtype)
    options: set[np.dtype] = set()
    for entry in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(entry, str) and entry in DTYPE_KINDS:
            options |= DTYPE_KINDS[entry]
            continue
        try:
            options.add(np.dtype(entry))
        except TypeError as err:
            if isinstance(entry, str):
                raise ValueError(f"Unrecognized kind={entry!r} expected one of "
                                 f"{list(DTYPE_KINDS)}, or a compatible input for "
                                 "jnp.dtype()") from None
            raise TypeError("Expected kind to be a dtype, string, or tuple; got "
                            f"kind={entry!r}") from err
    return the_dtype in options


can_cast = np.can_cast
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo
