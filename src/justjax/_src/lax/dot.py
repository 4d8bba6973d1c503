"""Contractions: the `dot_general` primitive, `lax.dot`, `lax.batch_matmul`, and the precision
enums (`Precision`, `DotAlgorithm`, `DotAlgorithmPreset`) shared with convolutions.

Result dtypes follow XLA's shape inference as JAX mirrors it: mixed operand dtypes are allowed
and the "higher precision" operand type wins; `preferred_element_type` widens the result.
Eager values accumulate exactly as XLA's CPU backend does: operands of different dtypes are first
converted to the result dtype, integer accumulation wraps, float16/bfloat16 accumulate in
float32 and are rounded once.
"""
from __future__ import annotations

import enum
import operator
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from justjax._src.numerics import shapes
from justjax._src.config import config
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import JaxprEqn, PrettyContext, pp_eqn_default, pp_eqn_rules
from justjax._src.hlo import ir
from justjax._src.hlo.ir import TensorType, Value
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import sharding_rules, structural
from justjax._src.lax.utils import standard_primitive

__all__ = [
    "CanonicalPrecision",
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "Precision",
    "PrecisionLike",
    "batch_matmul",
    "canonicalize_precision",
    "dot",
    "dot_general",
    "dot_general_p",
]


# -- precision ---------------------------------------------------------------------------------

class Precision(enum.Enum):
    """Precision of matrix-multiply-like operations (a hint only: CPU computes in full).

    DEFAULT (aliases 'default', 'fastest', 'bfloat16'), HIGH ('high', 'bfloat16_3x',
    'tensorfloat32') and HIGHEST ('highest', 'float32').
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_STRINGS.get(value)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


# Insertion order is the order JAX's error message lists them in.
_PRECISION_STRINGS: dict[Any, Precision] = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
}


class DotAlgorithm(NamedTuple):
    """An explicit dot algorithm: the operand types rounded to, the accumulation type, and the
    component counts of multi-pass emulations."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms, `LHS_RHS_ACCUM` (input and accumulation element types)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[np.dtype, ...] | None:
        """Operand types the algorithm takes as they are; others are converted to the first."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_F8"):
            return None
        if name.startswith("F16_"):
            return (dtypes.float16,)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (dtypes.bfloat16, dtypes.float32)
        if name == "F64_F64_F64":
            return (dtypes.float64,)
        return (dtypes.float32,)

    @property
    def supported_rhs_types(self) -> tuple[np.dtype, ...] | None:
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> np.dtype | None:
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16_F16_F16": dtypes.float16, "BF16_BF16_BF16": dtypes.bfloat16,
                "F64_F64_F64": dtypes.float64}.get(name, dtypes.float32)

    def supported_output_types(self, lhs_dtype: Any, rhs_dtype: Any
                               ) -> tuple[np.dtype, ...] | None:
        if self.name in ("F16_F16_F32", "BF16_BF16_F32"):
            narrow = dtypes.float16 if self.name.startswith("F16") else dtypes.bfloat16
            if dtypes.promote_types(lhs_dtype, rhs_dtype) == narrow:
                return (dtypes.float32, narrow)
            return (dtypes.float32,)
        if self.name.startswith("ANY_F8_ANY_F8_F32"):
            return (dtypes.float32, dtypes.float16, dtypes.bfloat16)
        accumulation = self.accumulation_type
        return None if accumulation is None else (accumulation,)


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]
CanonicalPrecision = Union[None, tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset]
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]

# The presets XLA's CPU backend can run; others fail when the computation is compiled.
_CPU_ALGORITHMS = frozenset({
    DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16, DotAlgorithmPreset.F32_F32_F32,
    DotAlgorithmPreset.F64_F64_F64, DotAlgorithmPreset.BF16_BF16_F32,
    DotAlgorithmPreset.BF16_BF16_F32_X3, DotAlgorithmPreset.BF16_BF16_F32_X6,
})


def canonicalize_precision(precision: PrecisionLike) -> CanonicalPrecision:
    """A precision argument as the param `dot_general` stores: None, a pair of `Precision`s,
    or an algorithm. `None` takes `jax_default_matmul_precision` when that flag is set."""
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(
                "jax_default_matmul_precision flag must be set to None, a value in "
                f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, "
                f"but got {default}") from None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return Precision(precision), Precision(precision)
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    elif isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) for p in precision):
            return canonicalize_precision(precision[0])[0], canonicalize_precision(precision[1])[0]
    raise ValueError(
        "Precision argument must be one of:\n"
        "- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n"
        "- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        "- a lax.DotAlgorithm value;\n"
        f"but got {precision}.")


# -- helpers shared with convolution -----------------------------------------------------------

def canonicalize_user_dtype(dtype: Any, fun_name: str) -> np.dtype:
    """A user-requested dtype (e.g. `preferred_element_type`) in canonical form."""
    return dtypes.check_user_dtype(dtype, fun_name)


def operand_aval(x: Any, prim_name: str, position: int) -> ShapedArray:
    """The aval of a primitive operand, with JAX's error for values that are not arrays."""
    try:
        if isinstance(x, (list, tuple)):
            raise TypeError
        return core.get_aval(x)
    except TypeError:
        raise TypeError(f"Error interpreting argument to {prim_name} as a JAX value. The "
                        f"problematic value is of type {type(x)} and was passed to {prim_name} "
                        f"at position {position}.\n") from None


