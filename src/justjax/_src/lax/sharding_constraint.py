"""Sharding annotations inside programs: `jax.lax.with_sharding_constraint`,
`jax.sharding.reshard`, `jax.sharding.auto_axes` and `explicit_axes`.

Both annotations are identities on values (`sharding_constraint` and `reshard`, primitives
with JAX's params, jvp, transpose and batching rules). What they change is where a value
lives:
- applied to a concrete array, the result is that array laid out as the sharding says (its
  `sharding`, `devices()` and `addressable_shards` say so);
- inside a jitted program they lower to Shardy's `sdy.sharding_constraint`, which the SPMD
  partitioner honours, and a result the annotation gives back directly is laid out as it
  says (`execution.result_shardings`).
`reshard` also changes the value's type: its split over Explicit mesh axes is the target's
(`f32[8@X]`), as JAX's sharding in types. `with_sharding_constraint` over Explicit axes only
asserts that the type already is split so (JAX's error otherwise).
A value JAX would give a shape that does not divide evenly into the blocks comes out of a
program replicated, as in JAX.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from justjax._src.compilation import execution, spmd
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import JaxprEqn, pp_eqn_default, pp_eqn_rules
from justjax._src.hlo.sharding import CONSTRAINT
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.lax import sharding_rules
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.array import Array, place, to_array
from justjax._src.runtime.mesh import AbstractMesh, AxisType, Mesh
from justjax._src.runtime.partition_spec import UNCONSTRAINED, PartitionSpec
from justjax._src.runtime.sharding import NamedSharding, Sharding, check_fits, type_sharding
from justjax._src.pytrees.tree_errors import flatten_axes

__all__ = ["with_sharding_constraint"]


def _entry_names(entry: Any) -> tuple:
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def _batch_spec(spec: PartitionSpec, dim: int, value: Any) -> PartitionSpec:
    """`spec` with `value` inserted as the entry of a new dimension `dim`."""
    parts = list(spec.partitions) + [None] * max(0, dim - len(spec))
    parts.insert(dim, value)
    return spec.update(partitions=parts)


def _placeable(sharding: Sharding) -> Sharding:
    """The sharding a value is laid out with: UNCONSTRAINED dimensions (the compiler's
    choice in JAX) are not split, and the spec is given without trailing Nones, as JAX
    gives the compiler's choices."""
    if isinstance(sharding, NamedSharding) and UNCONSTRAINED in sharding.spec.partitions:
        parts = [None if e is UNCONSTRAINED else e for e in sharding.spec.partitions]
        while parts and parts[-1] is None:
            parts.pop()
        return sharding.update(spec=sharding.spec.update(partitions=parts))
    return sharding


def _place_value(x: Any, sharding: Sharding) -> Any:
    """The concrete value `x` laid out as `sharding` says (a key array by its base array)."""
    if dtypes.is_extended(getattr(x, "dtype", None)):
        return type(x)(x._impl, _place_value(x._base_array, sharding))
    return place(to_array(x), sharding)


def over_concrete_mesh(sharding: NamedSharding, what: str) -> NamedSharding:
    """A sharding over an abstract mesh as one over the mesh in context (`jax.set_mesh`)."""
    mesh = _matching_concrete_mesh(sharding.mesh)
    if mesh is None:
        raise ValueError(f"{what} to {sharding} needs a concrete mesh: enter one with "
                         "`jax.set_mesh(mesh)` or give a NamedSharding over a `Mesh`")
    return sharding.update(mesh=mesh)


def _matching_concrete_mesh(mesh: AbstractMesh) -> Mesh | None:
    """The devices of `jax.set_mesh`'s mesh if it has `mesh`'s axes, as a mesh with
    `mesh`'s axis types (they differ inside `auto_axes` / `explicit_axes`), else None."""
    concrete = mesh_lib.get_concrete_mesh()
    if concrete.empty or concrete.shape_tuple != mesh.shape_tuple:
        return None
    if concrete.axis_types != mesh.axis_types:
        return concrete.update(axis_types=mesh.axis_types)
    return concrete


