"""jit over arrays sharded across a mesh: the shardings a call's inputs come with annotate its
module (`annotate_shardings`), the SPMD partitioner cuts the module into the program each
device runs (`partition`), and a run gives each device its blocks of the inputs and joins the
devices' blocks of the outputs (`run`), which come back as Arrays sharded over the mesh.

The runtime's shardings (`NamedSharding` over a `Mesh` of devices) and the compiler's
(`hlo.sharding.TensorSharding` over a `MeshShape` of device ids) meet here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import functools
import zlib
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core.avals import ShapedArray
from justjax._src.core.dtypes import is_extended
from justjax._src.hlo import ir
from justjax._src.hlo.passes.spmd_partitioner import SpmdPartitioner
from justjax._src.hlo.passes.util import clone_module
from justjax._src.hlo.sharding import (CONSTRAINT, SHARDING, MeshShape, TensorSharding,
                                       is_sharded)
from justjax._src.runtime import processes, replicas
from justjax._src.runtime.array import Array
from justjax._src.runtime.partition_spec import UNCONSTRAINED, PartitionSpec
from justjax._src.pytrees import tree_util
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.mesh import Mesh
from justjax._src.runtime.sharding import NamedSharding, Sharding

__all__ = ["SpmdLayout", "annotate_shardings", "block_of", "check_committed", "check_devices",
           "check_fits", "constraint_sharding", "matching_blocks", "mesh_shape",
           "mesh_shardings", "named_sharding", "partition",
           "resolve", "run", "runtime_mesh", "tensor_sharding", "unify", "user_shardings"]


def mesh_shardings(flat_args: Sequence[Any]) -> tuple[Any, ...] | None:
    """Per argument, its sharding when it is an Array (or a `ShapeDtypeStruct`, for
    `.lower`) sharded over a mesh of several devices (else None); None when no argument
    is. (Callers check the devices agree, `check_devices`, then `unify` them.)"""
    from justjax._src.compilation.stages import ShapeDtypeStruct  # stages imports this module
    found = []
    for arg in flat_args:
        kind = type(arg)
        sharding = (arg._sharding if kind is Array
                    else arg.sharding if kind is ShapeDtypeStruct else None)
        found.append(sharding if type(sharding) is NamedSharding
                     and len(sharding._device_assignment) > 1 else None)
    return tuple(found) if any(s is not None for s in found) else None


def check_devices(flat_args: Sequence[Any], shardings: Sequence[Any] | None,
                  name_of: Callable[[int], str], fun_name: str) -> None:
    """JAX's error for a call mixing arrays committed to one device with arrays sharded over a
    mesh (`devices.incompatible_devices`, naming arguments by `name_of`, called only then)."""
    if shardings is None:
        return
    found: dict[tuple[int, ...], int] = {}
    for k, (arg, sharding) in enumerate(zip(flat_args, shardings, strict=True)):
        if sharding is not None:
            found.setdefault(tuple(d.id for d in sharding._device_assignment), k)
        elif type(arg) is Array and arg.committed and arg._sharding is None:
            found.setdefault((arg.device.id,), k)
    if len(found) > 1:
        raise devices_lib.incompatible_devices(flat_args, found, name_of, fun_name)


def unify(shardings: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """`shardings` over one mesh: each over another mesh of the same devices in the same
    order is restated over the first one's axes, as XLA sees only device tilings (P('c') on
    Mesh('c': 4) is P(('a', 'b')) on Mesh('a': 2, 'b': 2)). Raises ValueError (JAX's
    "incompatible devices") for meshes of other devices or orders, or axes that do not
    line up."""
    if shardings is None:
        return None
    first = next(s.mesh for s in shardings if s is not None)
    return tuple(s if s is None or s.mesh == first else _restated(s, first) for s in shardings)


def _restated(sharding: NamedSharding, mesh: Mesh) -> NamedSharding:
    other = sharding.mesh
    incompatible = ValueError(
        "Received incompatible devices for jitted computation: its inputs are sharded over "
        f"meshes of different devices or layouts: {mesh} and {other}")
    if [d.id for d in other.devices.reshape(-1)] != [d.id for d in mesh.devices.reshape(-1)]:
        raise incompatible
    # Each axis of `other` as a run of consecutive axes of `mesh` with the same product.
    targets = list(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    runs: dict[str, tuple[str, ...]] = {}
    at = 0
    for name, size in zip(other.axis_names, other.axis_sizes, strict=True):
        run, product = [], 1
        while product < size and at < len(targets):
            run.append(targets[at][0])
            product *= targets[at][1]
            at += 1
        if product != size:
            raise incompatible
        runs[name] = tuple(run)
    entries = []
    for entry in sharding.spec:
        axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        mapped = tuple(a for axis in axes for a in runs[axis])
        entries.append(None if not mapped else mapped[0] if len(mapped) == 1 else mapped)
    return NamedSharding(mesh, PartitionSpec(*entries))


def mesh_shape(mesh: Mesh) -> MeshShape:
    """The compiler's form of `mesh`: its axes (named by `str`) and device ids."""
    return MeshShape(tuple((str(n), s) for n, s in zip(mesh.axis_names, mesh.axis_sizes,
                                                      strict=True)),
                     tuple(d.id for d in mesh.devices.reshape(-1)))


