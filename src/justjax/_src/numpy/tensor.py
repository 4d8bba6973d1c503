"""jax.numpy's tensor products: matmul, dot, einsum and friends, written with lax.dot_general.

Every product ends in one `dot_general` whose `preferred_element_type` is the promoted dtype of
the inputs (as JAX does), followed by a conversion only when the result must be weakly typed.
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Sequence

import numpy as np
import opt_einsum

from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.lax import convolution as lax_conv
from justjax._src.lax import dot as lax_dot
from justjax._src.lax import elementwise as lax
from justjax._src.lax import reductions as lax_reductions
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import sharding_constraint, sharding_rules
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import array_creation, dtype_ops, rearranging, shape_ops, ufuncs, util

__all__ = [
    "matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "einsum_path", "kron",
    "matvec", "vecmat", "vecdot", "convolve", "correlate", "cross",
]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _ndim(x: Any) -> int:
    return core.get_aval(x).ndim


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _result_dtype(args: Sequence[Any], preferred_element_type: Any, name: str
                  ) -> tuple[np.dtype, bool]:
    """The accumulation dtype and whether the output is weak (only when inferred)."""
    if preferred_element_type is None:
        return dtypes.result_type_and_weak(*args)
    return shape_ops.user_dtype(preferred_element_type, name), False


def _finish(result: Any, dtype: np.dtype, weak: bool) -> Any:
    return lax_struct.convert_element_type(result, dtype, weak)


def _conj_if_complex(x: Any) -> Any:
    return ufuncs.conjugate(x) if dtypes.is_complex(_dtype(x)) else x


# ---------------------------------------------------------------------------------------------
# matmul, dot and the vector products.

def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """NumPy's `dot`: contracts the last axis of `a` with the second-to-last of `b` (the only
    one if `b` is 1-D), stacking batch axes; a scalar operand multiplies. StableHLO
    `dot_general`."""
    a, b = util.ensure_arraylike("dot", a, b)
    dtype, weak = _result_dtype((a, b), preferred_element_type, "dot")
    a_ndim, b_ndim = _ndim(a), _ndim(b)
    if a_ndim == 0 or b_ndim == 0:
        contract: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    elif b_ndim == 1:
        contract = ((a_ndim - 1,), (0,))
    else:
        contract = ((a_ndim - 1,), (b_ndim - 2,))
    result = lax_dot.dot_general(a, b, (contract, ((), ())), precision=precision,
                                 preferred_element_type=dtype, out_sharding=out_sharding)
    return _finish(result, dtype, weak)


def _matmul_plan(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> dict[str, Any]:
    """How matmul maps broadcast batch axes onto one dot_general (JAX's scheme): axes of size 1
    on one side become free axes of the other, axes of size 1 on both sides are squeezed and
    re-inserted."""
    a_is_mat, b_is_mat = len(a_shape) > 1, len(b_shape) > 1
    a_batch = a_shape[:-2] if a_is_mat else ()
    b_batch = b_shape[:-2] if b_is_mat else ()
    nb = max(len(a_batch), len(b_batch))
    a_batch = (None,) * (nb - len(a_batch)) + a_batch
    b_batch = (None,) * (nb - len(b_batch)) + b_batch
    plan: dict[str, Any] = {"a_squeeze": [], "b_squeeze": [], "both_squeeze": [],
                            "a_batch": [], "b_batch": [], "idx_batch": [], "idx_a": [],
                            "idx_b": []}
    for i, (ba, bb) in enumerate(zip(a_batch, b_batch, strict=True)):
        n_batch, n_a, n_b = len(plan["idx_batch"]), len(plan["idx_a"]), len(plan["idx_b"])
        if ba is None:
            plan["idx_b"].append(i)
        elif bb is None:
            plan["idx_a"].append(i)
        elif ba == 1 and bb == 1:
            plan["a_squeeze"].append(n_batch + n_a + len(plan["a_squeeze"]))
            plan["b_squeeze"].append(n_batch + n_b + len(plan["b_squeeze"]))
            plan["both_squeeze"].append(i)
        elif ba == 1:
            plan["idx_b"].append(i)
            plan["a_squeeze"].append(n_batch + n_a + len(plan["a_squeeze"]))
        elif bb == 1:
            plan["idx_a"].append(i)
            plan["b_squeeze"].append(n_batch + n_b + len(plan["b_squeeze"]))
        elif ba == bb:
            plan["a_batch"].append(n_batch + n_a)
            plan["b_batch"].append(n_batch + n_b)
            plan["idx_batch"].append(i)
        else:
            return {}
    if a_is_mat:
        plan["idx_a"].append(nb)
    if b_is_mat:
        plan["idx_b"].append(nb + a_is_mat)
    plan["perm"] = tuple(int(p) for p in np.argsort(
        plan["idx_batch"] + plan["idx_a"] + plan["idx_b"], kind="stable"))
    return plan


def _dot_out_sharding(out_sharding: Any, plan: dict) -> Any:
    """matmul's `out_sharding` (of its result) as the one of its `dot_general`, whose result
    is transposed by `plan["perm"]` and has no dimensions where vectors were squeezed."""
    if out_sharding is None:
        return None
    sharding = sharding_rules.user_out_sharding(out_sharding)
    squeezed = set(plan["both_squeeze"])
    ndim = len(plan["perm"]) + len(squeezed)
    entries = [e for i, e in enumerate(sharding.spec._normalized_spec_for_aval(ndim))
               if i not in squeezed]
    unpermuted = [None] * len(entries)
    for position, source in enumerate(plan["perm"]):
        unpermuted[source] = entries[position]
    return sharding.update(spec=sharding.spec.update(partitions=unpermuted))


def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None,
           out_sharding: Any = None) -> Any:
    """Matrix product with NumPy's rules: 1-D operands are vectors (their axis is dropped from
    the result) and leading batch axes broadcast. StableHLO `dot_general`."""
    a, b = util.ensure_arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if _ndim(x) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {_ndim(x)}")
    dtype, weak = _result_dtype((a, b), preferred_element_type, "matmul")
    b_is_mat = _ndim(b) > 1
    plan = _matmul_plan(_shape(a), _shape(b))
    if not plan:
        aval_a, aval_b = core.get_aval(a), core.get_aval(b)
        raise ValueError("Incompatible types for matmul arguments: "
                         f"{aval_a.str_short(short_dtypes=False)} and "
                         f"{aval_b.str_short(short_dtypes=False)}")
    a = lax_struct.squeeze(a, tuple(plan["a_squeeze"]))
    b = lax_struct.squeeze(b, tuple(plan["b_squeeze"]))
    dims = (((_ndim(a) - 1,), (_ndim(b) - 1 - int(b_is_mat),)),
            (tuple(plan["a_batch"]), tuple(plan["b_batch"])))
    out = lax_dot.dot_general(a, b, dims, precision=precision, preferred_element_type=dtype,
                              out_sharding=_dot_out_sharding(out_sharding, plan))
    result = lax_struct.transpose(out, plan["perm"])
    if plan["both_squeeze"]:
        result = lax_struct.expand_dims(result, tuple(plan["both_squeeze"]))
    return _finish(result, dtype, weak)


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product of the flattened arrays, conjugating `a`."""
    a, b = util.ensure_arraylike("vdot", a, b)
    a = _conj_if_complex(a)
    return dot(shape_ops.ravel(a), shape_ops.ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Contracts the last axes of `a` and `b` (a product if either is a scalar)."""
    a, b = util.ensure_arraylike("inner", a, b)
    if _ndim(a) == 0 or _ndim(b) == 0:
        if preferred_element_type is not None:
            a = dtype_ops.astype(a, preferred_element_type)
            b = dtype_ops.astype(b, preferred_element_type)
        return ufuncs.multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(a: Any, b: Any, out: None = None) -> Any:
    """`a.ravel()[:, None] * b.ravel()[None, :]`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = util.ensure_arraylike("outer", a, b)
    a, b = util.promote_dtypes(a, b)
    a = shape_ops.ravel(a)
    column = lax_struct.broadcast_in_dim(a, (_shape(a)[0], 1), (0,))
    b = shape_ops.ravel(b)
    return lax.mul(column, lax_struct.broadcast_in_dim(b, (1, _shape(b)[0]), (1,)))


def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2, *, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Contracts the last `axes` axes of `a` with the first of `b`, or the given axis lists."""
    a, b = util.ensure_arraylike("tensordot", a, b)
    a_ndim, b_ndim = _ndim(a), _ndim(b)
    dtype, weak = _result_dtype((a, b), preferred_element_type, "tensordot")
    if type(axes) is int:
        if axes > min(a_ndim, b_ndim):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({_shape(a)} and {_shape(b)})")
        contract = (tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes)))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contract = ((util.canonicalize_axis(ax1, a_ndim),),
                        (util.canonicalize_axis(ax2, b_ndim),))
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError("tensordot requires axes lists to have equal length, got "
                                f"{ax1} and {ax2}.")
            contract = (tuple(util.canonicalize_axis(i, a_ndim) for i in ax1),
                        tuple(util.canonicalize_axis(i, b_ndim) for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                        "lists/tuples of ints.")
    result = lax_dot.dot_general(a, b, (contract, ((), ())), precision=precision,
                                 preferred_element_type=dtype, out_sharding=out_sharding)
    return _finish(result, dtype, weak)


def _vectorized_contraction(x1: Any, x2: Any, core1: int, core2: int, contract: tuple[int, int],
                            signature: str, **dot_kwargs: Any) -> Any:
    """A gufunc-style product: the trailing `core1`/`core2` axes meet in one contraction
    (positions `contract` within the core axes) and the leading axes broadcast, as JAX's
    vectorized matmul/vdot batch into a single dot_general."""
    s1, s2 = _shape(x1), _shape(x2)
    if s1[len(s1) - core1 + contract[0]] != s2[len(s2) - core2 + contract[1]]:
        label = signature.split("),(")[0].strip("(").split(",")[contract[0]]
        raise ValueError(f"inconsistent size for core dimension {label!r}: "
                         f"{s2[len(s2) - core2 + contract[1]]} vs "
                         f"{s1[len(s1) - core1 + contract[0]]} on vectorized function with "
                         f"excluded=frozenset() and signature={signature!r}")
    b1, b2 = s1[:len(s1) - core1], s2[:len(s2) - core2]
    batch_shape = util.broadcast_shapes(b1, b2)
    nb = len(batch_shape)
    pad1, pad2 = nb - len(b1), nb - len(b2)
    squeeze1 = tuple(i for i, d in enumerate(b1) if d == 1)
    squeeze2 = tuple(i for i, d in enumerate(b2) if d == 1)
    x1 = lax_struct.squeeze(x1, squeeze1)
    x2 = lax_struct.squeeze(x2, squeeze2)
    pos1 = {p: i for i, p in enumerate(p for p in range(nb) if p >= pad1 and
                                       b1[p - pad1] != 1)}
    pos2 = {p: i for i, p in enumerate(p for p in range(nb) if p >= pad2 and
                                       b2[p - pad2] != 1)}
    batch = [p for p in range(nb) if p in pos1 and p in pos2]
    free1 = [p for p in range(nb) if p in pos1 and p not in pos2]
    free2 = [p for p in range(nb) if p in pos2 and p not in pos1]
    expanded = [p for p in range(nb) if p not in pos1 and p not in pos2]
    c1, c2 = len(pos1) + contract[0], len(pos2) + contract[1]
    dims = (((c1,), (c2,)), (tuple(pos1[p] for p in batch), tuple(pos2[p] for p in batch)))
    out = lax_dot.dot_general(x1, x2, dims, **dot_kwargs)
    core_out = _ndim(out) - len(batch) - len(free1) - len(free2)
    n1_core = core1 - 1
    # dot_general gives batch, x1's free axes (batch-only then core), x2's free axes.
    order = batch + free1 + ["c1"] * n1_core + free2 + ["c2"] * (core_out - n1_core)
    labels = [p for p in range(nb) if p not in expanded]
    perm = [order.index(p) for p in labels]
    perm += [i for i, o in enumerate(order) if isinstance(o, str)]
    out = lax_struct.transpose(out, perm)
    return lax_struct.expand_dims(out, tuple(expanded)) if expanded else out


def _vector_dot_kwargs(x1: Any, x2: Any, precision: Any, preferred_element_type: Any
                       ) -> tuple[dict[str, Any], np.dtype, bool]:
    dtype, weak = _result_dtype((x1, x2), preferred_element_type, "dot")
    return {"precision": precision, "preferred_element_type": dtype}, dtype, weak


@util.jitted_as_in_jax
def matvec(x1: Any, x2: Any, /) -> Any:
    """Batched matrix-vector product: (..., M, N) x (..., N) -> (..., M)."""
    x1, x2 = util.ensure_arraylike("matvec", x1, x2)
    _check_core_ndim(x1, 2, x2, 1, "(n,m),(m)->(n)")
    kwargs, dtype, weak = _vector_dot_kwargs(x1, x2, None, None)
    out = _vectorized_contraction(x1, x2, 2, 1, (1, 0), "(n,m),(m)->(n)", **kwargs)
    return _finish(out, dtype, weak)


@util.jitted_as_in_jax
def vecmat(x1: Any, x2: Any, /) -> Any:
    """Batched conjugate vector-matrix product: (..., M) x (..., M, N) -> (..., N)."""
    x1, x2 = util.ensure_arraylike("matvec", x1, x2)
    _check_core_ndim(x1, 1, x2, 2, "(n),(n,m)->(m)")
    x1 = _conj_if_complex(x1)
    kwargs, dtype, weak = _vector_dot_kwargs(x1, x2, None, None)
    out = _vectorized_contraction(x1, x2, 1, 2, (0, 0), "(n),(n,m)->(m)", **kwargs)
    return _finish(out, dtype, weak)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Conjugate dot product along `axis`, broadcasting the other axes."""
    x1, x2 = util.ensure_arraylike("jnp.vecdot", x1, x2)
    if _shape(x1)[axis] != _shape(x2)[axis]:
        raise ValueError(f"axes must match; got shapes {_shape(x1)} and {_shape(x2)} with "
                         f"axis={axis}")
    x1 = _conj_if_complex(shape_ops.moveaxis(x1, axis, -1))
    x2 = shape_ops.moveaxis(x2, axis, -1)
    kwargs, dtype, weak = _vector_dot_kwargs(x1, x2, precision, preferred_element_type)
    out = _vectorized_contraction(x1, x2, 1, 1, (0, 0), "(n),(n)->()", **kwargs)
    return _finish(out, dtype, weak)


def _check_core_ndim(x1: Any, n1: int, x2: Any, n2: int, signature: str) -> None:
    for x, n in ((x1, n1), (x2, n2)):
        if _ndim(x) < n:
            raise ValueError(f"input with shape {_shape(x)!r} does not have enough dimensions "
                             f"for all core dimensions in signature {signature!r}")


@util.jitted_as_in_jax
def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks `a[i, j] * b`."""
    util.check_arraylike("kron", a, b)
    a, b = util.promote_dtypes(a, b)
    if _ndim(a) < _ndim(b):
        a = lax_struct.expand_dims(a, tuple(range(_ndim(b) - _ndim(a))))
    elif _ndim(b) < _ndim(a):
        b = lax_struct.expand_dims(b, tuple(range(_ndim(a) - _ndim(b))))
    a_reshaped = lax_struct.expand_dims(a, tuple(range(1, 2 * _ndim(a), 2)))
    b_reshaped = lax_struct.expand_dims(b, tuple(range(0, 2 * _ndim(b), 2)))
    out_shape = tuple(int(d) for d in np.multiply(_shape(a), _shape(b)))
    return lax_struct.reshape(lax.mul(a_reshaped, b_reshaped), out_shape)


# ---------------------------------------------------------------------------------------------
# einsum.

class _Unoptimized(opt_einsum.paths.PathOptimizer):
    """Contracts operands left to right, as `optimize=False` asks."""

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> list[tuple[int, int]]:
        return [(0, 1)] * (len(inputs) - 1)


def _path_type(optimize: Any) -> Any:
    if optimize is True:
        return "optimal"
    if optimize is False:
        return _Unoptimized()
    return optimize


class _StandIn:
    """An operand for opt_einsum's path search: its shape with symbolic dimensions as 8."""

    def __init__(self, x: Any) -> None:
        self.shape = tuple(8 if is_symbolic_dim(d) else d for d in np.shape(x))
        self.dtype = getattr(x, "dtype", None)


def _contract_path(*operands: Any, **kwargs: Any) -> tuple[list, Any]:
    """opt_einsum's `contract_path`; operands with symbolic dimensions are searched with
    stand-ins (a symbolic dimension counted as 8, as JAX does) and given back as they are."""
    if not any(hasattr(x, "shape") and not core.is_constant_shape(x.shape) for x in operands):
        return opt_einsum.contract_path(*operands, **kwargs)
    stand_ins = [_StandIn(x) if hasattr(x, "shape") else x for x in operands]
    originals = {id(s): x for s, x in zip(stand_ins, operands, strict=True)}
    arrays, contractions = opt_einsum.contract_path(*stand_ins, **kwargs)
    return [originals.get(id(a), a) for a in arrays], contractions


def einsum(subscripts: Any, /, *operands: Any, out: None = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Callable[..., Any] | None = None, out_sharding: Any = None) -> Any:
    """Einstein summation, as a sequence of pairwise `dot_general`s (and reductions for
    indices summed within one operand), in the order opt_einsum's `contract_path` picks.

    Accepts the subscript-string form (with `...`) and the interleaved form
    `einsum(a, [0, 1], b, [1, 2], [0, 2])`.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    all_operands = (subscripts, *operands)
    operand_arrays, contractions = _contract_path(
        *all_operands, einsum_call=True, use_blas=True, optimize=_path_type(optimize))
    contractions = tuple((c[0], frozenset(c[1]), c[2]) for c in contractions)
    util.check_arraylike("einsum", *operand_arrays)
    arrays = [util.asarray_lite(x) for x in operand_arrays]

    def contract(*xs: Any) -> Any:
        return _einsum(list(xs), contractions, precision, preferred_element_type,
                       _dot_general or lax_dot.dot_general)

    if out_sharding is None:
        return contract(*arrays)
    # The result split as `out_sharding` says: the contractions run with its Explicit axes
    # Auto (they may contract split dimensions), the result resharded.
    sharding = sharding_rules.user_out_sharding(out_sharding)
    return sharding_constraint.auto_axes(contract, axes=sharding.mesh.explicit_axes,
                                         out_sharding=sharding)(*arrays)


def einsum_path(subscripts: Any, /, *operands: Any, optimize: Any = "auto") -> tuple[list, Any]:
    """The contraction order `einsum` would use, and opt_einsum's printable report."""
    if isinstance(optimize, bool):
        optimize = "optimal" if optimize else _Unoptimized()
    return opt_einsum.contract_path(subscripts, *operands, optimize=optimize)


def _removechars(s: str, chars: str) -> str:
    return s.translate(str.maketrans(dict.fromkeys(chars)))


def _einsum_sum(x: Any, axes: Sequence[int], dtype: np.dtype) -> Any:
    if dtypes.result_type(x, dtype) != _dtype(x):
        x = dtype_ops.astype(x, dtype)
    axes = tuple(axes)
    if _dtype(x) == dtypes.bool_:
        return lax_reductions.reduce_or(x, axes)
    return lax_reductions.reduce_sum(x, axes)


def _delta(shape: tuple[int, ...], axes: Sequence[int]) -> Any:
    """A boolean Kronecker delta over `axes` of an array of `shape` (JAX's `lax._delta`)."""
    base_shape = tuple(shape[a] for a in axes)
    iotas = [lax_struct.broadcasted_iota(np.uint32, base_shape, i) for i in range(len(base_shape))]
    eyes = [lax.eq(i1, i2) for i1, i2 in zip(iotas[:-1], iotas[1:], strict=True)]
    result = eyes[0]
    for eye in eyes[1:]:
        result = lax.bitwise_and(result, eye)
    return lax_struct.broadcast_in_dim(result, shape, tuple(axes))


def _sum_uniques(operand: Any, names: str, uniques: Sequence[str], dtype: np.dtype
                 ) -> tuple[Any, str]:
    if uniques:
        operand = _einsum_sum(operand, [names.index(n) for n in uniques], dtype)
        names = _removechars(names, "".join(uniques))
    return operand, names


def _sum_repeats(operand: Any, names: str, counts: collections.Counter, keep_names: str,
                 dtype: np.dtype) -> tuple[Any, str]:
    """Contracts each repeated index of one operand against an identity (its diagonal)."""
    for name, count in counts.items():
        if count > 1:
            axes = [i for i, n in enumerate(names) if n == name]
            eye = _delta(_shape(operand), axes)
            zeros = lax_struct.broadcast_in_dim(shape_ops._const(operand, 0), _shape(operand), ())
            operand = lax_selection.select(eye, operand, zeros)
            if name not in keep_names:
                operand = _einsum_sum(operand, axes, dtype)
                names = names.replace(name, "")
            else:
                operand = _einsum_sum(operand, axes[:-1], dtype)
                names = names.replace(name, "", count - 1)
    return operand, names


def _filter_singleton_dims(operand: Any, names: str, other_shape: tuple[int, ...],
                           other_names: str) -> tuple[Any, str]:
    """Drops size-1 axes whose partner in the other operand is not size 1."""
    keep = [_shape(operand)[i] != 1 or j == -1 or other_shape[j] == 1
            for i, j in enumerate(map(other_names.find, names))]
    squeezed = tuple(i for i, k in enumerate(keep) if not k)
    return (lax_struct.squeeze(operand, squeezed),
            "".join(n for n, k in zip(names, keep, strict=True) if k))


def _einsum(operands: list[Any], contractions: Sequence[tuple[Any, frozenset, str]],
            precision: Any, preferred_element_type: Any, dot_general: Callable[..., Any]) -> Any:
    dtype, weak = _result_dtype(operands, preferred_element_type, "einsum")
    for operand_indices, contracted_set, einstr in contractions:
        contracted = sorted(contracted_set)
        input_str, result_names = einstr.split("->")
        input_names = input_str.split(",")
        if len(operand_indices) == 1:
            operand = operands.pop(operand_indices[0])
            names, = input_names
            counts = collections.Counter(names)
            uniques = [n for n in contracted if counts[n] == 1]
            operand, names = _sum_uniques(operand, names, uniques, dtype)
            operand, names = _sum_repeats(operand, names, counts, result_names, dtype)
        elif len(operand_indices) == 2:
            lhs, rhs = map(operands.pop, operand_indices)
            operand, names = _einsum_pair(lhs, rhs, input_names, result_names, contracted,
                                          dtype, precision, dot_general)
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
                "operands. Typically this means you've passed an unsupported path to the "
                "einsum optimize parameter.")
        if names != result_names:
            operand = lax_struct.transpose(operand, tuple(names.index(n) for n in result_names))
        operands.append(operand)
    return _finish(operands[0], dtype, weak)


