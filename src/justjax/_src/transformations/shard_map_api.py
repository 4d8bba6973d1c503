"""`jax.shard_map`: a function written for one device's blocks, mapped over a mesh.

`shard_map(f, mesh=..., in_specs=..., out_specs=...)(*args)` checks the specs against the
mesh and the arguments (JAX 0.10.2's errors), traces `f` on each argument's block with the
manual axes bound (collectives over them work inside), checks with `check_vma` that results
the out_specs call replicated over an axis do not vary along it (`varying_axes.py`), and binds
the `shard_map` primitive (`shard_map.py`): run at once on concrete arrays, staged under a
transformation.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.interpreters import partial_eval as pe
from justjax._src.interpreters import staging
from justjax._src.pytrees import tree_util
from justjax._src.pytrees.tree_errors import prefix_errors
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.array import Array
from justjax._src.runtime.mesh import AbstractMesh, AxisType, Mesh
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.runtime.sharding import NamedSharding, _check_spec
from justjax._src.transformations import shard_map as shard_map_lib
from justjax._src.transformations import shard_map_eager, varying_axes

__all__ = ["shard_map"]


_LEAF = object()  # stands for a leaf of the arguments or results when matching specs


class _Infer:
    """`in_specs` not given: each argument's spec is read off its sharding."""

    def __repr__(self) -> str:
        return "Infer"