def tensor_sharding(sharding: NamedSharding, rank: int) -> TensorSharding:
    """The compiler's form of `sharding` for a value of `rank` dimensions."""
    entries = list(sharding.spec)[:rank]
    entries += [None] * (rank - len(entries))
    dims = tuple(() if e is None else tuple(str(a) for a in e) if isinstance(e, tuple)
                 else (str(e),) for e in entries)
    return TensorSharding(mesh_shape(sharding.mesh), dims)


def named_sharding(mesh: Any, sharding: TensorSharding) -> NamedSharding:
    """The runtime's form of `sharding` over `mesh` (the mesh it was made from), its spec
    without trailing whole dimensions, as JAX gives its results' (`P('a',)`, `P()`)."""
    entries = [None if not axes else axes[0] if len(axes) == 1 else tuple(axes)
               for axes in sharding.dims]
    while entries and entries[-1] is None:
        entries.pop()
    return NamedSharding(mesh, PartitionSpec(*entries))


def user_shardings(given: Any, name: str) -> Any:
    """jit's `in_shardings` or `out_shardings` (`name`) as kept: None, or a pytree of
    shardings, PartitionSpecs (read against the mesh in context at each call: `resolve`) and
    Nones.

    Raises:
      TypeError: a leaf is none of those (JAX's message).
    """
    if given is None:
        return None
    for leaf in tree_util.tree_leaves(given, is_leaf=lambda x: x is None):
        if leaf is not None and not isinstance(leaf, (Sharding, PartitionSpec)):
            raise TypeError(f"{name} leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {leaf}")
    return given


def resolve(flat: Sequence[Any], name: str) -> tuple[Any, ...]:
    """Per value, the sharding over a mesh of several devices that a flat `in_shardings` or
    `out_shardings` entry says (None: unspecified, or one device): a PartitionSpec names axes
    of the mesh in context (`jax.set_mesh`, or `with mesh:`).

    Raises:
      RuntimeError: a PartitionSpec without a mesh in context (JAX's message).
    """
    out = []
    for entry in flat:
        if isinstance(entry, PartitionSpec):
            mesh = mesh_lib.get_concrete_mesh()
            if mesh.empty:
                mesh = mesh_lib.get_resource_mesh()
            if mesh.empty:
                raise RuntimeError(
                    f"jit requires a non-empty mesh in context if you are passing "
                    f"`PartitionSpec`s to {name}. You can define a context mesh via "
                    f"`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to {name} and "
                    "then the mesh context manager is not required.")
            entry = NamedSharding(mesh, entry)
        several = isinstance(entry, NamedSharding) and len(entry._device_assignment) > 1
        out.append(entry if several else None)
    return tuple(out)


def check_fits(what: str, name: Callable[[], str], sharding: NamedSharding,
               shape: Sequence[int]) -> None:
    """JAX's errors for jit `in_shardings`/`out_shardings` (`what`: "arguments" or
    "outputs") that cannot lay out a value of `shape` (whose key path `name()` gives, asked
    only then): a spec of higher rank (ValueError naming it), dimensions the blocks do not
    divide (IndivisibleError)."""
    try:
        sharding.check_compatible_aval(tuple(shape))
    except ValueError as error:
        raise ValueError(f"One of pjit {what} with pytree key path {name()} is incompatible "
                         f"with its sharding annotation {sharding}: {error}") from None
    sharding.shard_shape(tuple(shape))


