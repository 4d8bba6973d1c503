"""Sharding in types: each primitive's rule for how its results' types are split over
`Explicit` mesh axes, from its operands' types (JAX's `sharding_rule`s).

A type split over Explicit axes (`f32[8@X,4]`) is what `jax.make_mesh` (whose axes are
Explicit by default) gives an array put on its mesh. Operations on such values follow the
types: `x + y` of `f32[8@X,1]` and `f32[1,4@Y]` is `f32[8@X,4@Y]`, a matrix product's
result is split as its free dimensions are, and operands that cannot go together are a
`ShardingTypeError` at trace time with JAX's message. The rules see specs: one entry per
dimension (None, an axis name, or a tuple of names), an unsplit type's all None.

`register(prim, rule)` declares one: `rule(specs, avals, outs, **params)` gives one spec
per result. It runs only when an operand's type is split (`core.Primitive.abstract_eval`);
a primitive without a rule keeps the types its abstract evaluation gives.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from justjax._src.compilation import dispatch
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray, shape_text
from justjax._src.interpreters import ad
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.mesh import AbstractMesh
from justjax._src.runtime.partition_spec import P
from justjax._src.runtime.sharding import DuplicateSpecError, NamedSharding, type_sharding

__all__ = ["register", "spec_of", "param_type_sharding", "params_sharding_or",
           "user_out_sharding", "over_context_mesh", "cotangent_sharding", "with_batch_dim",
           "broadcasting", "same_as", "without_axes", "varying_shape",
           "select_cases", "concatenated", "transposed", "squeezed", "broadcast_in_dim",
           "dot_general", "reshaped", "bitcast", "gather", "scatter", "unsplit_along", "tiled",
           "stacked", "unstacked", "updated_in_place"]

Spec = tuple
SpecRule = Callable[..., Sequence[Spec]]


def spec_of(aval: ShapedArray) -> Spec:
    """The entries of `aval`'s type's sharding, one per dimension."""
    spec = aval.type_spec
    return (None,) * aval.ndim if spec is None else spec


def _mesh_of(avals: Sequence[Any]) -> AbstractMesh:
    """The one mesh the operands' types are split over (JAX's error for two)."""
    mesh = None
    for aval in avals:
        sharding = getattr(aval, "_sharding", None)
        if sharding is None:
            continue
        if mesh is not None and sharding.mesh != mesh:
            raise core.ShardingTypeError(
                f"Mesh for all inputs should be equal. Got one mesh: {mesh} and another "
                f"mesh: {sharding.mesh}")
        mesh = sharding.mesh
    assert mesh is not None
    return mesh


def _typed(prim: core.Primitive, mesh: AbstractMesh, spec: Spec, avals: Sequence[Any],
           out: ShapedArray) -> NamedSharding | None:
    """The sharding of `out`'s type split as `spec` says (JAX's error when it names an axis
    twice)."""
    if all(entry is None for entry in spec):
        return None
    try:
        return NamedSharding(mesh, P(*spec))
    except DuplicateSpecError:
        inputs = ", ".join(a.str_short(short_dtypes=True) for a in avals)
        result = shape_text(out, spec, short_dtypes=True)
        raise core.ShardingTypeError(f"{prim.name} operation with inputs: {inputs} produces "
                                     f"an illegally sharded result: {result}") from None


def register(prim: core.Primitive, rule: SpecRule) -> None:
    """Declares `prim`'s sharding rule: `rule(specs, avals, outs, **params)`, one spec per
    result, where `specs` are the operands' (`spec_of`)."""
    def typed_outputs(outs: Sequence[ShapedArray], *avals: Any, **params: Any) -> list:
        mesh = _mesh_of(avals)
        specs = [spec_of(a) if isinstance(a, ShapedArray) else () for a in avals]
        out_specs = rule(specs, avals, outs, **params)
        return [_typed(prim, mesh, tuple(s), avals, o)
                for s, o in zip(out_specs, outs, strict=True)]

    core.sharding_rules[prim] = typed_outputs