def bit_width(dtype: np.dtype) -> int:
    """Bits of one element (1 for bool), as XLA counts them."""
    if dtypes.is_bool(dtype):
        return 1
    if dtypes.is_int(dtype):
        return dtypes.iinfo(dtype).bits
    return dtypes.finfo(dtype).bits


# -- dot_general -------------------------------------------------------------------------------

def _ensure_index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def _check_dims_in_range(side: str, ndim: int, contracting: tuple, batch: tuple) -> None:
    if all(0 <= d < ndim for d in contracting + batch):
        return
    raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative and less "
                    f"than the number of axes of the {side} value, got {side}_batch of {batch} "
                    f"and {side}_contracting of {contracting} for {side} of rank {ndim}")


def _check_distinct(side: str, contracting: tuple, batch: tuple) -> None:
    if len(set(batch)) != len(batch):
        raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got "
                        f"{side}_batch {batch}.")
    if len(set(contracting)) != len(contracting):
        raise TypeError(f"dot_general requires {side} contracting dimensions to be distinct, "
                        f"got {side}_contracting {contracting}.")


def _dot_general_shape_rule(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: Any,
                            precision: Any, preferred_element_type: Any,
                            out_sharding: Any) -> tuple[int, ...]:
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    _check_dims_in_range("lhs", lhs.ndim, lhs_contracting, lhs_batch)
    _check_dims_in_range("rhs", rhs.ndim, rhs_contracting, rhs_batch)
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lhs_batch} and rhs_batch {rhs_batch}.")
    _check_distinct("lhs", lhs_contracting, lhs_batch)
    _check_distinct("rhs", rhs_contracting, rhs_batch)
    for side, contracting, batch in (("lhs", lhs_contracting, lhs_batch),
                                     ("rhs", rhs_contracting, rhs_batch)):
        if set(contracting) & set(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                            f"contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contracting}.")
    lhs_batch_shape = tuple(lhs.shape[i] for i in lhs_batch)
    rhs_batch_shape = tuple(rhs.shape[i] for i in rhs_batch)
    if lhs_batch_shape != rhs_batch_shape:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {lhs_batch_shape} and {rhs_batch_shape}.")
    lhs_contracting_shape = tuple(lhs.shape[i] for i in lhs_contracting)
    rhs_contracting_shape = tuple(rhs.shape[i] for i in rhs_contracting)
    if lhs_contracting_shape != rhs_contracting_shape:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lhs_contracting_shape} and {rhs_contracting_shape}.")
    return dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)


_free_dims = shapes.free_dims


def dot_general_shape(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                      dimension_numbers: Any) -> tuple[int, ...]:
    """Result shape: batch dims, then the lhs free dims, then the rhs free dims."""
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    batch = tuple(lhs_shape[i] for i in lhs_batch)
    lhs_free = tuple(lhs_shape[i] for i in _free_dims(len(lhs_shape), lhs_contracting, lhs_batch))
    rhs_free = tuple(rhs_shape[i] for i in _free_dims(len(rhs_shape), rhs_contracting, rhs_batch))
    return batch + lhs_free + rhs_free


def _type_properties(dtype: np.dtype) -> tuple:
    """XLA's ordering of element types by precision (`primitive_util::HigherPrecisionType`)."""
    is_complex = dtypes.is_complex(dtype)
    component = dtypes.real_dtype(dtype) if is_complex else dtype
    is_float = dtypes.is_float(component)
    info = dtypes.finfo(component) if is_float else None
    return (is_complex, info.maxexp if is_float else -1, info.nmant if is_float else -1,
            bit_width(component), not dtypes.is_unsigned(component))