def _result_sharding(sharding: Sharding, aval: ShapedArray) -> Sharding | None:
    """How a jitted program's result annotated with `sharding` is laid out: replicated
    over the mesh when its shape does not divide evenly (JAX's rule)."""
    if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh):
        mesh = _matching_concrete_mesh(sharding.mesh)
        if mesh is None:
            return None
        sharding = sharding.update(mesh=mesh)
    sharding = _placeable(sharding)
    try:
        sharding.shard_shape(aval.shape)
    except ValueError:
        return sharding.update(spec=PartitionSpec())
    return sharding


# ---------------------------------------------------------------------------------------------
# with_sharding_constraint

sharding_constraint_p = core.Primitive("sharding_constraint")


def _context_mesh() -> Mesh | AbstractMesh:
    """The mesh a bare PartitionSpec names axes of (JAX's order: `jax.set_mesh`'s, then
    `use_abstract_mesh`'s, then the deprecated `with mesh:`'s)."""
    if not mesh_lib.get_concrete_mesh().empty or not mesh_lib.get_abstract_mesh().empty:
        return mesh_lib.get_abstract_mesh()
    return mesh_lib.get_resource_mesh()


def _user_sharding(value: Any, context_mesh: Mesh | AbstractMesh) -> Sharding:
    if isinstance(value, PartitionSpec):
        if context_mesh.empty:
            raise RuntimeError(
                "with_sharding_constraint requires a non-empty mesh in context if you are "
                "passing `PartitionSpec`s to shardings. You can define a context mesh via "
                "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and "
                "then the mesh context manager is not required.")
        return NamedSharding(context_mesh, value)
    if value is None:
        raise ValueError("One of with_sharding_constraint arguments got sharding None which "
                         "is not allowed. Please only pass `jax.sharding.Sharding` instances.")
    return value


def _check_auto(sharding: Sharding) -> None:
    if not isinstance(sharding, NamedSharding):
        return
    mesh = sharding.mesh.abstract_mesh
    types = mesh._name_to_type
    if any(types[name] != AxisType.Auto
           for entry in sharding.spec for name in _entry_names(entry)):
        raise ValueError("The spec of NamedSharding passed to with_sharding_constraint can "
                         f"only refer to Auto axes of the mesh. Got spec={sharding.spec} and "
                         f"mesh={mesh}. You probably meant to use `reshard` API?")


def _check_leaves(shardings: Any, what: str) -> None:
    for leaf in tree_util.tree_leaves(shardings):
        if not isinstance(leaf, (Sharding, PartitionSpec)):
            raise TypeError(f"{what} leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {leaf}")