def param_type_sharding(sharding: Any, ndim: int) -> NamedSharding | None:
    """The type sharding an `out_sharding` / `sharding` parameter gives a result of `ndim`
    dimensions (None: none given, or no Explicit axis named)."""
    if sharding is None:
        return None
    return type_sharding(sharding, ndim)


def params_sharding_or(name: str, rule: SpecRule) -> SpecRule:
    """`rule`, unless the primitive's parameter `name` gives the result's sharding (a
    NamedSharding; other values, such as the layout annotations of JAX's Jacobians, name no
    split)."""
    def chosen(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
               **params: Any) -> Sequence[Spec]:
        given = params.get(name)
        if isinstance(given, NamedSharding):
            return [spec_of(outs[0].update(sharding=param_type_sharding(given, outs[0].ndim)))]
        return rule(specs, avals, outs, **params)
    return chosen


# ---------------------------------------------------------------------------------------------
# The common rules.

def broadcasting(name: str) -> SpecRule:
    """Elementwise operands of equal rank (rank-0 ones broadcast): a dimension is split as
    the operands that split it are, a size-1 unsplit one giving way; two different splits of
    one dimension are an error (JAX's)."""
    def rule(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
             **params: Any) -> list[Spec]:
        ranked = [(s, a.shape) for s, a in zip(specs, avals, strict=True) if a.shape]
        if not ranked:
            return [()] * len(outs)
        result = []
        for dim in range(len(ranked[0][1])):
            entries = [(s[dim], shape[dim]) for s, shape in ranked]
            meaningful = {e for e, size in entries if not (size == 1 and e is None)}
            if len(meaningful) <= 1:
                result.append(next(iter(meaningful), None))
                continue
            split = {e for e, _ in entries if e is not None}
            if len(split) > 1:
                shown = ", ".join(str(tuple(s)) for s, _ in ranked)
                raise core.ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {shown}.")
            result.append(split.pop())
        return [tuple(result)] * len(outs)
    return rule


def same_as(position: int = 0) -> SpecRule:
    """Every result is split as operand `position` is."""
    def rule(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
             **params: Any) -> list[Spec]:
        return [specs[position]] * len(outs)
    return rule


def without_axes(axes_param: str) -> SpecRule:
    """A reduction: the operand's spec without the reduced dimensions."""
    def rule(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
             **params: Any) -> list[Spec]:
        dropped = set(params[axes_param])
        kept = tuple(e for i, e in enumerate(specs[0]) if i not in dropped)
        return [kept] * len(outs)
    return rule


def _axes_size(mesh: AbstractMesh, entry: Any) -> int:
    names = entry if isinstance(entry, tuple) else (entry,)
    return math.prod(mesh.shape[n] for n in names)


def varying_shape(what: str) -> SpecRule:
    """A result of another shape than its operand (a slice, a pad) split as the operand, where
    each changed split dimension still divides over its axes (JAX's error otherwise)."""
    def rule(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
             **params: Any) -> list[Spec]:
        operand = avals[0]
        mesh = _mesh_of(avals[:1]) if operand._sharding is not None else None
        for out in outs:
            for size, out_size, entry in zip(operand.shape, out.shape, specs[0], strict=True):
                if size == out_size or entry is None:
                    continue
                axes = _axes_size(mesh, entry)
                if out_size % axes:
                    raise core.ShardingTypeError(
                        f"{what} on sharded dims where out dim ({out_size}) is not divisible "
                        f"by mesh axes ({axes}) with spec ({entry}) is not implemented. Got "
                        f"input type={operand.str_short(True)} and output "
                        f"shape={out.shape}")
        return [specs[0]] * len(outs)
    return rule


def current_mesh_of(avals: Sequence[Any]) -> AbstractMesh:
    """The mesh of the split operands, else the abstract mesh in context."""
    if any(getattr(a, "_sharding", None) is not None for a in avals):
        return _mesh_of(avals)
    return mesh_lib.get_abstract_mesh()