def _maybe_upcast(result_dtype: np.dtype, preferred: np.dtype | None,
                  check_bit_width: bool) -> np.dtype:
    if preferred is None or result_dtype == preferred:
        return result_dtype
    if (check_bit_width and not dtypes.is_float(result_dtype)
            and bit_width(preferred) < bit_width(result_dtype)):
        raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                        f"got preferred_element_type of {preferred} for result type of "
                        f"{result_dtype}.")
    return np.dtype(preferred)


def _dot_general_dtype_rule(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: Any,
                            precision: Any, preferred_element_type: Any,
                            out_sharding: Any) -> np.dtype:
    lhs_props, rhs_props = _type_properties(lhs.dtype), _type_properties(rhs.dtype)
    if lhs_props > rhs_props:
        result = lhs.dtype
    elif rhs_props > lhs_props:
        result = rhs.dtype
    else:
        if lhs.dtype != rhs.dtype:
            raise TypeError(f"lax.dot_general argument type error: {lhs.dtype}, {rhs.dtype}")
        result = lhs.dtype
    has_algorithm = isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))
    return _maybe_upcast(result, preferred_element_type, check_bit_width=not has_algorithm)


def algorithm_compute_types(algorithm: DotAlgorithm | DotAlgorithmPreset, lhs_dtype: np.dtype,
                            rhs_dtype: np.dtype, out_dtype: np.dtype
                            ) -> tuple[np.dtype, np.dtype, np.dtype | None]:
    """The operand and accumulation types an algorithm computes with."""
    if isinstance(algorithm, DotAlgorithm):
        return (np.dtype(algorithm.lhs_precision_type), np.dtype(algorithm.rhs_precision_type),
                np.dtype(algorithm.accumulation_type))

    def pick(dtype: np.dtype, supported: Sequence[np.dtype] | None) -> np.dtype:
        if supported is None or np.dtype(dtype) in supported:
            return dtype
        return np.dtype(supported[0])

    lhs_type = pick(lhs_dtype, algorithm.supported_lhs_types)
    rhs_type = pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs_type, rhs_type, pick(out_dtype, algorithm.supported_output_types(lhs_type, rhs_type))


def check_cpu_algorithm(precision: Any, prim_name: str) -> None:
    """XLA's CPU backend runs only some algorithms; JAX refuses the others when compiling."""
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)) and \
            precision not in _CPU_ALGORITHMS:
        raise ValueError(f"The precision '{precision}' is not supported by {prim_name} on CPU")




dot_general_p = standard_primitive("dot_general", _dot_general_shape_rule,
                                   _dot_general_dtype_rule,
                                   sharding_rule=sharding_rules.dot_general,
                                   sharding_param="out_sharding")
dispatch.def_backend_impl(dot_general_p)
core.joins_varying.add(dot_general_p)


def _pp_dot_general(eqn: JaxprEqn, context: PrettyContext) -> Any:
    # As JAX: None-valued params and out_sharding are hidden, dimension numbers print as lists.
    params = {k: v for k, v in eqn.params.items() if v is not None and k != "out_sharding"}
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = eqn.params["dimension_numbers"]
    params["dimension_numbers"] = ((list(lhs_contracting), list(rhs_contracting)),
                                   (list(lhs_batch), list(rhs_batch)))
    return pp_eqn_default(eqn, context, params)


pp_eqn_rules[dot_general_p] = _pp_dot_general


def precision_attr(precision: Any) -> tuple[ir.Enum, ir.Enum]:
    """`precision_config` of a dot or convolution: the operands' `Precision`s (DEFAULT for
    None and for algorithms)."""
    if precision is None or isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        precision = (Precision.DEFAULT, Precision.DEFAULT)
    return tuple(ir.Enum("precision", p.name) for p in precision)