def _einsum_pair(lhs: Any, rhs: Any, input_names: list[str], result_names: str,
                 contracted: list[str], dtype: np.dtype, precision: Any,
                 dot_general: Callable[..., Any]) -> tuple[Any, str]:
    """One pairwise contraction as a dot_general, after summing indices only one side has."""
    lhs_names, rhs_names = input_names
    lhs, lhs_names = _filter_singleton_dims(lhs, lhs_names, _shape(rhs), rhs_names)
    rhs, rhs_names = _filter_singleton_dims(rhs, rhs_names, _shape(lhs), lhs_names)
    lhs_counts = collections.Counter(lhs_names)
    rhs_counts = collections.Counter(rhs_names)
    lhs_uniques = [n for n in contracted if lhs_counts[n] == 1 and rhs_counts[n] == 0]
    lhs, lhs_names = _sum_uniques(lhs, lhs_names, lhs_uniques, dtype)
    rhs_uniques = [n for n in contracted if rhs_counts[n] == 1 and lhs_counts[n] == 0]
    rhs, rhs_names = _sum_uniques(rhs, rhs_names, rhs_uniques, dtype)
    lhs, lhs_names = _sum_repeats(lhs, lhs_names, lhs_counts, result_names + rhs_names, dtype)
    rhs, rhs_names = _sum_repeats(rhs, rhs_names, rhs_counts, result_names + lhs_names, dtype)
    either = set(lhs_names) | set(rhs_names)
    contracted = [n for n in contracted if n in either]
    both = set(lhs_names) & set(rhs_names)
    batch_names = [n for n in result_names if n in both]
    lhs_batch = tuple(lhs_names.find(n) for n in batch_names)
    rhs_batch = tuple(rhs_names.find(n) for n in batch_names)
    lhs_cont = tuple(lhs_names.index(n) for n in contracted)
    rhs_cont = tuple(rhs_names.index(n) for n in contracted)
    batch_str = "".join(batch_names)
    deleted = batch_str + "".join(contracted)
    rest_lhs = _removechars(lhs_names, deleted)
    rest_rhs = _removechars(rhs_names, deleted)
    # opt_einsum tends to contract right to left, so (rhs, lhs) order often needs no transpose.
    names = batch_str + rest_rhs + rest_lhs
    if names == result_names:
        out = dot_general(rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)), precision,
                          preferred_element_type=dtype)
        return out, names
    names = batch_str + rest_lhs + rest_rhs
    out = dot_general(lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)), precision,
                      preferred_element_type=dtype)
    return out, names


