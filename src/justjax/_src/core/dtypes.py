"""JAX's dtypes: the canonical set, 64-bit canonicalization, weak types and the promotion lattice.

JAX promotes along a lattice rather than NumPy's value-based tables: Python scalars are *weak*
(they take the other operand's type), int64 with float32 gives float32, and without
`jax_enable_x64` every 64-bit type is canonicalized to its 32-bit sibling.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from justjax._src.config import config
from justjax._src.core.shape_poly import DimExpr

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
# `jax.dtypes.bfloat16` is the scalar type itself (callable, usable with isinstance).
bfloat16_scalar_type = ml_dtypes.bfloat16
# The narrow floats of ml_dtypes (JAX's names, in JAX's order).
float4_e2m1fn = np.dtype(ml_dtypes.float4_e2m1fn)
float6_e2m3fn = np.dtype(ml_dtypes.float6_e2m3fn)
float6_e3m2fn = np.dtype(ml_dtypes.float6_e3m2fn)
float8_e3m4 = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
float8_e4m3b11fnuz = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e5m2fnuz = np.dtype(ml_dtypes.float8_e5m2fnuz)
# The narrow integers of ml_dtypes (one byte per element in memory).
int1 = np.dtype(ml_dtypes.int1)
int2 = np.dtype(ml_dtypes.int2)
int4 = np.dtype(ml_dtypes.int4)
uint1 = np.dtype(ml_dtypes.uint1)
uint2 = np.dtype(ml_dtypes.uint2)
uint4 = np.dtype(ml_dtypes.uint4)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
# The tangent type of integer and boolean values: a zero-size void, as in JAX.
float0 = np.dtype([("float0", np.void, 0)])



class extended(np.generic):
    """The scalar-type class of extended dtypes (`jax.dtypes.extended`): dtypes NumPy does not
    know, such as PRNG keys, whose values are stored as arrays of a physical NumPy type."""


class prng_key(extended):
    """The scalar-type class of PRNG key dtypes (`jax.dtypes.prng_key`)."""


class ExtendedDType:
    """A dtype outside NumPy (`key<fry>`): it has a name and a scalar-type class (for
    `issubdtype`), and each element is stored as an array of `physical_shape` and
    `physical_dtype`, which is how lowering and the backends see it."""

    type: type = extended
    name: str
    physical_shape: tuple[int, ...]
    physical_dtype: np.dtype

    kind = "V"

    @property
    def itemsize(self) -> int:
        return int(np.prod(self.physical_shape, dtype=np.int64)) * self.physical_dtype.itemsize

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


# The type of dtypes (`jax._src.dtypes.DType`, which libraries use in annotations).
DType = np.dtype


def primal_dtype_to_tangent_dtype(dtype: Any) -> Any:
    """The dtype of tangents of values of `dtype`: float0 for integers, booleans and keys."""
    return dtype if is_inexact(dtype) else float0


def is_extended(dtype: Any) -> bool:
    """Whether `dtype` is an extended dtype (a PRNG key type)."""
    return isinstance(dtype, ExtendedDType)


BOOL_TYPES = (bool_,)
INTN_TYPES = (int1, int2, int4, uint1, uint2, uint4)
SIGNED_TYPES = (int1, int2, int4, int8, int16, int32, int64)
UNSIGNED_TYPES = (uint1, uint2, uint4, uint8, uint16, uint32, uint64)
INT_TYPES = SIGNED_TYPES + UNSIGNED_TYPES
FLOAT8_TYPES = (float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz, float8_e4m3fn,
                float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz)
FLOAT6_TYPES = (float6_e2m3fn, float6_e3m2fn)
FLOAT4_TYPES = (float4_e2m1fn,)
# Floats narrower than 16 bits: no implicit promotion to or from them, as in JAX.
NARROW_FLOAT_TYPES = FLOAT4_TYPES + FLOAT6_TYPES + FLOAT8_TYPES
CUSTOM_FLOAT_TYPES = NARROW_FLOAT_TYPES + (bfloat16,)
FLOAT_TYPES = CUSTOM_FLOAT_TYPES + (float16, float32, float64)
COMPLEX_TYPES = (complex64, complex128)
ALL_TYPES = BOOL_TYPES + INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES
# The floats XLA's CPU backend has no arithmetic for: their math is computed in float32 and
# each result rounded back (`rounding_path`).
FLOATS_COMPUTED_IN_FLOAT32 = (float16, bfloat16) + NARROW_FLOAT_TYPES
# ml_dtypes' types, whose NumPy kind is 'V': kind() gives their JAX kind.
_ML_DTYPES_KINDS = {**{t: "f" for t in CUSTOM_FLOAT_TYPES},
                    **{t: "i" for t in (int1, int2, int4)},
                    **{t: "u" for t in (uint1, uint2, uint4)}}

_SHORT_NAMES = {
    bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
    uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
    bfloat16: "bf16", float16: "f16", float32: "f32", float64: "f64",
    complex64: "c64", complex128: "c128", float0: "float0",
    int1: "i1", int2: "i2", int4: "i4", uint1: "u1", uint2: "u2", uint4: "u4",
    **{t: "f" + t.name[len("float"):] for t in NARROW_FLOAT_TYPES},  # f8_e4m3fn
}

_CANONICAL_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# Python scalar types map to these (weakly typed) before canonicalization.
PYTHON_SCALAR_DTYPES: dict[type, np.dtype] = {
    bool: bool_, int: int64, float: float64, complex: complex128,
}


def short_dtype_name(dtype: np.dtype) -> str:
    """The short name used in jaxprs: `f32`, `i32`, `bool`, `bf16`, `key<fry>`."""
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    return _SHORT_NAMES[np.dtype(dtype)]


def dtype_name(dtype: np.dtype) -> str:
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    return "float0" if np.dtype(dtype) == float0 else np.dtype(dtype).name


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """Maps 64-bit types to 32-bit ones unless `jax_enable_x64` is set."""
    if isinstance(dtype, ExtendedDType):
        return dtype
    return _canonicalize(dtype if isinstance(dtype, np.dtype) else np.dtype(dtype),
                         config.read("jax_enable_x64"))


@functools.lru_cache(maxsize=None)
def _canonicalize(dtype: np.dtype, x64: bool) -> np.dtype:
    return dtype if x64 else _CANONICAL_32.get(dtype, dtype)


def default_int_dtype() -> np.dtype:
    return canonicalize_dtype(int64)


def default_uint_dtype() -> np.dtype:
    return canonicalize_dtype(uint64)


def default_float_dtype() -> np.dtype:
    return canonicalize_dtype(float64)


def default_complex_dtype() -> np.dtype:
    return canonicalize_dtype(complex128)


def default_dtype_of_kind(kind: str) -> np.dtype:
    return {"b": bool_, "i": default_int_dtype(), "u": default_uint_dtype(),
            "f": default_float_dtype(), "c": default_complex_dtype()}[kind]


def is_python_scalar(x: Any) -> bool:
    return type(x) in PYTHON_SCALAR_DTYPES


_ML_SCALAR_KINDS = {t.type: k for t, k in _ML_DTYPES_KINDS.items()}
# The abstract NumPy scalar classes each JAX kind is a subtype of.
_ABSTRACT_PARENTS = {
    "f": (np.floating, np.inexact, np.number, np.generic),
    "i": (np.signedinteger, np.integer, np.number, np.generic),
    "u": (np.unsignedinteger, np.integer, np.number, np.generic),
}


def ml_dtypes_kind(x: Any) -> str | None:
    """'f', 'i' or 'u' when `x` is one of ml_dtypes' types (bfloat16, float8_*, int4, ...)
    or its dtype, else None (NumPy does not know their kinds: it says 'V')."""
    if isinstance(x, type) and issubclass(x, np.generic):
        return _ML_SCALAR_KINDS.get(x)
    try:
        return _ML_DTYPES_KINDS.get(np.dtype(x))
    except (TypeError, ValueError):
        return None


def issubdtype(a: Any, b: Any) -> bool:
    """`np.issubdtype` that also knows ml_dtypes' types (bfloat16 and float8_* are floating,
    int4 a signed integer ...) and extended dtypes."""
    if isinstance(a, ExtendedDType) or isinstance(b, ExtendedDType):
        if isinstance(b, ExtendedDType):
            return a == b
        return isinstance(b, type) and issubclass(a.type, b)
    if isinstance(b, type) and issubclass(b, extended):
        return False
    a_kind = ml_dtypes_kind(a)
    if a_kind is not None:
        if isinstance(b, type) and b in _ABSTRACT_PARENTS[a_kind]:
            return True
        return ml_dtypes_kind(b) is not None and np.dtype(a) == np.dtype(b)
    return bool(np.issubdtype(a, b))


def rounding_path(dtype: Any) -> tuple[np.dtype, ...]:
    """The dtypes a float32 result of XLA CPU's math on `dtype` is rounded to, in order.

    XLA rewrites ops on the narrow floats into float16 ops between converts (float8_e8m0fnu,
    whose range float16 lacks, into float32 ones), and computes float16 math in float32: a
    narrow float's result is rounded to float16, then to its own type.
    """
    dtype = np.dtype(dtype)
    if dtype in NARROW_FLOAT_TYPES and dtype != float8_e8m0fnu:
        return (float16, dtype)
    return (dtype,)


def supports_inf(dtype: Any) -> bool:
    """Whether `dtype` has infinities, as `jax.dtypes.supports_inf` answers (False for the
    float8 types whose top exponent holds NaNs or finite values only)."""
    dtype = np.dtype(dtype)
    if dtype in (float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2fnuz):
        return False
    return is_inexact(dtype)


def is_float(dtype: Any) -> bool:
    if isinstance(dtype, ExtendedDType):
        return False
    return np.dtype(dtype) in FLOAT_TYPES


def is_complex(dtype: Any) -> bool:
    if isinstance(dtype, ExtendedDType):
        return False
    return np.dtype(dtype) in COMPLEX_TYPES


def is_inexact(dtype: Any) -> bool:
    return is_float(dtype) or is_complex(dtype)


def is_int(dtype: Any) -> bool:
    if isinstance(dtype, ExtendedDType):
        return False
    return np.dtype(dtype) in INT_TYPES


def is_signed(dtype: Any) -> bool:
    if isinstance(dtype, ExtendedDType):
        return False
    return np.dtype(dtype) in SIGNED_TYPES


def is_unsigned(dtype: Any) -> bool:
    if isinstance(dtype, ExtendedDType):
        return False
    return np.dtype(dtype) in UNSIGNED_TYPES


def is_bool(dtype: Any) -> bool:
    if isinstance(dtype, ExtendedDType):
        return False
    return np.dtype(dtype) == bool_


def kind(dtype: Any) -> str:
    """'b', 'i', 'u', 'f' or 'c' (ml_dtypes' floats count as 'f', int4 as 'i' ...); 'V' for
    extended dtypes."""
    if isinstance(dtype, ExtendedDType):
        return "V"
    dtype = np.dtype(dtype)
    return _ML_DTYPES_KINDS.get(dtype, dtype.kind)


def finfo(dtype: Any) -> Any:
    """Machine limits of a float type (ml_dtypes' `finfo`, which knows its narrow floats)."""
    dtype = np.dtype(dtype)
    return ml_dtypes.finfo(dtype) if dtype in CUSTOM_FLOAT_TYPES else np.finfo(dtype)


def iinfo(dtype: Any) -> Any:
    """Machine limits of an integer type (ml_dtypes' `iinfo`, which knows int4 ...)."""
    dtype = np.dtype(dtype)
    return ml_dtypes.iinfo(dtype) if dtype in INTN_TYPES else np.iinfo(dtype)


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """The dtype integer and bool inputs become in float-valued functions (sin, mean, ...):
    float32 for bool and integers up to 32 bits, float64 for 64-bit ones (canonicalized
    later, so float32 again without x64)."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    return float64 if dtype in (int64, uint64) else float32


def to_numeric_dtype(dtype: Any) -> np.dtype:
    """bool becomes int32 (whatever the x64 setting); other dtypes are unchanged."""
    dtype = np.dtype(dtype)
    return int32 if dtype == bool_ else dtype


def to_complex_dtype(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype in (float64, complex128):
        return complex128
    return complex64


def real_dtype(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


# ---------------------------------------------------------------------------------------------
# The promotion lattice.  Nodes are dtypes plus the three weak kinds int/float/complex (Python
# types); an edge a -> b means "a promotes to b".
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = int, float, complex
_WEAK_NODES = (_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX)


def _is_weak_node(x: Any) -> bool:
    # Identity, not equality: np.dtype('int64') == int is True in NumPy.
    return any(x is node for node in _WEAK_NODES)

_LATTICE_EDGES: dict[Any, list[Any]] = {
    bool_: [_WEAK_INT],
    _WEAK_INT: [uint8, int8, *INTN_TYPES],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_FLOAT],
    _WEAK_FLOAT: [*NARROW_FLOAT_TYPES, bfloat16, float16, _WEAK_COMPLEX],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64], float64: [complex128],
    _WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
    # The narrow types promote with Python scalars only (JAX's lattice: no edges out).
    **{t: [] for t in INTN_TYPES + NARROW_FLOAT_TYPES},
}

# `jax_numpy_dtype_promotion='strict'`: only weak types (Python scalars) promote implicitly,
# to any type of their kind or above (an int scalar to any integer or float type); two
# different strong types never do.
_STRICT_LATTICE_EDGES: dict[Any, list[Any]] = {
    _WEAK_INT: [_WEAK_FLOAT, *INT_TYPES],
    _WEAK_FLOAT: [_WEAK_COMPLEX, *FLOAT_TYPES],
    _WEAK_COMPLEX: [*COMPLEX_TYPES],
    **{t: [] for t in ALL_TYPES},
}


def _upper_bounds(edges: dict[Any, list[Any]]) -> dict[Any, frozenset]:
    """For each node, the set of nodes reachable from it (itself included)."""
    bounds: dict[Any, frozenset] = {}

    def visit(node: Any) -> frozenset:
        if node not in bounds:
            reach = {node}
            for succ in edges[node]:
                reach |= visit(succ)
            bounds[node] = frozenset(reach)
        return bounds[node]

    for node in edges:
        visit(node)
    return bounds


# The upper bounds of each node, per `jax_numpy_dtype_promotion` mode.
_UPPER_BOUNDS = {"standard": _upper_bounds(_LATTICE_EDGES),
                 "strict": _upper_bounds(_STRICT_LATTICE_EDGES)}


def _promotion_mode() -> str:
    return config.read("jax_numpy_dtype_promotion")


@functools.lru_cache(maxsize=4096)
def _least_upper_bound(mode: str, *nodes: Any) -> Any:
    """The least upper bound of `nodes` in the lattice of `mode`.

    Raises:
      TypePromotionError: the nodes have no common upper bound (strict mode), with JAX's
        message.
    """
    bounds = _UPPER_BOUNDS[mode]
    common = functools.reduce(frozenset.intersection, (bounds[n] for n in nodes))
    # The least upper bound is the common bound that every other common bound is above.
    for candidate in common:
        if common <= bounds[candidate]:
            return candidate
    raise TypePromotionError(_no_promotion_message(mode, nodes))


# Why a narrow type has no promotion path, and the type to cast to instead (JAX's texts).
_NO_PROMOTION_REASONS = (
    (FLOAT8_TYPES, "8-bit floats", "float32"),
    (FLOAT6_TYPES, "6-bit floats", "float32"),
    (FLOAT4_TYPES, "4-bit floats", "float32"),
    (INTN_TYPES, "1-bit, 2-bit and 4-bit integers", "int32"),
)


def _no_promotion_message(mode: str, nodes: tuple[Any, ...]) -> str:
    names = tuple(str(n) for n in nodes)
    if mode == "strict":
        return (f"Input dtypes {names} have no available implicit dtype promotion path when "
                "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
                "output type, or set jax_numpy_dtype_promotion=standard.")
    message = f"Input dtypes {names} have no available implicit dtype promotion path."
    for types, what, cast_to in _NO_PROMOTION_REASONS:
        if any(n in types for n in nodes if not _is_weak_node(n)):
            return (f"{message} To avoid unintended promotion, {what} do not support implicit "
                    "promotion. If you'd like your inputs to be promoted to another type, you "
                    f"can do so explicitly using e.g. x.astype('{cast_to}')")
    return f"{message} Try explicitly casting inputs to the desired output type."


def promote_types(a: Any, b: Any) -> np.dtype:
    """`jnp.promote_types`: the least upper bound of two dtypes in JAX's lattice.

    Python scalar types stand for weak types here, as in JAX.

    Raises:
      TypePromotionError: no implicit promotion between `a` and `b` (strict mode).
    """
    a_node = a if _is_weak_node(a) else np.dtype(a)
    b_node = b if _is_weak_node(b) else np.dtype(b)
    result = _least_upper_bound(_promotion_mode(), a_node, b_node)
    if _is_weak_node(result):
        return PYTHON_SCALAR_DTYPES[result]
    return np.dtype(result)


def dtype_and_weak_type(x: Any) -> tuple[np.dtype, bool]:
    """The (uncanonicalized) dtype of a value or dtype-like, and whether it is weakly typed."""
    if type(x) in PYTHON_SCALAR_DTYPES:
        return PYTHON_SCALAR_DTYPES[type(x)], True
    if _is_weak_node(x):
        return PYTHON_SCALAR_DTYPES[x], True
    if isinstance(x, DimExpr):  # a symbolic dimension is a weakly typed int, as in JAX
        return PYTHON_SCALAR_DTYPES[int], True
    if isinstance(x, ExtendedDType):
        return x, False
    if isinstance(x, (type, str, np.dtype)):
        # A dtype-like. jnp's scalar types carry their dtype as a class attribute.
        declared = getattr(x, "dtype", None) if isinstance(x, type) else None
        return np.dtype(declared if isinstance(declared, np.dtype) else x), False
    aval = getattr(x, "aval", None)
    if aval is not None and hasattr(aval, "weak_type"):
        return aval.dtype, aval.weak_type
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype), False
    try:
        return np.dtype(x), False
    except TypeError:
        raise TypeError(f"Cannot determine dtype of {x!r}") from None


def _lattice_node(dtype: np.dtype, weak: bool) -> Any:
    if not weak or dtype == bool_:
        return dtype
    return {"i": _WEAK_INT, "u": _WEAK_INT, "f": _WEAK_FLOAT, "c": _WEAK_COMPLEX}[kind(dtype)]


def result_type_and_weak(*args: Any) -> tuple[np.dtype, bool]:
    """JAX's `result_type` plus the weak-type flag of the result.

    Weak inputs take part as their weak kind, so `f16_array + 1.0` stays float16; a result
    that is itself weak has its kind's default (canonical) width.

    Raises:
      TypePromotionError: no implicit promotion path (`jax_numpy_dtype_promotion='strict'`
        and two different strong types, or a weak type of a higher kind).
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    mode = _promotion_mode()
    pairs = [dtype_and_weak_type(a) for a in args]
    # Canonical first, as JAX's `dtype(x)`: without x64 a NumPy float64 array meets a
    # float32 one as float32 (which matters under strict promotion).
    dtypes = [canonicalize_dtype(d) for d, _ in pairs]
    weaks = [w for _, w in pairs]
    if any(isinstance(d, ExtendedDType) for d in dtypes):
        if len(set(dtypes)) == 1:
            return dtypes[0], False
        raise TypeError("Cannot promote dtypes "
                        f"{', '.join(dtype_name(d) for d in dtypes)}: extended dtypes "
                        "(PRNG keys) do not promote.")
    if len(pairs) == 1:
        out, weak = dtypes[0], weaks[0]
    elif len(set(dtypes)) == 1 and not all(weaks):
        out, weak = dtypes[0], False
    elif all(weaks) and mode == "standard":
        # The bound of the strong counterparts, made weak: weak int16 never arises.
        out, weak = _least_upper_bound(mode, *set(dtypes)), True
    else:
        # In argument order, without repeats (error messages list them so).
        nodes = dict.fromkeys(_lattice_node(d, w) for d, w in zip(dtypes, weaks, strict=True))
        out = _least_upper_bound(mode, *nodes)
        weak = _is_weak_node(out)
        if weak:
            out = PYTHON_SCALAR_DTYPES[out]
    out = np.dtype(out)
    weak = weak and out != bool_
    if weak:
        return default_dtype_of_kind(kind(out)), True
    return canonicalize_dtype(out), False


def result_type(*args: Any) -> np.dtype:
    """`jnp.result_type`: the dtype that combining `args` produces."""
    return result_type_and_weak(*args)[0]


def dtype_of_value(x: Any) -> np.dtype:
    """The canonical dtype a concrete value has once it becomes an array."""
    if type(x) in PYTHON_SCALAR_DTYPES:
        return canonicalize_dtype(PYTHON_SCALAR_DTYPES[type(x)])
    if hasattr(x, "dtype"):
        return canonicalize_dtype(x.dtype)
    return canonicalize_dtype(np.asarray(x).dtype)


@functools.lru_cache(maxsize=None)
def _int_range(dtype: np.dtype) -> tuple[int, int] | None:
    if not is_int(dtype):
        return None
    info = iinfo(dtype)
    return int(info.min), int(info.max)


def check_python_int_range(value: int, dtype: np.dtype) -> None:
    """Raises JAX's OverflowError for a Python int that does not fit `dtype`."""
    bounds = _int_range(np.dtype(dtype))
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise OverflowError(f"Python int {value} too large to convert to {np.dtype(dtype).name}")


def coerce_to_array(x: Any, dtype: Any = None) -> np.ndarray:
    """A concrete value as a NumPy array of its canonical (or the given) dtype."""
    if dtype is None:
        dtype = dtype_of_value(x)
    dtype = np.dtype(dtype)
    if type(x) is int:
        check_python_int_range(x, dtype)
    return np.asarray(x, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# dtype arguments given by users.

# The dtypes the Python types stand for when given as dtypes (identity comparisons: NumPy's
# dtypes compare equal to some Python types).
_PYTHON_TYPE_DEFAULTS = (
    (bool, lambda: bool_),
    (int, default_int_dtype),
    (float, default_float_dtype),
    (complex, default_complex_dtype),
)


def python_type_default(x: Any) -> np.dtype | None:
    """The default dtype for the Python types bool/int/float/complex, else None."""
    for python_type, default in _PYTHON_TYPE_DEFAULTS:
        if x is python_type:
            return default()
    return None


def check_user_dtype(dtype_like: Any, fun_name: str | None = None) -> np.dtype:
    """A user's `dtype=` argument as the dtype arrays will have.

    Python types give their default dtypes (`float` -> float32 without x64). An explicitly
    requested 64-bit dtype is truncated to its 32-bit sibling without x64, with JAX's warning.
    """
    if dtype_like is None:
        raise ValueError("dtype must be specified.")
    if hasattr(dtype_like, "aval"):  # an Array or a tracer
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype.")
    if isinstance(dtype_like, ExtendedDType):
        return dtype_like
    default = python_type_default(dtype_like)
    if default is not None:
        return default
    np_dtype = np.dtype(dtype_like)
    if np_dtype not in ALL_TYPES and np_dtype != float0:
        message = f"JAX only supports number, bool, and string dtypes, got dtype {dtype_like}"
        if fun_name:
            message += f" in {fun_name}"
        raise TypeError(message)
    return canonicalize_explicit_dtype(np_dtype, fun_name or "")


def dtype(x: Any) -> np.dtype:
    """`lax.dtype`: the canonical dtype of a value, Python type or dtype-like.

    Args:
      x: an array, tracer, Python or NumPy scalar, Python type (`float` gives the default float
        dtype) or dtype-like (64-bit ones are truncated without x64, with JAX's warning).

    Returns:
      The dtype.

    Raises:
      ValueError: for None. TypeError: for a value of no JAX array type.
    """
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    default = python_type_default(x)
    if default is not None:
        return default
    if is_python_scalar(x):
        return canonicalize_dtype(PYTHON_SCALAR_DTYPES[type(x)])
    if isinstance(x, ExtendedDType):
        return x
    if hasattr(x, "aval"):  # an Array or a tracer
        return x.dtype
    # A NumPy scalar type or dtype (name) asked for explicitly warns when truncated; a JAX
    # scalar type (`jnp.float64`, which only carries a `dtype`) is canonicalized silently
    # below, as JAX does.
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and issubclass(x, np.generic)):
        np_dtype = np.dtype(x)
        _check_valid_array_type(x, np_dtype)
        return canonicalize_explicit_dtype(np_dtype, "dtype")
    attr = getattr(x, "dtype", None)
    if isinstance(attr, np.dtype):
        np_dtype = attr
    else:
        try:
            np_dtype = np.result_type(x)
        except TypeError:
            raise TypeError(f"Cannot determine dtype of {x}") from None
    _check_valid_array_type(x, np_dtype)
    return canonicalize_dtype(np_dtype)


def _check_valid_array_type(x: Any, np_dtype: np.dtype) -> None:
    if np_dtype not in ALL_TYPES and np_dtype != float0:
        raise TypeError(f"Value '{x}' with dtype {np_dtype} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")


def canonicalize_explicit_dtype(np_dtype: np.dtype, fun_name: str) -> np.dtype:
    canonical = canonicalize_dtype(np_dtype)
    if canonical != np_dtype:
        requested = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(
            f"Explicitly requested dtype {np_dtype}{requested} is not available, and will be "
            f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
            "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
            stacklevel=4)
    return canonical


class TypePromotionError(ValueError):
    """A value cannot be promoted or cast safely to a dtype (`jax.dtypes.TypePromotionError`)."""


def safe_to_cast(input_dtype_or_value: Any, output_dtype: Any) -> bool:
    """Whether casting `input_dtype_or_value` (a dtype or a value, weakly typed if a Python
    scalar) to `output_dtype` loses nothing under JAX's promotion: the same dtype, or the
    promotion of the two is `output_dtype`."""
    output_dtype = np.dtype(output_dtype)
    if canonicalize_dtype(dtype_and_weak_type(input_dtype_or_value)[0]) == output_dtype:
        return True
    return result_type(input_dtype_or_value, output_dtype) == output_dtype


def itemsize_bits(dtype: Any) -> int:
    """The number of bits one element of `dtype` takes (`jax.dtypes.itemsize_bits`): 4 for
    int4, 16 for bfloat16, 8 for bool.

    Args:
      dtype: a dtype-like (not None, not an extended dtype).
    Returns:
      The width in bits.
    Raises:
      ValueError: None, or a dtype that is not a numeric array type. TypeError: a name
        NumPy does not understand.
    """
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    if isinstance(dtype, ExtendedDType):
        raise ValueError(f"unexpected input: dtype={dtype}")
    np_dtype = np.dtype(dtype)
    if np_dtype == np.bool_:
        return 8
    if np_dtype not in ALL_TYPES:
        raise ValueError(f"unexpected input: dtype={dtype}")
    if is_int(np_dtype):
        return int(ml_dtypes.iinfo(np_dtype).bits)
    if is_float(np_dtype):
        return int(ml_dtypes.finfo(np_dtype).bits)
    return 8 * np_dtype.itemsize


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) of `x`'s dtype
    (`jax.dtypes.scalar_type_of`).

    Args:
      x: an array, scalar or anything `jax.dtypes` can take the dtype of.
    Returns:
      One of `bool`, `int`, `float`, `complex`.
    """
    typ = dtype(x)
    for python_type, test in ((bool, is_bool), (int, is_int), (float, is_float),
                              (complex, is_complex)):
        if test(typ):
            return python_type
    raise TypeError(f"Invalid scalar value {x}")