def select_cases(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
                 **params: Any) -> list[Spec]:
    """`select_n`: the split cases agree (JAX's error otherwise), an unsplit one taking
    their split; a `which` of rank > 0 that is split is split as they are."""
    which, cases = avals[0], avals[1:]
    split = [c for c in cases if c._sharding is not None]
    if any(c._sharding != split[0]._sharding for c in split[1:]):
        shown = ", ".join(str(c.sharding) for c in cases)
        raise core.ShardingTypeError(f"select cases must have the same shardings, got "
                                     f"[{shown}].")
    chosen = spec_of(split[0]) if split else (None,) * outs[0].ndim
    if which.shape and which._sharding is not None and spec_of(which) != chosen:
        raise core.ShardingTypeError(
            "select `which` must be scalar or have the same sharding as cases, got `which` "
            f"sharding {which.sharding} but case sharding {cases[0].sharding}.")
    return [chosen]


def concatenated(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
                 **params: Any) -> list[Spec]:
    """`concatenate`: the split operands are split alike (JAX's error otherwise)."""
    split = [a for a in avals if a._sharding is not None]
    if any(a._sharding != split[0]._sharding for a in split[1:]):
        shown = ", ".join(str(a.sharding) for a in avals)
        raise core.ShardingTypeError("All operands should have the same sharding. Got "
                                     f"shardings {shown}")
    return [spec_of(split[0])]


def transposed(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
               permutation: Sequence[int]) -> list[Spec]:
    return [tuple(specs[0][i] for i in permutation)]


def squeezed(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
             dimensions: Sequence[int]) -> list[Spec]:
    dropped = set(dimensions)
    return [tuple(e for i, e in enumerate(specs[0]) if i not in dropped)]


def broadcast_in_dim(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
                     *, broadcast_dimensions: Sequence[int], **params: Any) -> list[Spec]:
    """The operand's dimensions keep their splits where they land; new ones are unsplit."""
    spec = [None] * outs[0].ndim
    for entry, dim in zip(specs[0], broadcast_dimensions, strict=True):
        spec[dim] = entry
    return [tuple(spec)]


def dot_general(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
                dimension_numbers: Any, **params: Any) -> list[Spec]:
    """Batch dimensions split alike give the result's batch splits, free dimensions keep
    theirs; contracting dimensions split on both sides need `out_sharding` (JAX's errors;
    a given `out_sharding` is the result's: `params_sharding_or`)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs, rhs = specs
    lhs_batch_spec = tuple(lhs[i] for i in lhs_batch)
    rhs_batch_spec = tuple(rhs[i] for i in rhs_batch)
    _check_match(lhs_batch_spec, rhs_batch_spec,
                 "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                 f"the consistent sharding, got {lhs_batch_spec} and {rhs_batch_spec}.")
    lhs_contracting_spec = tuple(lhs[i] for i in lhs_contract)
    rhs_contracting_spec = tuple(rhs[i] for i in rhs_contract)
    _check_match(lhs_contracting_spec, rhs_contracting_spec,
                 "dot_general requires contracting dimensions to have consistent sharding, "
                 f"got {lhs_contracting_spec} and {rhs_contracting_spec}.")
    if any(a is not None and b is not None
           for a, b in zip(lhs_contracting_spec, rhs_contracting_spec, strict=True)):
        raise core.ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. "
            f"Got {lhs_contracting_spec=} and {rhs_contracting_spec=}")
    lhs_used = set(lhs_contract) | set(lhs_batch)
    rhs_used = set(rhs_contract) | set(rhs_batch)
    return [tuple(lhs[i] for i in lhs_batch)
            + tuple(e for i, e in enumerate(lhs) if i not in lhs_used)
            + tuple(e for i, e in enumerate(rhs) if i not in rhs_used)]


def _check_match(lhs: Spec, rhs: Spec, message: str) -> None:
    if any(a is not None and b is not None and a != b for a, b in zip(lhs, rhs, strict=True)):
        raise core.ShardingTypeError(message)


def reshaped(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
             new_sizes: Sequence[int], dimensions: Any, **params: Any) -> list[Spec]:
    """A reshape keeps splits that still describe the same blocks: a dimension splits into
    several (its axes go to the leading ones, major first), several merge into one (split
    leading ones, then unsplit ones), size-1 dimensions come and go; anything else needs
    `out_sharding` (JAX's error)."""
    operand, spec = avals[0], specs[0]
    new_sizes = tuple(new_sizes)
    if all(e is None for e in spec):
        return [(None,) * len(new_sizes)]
    mesh = _mesh_of(avals[:1])

    def fail() -> None:
        raise core.ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via "
            f"the `out_sharding` argument of jax.lax.reshape. Got operand type: {operand}, "
            f"new sizes: {new_sizes}")

    old = [(size, entry) for size, entry in zip(operand.shape, spec, strict=True) if size != 1]
    new = [k for k, size in enumerate(new_sizes) if size != 1]
    out: list[Any] = [None] * len(new_sizes)
    i = j = 0
    while i < len(old) or j < len(new):
        if i == len(old) or j == len(new):
            fail()
        # The smallest run of old and new dimensions with equal products.
        i_end, j_end = i + 1, j + 1
        old_prod, new_prod = old[i][0], new_sizes[new[j]]
        while old_prod != new_prod:
            if old_prod < new_prod and i_end < len(old):
                old_prod *= old[i_end][0]
                i_end += 1
            elif new_prod < old_prod and j_end < len(new):
                new_prod *= new_sizes[new[j_end]]
                j_end += 1
            else:
                fail()
        group = [e for _, e in old[i:i_end]]
        targets = new[j:j_end]
        if all(e is None for e in group):
            pass
        elif len(group) == 1 and len(targets) == 1:
            out[targets[0]] = group[0]
        elif (len(group) == 1 or len(targets) == 1) and dimensions is None:
            names = _flat_names(group, fail)
            for k, parts in zip(targets, _spread(mesh, names, [new_sizes[t] for t in targets],
                                                 fail), strict=True):
                out[k] = parts
        else:
            fail()
        i, j = i_end, j_end
    return [tuple(out)]