def _assert_type_has(aval: ShapedArray, sharding: NamedSharding) -> None:
    have = aval.sharding.spec._normalized_spec_for_aval(aval.ndim)
    want = sharding.spec._normalized_spec_for_aval(aval.ndim)
    for h, w in zip(have, want, strict=True):
        if w is not UNCONSTRAINED and h != w:
            raise AssertionError(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of "
                f"type `Explicit`. The array sharding: {aval.sharding.spec} did not match the "
                f"sharding provided: {want}. Please use `jax.sharding.reshard` to shard your "
                "input to the sharding you want.")


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Constrains how the arrays of `x` are laid out over devices (the values pass
    unchanged).

    Args:
      x: a pytree of arrays.
      shardings: a `Sharding` or `PartitionSpec` (read against the mesh in context), or a
        pytree of them that is a prefix of `x`.
    Returns:
      `x`, each array annotated with its sharding: laid out as it says when concrete.
    """
    x_flat, tree = tree_util.tree_flatten(x)
    avals = [core.get_aval(v) for v in x_flat]
    _check_leaves(shardings, "shardings")
    user = flatten_axes("with_sharding_constraint shardings", tree, shardings)
    context_mesh = _context_mesh()
    flat = [_user_sharding(s, context_mesh) for s in user]
    for sharding, aval in zip(flat, avals, strict=True):
        check_fits(sharding, aval.shape, "with_sharding_constraint arguments", uneven=True)
    explicit = mesh_lib.get_abstract_mesh().are_all_axes_explicit
    outs = []
    for value, sharding in zip(x_flat, flat, strict=True):
        if explicit and isinstance(sharding, NamedSharding):
            # Over Explicit axes the constraint asserts the value's type (JAX's).
            _assert_type_has(core.get_aval(value), sharding)
            outs.append(value)
            continue
        _check_auto(sharding)
        unconstrained = frozenset(i for i, e in enumerate(getattr(sharding, "spec", ()))
                                  if e is UNCONSTRAINED)
        outs.append(sharding_constraint_p.bind(
            value, sharding=sharding, layout=None, context_mesh=context_mesh,
            unconstrained_dims=unconstrained))
    return tree_util.tree_unflatten(tree, outs)


def _constraint_impl(x: Any, *, sharding: Sharding, layout: Any, context_mesh: Any,
                     unconstrained_dims: frozenset) -> Any:
    aval = core.get_aval(x)
    if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh):
        sharding = _concrete_for(x, aval, sharding, context_mesh)
    check_fits(sharding, aval.shape, "with_sharding_constraint arguments")
    return _place_value(x, _placeable(sharding))


def _concrete_for(x: Any, aval: ShapedArray, sharding: NamedSharding,
                  context_mesh: Any) -> NamedSharding:
    """JAX's reading of a sharding over an abstract mesh applied to a concrete value: the
    mesh in context for a NumPy value, else the mesh the array is already laid out over.
    JAX lays arrays created under `jax.set_mesh` out over its mesh; here they stay on one
    device, so for them too the mesh in context is read when it is the sharding's."""
    in_context = _matching_concrete_mesh(sharding.mesh)
    if in_context is not None and not isinstance(getattr(x, "sharding", None), NamedSharding):
        return sharding.update(mesh=in_context)
    if not context_mesh.empty and isinstance(context_mesh, AbstractMesh) and not hasattr(
            x, "sharding"):
        return over_concrete_mesh(sharding, "with_sharding_constraint")
    if not hasattr(x, "sharding"):
        raise ValueError("Target sharding contains a `jax.sharding.AbstractMesh` which "
                         "requires the input passed should be a `jax.Array`. Got "
                         f"{type(x)} with shape {aval.str_short(short_dtypes=False)}")
    current = x.sharding
    if not isinstance(current, NamedSharding) or current.mesh.is_scalar:
        raise TypeError("The sharding on the input must be a `NamedSharding` since the "
                        "target sharding has an `AbstractMesh` in it. Got sharding type "
                        f"{type(current)} for shape {aval.str_short(short_dtypes=False)}")
    if current.mesh.shape_tuple != sharding.mesh.shape_tuple:
        raise ValueError(f"Mesh shape of the input {current.mesh.shape_tuple} does not match "
                         f"the mesh shape of the target sharding {sharding.mesh.shape_tuple} "
                         f"for shape {aval.str_short(short_dtypes=False)}")
    return sharding.update(mesh=current.mesh)


def _constraint_batcher(axis_data: batching.AxisData, vals: Any, dims: Any, *,
                        sharding: Sharding, layout: Any, context_mesh: Any,
                        unconstrained_dims: frozenset) -> tuple[Any, Any]:
    (x,), (d,) = vals, dims
    params = dict(layout=layout, context_mesh=context_mesh)
    if d is None:
        return sharding_constraint_p.bind(x, sharding=sharding,
                                          unconstrained_dims=unconstrained_dims, **params), None
    spmd = axis_data.spmd_name
    if spmd is not None and isinstance(sharding, NamedSharding):
        used = {n for entry in sharding.spec for n in _entry_names(entry)}
        if set(spmd) & used:
            raise ValueError(f"vmap spmd_axis_name {spmd} cannot appear in "
                             f"with_sharding_constraint spec, but got spec {sharding.spec}")
    unconstrained = {u + (d <= u) for u in unconstrained_dims}
    if spmd is None:
        unconstrained.add(d)
    ndim = core.get_aval(x).ndim
    if isinstance(sharding, NamedSharding) and (spmd is not None
                                                or not sharding.is_fully_replicated):
        entry = spmd if spmd is None or len(spmd) > 1 else spmd[0]
        sharding = sharding.update(spec=_batch_spec(sharding.spec, d, entry))
    if unconstrained and isinstance(sharding, NamedSharding):
        parts = list(sharding.spec.partitions) + [None] * (ndim - len(sharding.spec))
        for u in unconstrained:
            parts[u] = UNCONSTRAINED
        sharding = sharding.update(spec=PartitionSpec(*parts))
    out = sharding_constraint_p.bind(x, sharding=sharding,
                                     unconstrained_dims=frozenset(unconstrained), **params)
    return out, d