def check_committed(arg: Any, sharding: NamedSharding) -> None:
    """JAX's error for a committed Array laid out otherwise than jit's `in_shardings` say."""
    if type(arg) is not Array or not arg.committed:
        return
    have = arg.sharding
    if have == sharding or (isinstance(have, NamedSharding)
                            and have.is_equivalent_to(sharding, arg.ndim)):
        return
    raise ValueError(
        "Sharding passed to jit does not match the sharding on the respective arg. Got jit "
        f"sharding: {sharding},\narg sharding: {have} for arg type: "
        f"{arg.aval.str_short(short_dtypes=False)}")


def with_type_shardings(given: Sequence[Any] | None, out_avals: Sequence[ShapedArray],
                        in_shardings: Sequence[Any] | None,
                        annotated: Sequence[Any]) -> tuple[Any, ...] | None:
    """Per result, the sharding it is laid out with: `given`'s where given, else, in a
    program over a mesh with Explicit axes, its type's (JAX's sharding in types: a result is
    split as its type says, replicated when its type is unsplit) over the concrete mesh of
    the arguments or in context; None for neither, and for a result of unsplit type a
    sharding annotation gives back as it is (`annotated`: laid out as it says; a split type
    wins over it, as in JAX)."""
    mesh = _explicit_mesh(out_avals, in_shardings)
    if mesh is None:
        return _in_context_mesh(given, out_avals, in_shardings, annotated)
    out = list(given) if given is not None else [None] * len(out_avals)
    for k, aval in enumerate(out_avals):
        if (out[k] is not None or not isinstance(aval, ShapedArray) or is_extended(aval.dtype)
                or (annotated[k] is not None and aval._sharding is None)):
            continue
        spec = aval.type_spec or (None,) * aval.ndim
        out[k] = NamedSharding(mesh, PartitionSpec(*spec))
    return tuple(out) if any(s is not None for s in out) else None


def _in_context_mesh(given: Sequence[Any] | None, out_avals: Sequence[Any],
                     in_shardings: Sequence[Any] | None, annotated: Sequence[Any]
                     ) -> tuple[Any, ...] | None:
    """A program of values on no mesh run under `jax.set_mesh` (of Auto axes) lays its
    results out replicated over that mesh, as JAX's; else `given`."""
    context = mesh_lib.get_concrete_mesh()
    if (context.empty or context.size < 2
            or any(isinstance(s, NamedSharding) for s in in_shardings or ())):
        return tuple(given) if given is not None else None
    out = list(given) if given is not None else [None] * len(out_avals)
    for k, aval in enumerate(out_avals):
        if (out[k] is None and annotated[k] is None and isinstance(aval, ShapedArray)
                and not is_extended(aval.dtype)):
            out[k] = NamedSharding(context, PartitionSpec())
    return tuple(out) if any(s is not None for s in out) else None


def _explicit_mesh(out_avals: Sequence[Any], in_shardings: Sequence[Any] | None
                   ) -> Mesh | None:
    """The concrete mesh of several devices a program's types are split over, when it has
    Explicit axes: the mesh of a result's type, else of an argument, else in context."""
    abstract = next((a._sharding.mesh for a in out_avals
                     if getattr(a, "_sharding", None) is not None), None)
    meshes = [s.mesh for s in in_shardings or () if isinstance(s, NamedSharding)]
    meshes.append(mesh_lib.get_concrete_mesh())
    if abstract is None:
        abstract = next((m.abstract_mesh for m in meshes
                         if not m.empty and m.abstract_mesh._any_axis_explicit), None)
    if abstract is None:
        return None
    return next((m for m in meshes if not m.empty and m.size > 1
                 and m.shape_tuple == abstract.shape_tuple), None)