# ---------------------------------------------------------------------------------------------
# Convolution and the cross product.

@util.jitted_as_in_jax(static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(x: Any, y: Any, mode: str, op: str, precision: Any,
          preferred_element_type: Any = None) -> Any:
    """`convolve` or `correlate` of 1-D arrays, jitted as JAX jits it."""
    if _ndim(x) != 1 or _ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = util.promote_dtypes_inexact(x, y)
    else:
        x, y = util.promote_dtypes(x, y)
    if _shape(x)[0] == 0 or _shape(y)[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {_shape(x)} and {_shape(y)}.")
    reverse_out = False
    if op == "correlate":
        y = _conj_if_complex(y)
        if _shape(x)[0] < _shape(y)[0]:
            x, y = y, x
            reverse_out = True
    elif op == "convolve":
        if _shape(x)[0] < _shape(y)[0]:
            x, y = y, x
        y = rearranging.flip(y)
    n = _shape(y)[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(n // 2, n - n // 2 - 1)]
    elif mode == "full":
        padding = [(n - 1, n - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    lhs = lax_struct.broadcast_in_dim(x, (1, 1, _shape(x)[0]), (2,))
    rhs = lax_struct.broadcast_in_dim(y, (1, 1, n), (2,))
    result = lax_conv.conv_general_dilated(lhs, rhs, (1,), padding, precision=precision,
                                           preferred_element_type=preferred_element_type)
    if reverse_out:
        result = lax_slicing.rev(result, (2,))
    return lax_struct.squeeze(result, (0, 1))


@util.jitted_as_in_jax(static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Discrete linear convolution of two 1-D arrays (StableHLO `convolution`)."""
    a, v = util.ensure_arraylike("convolve", a, v)
    return _conv(a, v, mode=mode, op="convolve", precision=precision,
                 preferred_element_type=preferred_element_type)


@util.jitted_as_in_jax(static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Cross-correlation of two 1-D arrays (`v` conjugated)."""
    a, v = util.ensure_arraylike("correlate", a, v)
    return _conv(a, v, mode=mode, op="correlate", precision=precision,
                 preferred_element_type=preferred_element_type)


@util.jitted_as_in_jax(static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross product of 2- or 3-vectors along the given axes."""
    util.check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = shape_ops.moveaxis(a, axisa, -1)
    b = shape_ops.moveaxis(b, axisb, -1)
    if _shape(a)[-1] not in (2, 3) or _shape(b)[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if _shape(a)[-1] == 2 and _shape(b)[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if _shape(a)[-1] == 3 else array_creation.zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if _shape(b)[-1] == 3 else array_creation.zeros_like(b0)
    c = array_creation.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return shape_ops.moveaxis(c, 0, axisc)