Infer = _Infer()


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = Infer,
              mesh: Mesh | AbstractMesh | None = None, axis_names: Any = frozenset(),
              check_vma: bool = True) -> Any:
    """Maps `f` over the devices of `mesh`: each device runs `f` on its blocks of the
    arguments (`in_specs`: a PartitionSpec per argument, or a prefix of the arguments'
    pytree; P() gives the whole value), and the results are assembled from the devices'
    blocks as `out_specs` say. Collectives over the mesh axes (`psum`, `all_gather`,
    `ppermute`, `axis_index` ...) work inside `f`.

    Args:
      f: the per-device function (omitted: returns a decorator).
      out_specs: a PartitionSpec per result, or a prefix of the results' pytree.
      in_specs: as `out_specs`, for the positional arguments; omitted, read off the
        arguments' shardings (`NamedSharding`s over `mesh`; P() for other values).
      mesh: the mesh; by default the one set with `jax.set_mesh`.
      axis_names: the mesh axes `f` is per-device over (by default all); along the others
        `f` sees whole values.
      check_vma: check that a result the out_specs replicate over an axis cannot vary along
        it (ValueError otherwise).
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")
    mapped = _ShardMapped(f, out_specs, in_specs, mesh, frozenset(axis_names), check_vma)

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        return mapped(args)

    return wrapped


class _ShardMapped:
    def __init__(self, f: Callable, out_specs: Any, in_specs: Any, mesh: Any,
                 axis_names: frozenset, check_vma: bool) -> None:
        self.f = f
        self.name = getattr(f, "__name__", type(f).__name__)
        self.out_specs = out_specs
        self.in_specs = in_specs
        self.given_mesh = mesh
        self.axis_names = axis_names
        self.check_vma = check_vma

    def _mesh(self) -> Mesh:
        mesh = self.given_mesh
        if mesh is None:
            mesh = mesh_lib.get_concrete_mesh()
            if mesh.empty:
                mesh = mesh_lib.get_resource_mesh()
            if mesh.empty:
                raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` "
                                 "to enter into a mesh context")
        if isinstance(mesh, AbstractMesh):
            concrete = mesh_lib.get_concrete_mesh()
            if concrete.empty or concrete.abstract_mesh != mesh:
                raise ValueError(f"shard_map over the abstract mesh {mesh} needs the concrete "
                                 "mesh of its devices set with `jax.set_mesh`")
            mesh = concrete
        if not isinstance(mesh, Mesh):
            raise TypeError(f"shard_map requires a `jax.sharding.Mesh` instance for its "
                            f"second argument, but got {mesh} of type {type(mesh)}.")
        context = mesh_lib.get_abstract_mesh()
        if self.given_mesh is not None and not context.empty \
                and context != mesh.abstract_mesh:
            raise ValueError(f"The context mesh {context} should match the mesh passed to "
                             f"shard_map {mesh}")
        return mesh

    def __call__(self, args: tuple[Any, ...]) -> Any:
        mesh = self._mesh()
        manual = self.axis_names or frozenset(mesh.axis_names)
        unknown = [a for a in manual if a not in mesh.axis_names]
        if unknown:
            raise ValueError(f"shard_map axis_names {sorted(map(str, unknown))} are not axes "
                             f"of the mesh {mesh}")
        flat, in_tree = tree_util.tree_flatten(args)
        in_specs = (self._inferred(flat, mesh, manual) if self.in_specs is Infer
                    else self._broadcast(self.in_specs, in_tree, "in_specs"))
        avals = [core.get_aval(x) for x in flat]
        for spec in in_specs:
            self._check_axes(spec, mesh, manual, "in_specs")
        self._check_args(flat, in_tree, avals, in_specs, mesh, args)
        self._check_types(avals, in_specs, mesh, manual)
        block_avals = [shard_map_lib.block_aval(a, s, mesh, manual)
                       for a, s in zip(avals, in_specs, strict=True)]
        # Under check_vma, a block's type says which manual axes it varies along.
        tracked = tuple(a for a in mesh.axis_names if a in manual) if self.check_vma else ()
        block_avals = [a.update(vma=tuple(n for n in tracked
                                          if n in shard_map_lib.spec_axes(s)))
                       for a, s in zip(block_avals, in_specs, strict=True)]
        found: dict[str, Any] = {}

        def per_device(*blocks: Any) -> list[Any]:
            out_flat, out_tree = tree_util.tree_flatten(
                self.f(*tree_util.tree_unflatten(in_tree, blocks)))
            found["out_tree"] = out_tree
            return out_flat

        if (isinstance(core.current_trace(), core.EvalTrace)
                and not any(isinstance(x, core.Tracer) or dtypes.is_extended(a.dtype)
                            for x, a in zip(flat, avals, strict=True))):
            return self._run_eagerly(per_device, flat, in_specs, mesh, manual, found)
        with shard_map_lib.body_axis(mesh, manual), core.tracking_varying_axes(tracked):
            closed = staging.trace_to_jaxpr(per_device, block_avals,
                                            staging.debug_info("shard_map", self.f))
        out_tree = found["out_tree"]
        out_specs = self._broadcast(self.out_specs, out_tree, "out_specs")
        for spec in out_specs:
            self._check_axes(spec, mesh, manual, "out_specs")
        self._check_outs(closed.out_avals, out_specs)
        consts = list(closed.consts)
        body = ClosedJaxpr(pe.name_unused_outputs(pe.convert_constvars_jaxpr(closed.jaxpr)), [])
        all_in_specs = [PartitionSpec()] * len(consts) + list(in_specs)
        if self.check_vma:
            varying = varying_axes.infer(body.jaxpr, [shard_map_lib.spec_axes(s) & manual
                                                      for s in all_in_specs])
            self._check_replication(varying, out_specs, mesh, manual)
        outs = shard_map_lib.bind([*consts, *flat], body, mesh, all_in_specs, out_specs,
                                  newly_manual_axes=manual, check_vma=self.check_vma)
        return tree_util.tree_unflatten(out_tree, outs)

    # -- specs ----------------------------------------------------------------------------------

    def _broadcast(self, specs: Any, treedef: Any, what: str) -> list[PartitionSpec]:
        """`specs` (a prefix of the pytree `treedef` describes) repeated for each of its
        leaves; JAX's prefix error else."""
        if isinstance(specs, PartitionSpec):
            return [specs] * treedef.num_leaves
        tree = tree_util.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)
        leaves: list[Any] = []

        def add(spec: Any, subtree: Any) -> None:
            leaves.extend([spec] * len(tree_util.tree_leaves(subtree)))

        # A None spec is a leaf: the value whole on every device (P()).
        try:
            tree_util.tree_map(add, specs, tree, is_leaf=lambda x: x is None)
        except ValueError:
            raise prefix_errors(specs, tree, is_leaf=lambda x: x is None)[0](
                f"shard_map {what}") from None
        for spec in leaves:
            if spec is not None and not isinstance(spec, PartitionSpec):
                raise TypeError(f"shard_map {what} must be PartitionSpecs (or pytrees of them),"
                                f" got {spec!r}")
        return [PartitionSpec() if s is None else s for s in leaves]

    def _inferred(self, flat: Sequence[Any], mesh: Mesh, manual: frozenset
                  ) -> list[PartitionSpec]:
        """in_specs read off the arguments' types, as JAX reads them: only over Explicit
        axes (JAX's TypeError otherwise).

        Raises:
          TypeError: a manual axis is not Explicit (JAX's message).
        """
        auto = frozenset(a for a in manual if mesh._name_to_type[a] != AxisType.Explicit)
        if auto:
            kind = mesh._name_to_type[next(iter(auto))]
            raise TypeError("shard_map in_specs argument must be a pytree of "
                            "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                            f"axis_names={manual} are of type {kind}")
        specs = []
        for x in flat:
            aval = core.get_aval(x)
            specs.append(PartitionSpec(*(aval.type_spec or (None,) * aval.ndim)))
        return specs

    @staticmethod
    def _check_axes(spec: PartitionSpec, mesh: Mesh, manual: frozenset, what: str) -> None:
        for axis in shard_map_lib.spec_axes(spec):
            if axis not in manual:
                raise ValueError(f"shard_map {what} argument must refer to an axis marked as "
                                 f"manual ({manual}), but:\n\n  {what} refers to {axis!r}\n\n"
                                 f"Check the {what} values passed to shard_map.")
        _check_spec(mesh, spec)

    def _mesh_text(self, mesh: Mesh) -> str:
        return (f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis "
                f"names {tuple(mesh.axis_names)}.")

    @staticmethod
    def _check_types(avals: Sequence[ShapedArray], specs: Sequence[PartitionSpec], mesh: Mesh,
                     manual: frozenset) -> None:
        """Over a mesh all of whose axes are Explicit and manual here, each in_spec must be
        its argument's type's (JAX's error: shard_map does not reshard)."""
        types = mesh._name_to_type
        if manual != frozenset(mesh.axis_names) or any(
                types[a] != AxisType.Explicit for a in manual):
            return
        for aval, spec in zip(avals, specs, strict=True):
            spec = spec._normalized_spec_for_aval(aval.ndim)
            have = aval.sharding.spec
            if have != spec:
                raise ValueError(
                    f"in_specs passed to shard_map: {spec} does not match the specs of the "
                    f"input: {have} for arg: {aval}. `in_specs` is an optional argument so you "
                    "can omit specifying it and shard_map will infer the in_specs from the "
                    "arguments. If you want to reshard your inputs, you can use `jax.reshard` "
                    "on the arguments and then pass those args to shard_map.")

    def _check_args(self, flat: Sequence[Any], in_tree: Any, avals: Sequence[ShapedArray],
                    specs: Sequence[PartitionSpec], mesh: Mesh, args: tuple[Any, ...]) -> None:
        paths = [tree_util.keystr(p) for p, _ in
                 tree_util.tree_flatten_with_path(args)[0]]
        for k, (aval, spec) in enumerate(zip(avals, specs, strict=True)):
            where = f"args{paths[k]}"
            bound = self._bound(where, args)
            if len(spec) > aval.ndim:
                raise ValueError(
                    f"shard_map applied to the function '{self.name}' was given an in_specs "
                    "entry which is too long to be compatible with the corresponding input "
                    f"value from the function:\n\nin_specs is {spec} which has length "
                    f"{len(spec)}, but the passed {where}{bound}, has shape "
                    f"{aval.str_short(short_dtypes=False)}, which has rank {aval.ndim} (and "
                    f"{aval.ndim} < {len(spec)})\n\nEntries in in_specs must be of length no "
                    "greater than the number of axes in the corresponding input value.\n\n"
                    f"Either revise the spec to be shorter, or modify '{self.name}' so that its "
                    "inputs have sufficient rank.\n\nFor scalar values (rank 0), consider "
                    "using an in_specs entry of `P()`, where `P = jax.sharding.PartitionSpec`.")
            for d, entry in enumerate(spec):
                axes = shard_map_lib._entry_axes(entry)
                size = 1
                for a in axes:
                    size *= mesh.shape[a]
                if axes and aval.shape[d] % size:
                    names = (f"mesh axis {axes[0]!r} (of size {size})" if len(axes) == 1 else
                             f"mesh axes {axes} (of total size {size})")
                    raise ValueError(
                        f"shard_map applied to the function '{self.name}' was given argument "
                        "arrays with axis sizes that are not evenly divisible by the "
                        "corresponding mesh axis sizes:\n\n" + self._mesh_text(mesh)
                        + f"\n\nthe passed {where} of shape "
                        f"{aval.str_short(short_dtypes=False)}{bound}, corresponds to in_specs "
                        f"of value {spec}, which maps array axis {d} (of size {aval.shape[d]}) "
                        f"to {names}, but {size} does not evenly divide {aval.shape[d]}\n\n"
                        "Array arguments' axis sizes must be evenly divisible by the mesh axis "
                        "or axes indicated by the corresponding elements of the argument's "
                        "in_specs entry. Consider checking that in_specs are correct, and if so"
                        " consider changing the mesh axis sizes or else padding the input and "
                        f"adapting '{self.name}' appropriately.")

    def _bound(self, where: str, args: tuple[Any, ...]) -> str:
        """`, where args[1] is bound to f's parameter 'b'` (nothing when unknown)."""
        try:
            parameters = list(inspect.signature(self.f).parameters.values())
        except (TypeError, ValueError):
            return ""
        position = int(where[len("args["):].split("]", 1)[0])
        if position >= len(parameters) or parameters[position].kind not in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            return ""
        head = f"args[{position}]"
        return f", where {head} is bound to {self.name}'s parameter '{parameters[position].name}'"

    def _check_outs(self, avals: Sequence[ShapedArray], specs: Sequence[PartitionSpec]) -> None:
        for aval, spec in zip(avals, specs, strict=True):
            if len(spec) > aval.ndim:
                raise ValueError(
                    f"shard_map applied to the function '{self.name}' was given an out_specs "
                    "entry which is too long to be compatible with the corresponding output "
                    f"value from the function:\n\nout_specs is {spec} which has length "
                    f"{len(spec)}, but {self.name}(*args) has shape "
                    f"{aval.str_short(short_dtypes=False)}, which has rank {aval.ndim} (and "
                    f"{aval.ndim} < {len(spec)})\n\nEntries in out_specs must be of length no "
                    "greater than the number of axes in the corresponding output value.\n\n"
                    f"Either revise the spec to be shorter, or modify '{self.name}' so that its "
                    "outputs have sufficient rank.")

    def _run_eagerly(self, per_device: Callable, flat: Sequence[Any],
                     in_specs: Sequence[PartitionSpec], mesh: Mesh, manual: frozenset,
                     found: dict[str, Any]) -> Any:
        """The call on concrete arrays: the body runs op by op on every device at once
        (`shard_map_eager`); each result is assembled from the devices' blocks."""
        stacked, varying, trace = shard_map_eager.run_eagerly(per_device, flat, in_specs, mesh,
                                                              manual, self.check_vma)
        out_tree = found["out_tree"]
        out_specs = self._broadcast(self.out_specs, out_tree, "out_specs")
        for spec in out_specs:
            self._check_axes(spec, mesh, manual, "out_specs")
        block_avals = [core.get_aval(s).update(shape=np.shape(s)[1:], weak_type=False)
                       for s in stacked]
        self._check_outs(block_avals, out_specs)
        if self.check_vma:
            # JAX checks an eager call's results one by one, each in a shard_map of its own
            # helper, whose name its message gives.
            for found, spec in zip(varying, out_specs, strict=True):
                self._check_replication([found], [spec], mesh, manual, "_rem_singleton")
        outs = []
        for value, spec, aval in zip(stacked, out_specs, block_avals, strict=True):
            per_device = ([np.asarray(b)[0] for b in value.device_blocks()]
                          if isinstance(value, Array) else
                          [value[trace.stacked_index(p)] for p in range(mesh.size)])
            whole = shard_map_lib._global_aval(aval, spec, mesh)
            outs.append(Array.from_blocks([np.array(b, copy=True) for b in per_device], whole,
                                          NamedSharding(mesh, spec)))
        return tree_util.tree_unflatten(out_tree, outs)

    def _check_replication(self, varying: Sequence[frozenset],
                           out_specs: Sequence[PartitionSpec], mesh: Mesh,
                           manual: frozenset, name: str | None = None) -> None:
        """JAX's error for results that may vary along manual axes their specs leave out
        (`varying`: per result, the axes it may vary along), one line per such result."""
        def text(axes: Any) -> str:
            return "{" + ",".join(str(a) for a in mesh.axis_names if a in axes) + "}"

        lines = []
        for k, (spec, found) in enumerate(zip(out_specs, varying, strict=True)):
            allowed = shard_map_lib.spec_axes(spec)
            extra = (found & manual) - allowed
            if not extra:
                continue
            where = f"out_specs[{k}]" if len(out_specs) > 1 else "out_specs"
            unmentioned = [a for a in mesh.axis_names if a not in allowed]
            if len(unmentioned) > 1:
                lines.append(f"* {where} is {spec} which implies that the corresponding output "
                             f"value is only varying across mesh axes {text(allowed)} and not "
                             f"{text(extra)}, but it was inferred to be possibly varying over "
                             f"{text(found & manual)}")
            else:
                lines.append(f"* {where} is {spec} which implies that the corresponding output "
                             f"value is replicated across mesh axis '{unmentioned[0]}', but "
                             "could not infer replication over any axes")
        if not lines:
            return
        if len(lines) == 1:
            lines = [lines[0][2:]]
        raise ValueError(
            f"shard_map applied to the function '{name or self.name}' was given out_specs which "
            "require replication which can't be statically inferred given the mesh:\n\n"
            + self._mesh_text(mesh) + "\n\n" + "\n\n".join(lines) + "\n\nCheck if these "
            "output values are meant to be replicated over those mesh axes. If not, consider "
            "revising the corresponding out_specs entries. If so, consider disabling the check "
            "by passing the check_vma=False argument to `jax.shard_map`.")