def annotate_shardings(module: ir.Module, args: Sequence[Any] | None,
                       results: Sequence[Any] | None) -> None:
    """Gives `module`'s entry arguments and results their shardings over a mesh
    (`sdy.sharding`; per value, None where unspecified), and the module its partition count.

    Raises:
      ValueError: the shardings are over different meshes (JAX's "incompatible devices").
    """
    main = module.main
    arg_attrs = [dict(a) for a in (main.arg_attrs or [{} for _ in main.args])]
    result_attrs = [dict(a) for a in (main.result_attrs or [{} for _ in main.result_types])]
    meshes = set()
    for attrs, types, shardings in ((arg_attrs, main.arg_types, args),
                                    (result_attrs, main.result_types, results)):
        if shardings is None or len(shardings) != len(types):
            continue
        for a, type_, sharding in zip(attrs, types, shardings, strict=True):
            if sharding is not None:
                a[SHARDING] = tensor_sharding(sharding, type_.rank)
                meshes.add(sharding.mesh)
    constrained = {op.attributes["sharding"].mesh for op in module.walk()
                   if op.opcode == CONSTRAINT}
    if not meshes and not constrained:
        return
    if not meshes:
        module.attributes["mhlo.num_partitions"] = ir.IntegerAttr(
            next(iter(constrained)).device_count, "i32")
        return
    if len(meshes) > 1:
        raise ValueError("Received incompatible devices for jitted computation: its inputs "
                         "and outputs are sharded over different meshes: "
                         + ", ".join(sorted(str(m) for m in meshes)))
    main.arg_attrs, main.result_attrs = arg_attrs, result_attrs
    (mesh,) = meshes
    module.attributes["mhlo.num_partitions"] = ir.IntegerAttr(mesh.size, "i32")


def constraint_sharding(sharding: Any, shape: Sequence[int]) -> TensorSharding | None:
    """The compiler's form of a `with_sharding_constraint` sharding over a mesh of several
    devices that splits a value of `shape` evenly; None for any other (the constraint only
    places the value: `execution.result_shardings`): one device, unconstrained dimensions,
    uneven blocks (such a value comes out replicated, as in JAX)."""
    if (type(sharding) is not NamedSharding or not isinstance(sharding.mesh, Mesh)
            or len(sharding._device_assignment) < 2
            or any(e is UNCONSTRAINED for e in sharding.spec)):
        return None
    compiled = tensor_sharding(sharding, len(shape))
    if any(size % tiles for size, tiles in zip(shape, compiled.tiles(), strict=True)):
        return None
    return compiled


def runtime_mesh(mesh: MeshShape) -> Mesh:
    """The runtime's mesh of `mesh`'s devices and axes (its axes `Auto`)."""
    by_id = {d.id: d for d in devices_lib.devices()}
    grid = np.array([by_id[i] for i in mesh.device_ids], dtype=object)
    return Mesh(grid.reshape([size for _, size in mesh.axes]), mesh.names)


@dataclass(frozen=True)
class SpmdLayout:
    """How a partitioned program runs: its mesh's device ids in order, the sharding of each
    entry argument and result, and what names the program (checked to be the same in every
    process of a run of several: `processes.agree`)."""

    device_ids: tuple[int, ...]
    args: tuple[TensorSharding, ...]
    results: tuple[TensorSharding, ...]
    fingerprint: int = field(compare=False, default=0)


def partition(module: ir.Module) -> tuple[ir.Module, SpmdLayout | None]:
    """`module` cut into the per-device program when its arguments are sharded (a copy; the
    lowered module stays as it is), with its layout; else `module` itself and None."""
    if not is_sharded(module):
        return module, None
    partitioned = clone_module(module)
    SpmdPartitioner().run(partitioned)
    main = partitioned.main
    if int(partitioned.attributes.get("mhlo.num_partitions", 1)) < 2:
        return partitioned, None  # constraints in loops and branches only, dropped
    args = tuple(a[SHARDING] for a in main.arg_attrs or ())
    results = tuple(a[SHARDING] for a in main.result_attrs or ())
    if not args and not results:
        return partitioned, None
    # Only a run of several processes checks it (the text of a large program takes a while).
    fingerprint = _fingerprint(partitioned) if processes.cluster() is not None else 0
    return partitioned, SpmdLayout((*args, *results)[0].mesh.device_ids, args, results,
                                   fingerprint)


def _fingerprint(module: ir.Module) -> int:
    """A number naming the partitioned program (its text's checksum)."""
    from justjax._src.hlo import stablehlo_printer
    return zlib.crc32(stablehlo_printer.print_module(module).encode())


def block_of(whole: np.ndarray, sharding: TensorSharding, position: int) -> np.ndarray:
    """The block of `whole` that the device at mesh position `position` holds under
    `sharding`, contiguous."""
    shape = sharding.shard_shape(whole.shape)
    index = sharding.block_index(position)
    block = np.asarray(whole[tuple(slice(i * s, (i + 1) * s)
                                   for i, s in zip(index, shape, strict=True))])
    # (np.ascontiguousarray would make a 0-d block 1-d.)
    return block if block.flags.c_contiguous else np.ascontiguousarray(block)