def _same(aval: ShapedArray, **params: Any) -> ShapedArray:
    return aval


def _constraint_lowering(ctx: lowering.LoweringRuleContext, x: Any, *, sharding: Any,
                         **params: Any) -> Any:
    """Shardy's `sdy.sharding_constraint` for a sharding over a mesh of several devices
    (the SPMD partitioner lays the value out so); outside a pmap's per-device program, where
    values are one device's, the value itself."""
    if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh):
        # A bare PartitionSpec names the axes of the mesh in context (`jax.set_mesh`).
        concrete = _matching_concrete_mesh(sharding.mesh)
        if concrete is not None:
            sharding = sharding.update(mesh=concrete)
    compiled = spmd.constraint_sharding(sharding, ctx.avals_in[0].shape)
    if compiled is None or ctx.module_context.manual is not None:
        return x
    return ctx.builder.one(CONSTRAINT, [x], x.type, sharding=compiled)


def _constraint_results(eqn: JaxprEqn) -> list[Sharding | None]:
    return [_result_sharding(eqn.params["sharding"], eqn.outvars[0].aval)]


sharding_constraint_p.def_abstract_eval(_same)
core.impl_rules[sharding_constraint_p] = _constraint_impl
ad.deflinear(sharding_constraint_p, lambda ct, **params: [sharding_constraint_p.bind(ct, **params)])
batching.primitive_batchers[sharding_constraint_p] = _constraint_batcher
lowering.register_lowering(sharding_constraint_p, _constraint_lowering)
execution.result_shardings[sharding_constraint_p] = _constraint_results


# ---------------------------------------------------------------------------------------------
# reshard

reshard_p = core.Primitive("reshard")