def _flat_names(group: Sequence[Any], fail: Callable[[], None]) -> list[str]:
    """The axis names of merged dimensions, major first: split dimensions, then unsplit."""
    entries = list(group)
    while entries and entries[-1] is None:
        entries.pop()
    if None in entries:
        fail()
    return [n for e in entries for n in (e if isinstance(e, tuple) else (e,))]


def _spread(mesh: AbstractMesh, names: list[str], sizes: Sequence[int],
            fail: Callable[[], None]) -> list[Any]:
    """`names` given out to dimensions of `sizes`, major first, each taking axes while it is
    larger than 1 (each axis dividing what is left of it)."""
    left = iter(names)
    entries = []
    for size in sizes:
        taken: list[str] = []
        while size > 1:
            name = next(left, None)
            if name is None:
                break
            size, remainder = divmod(size, mesh.shape[name])
            if remainder:
                fail()
            taken.append(name)
        entries.append(tuple(taken) if taken else None)
    if next(left, None) is not None:
        fail()
    return entries


def bitcast(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
            **params: Any) -> list[Spec]:
    """`bitcast_convert_type`: the operand's splits; a trailing dimension added (to a
    narrower dtype) is unsplit, one removed (to a wider) must be."""
    spec, rank = specs[0], outs[0].ndim
    if rank > len(spec):
        return [spec + (None,)]
    if rank < len(spec) and spec[-1] is not None:
        raise core.ShardingTypeError(
            "bitcast_convert_type to a wider dtype cannot remove a sharded dimension. Got "
            f"operand type {avals[0].str_short(True)}")
    return [spec[:rank]]


def over_context_mesh(spec: P) -> NamedSharding:
    """A bare PartitionSpec as a NamedSharding over the abstract mesh in context (JAX's error
    without one)."""
    mesh = mesh_lib.get_abstract_mesh()
    if mesh.empty:
        raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                         "allowed. Please pass a NamedSharding instance or enter into a mesh "
                         f"context via `jax.set_mesh`. Got {spec}")
    return NamedSharding(mesh, spec)


def user_out_sharding(value: Any) -> NamedSharding | None:
    """An `out_sharding` argument as a primitive's parameter: a NamedSharding over the
    abstract mesh (a bare PartitionSpec names the axes of the mesh in context)."""
    if value is None:
        return None
    if isinstance(value, P):
        return over_context_mesh(value)
    if not isinstance(value, NamedSharding):
        raise TypeError("`out_sharding` should be an instance of `NamedSharding` or "
                        f"`PartitionSpec`. Got {value} of type {type(value)}")
    return value.update(mesh=value.mesh.abstract_mesh)