def matching_blocks(array: Array, sharding: TensorSharding) -> tuple[np.ndarray, ...] | None:
    """The blocks `array`'s devices hold, if they are the blocks of `sharding` (the same
    devices in the same order, each holding the same piece): a partitioned program reads
    them as they are. Else None."""
    blocks = array._blocks
    if blocks is None or array.is_deleted():
        return None
    return blocks if _lays_out_as(array.sharding, array.shape, sharding) else None


@functools.lru_cache(maxsize=1024)
def _lays_out_as(have: Sharding, shape: tuple[int, ...], sharding: TensorSharding) -> bool:
    """Whether the devices of `have` hold, for a value of `shape`, the blocks `sharding`
    gives the devices in the same positions (a call's arguments ask it once per layout)."""
    mesh = sharding.mesh
    if tuple(d.id for d in have._device_assignment) != mesh.device_ids:
        return False
    if len(shape) != sharding.rank:
        return False
    indices = have.devices_indices_map(shape)
    block = sharding.shard_shape(shape)
    for position, device in enumerate(have._device_assignment):
        want = [(i * b, (i + 1) * b) for i, b in zip(sharding.block_index(position), block,
                                                      strict=True)]
        if [s.indices(n)[:2] for s, n in zip(indices[device], shape, strict=True)] != want:
            return False
    return True


def run(executable: Any, layout: SpmdLayout, inputs: Sequence[Any],
        thread_setup: Callable[[], None], after: Sequence[Any] = ()
        ) -> tuple[list[list[np.ndarray | None]], set[int], Any]:
    """Starts the partitioned program on every device of the mesh that this process drives
    (all of them but in a run of several processes), each on its blocks of the `inputs`
    (per argument, the whole value to cut, or a tuple of the devices' blocks in mesh order);
    returns, per result, the devices' blocks in mesh order (None for other processes'
    devices), the ids of the input blocks (a result that is one must be copied), and the
    future of the run still writing the blocks (None once it is done:
    `replicas.start_replicas`; `after`: the futures of runs still writing input blocks)."""
    count = len(layout.device_ids)
    alone = _alone_position(layout.device_ids, devices_lib.this_process())
    if alone is not None:
        # This process's only device of a run over several processes (one device each).
        args = [value[alone] if isinstance(value, tuple) else block_of(value, s, alone)
                for value, s in zip(inputs, layout.args, strict=True)]
        outs = replicas.run_alone(executable, args, layout.device_ids, alone,
                                  fingerprint=layout.fingerprint)
        nones = [None] * count
        return ([[*nones[:alone], out, *nones[alone + 1:]] for out in outs],
                {id(b) for b in args}, None)
    local = local_positions(layout.device_ids)
    per_device = [[value[p] if isinstance(value, tuple) else block_of(value, s, p)
                   for value, s in zip(inputs, layout.args, strict=True)]
                  if p in local else None for p in range(count)]
    outs, ready = replicas.start_replicas(executable, per_device, layout.device_ids,
                                          thread_setup, fingerprint=layout.fingerprint,
                                          after=after)
    input_ids = {id(b) for blocks in per_device if blocks is not None for b in blocks}
    return [[outs[p][k] if p in local else None for p in range(count)]
            for k in range(len(layout.results))], input_ids, ready


def local_positions(device_ids: Sequence[int]) -> frozenset[int]:
    """The mesh positions of this process's devices among `device_ids`."""
    return _local_positions(tuple(device_ids), devices_lib.this_process())


@functools.lru_cache(maxsize=256)
def _alone_position(device_ids: tuple[int, ...], me: int) -> int | None:
    """The mesh position of process `me`'s one device among `device_ids`, when the others
    are other processes'; else None."""
    local = _local_positions(device_ids, me)
    if len(local) != 1 or len(local) == len(device_ids):
        return None
    return next(iter(local))


@functools.lru_cache(maxsize=256)
def _local_positions(device_ids: tuple[int, ...], me: int) -> frozenset[int]:
    return frozenset(p for p, i in enumerate(device_ids)
                     if i // processes.MAX_LOCAL_DEVICES == me)