def _reshard_target(value: Any, ndim: int) -> NamedSharding:
    """`reshard`'s target for one array: a NamedSharding (a bare PartitionSpec over the
    abstract mesh in context) whose axes are all Explicit, its spec one entry per
    dimension."""
    if isinstance(value, PartitionSpec):
        value = sharding_rules.over_context_mesh(value)
    if value is not None and not isinstance(value, NamedSharding):
        raise TypeError("`out_sharding` argument of reshard only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {value} of type: "
                        f"{type(value)}")
    if value is None or value.mesh.empty:
        raise ValueError("Reshard should only be used with out_shardings which are non-None "
                         f"and have a non-empty mesh. Got sharding {value}.")
    types = value.mesh._name_to_type
    for name in [n for entry in value.spec for n in _entry_names(entry)]:
        if types[name] in (AxisType.Auto, AxisType.Manual):
            raise ValueError("PartitionSpec passed to reshard cannot contain axis names that "
                             f"are of type Auto or Manual. Got PartitionSpec: {value.spec} "
                             f"with axis name: {name} of type: {types[name]!s}.")
    return value.update(spec=value.spec._normalized_spec_for_aval(ndim))


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Moves the arrays of `xs` to new shardings over Explicit mesh axes
    (`jax.sharding.reshard`); the values pass unchanged.

    Args:
      xs: a pytree of arrays.
      out_shardings: a NamedSharding or PartitionSpec (read against the mesh in context),
        or a pytree of them that is a prefix of `xs`.
    Returns:
      `xs` laid out as the shardings say.
    """
    x_flat, tree = tree_util.tree_flatten(xs)
    targets = flatten_axes("reshard out_shardings", tree, out_shardings)
    outs = []
    for x, target in zip(x_flat, targets, strict=True):
        aval = core.get_aval(x)
        sharding = _reshard_target(target, aval.ndim)
        check_fits(sharding, aval.shape, "reshard arguments")
        concrete = (target.mesh if isinstance(target, NamedSharding)
                    and isinstance(target.mesh, Mesh) else None)
        outs.append(reshard_p.bind(x, dst_sharding=sharding.update(
            mesh=sharding.mesh.abstract_mesh), concrete_mesh=concrete))
    return tree_util.tree_unflatten(tree, outs)


def _concrete_target(dst_sharding: NamedSharding, concrete_mesh: Mesh | None
                     ) -> NamedSharding:
    if concrete_mesh is not None:
        return dst_sharding.update(mesh=concrete_mesh)
    return over_concrete_mesh(dst_sharding, "reshard")


def _reshard_impl(x: Any, *, dst_sharding: NamedSharding, concrete_mesh: Mesh | None) -> Any:
    sharding = _concrete_target(dst_sharding, concrete_mesh)
    aval = core.get_aval(x)
    check_fits(sharding, aval.shape, "reshard arguments")
    if type(x) is Array and _only_retyped(x, sharding):
        # Axes the target's mesh makes Auto (`auto_axes`) leave the layout over them to
        # the compiler: the array stays where it is, its type loses them (as JAX's).
        out = place(x, x.sharding)
        out.aval = aval.update(sharding=type_sharding(sharding, aval.ndim))
        return out
    return _place_value(x, sharding)


def _only_retyped(x: Array, target: NamedSharding) -> bool:
    """Whether `x`, laid out over `target`'s devices, is split over `target`'s Explicit axes
    as `target` is (it may be split over its other axes too)."""
    current = x.sharding
    if type(current) is not NamedSharding or current.mesh.shape_tuple != \
            target.mesh.shape_tuple or current._device_assignment != target._device_assignment:
        return False
    as_target = current.update(mesh=target.mesh)
    return type_sharding(as_target, x.ndim) == type_sharding(target, x.ndim)


def _reshard_batcher(axis_data: batching.AxisData, vals: Any, dims: Any, *,
                     dst_sharding: NamedSharding, concrete_mesh: Mesh | None
                     ) -> tuple[Any, Any]:
    (x,), (d,) = vals, dims
    if d is not None:
        spmd = axis_data.spmd_name
        entry = spmd if spmd is None or len(spmd) > 1 else spmd[0]
        dst_sharding = dst_sharding.update(spec=_batch_spec(dst_sharding.spec, d, entry))
    return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), d


def _reshard_results(eqn: JaxprEqn) -> list[Sharding | None]:
    params = eqn.params
    mesh = params["concrete_mesh"]
    sharding = params["dst_sharding"]
    if mesh is not None:
        sharding = sharding.update(mesh=mesh)
    return [_result_sharding(sharding, eqn.outvars[0].aval)]


def _pp_reshard(eqn: JaxprEqn, context: Any) -> Any:
    return pp_eqn_default(eqn, context, {})


def _reshard_abstract(aval: ShapedArray, *, dst_sharding: NamedSharding,
                      concrete_mesh: Mesh | None) -> ShapedArray:
    return aval.update(sharding=type_sharding(dst_sharding, aval.ndim))


def _reshard_transpose(ct: Any, operand: Any, *, dst_sharding: NamedSharding,
                       concrete_mesh: Mesh | None) -> list[Any]:
    """The cotangent goes back to the operand's type's sharding (JAX's rule)."""
    back = operand.aval.sharding
    if not back.mesh._any_axis_explicit:
        return [ct]
    back = back.update(spec=back.spec._normalized_spec_for_aval(operand.aval.ndim))
    return [reshard_p.bind(ct, dst_sharding=back, concrete_mesh=concrete_mesh)]


def _reshard_lowering(ctx: lowering.LoweringRuleContext, x: Any, *,
                      dst_sharding: NamedSharding, concrete_mesh: Mesh | None) -> Any:
    sharding = dst_sharding.update(mesh=concrete_mesh) if concrete_mesh is not None \
        else dst_sharding
    return _constraint_lowering(ctx, x, sharding=sharding)


reshard_p.def_abstract_eval(_reshard_abstract)
core.impl_rules[reshard_p] = _reshard_impl
ad.deflinear2(reshard_p, _reshard_transpose)
batching.primitive_batchers[reshard_p] = _reshard_batcher
lowering.register_lowering(reshard_p, _reshard_lowering)
execution.result_shardings[reshard_p] = _reshard_results
pp_eqn_rules[reshard_p] = _pp_reshard


# ---------------------------------------------------------------------------------------------
# auto_axes / explicit_axes: run a function with mesh axes of another type.

def _mesh_of(shardings: Any, name: str) -> AbstractMesh:
    found = mesh_lib.empty_abstract_mesh
    for leaf in tree_util.tree_leaves(shardings):
        if isinstance(leaf, NamedSharding):
            mesh = leaf.mesh.abstract_mesh
            if not found.empty and found != mesh:
                raise ValueError(f"Shardings passed to {name} should have the same mesh. Got "
                                 f"one mesh {found} and another {leaf.mesh}")
            found = mesh
    return found


def _new_mesh(axes: Any, axis_type: AxisType, name: str, shardings: Any = None
              ) -> tuple[AbstractMesh, AbstractMesh, tuple] | None:
    """(the mesh in use, it with `axes` made `axis_type`, the axes), or None without a
    mesh."""
    current = mesh_lib.get_abstract_mesh()
    from_shardings = _mesh_of(shardings, name)
    if from_shardings.empty and current.empty:
        return None
    if not from_shardings.empty and not current.empty and from_shardings != current:
        raise ValueError(f"Context mesh {current} must match the mesh passed to shardings "
                         f"{from_shardings}. Recommended approach is to use `jax.set_mesh` "
                         "context manager.")
    mesh = current if not current.empty else from_shardings
    axes = mesh.axis_names if axes is None else axes
    axes = axes if isinstance(axes, tuple) else (axes,)
    return mesh, mesh.update_axis_types({a: axis_type for a in axes}), axes


def _keyword(kwargs: dict, given: Any, name: str) -> Any:
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def _explicit_spec(x: Any, mesh: AbstractMesh) -> PartitionSpec:
    """`x`'s type's spec keeping only the axes that are Explicit in `mesh`."""
    aval = core.get_aval(x)
    typed = type_sharding(aval.sharding.update(mesh=mesh), aval.ndim) \
        if aval._sharding is not None else None
    return typed.spec if typed is not None else PartitionSpec(*[None] * aval.ndim)


def auto_axes(f: Callable | None = None, /, *, axes: Any = None,
              out_sharding: Any = None) -> Callable:
    """Runs `f` with the mesh's `axes` (all by default) of type Auto, then reshards its
    results to `out_sharding` (given here or as a keyword argument of the call)."""
    if f is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        target = _keyword(kwargs, out_sharding, "out_sharding")
        found = _new_mesh(axes, AxisType.Auto, "auto_axes", target)
        if found is None or set(found[0].auto_axes) == set(found[2]):
            return f(*args, **kwargs)
        with mesh_lib.use_abstract_mesh(found[1]):
            # The arguments' types lose the axes made Auto.
            args = reshard(args, tree_util.tree_map(lambda a: _explicit_spec(a, found[1]),
                                                    args))
            out = f(*args, **kwargs)
        return reshard(out, target)

    return wrapped


def explicit_axes(f: Callable | None = None, /, *, axes: Any = None,
                  in_sharding: Any = None) -> Callable:
    """Reshards the arguments to `in_sharding` (given here or as a keyword argument of the
    call) and runs `f` with the mesh's `axes` (all by default) of type Explicit."""
    if f is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        target = _keyword(kwargs, in_sharding, "in_sharding")
        found = _new_mesh(axes, AxisType.Explicit, "explicit_axes")
        if found is None:
            raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to "
                             "enter into a mesh context when using `explicit_axes` API.")
        with mesh_lib.use_abstract_mesh(found[1]):
            args = reshard(args, target)
            out = f(*args, **kwargs)
        # The results' types lose the axes that were made Explicit.
        return reshard(out, tree_util.tree_map(lambda o: _explicit_spec(o, found[0]), out))

    return wrapped