def _dot_general_lower(ctx: LoweringRuleContext, lhs: Value, rhs: Value, *,
                       dimension_numbers: Any, precision: Any, preferred_element_type: Any,
                       out_sharding: Any) -> Value:
    """`stablehlo.dot_general`. Mixed operand types are converted to the result type first
    (as JAX does for CPU); an algorithm converts the operands to its input types and
    accumulates in its accumulation type. The `algorithm` attribute itself is left out:
    XLA's CPU backend ignores it, and the IR has no attribute kind for it."""
    b = ctx.builder
    lhs_aval, rhs_aval = ctx.avals_in
    out_type = lowering.aval_to_type(ctx.avals_out[0])
    accumulation = out_type.dtype
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        check_cpu_algorithm(precision, "dot_general")
        lhs_dtype, rhs_dtype, acc_dtype = algorithm_compute_types(
            precision, lhs_aval.dtype, rhs_aval.dtype, out_type.dtype)
        if lhs_dtype != lhs_aval.dtype:
            lhs = structural.convert_hlo(b, lhs, lhs_dtype)
        if rhs_dtype != rhs_aval.dtype:
            rhs = structural.convert_hlo(b, rhs, rhs_dtype)
        accumulation = np.dtype(acc_dtype if acc_dtype is not None else out_type.dtype)
    elif lhs_aval.dtype != rhs_aval.dtype:
        lhs = structural.convert_hlo(b, lhs, out_type.dtype)
        rhs = structural.convert_hlo(b, rhs, out_type.dtype)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ir.DotDimensionNumbers(
        lhs_batching_dimensions=tuple(lhs_batch), rhs_batching_dimensions=tuple(rhs_batch),
        lhs_contracting_dimensions=tuple(lhs_contracting),
        rhs_contracting_dimensions=tuple(rhs_contracting))
    out = b.one("stablehlo.dot_general", [lhs, rhs], TensorType(out_type.shape, accumulation),
                dot_dimension_numbers=dims, precision_config=precision_attr(precision))
    if accumulation != out_type.dtype:
        out = structural.convert_hlo(b, out, out_type.dtype)
    return out


lowering.register_lowering(dot_general_p, _dot_general_lower)


def _consecutive_ranges(*lengths: int) -> list[range]:
    """Consecutive index ranges of the given lengths, starting at 0."""
    ranges, start = [], 0
    for length in lengths:
        ranges.append(range(start, start + length))
        start += length
    return ranges


def _dot_general_transpose_lhs(ct: Any, x: Any, y: Any, *, dimension_numbers: Any,
                               precision: Any, preferred_element_type: Any, out_sharding: Any,
                               swap_ans: bool = False) -> Any:
    """Cotangent of the linear lhs `x`: `ct` contracted with `y` over y's free dims (which
    sit in ct after x's), then permuted back into x's axis order and cast to x's dtype."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _free_dims(x.aval.ndim, x_contract, x_batch)
    y_kept = _free_dims(core.get_aval(y).ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _consecutive_ranges(len(x_batch), len(y_kept), len(x_kept))
    else:
        ans_batch, _, ans_y = _consecutive_ranges(len(x_batch), len(x_kept), len(y_kept))
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    # The contraction leaves x's contracting dims last, in the order of y's contracting dims.
    x_contract_sorted_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    unsorted_axes = [*x_batch, *x_kept, *x_contract_sorted_by_y]
    out = dot_general(ct, y, dims, precision=precision,
                      preferred_element_type=preferred_element_type,
                      out_sharding=sharding_rules.cotangent_sharding(
                          x.aval, (core.get_aval(ct), core.get_aval(y)), unsorted_axes))
    x_bar = structural.transpose(out, tuple(int(a) for a in np.argsort(unsorted_axes)))
    if core.get_aval(x_bar).dtype != x.aval.dtype:
        x_bar = structural.convert_element_type(x_bar, x.aval.dtype, x.aval.weak_type)
    return x_bar


def _dot_general_transpose_rhs(ct: Any, x: Any, y: Any, *, dimension_numbers: Any,
                               precision: Any, preferred_element_type: Any,
                               out_sharding: Any) -> Any:
    """Cotangent of the linear rhs `y`: the lhs rule with the operands' roles exchanged."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _dot_general_transpose_lhs(ct, y, x, dimension_numbers=swapped, precision=precision,
                                      preferred_element_type=preferred_element_type,
                                      out_sharding=out_sharding, swap_ans=True)


ad.defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


def _bump_dims(dims: Sequence[int], inserted: int) -> tuple[int, ...]:
    """Axis numbers `dims` after a new axis is inserted at position `inserted`."""
    return tuple(int(d) + (int(d) >= inserted) for d in dims)