# The cotangent sum of the autodiff interpreter (below this layer, so declared here): its
# sharding rule, and for operands laid out over several devices its eager implementation as
# a partitioned program (its own adds on the host, which would gather them to one device).
register(ad.add_jaxvals_p, broadcasting("add_any"))
_host_add_any = core.impl_rules[ad.add_jaxvals_p]


def _add_any_impl(x: Any, y: Any) -> Any:
    if getattr(x, "_sharding", None) is not None or getattr(y, "_sharding", None) is not None:
        return dispatch.apply_primitive(ad.add_jaxvals_p, x, y)
    return _host_add_any(x, y)


core.impl_rules[ad.add_jaxvals_p] = _add_any_impl


def cotangent_sharding(primal: ShapedArray, others: Sequence[Any],
                       order: Sequence[int] | None = None) -> NamedSharding | None:
    """The `out_sharding` a transpose rule gives the product computing `primal`'s cotangent
    (JAX's: the primal's type, its dimensions taken in `order`), so that a contraction over
    dimensions split on both sides is not ambiguous; None when no type involved is split."""
    typed = [a for a in (primal, *others) if getattr(a, "_sharding", None) is not None]
    if not typed:
        return None
    spec = spec_of(primal)
    if order is not None:
        spec = tuple(spec[int(a)] for a in order)
    return NamedSharding(typed[0]._sharding.mesh, P(*spec))


def with_batch_dim(sharding: NamedSharding | None, dim: int) -> NamedSharding | None:
    """An `out_sharding` of a vmapped primitive: an unsplit batch dimension inserted at
    `dim`."""
    if sharding is None:
        return None
    entries = list(sharding.spec)
    entries.insert(dim, None)
    return sharding.update(spec=P(*entries))


def gather(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
           dimension_numbers: Any, slice_sizes: Sequence[int], **params: Any) -> list[Spec]:
    """`gather`: the result's window dimensions are split as the operand's, its batch
    dimensions as the indices' (an operand batching dimension's split passing to its
    indices dimension). A split operand dimension may only be sliced whole, and the indices
    are split over their batching dimensions only (JAX's error otherwise)."""
    operand, indices = avals
    dims = dimension_numbers
    operand_spec, indices_spec = list(specs[0]), list(specs[1])
    pairs = list(zip(dims.operand_batching_dims, dims.start_indices_batching_dims, strict=True))
    whole_or_unsplit = all(slice_sizes[d] == operand.shape[d] or operand_spec[d] is None
                           for d in dims.start_index_map)
    batches_agree = all(_agree(operand_spec[o], indices_spec[i]) for o, i in pairs)
    queries_unsplit = all(e is None for k, e in enumerate(indices_spec)
                          if k not in dims.start_indices_batching_dims)
    if not (whole_or_unsplit and batches_agree and queries_unsplit):
        raise core.ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={operand!r}, indices={indices!r}")
    for o, i in pairs:
        indices_spec[i] = indices_spec[i] or operand_spec[o]
    dropped = set(dims.collapsed_slice_dims) | set(dims.operand_batching_dims)
    window = iter(e for d, e in enumerate(operand_spec) if d not in dropped)
    batch = iter(indices_spec)
    return [tuple(next(window) if k in dims.offset_dims else next(batch)
                  for k in range(outs[0].ndim))]