def _dot_general_batch_dim_nums(ndims: tuple[int, int], bdims: tuple[int | None, int | None],
                                dimension_numbers: Any) -> tuple[Any, int]:
    """Dimension numbers of the batched contraction and the batch axis of its result.

    Both operands mapped: the two batch axes are zipped as a new leading dot batch dim (so
    the result's batch axis is 0). One operand mapped: its batch axis is a free dim of that
    side, which lands among that side's free dims of the result.
    """
    lhs_ndim, _ = ndims
    lhs_bdim, rhs_bdim = bdims
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs_bdim is not None and rhs_bdim is not None:
        new_lhs_batch = (lhs_bdim, *_bump_dims(lhs_batch, lhs_bdim))
        new_rhs_batch = (rhs_bdim, *_bump_dims(rhs_batch, rhs_bdim))
        new_dims = ((_bump_dims(lhs_contract, lhs_bdim), _bump_dims(rhs_contract, rhs_bdim)),
                    (new_lhs_batch, new_rhs_batch))
        return new_dims, 0
    if lhs_bdim is not None:
        # Result: dot batch dims, then lhs free dims in order (the batch axis among them).
        free_before = sum(1 for d in range(lhs_bdim)
                          if d not in lhs_batch and d not in lhs_contract)
        new_dims = ((_bump_dims(lhs_contract, lhs_bdim), tuple(rhs_contract)),
                    (_bump_dims(lhs_batch, lhs_bdim), tuple(rhs_batch)))
        return new_dims, len(lhs_batch) + free_before
    # Result: dot batch dims, lhs free dims, then rhs free dims (the batch axis among them).
    free_before = sum(1 for d in range(rhs_bdim)
                      if d not in rhs_batch and d not in rhs_contract)
    new_dims = ((tuple(lhs_contract), _bump_dims(rhs_contract, rhs_bdim)),
                (tuple(lhs_batch), _bump_dims(rhs_batch, rhs_bdim)))
    return new_dims, lhs_ndim - len(lhs_contract) + free_before


def _dot_general_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                            dims: Sequence[int | None], *, dimension_numbers: Any,
                            precision: Any, preferred_element_type: Any,
                            out_sharding: Any) -> tuple[Any, int]:
    """vmap of `dot_general`: the batch axis folds into the contraction's batch or free dims,
    so one `dot_general` computes the whole batch."""
    lhs, rhs = vals
    new_dims, out_dim = _dot_general_batch_dim_nums((np.ndim(lhs), np.ndim(rhs)), tuple(dims),
                                                    dimension_numbers)
    out = dot_general(lhs, rhs, new_dims, precision=precision,
                      preferred_element_type=preferred_element_type,
                      out_sharding=sharding_rules.with_batch_dim(out_sharding, out_dim))
    return out, out_dim


batching.primitive_batchers[dot_general_p] = _dot_general_batch_rule


def dot_general(lhs: Any, rhs: Any, dimension_numbers: DotDimensionNumbers,
                precision: PrecisionLike = None, preferred_element_type: Any = None, *,
                out_sharding: Any = None) -> Any:
    """General contraction (StableHLO `dot_general`); an alias of `dot` taking
    `dimension_numbers` positionally.

    Args:
      lhs, rhs: arrays.
      dimension_numbers: `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`.
      precision: None, a `Precision` (or pair, or their string names) or an algorithm.
      preferred_element_type: the result (and accumulation) dtype, if not the default.

    Returns:
      The batch dimensions, then the lhs free dimensions, then the rhs free dimensions.
    """
    return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
               preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def dot(lhs: Any, rhs: Any, *, dimension_numbers: DotDimensionNumbers | None = None,
        precision: PrecisionLike = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """Dot product / contraction (StableHLO `dot_general`).

    Without `dimension_numbers` only un-batched matrix-matrix, matrix-vector and
    vector-vector products are accepted (the last lhs axis contracts with the first rhs axis).

    Args:
      lhs, rhs: arrays.
      dimension_numbers: optional `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`.
      precision: None, a `Precision` (or pair, or their string names) or an algorithm.
      preferred_element_type: the result (and accumulation) dtype, if not the default.
      out_sharding: a NamedSharding or PartitionSpec: how the result's type is split over
        Explicit mesh axes (needed when both operands split a contracting dimension).

    Returns:
      The batch dimensions, then the lhs free dimensions, then the rhs free dimensions.
    """
    lhs_shape = operand_aval(lhs, "dot_general", 0).shape
    rhs_shape = operand_aval(rhs, "dot_general", 1).shape
    if dimension_numbers is None:
        if 1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2 and \
                lhs_shape[-1] == rhs_shape[0]:
            dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple "
                "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((_ensure_index_tuple(lhs_contracting), _ensure_index_tuple(rhs_contracting)),
            (_ensure_index_tuple(lhs_batch), _ensure_index_tuple(rhs_batch)))
    if preferred_element_type is not None:
        preferred_element_type = canonicalize_user_dtype(preferred_element_type, "dot")
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                              precision=canonicalize_precision(precision),
                              preferred_element_type=preferred_element_type,
                              out_sharding=sharding_rules.user_out_sharding(out_sharding))


def batch_matmul(lhs: Any, rhs: Any, precision: PrecisionLike = None) -> Any:
    """Matrix product over the last two axes, the leading axes being batch axes of equal rank."""
    lhs_ndim = operand_aval(lhs, "dot_general", 0).ndim
    rhs_ndim = operand_aval(rhs, "dot_general", 1).ndim
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)),
                       precision=precision)