def scatter(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
            dimension_numbers: Any, **params: Any) -> list[Spec]:
    """`scatter`: split as the operand, whose dimensions the updates fill take the updates'
    (or the indices') splits where the operand's are unsplit. Batching dimensions must
    agree, window dimensions be split alike (or both unsplit), and the dimensions of the
    queries unsplit (JAX's error otherwise)."""
    operand, indices, updates = avals[:3]
    dims = dimension_numbers
    operand_spec, indices_spec, updates_spec = (list(s) for s in specs[:3])
    index_vector_dim = indices.ndim - 1
    query_dims = [k for k in range(updates.ndim) if k not in dims.update_window_dims]
    updates_batching = [query_dims[i] for i in dims.scatter_indices_batching_dims]
    batches = list(zip(dims.operand_batching_dims, dims.scatter_indices_batching_dims,
                       updates_batching, strict=True))
    dropped = set(dims.inserted_window_dims) | set(dims.operand_batching_dims)
    windows = list(zip(dims.update_window_dims,
                       [d for d in range(operand.ndim) if d not in dropped], strict=True))
    ok = (all(_agree(operand_spec[o], indices_spec[i], updates_spec[u]) for o, i, u in batches)
          and all((updates.shape[u] == operand.shape[o] and updates_spec[u] == operand_spec[o])
                  or (updates_spec[u] is None and operand_spec[o] is None) for u, o in windows)
          and all(operand_spec[d] is None for d in dims.inserted_window_dims)
          and all(updates_spec[k] is None for k in query_dims if k not in updates_batching)
          and all(e is None for k, e in enumerate(indices_spec[:index_vector_dim])
                  if k not in dims.scatter_indices_batching_dims)
          and indices_spec[index_vector_dim] is None)
    if not ok:
        raise core.ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
            "the scatter update as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got operand={operand!r}, indices={indices!r}, "
            f"updates={updates!r}")
    out = list(operand_spec)
    for o, i, u in batches:
        out[o] = out[o] or indices_spec[i] or updates_spec[u]
    for u, o in windows:
        out[o] = out[o] or updates_spec[u]
    return [tuple(out)] * len(outs)


def _agree(*entries: Any) -> bool:
    """The split entries among `entries` name the same axes."""
    return len({e for e in entries if e is not None}) <= 1


def unsplit_along(param: str, message: Callable[[ShapedArray, int], str]) -> SpecRule:
    """Results split as the operand, whose dimension `params[param]` (the one scanned,
    sorted or selected along) must be unsplit (JAX's error otherwise)."""
    def rule(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray],
             **params: Any) -> list[Spec]:
        dim = params[param]
        for aval, spec in zip(avals, specs, strict=True):
            if aval._sharding is not None and spec[dim] is not None:
                raise core.ShardingTypeError(message(aval, dim))
        return [specs[0]] * len(outs)
    return rule


def tiled(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
          reps: Sequence[int]) -> list[Spec]:
    """`tile`: split as the operand, whose repeated dimensions must be unsplit."""
    for i, (r, entry) in enumerate(zip(reps, specs[0], strict=True)):
        if r != 1 and entry is not None:
            raise core.ShardingTypeError(
                f"Operand cannot be sharded on dimension {i} when the tiling is non-trivial. "
                f"Got input type: {avals[0]} with reps: {tuple(reps)}")
    return [specs[0]]


def stacked(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
            axis: int) -> list[Spec]:
    """`stack`: the operands split alike (as `concatenate`'s), the new dimension unsplit."""
    (spec,) = concatenated(specs, avals, outs)
    return [spec[:axis] + (None,) + spec[axis:]]


def unstacked(specs: Sequence[Spec], avals: Sequence[Any], outs: Sequence[ShapedArray], *,
              axis: int) -> list[Spec]:
    return [specs[0][:axis] + specs[0][axis + 1:]] * len(outs)


def updated_in_place(specs: Sequence[Spec], avals: Sequence[Any],
                     outs: Sequence[ShapedArray], **params: Any) -> list[Spec]:
    """`dynamic_update_slice`: the update is split as the operand (JAX's error otherwise)."""
    operand, update = avals[:2]
    if operand.sharding != update.sharding:
        raise core.ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {_with_axis_types(operand)} and update sharding "
            f"{_with_axis_types(update)}.")
    return [specs[0]]


def _with_axis_types(aval: ShapedArray) -> str:
    """`float32[4@X,8]({Explicit: ('X', 'Y')})`: the type and its mesh's axes by type."""
    mesh = aval.sharding.mesh
    groups: dict[Any, list[str]] = {}
    for name, kind in zip(mesh.axis_names, mesh.axis_types, strict=True):
        groups.setdefault(kind, []).append(name)
    text = ", ".join(f"{kind!r}: {tuple(names)}" for kind, names in groups.items())
    return f"{aval.str_short(short_dtypes=False)}({{{text}}})"
