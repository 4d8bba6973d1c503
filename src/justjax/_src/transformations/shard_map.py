"""The `shard_map` primitive: a function run once per device of a mesh, each run on its
block of every argument (`jax.shard_map`, `shard_map_api.py`; JAX 0.10.2 builds `pmap` on it).

Params, as JAX prints them: `jaxpr` (the per-device function, on blocks), `mesh`
(`Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))`), `in_specs` / `out_specs` (one `P(...)` per
operand and result: a dimension naming mesh axes is split into one block per combination of
their coordinates, the first axis major; axes a spec leaves out replicate the value),
`check_vma` and `newly_manual_axes` (the axes the body is per-device over; the mesh's other
axes stay automatic and the body sees whole values along them).

How it runs:
- called on concrete arrays (eagerly, and pmap's call): the per-device jaxpr is lowered as the
  program of one device of the mesh (its collectives StableHLO collectives over mesh
  positions), compiled once and run on all the mesh's devices at once
  (`runtime/replicas.run_replicas`); blocks are cut and joined on the host and the results
  are sharded over the mesh as `out_specs` say.
- inside a jitted program: a `sdy.manual_computation` op whose region is that per-device
  program; the SPMD partitioner (`hlo/passes/spmd_partitioner.py`) brings its operands to
  their blocks, inlines the region, and gives the results the out_specs' shardings, so a
  shard_map composes with automatically partitioned code around it.

Transforms keep the call a `shard_map` over the same mesh: jvp, partial evaluation and
transposition transform the per-device jaxpr (a cotangent of a result replicated over some
manual axes is divided among their devices and the cotangent of an operand replicated over
some is summed over them, so psum transposing to psum gives JAX's gradients), and vmap adds the
batch as a new leading dimension no device splits.
"""
from __future__ import annotations

import contextlib
import math
import threading
from typing import Any, Iterator, Sequence

import numpy as np

from justjax._src.compilation import compiler
from justjax._src.compilation import execution
from justjax._src.compilation import spmd
from justjax._src.backends import get_backend
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, JaxprEqn, Var, eval_jaxpr
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import elementwise, parallel, structural
from justjax._src.lax import parallel_spmd  # noqa: F401 (registers the SPMD lowerings)
from justjax._src.hlo import ir
from justjax._src.hlo.sharding import MANUAL, TensorSharding, manual_mesh
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import replicas
from justjax._src.runtime.array import (donatable_blocks, donatable_buffer, pending_runs,
                                        set_sharding)
from justjax._src.runtime.mesh import Mesh
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.runtime.sharding import NamedSharding, type_sharding, without_axes

__all__ = ["Mesh", "PartitionSpec", "shard_map_p", "axis_mesh", "bind", "block_aval",
           "body_axis", "device_ids", "inside_body", "manual_axes", "mesh_axis",
           "per_device_spec", "run_sharded", "spec_axes", "spec_for", "split_dim"]


def axis_mesh(devices: Sequence[devices_lib.Device], axis_name: Any) -> Mesh:
    """The one-axis mesh of `devices` named `axis_name` (pmap's)."""
    return Mesh(np.array(list(devices), dtype=object), (axis_name,))


def mesh_axis(mesh: Mesh) -> Any:
    """The name of a one-axis mesh's axis."""
    return mesh.axis_names[0]


def device_ids(mesh: Mesh) -> tuple[int, ...]:
    """The ids of the mesh's devices, in order."""
    return tuple(d.id for d in mesh._flat_devices_tuple)


def split_dim(spec: PartitionSpec, axis_name: Any) -> int | None:
    """The dimension `spec` splits over the mesh axis, or None for a value whole on every
    device."""
    return next((d for d, entry in enumerate(spec) if entry == axis_name), None)


def spec_for(dim: int | None, axis_name: Any) -> PartitionSpec:
    """The spec splitting dimension `dim` over the mesh axis (`P()` for None)."""
    if dim is None:
        return PartitionSpec()
    return PartitionSpec(*([None] * dim), axis_name)


def _entry_axes(entry: Any) -> tuple[Any, ...]:
    return () if entry is None else tuple(entry) if isinstance(entry, tuple) else (entry,)


def spec_axes(spec: PartitionSpec) -> frozenset:
    """The mesh axes `spec` splits some dimension over."""
    return frozenset(a for entry in spec for a in _entry_axes(entry))


def manual_axes(mesh: Mesh, newly_manual_axes: frozenset) -> tuple[Any, ...]:
    """The manual axes of a shard_map, in mesh order."""
    return tuple(a for a in mesh.axis_names if a in newly_manual_axes)


def per_device_spec(mesh: Mesh, newly_manual_axes: frozenset) -> PartitionSpec:
    """The spec of a stack with one block per device along its leading dimension (the
    residuals one device computes): split over every manual axis."""
    axes = manual_axes(mesh, newly_manual_axes)
    return PartitionSpec(axes[0] if len(axes) == 1 else axes)


def _tiles(spec: PartitionSpec, rank: int, mesh: Mesh) -> list[int]:
    sizes = dict(mesh.shape)
    tiles = [math.prod(sizes[a] for a in _entry_axes(entry)) for entry in spec]
    return tiles + [1] * (rank - len(tiles))


def block_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh,
               manual: Any = None) -> ShapedArray:
    """One device's block of a value of `aval` split by `spec` over `mesh`; its type is no
    longer split over the `manual` axes (all of the mesh's by default)."""
    tiles = _tiles(spec, aval.ndim, mesh)
    manual = frozenset(mesh.axis_names if manual is None else manual)
    return aval.update(shape=tuple(size // t for size, t in zip(aval.shape, tiles, strict=True)),
                       sharding=without_axes(aval._sharding, manual))


def _global_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    """The value of the blocks of `aval` laid out by `spec` over `mesh`: its type split over
    the spec's Explicit axes (then over the body's own Explicit axes)."""
    tiles = _tiles(spec, aval.ndim, mesh)
    shape = tuple(size * t for size, t in zip(aval.shape, tiles, strict=True))
    outer = type_sharding(NamedSharding(mesh, spec), aval.ndim)
    inner = aval._sharding
    if outer is None or inner is None:
        return aval.update(shape=shape, sharding=outer or inner, vma=())
    entries = [_entry_axes(a) + _entry_axes(b)
               for a, b in zip(outer.spec, inner.spec, strict=True)]
    return aval.update(shape=shape, sharding=outer.update(spec=PartitionSpec(*entries)), vma=())


def _compiler_sharding(mesh: Mesh, spec: PartitionSpec, rank: int) -> TensorSharding:
    """The compiler's form of `spec` over `mesh` for a value of `rank` dimensions."""
    dims = [tuple(str(a) for a in _entry_axes(entry)) for entry in spec]
    return TensorSharding(spmd.mesh_shape(mesh), tuple(dims + [()] * (rank - len(dims))))


# Bodies being traced on this thread: a pmap inside one is mapped with vmap (nested pmap).
_tracing = threading.local()


@contextlib.contextmanager
def body_axis(mesh: Mesh, newly_manual_axes: frozenset | None = None) -> Iterator[None]:
    """Binds the manual axes (all the mesh's by default) while a per-device function is
    traced or transformed."""
    axes = mesh.axis_names if newly_manual_axes is None else manual_axes(mesh, newly_manual_axes)
    depth = getattr(_tracing, "depth", 0)
    _tracing.depth = depth + 1
    try:
        with contextlib.ExitStack() as stack:
            for name in axes:
                stack.enter_context(core.extend_axis_env(name, mesh.shape[name]))
            yield
    finally:
        _tracing.depth = depth


def inside_body() -> bool:
    """Whether a per-device function is being traced on this thread."""
    return getattr(_tracing, "depth", 0) > 0


# ---------------------------------------------------------------------------------------------
# The primitive.

shard_map_p = core.Primitive("shard_map", multiple_results=True)


def bind(args: Sequence[Any], jaxpr: ClosedJaxpr, mesh: Mesh,
         in_specs: Sequence[PartitionSpec], out_specs: Sequence[PartitionSpec],
         newly_manual_axes: frozenset | None = None, check_vma: bool = False) -> list[Any]:
    """`shard_map` of the per-device `jaxpr` on global `args` (manual over every mesh axis
    unless `newly_manual_axes` says)."""
    axes = frozenset(mesh.axis_names if newly_manual_axes is None else newly_manual_axes)
    return shard_map_p.bind(*args, jaxpr=jaxpr, mesh=mesh, in_specs=tuple(in_specs),
                            out_specs=tuple(out_specs), check_vma=check_vma,
                            newly_manual_axes=axes)


def _params(params: dict, jaxpr: ClosedJaxpr, in_specs: Sequence[PartitionSpec],
            out_specs: Sequence[PartitionSpec]) -> dict:
    return dict(params, jaxpr=jaxpr, in_specs=tuple(in_specs), out_specs=tuple(out_specs))


def _body_axis(params: dict) -> Any:
    return body_axis(params["mesh"], params["newly_manual_axes"])


def _abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, mesh: Mesh,
                   in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
                   **_: Any) -> list[ShapedArray]:
    for aval, spec in zip(avals, in_specs, strict=True):
        for d, tiles in enumerate(_tiles(spec, aval.ndim, mesh)):
            if aval.shape[d] % tiles:
                raise ValueError(f"shard_map applied to an operand of shape {aval.shape}, "
                                 f"whose dimension {d} ({aval.shape[d]}) is not divisible by "
                                 f"the {tiles} blocks of {spec}")
    return [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]


shard_map_p.def_abstract_eval(_abstract_eval)


def _impl(*args: Any, jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
          out_specs: tuple[PartitionSpec, ...], newly_manual_axes: frozenset,
          **_: Any) -> list[Any]:
    return run_sharded(jaxpr, mesh, in_specs, out_specs, args, "shmap_body",
                       newly_manual_axes=newly_manual_axes)


core.impl_rules[shard_map_p] = _impl


# ---------------------------------------------------------------------------------------------
# Running on concrete arrays: one device's program, blocks cut and joined on the host.

def _manual(mesh: Mesh, newly_manual_axes: frozenset) -> lowering.ManualAxes:
    return lowering.ManualAxes(spmd.mesh_shape(mesh), manual_axes(mesh, newly_manual_axes))


class _DeviceProgram:
    """The per-device jaxpr lowered as one device's program and compiled; each donated
    block is aliased to an output block of its type (`tf.aliasing_output`)."""

    def __init__(self, jaxpr: ClosedJaxpr, mesh: Mesh, newly_manual_axes: frozenset,
                 name: str, donated: tuple[bool, ...]) -> None:
        count = len(jaxpr.out_avals)
        infos = ["result"] if count == 1 else [f"result[{i}]" for i in range(count)]
        avals = tuple(jaxpr.in_avals)
        aliases = compiler.donation_aliases(avals, donated, jaxpr.out_avals)
        module = lowering.lower_jaxpr_to_module(jaxpr, name, infos,
                                                manual=_manual(mesh, newly_manual_axes),
                                                prefix="pmap", arg_attrs=aliases)
        info = execution.ModuleInfo(module, tuple(range(len(avals))), avals,
                                    tuple(jaxpr.out_avals), donated)
        self.call = compiler.compile_lowered(info, name, jaxpr)
        # The devices' threads are readied by the backend that compiled their program.
        self.thread_setup = get_backend(self.call.backend).prepare_replica_thread
        # Argument -> the output its blocks are donated to.
        self.aliased = module.function("main").aliased_outputs


@pe.transform_cache
def _device_program(jaxpr: ClosedJaxpr, mesh: Mesh, newly_manual_axes: frozenset, name: str,
                    donated: tuple[bool, ...]) -> _DeviceProgram:
    return _DeviceProgram(jaxpr, mesh, newly_manual_axes, name, donated)


def run_sharded(jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: Sequence[PartitionSpec],
                out_specs: Sequence[PartitionSpec], args: Sequence[Any], name: str,
                donated: Sequence[bool] | None = None,
                newly_manual_axes: frozenset | None = None) -> list[Any]:
    """Runs the per-device `jaxpr` on every device of `mesh` at once, each on its blocks of
    the concrete `args`; the results are the blocks joined, sharded over the devices.

    `donated`: per argument, whether the caller donates it (pmap's `donate_argnums`, over a
    one-axis mesh). As in JAX, a donated Array already laid out on the mesh's devices as its
    spec cuts it (a pmap result, or any array on a one-device mesh) is deleted, when an
    output can use it; if its buffer belongs to it alone, the devices write that output over
    their blocks of it and the result is that memory. Other donated arguments are left as
    they are.
    """
    manual = frozenset(mesh.axis_names if newly_manual_axes is None else newly_manual_axes)
    program = _device_program(jaxpr, mesh, manual, name,
                              tuple(donated or (False,) * len(args)))
    taken = [k for k in program.aliased if _placed_as(args[k], in_specs[k], mesh)]
    given = {k: buffer for k in taken
             if (buffer := _given_buffer(args, k, in_specs[k], jaxpr.in_avals[k], mesh))
             is not None}
    inputs = [given.get(k) if k in given else _input(x, spec, aval, mesh)
              for k, (x, spec, aval) in enumerate(zip(args, in_specs, jaxpr.in_avals,
                                                      strict=True))]
    local = spmd.local_positions(device_ids(mesh))
    per_device = [[value[p] if isinstance(value, tuple) else
                   _block(value, _compiler_sharding(mesh, spec, aval.ndim), p, k in given)
                   for k, (value, spec, aval) in enumerate(zip(inputs, in_specs,
                                                               jaxpr.in_avals, strict=True))]
                  if p in local else None for p in range(mesh.size)]
    try:
        outs, ready = replicas.start_replicas(
            program.call.executable, per_device, device_ids(mesh), program.thread_setup,
            frozenset(given), after=pending_runs([execution.device_array(x) for x in args]))
    except BaseException:
        for k in given:  # the devices may have written the buffers before they failed
            execution.device_array(args[k]).delete()
        raise
    donor_of = {j: k for k, j in program.aliased.items() if k in given}
    input_ids = {id(b) for blocks in per_device if blocks is not None for b in blocks}
    results = []
    for j, (spec, aval) in enumerate(zip(out_specs, jaxpr.out_avals, strict=True)):
        blocks = [outs[p][j] if p in local else None for p in range(mesh.size)]
        k = donor_of.get(j)
        # The devices wrote this output over their blocks of a donated buffer laid out as
        # the output is: the buffer is the result.
        reused = (given[k] if k is not None and in_specs[k] == spec
                  and all(p not in local or b is per_device[p][k]
                          for p, b in enumerate(blocks)) else None)
        results.append(_join(blocks, spec, aval, mesh, reused, input_ids, ready))
    for k in taken:
        execution.device_array(args[k]).delete()
    return results


def _placed_as(x: Any, spec: PartitionSpec, mesh: Mesh) -> bool:
    """Whether `x` is an Array (or key array) laid out on `mesh` as `spec` cuts it."""
    array = execution.device_array(x)
    return array is not None and not array.is_deleted() and array.sharding.is_equivalent_to(
        NamedSharding(mesh, spec), array.ndim)


def _given_buffer(args: Sequence[Any], k: int, spec: PartitionSpec, aval: ShapedArray,
                  mesh: Mesh) -> Any:
    """What the devices may write their outputs over, of donated argument `k`: the blocks
    its devices hold (a tuple), if laid out as `spec` cuts it and only the Array holds
    them (`donatable_blocks`); or its whole buffer, if it belongs to the Array alone
    (`donatable_buffer`) and each device's block is a contiguous piece of it (a one-axis
    mesh's split along the leading dimensions; a replicated value only on one device). The
    Array must be no other argument."""
    array = execution.device_array(args[k])
    if any(execution.device_array(x) is array for i, x in enumerate(args) if i != k):
        return None
    if array._blocks is not None:  # each device's block, written over by that device
        blocks = donatable_blocks(array)
        if blocks is None or spmd.matching_blocks(
                array, _compiler_sharding(mesh, spec, array.ndim)) is None:
            return None
        return blocks
    buffer = donatable_buffer(array)
    physical = aval.dtype.physical_dtype if dtypes.is_extended(aval.dtype) else aval.dtype
    if buffer is None or buffer.dtype != physical or len(mesh.axis_names) != 1:
        return None
    dim = split_dim(spec, mesh_axis(mesh))
    if dim is None:
        return buffer if mesh.size == 1 else None
    return buffer if _cut(buffer, dim, 0, aval.shape[dim]).flags.c_contiguous else None


def _cut(value: np.ndarray, dim: int, index: int, size: int) -> np.ndarray:
    """Block `index` (of `size` along `dim`) of `value`, a view."""
    return value[(slice(None),) * dim + (slice(index * size, (index + 1) * size),)]


def _input(x: Any, spec: PartitionSpec, aval: ShapedArray, mesh: Mesh) -> Any:
    """What the devices read for argument `x`: the blocks its devices hold, if laid out as
    `spec` cuts it (a tuple, mesh order); else its whole value (a key array's base array
    keeps its key dimensions last, so its blocks are cut the same way)."""
    array = execution.device_array(x)
    if array is not None:
        sharding = _compiler_sharding(mesh, spec, array.ndim)
        blocks = spmd.matching_blocks(array, sharding)
        if blocks is not None:
            return blocks
    return execution.host_buffer(x, aval.dtype)


def _block(value: np.ndarray, sharding: TensorSharding, position: int,
           given: bool = False) -> np.ndarray:
    """The block of an argument's whole `value` the device at mesh `position` holds (of a
    buffer `given` up to the devices, a view)."""
    sharding = _padded(sharding, value.ndim)
    if not given:
        return spmd.block_of(value, sharding, position)
    index = sharding.block_index(position)
    shape = sharding.shard_shape(value.shape)
    return value[tuple(slice(i * s, (i + 1) * s) for i, s in zip(index, shape, strict=True))]


def _padded(sharding: TensorSharding, rank: int) -> TensorSharding:
    """`sharding` over a key array's base array (its key dimensions last, whole)."""
    if rank == sharding.rank:
        return sharding
    return sharding.with_dims([*sharding.dims, *[()] * (rank - sharding.rank)])


def _join(blocks: Sequence[np.ndarray], spec: PartitionSpec, aval: ShapedArray,
          mesh: Mesh, reused: np.ndarray | None, input_ids: set[int], ready: Any) -> Any:
    """Every device's block of one result as one Array laid out over the mesh's devices as
    `spec` says, each holding its block (its `sharding`, `devices()` and
    `addressable_shards` say so). `reused`: the donated buffer the blocks were written over,
    which the Array then holds whole. `ready`: the future of the run still writing them."""
    sharding = NamedSharding(mesh, spec)
    if reused is None or isinstance(reused, tuple):  # the donated blocks themselves
        return execution.blocks_result(blocks, _global_aval(aval, spec, mesh), sharding,
                                       input_ids if reused is None else set(), ready)
    if ready is not None:
        ready.result()  # the whole buffer is taken as it is: once the devices wrote it
    out = execution.result_array(reused, _global_aval(aval, spec, mesh))
    # A key array's sharding is its base array's; a float0 result (NumPy) has none.
    array = execution.device_array(out)
    if array is not None:
        set_sharding(array, sharding)
    return out


# ---------------------------------------------------------------------------------------------
# Lowering inside a jitted program: Shardy's manual computation, which the SPMD partitioner
# inlines (its region is one device's program).

def _lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value, jaxpr: ClosedJaxpr,
              mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
              out_specs: tuple[PartitionSpec, ...], newly_manual_axes: frozenset,
              **_: Any) -> list[ir.Value]:
    module_context = ctx.module_context
    if module_context.manual is not None:
        raise ValueError("a shard_map (pmap) inside another's per-device function is not "
                         "supported: map the inner function with vmap")
    manual = _manual(mesh, newly_manual_axes)
    for op in module_context.module.walk():
        if op.opcode == MANUAL and manual_mesh(op) != manual.mesh:
            raise ValueError(
                f"one jitted program uses shard_maps (pmaps) over different meshes: "
                f"{manual_mesh(op)} and {manual.mesh}")
    # A key array's physical type has its key dimensions last, whole.
    in_shardings = tuple(_compiler_sharding(mesh, s, lowering.aval_to_type(a).rank)
                         for s, a in zip(in_specs, ctx.avals_in, strict=True))
    out_shardings = tuple(_compiler_sharding(mesh, s, lowering.aval_to_type(a).rank)
                          for s, a in zip(out_specs, ctx.avals_out, strict=True))
    module_context.module.attributes["mhlo.num_partitions"] = ir.IntegerAttr(
        manual.mesh.device_count, "i32")
    region, b = ir.new_region([lowering.aval_to_type(a) for a in jaxpr.in_avals])
    module_context.manual = manual
    try:
        outs = lowering.jaxpr_subcomp(module_context, b, jaxpr.jaxpr,
                                      lowering._consts(b, jaxpr), region.block.args)
    finally:
        module_context.manual = None
    b.op("sdy.return", list(outs), [])
    op = ctx.builder.op(MANUAL, list(args),
                        [lowering.aval_to_type(a) for a in ctx.avals_out],
                        {"in_shardings": in_shardings, "out_shardings": out_shardings,
                         "manual_axes": tuple(str(a) for a in manual.axes)}, [region])
    return list(op.results)


lowering.register_lowering(shard_map_p, _lowering)


def _result_shardings(eqn: JaxprEqn) -> list[NamedSharding]:
    mesh = eqn.params["mesh"]
    return [NamedSharding(mesh, s) for s in eqn.params["out_specs"]]


execution.result_shardings[shard_map_p] = _result_shardings


# ---------------------------------------------------------------------------------------------
# Forward mode: shard_map of the jvp jaxpr; tangents are split as their primals.

def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
         ) -> tuple[list[Any], list[Any]]:
    jaxpr = params["jaxpr"]
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    with _body_axis(params):
        jvp_closed, out_nonzeros = pe.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    in_specs = params["in_specs"]
    out_specs = params["out_specs"]
    tangent_in_specs = [s for s, nz in zip(in_specs, nonzeros, strict=True) if nz]
    tangent_out_specs = [s for s, nz in zip(out_specs, out_nonzeros, strict=True) if nz]
    outs = shard_map_p.bind(*primals, *[t for t in tangents if type(t) is not ad.Zero],
                            **_params(params, jvp_closed, [*in_specs, *tangent_in_specs],
                                      [*out_specs, *tangent_out_specs]))
    count = len(out_specs)
    primal_outs, tangent_outs = outs[:count], iter(outs[count:])
    return primal_outs, [next(tangent_outs) if nz else ad.Zero.from_primal_value(p)
                         for p, nz in zip(primal_outs, out_nonzeros, strict=True)]


ad.primitive_jvps[shard_map_p] = _jvp


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize): a known shard_map now, an unknown one staged. Residuals
# the known side computes differ per device, so each leaves it with a new leading dimension
# of one block per device and enters the unknown side through it.

def _partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                  ) -> list[Any]:
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    manual = params["newly_manual_axes"]
    in_unknowns = tuple(trace._is_unknown(a) for a in args)
    with body_axis(mesh, manual):
        known, unknown, out_unknowns, sources = pe.split_jaxpr(jaxpr, in_unknowns)
    known_args, unknown_args = pe.partition_list(in_unknowns, args)
    known_in_specs, unknown_in_specs = pe.partition_list(in_unknowns, in_specs)
    known_out_specs, unknown_out_specs = pe.partition_list(out_unknowns, out_specs)
    num_known_outs = len(known_out_specs)
    num_extra = len(known.out_avals) - num_known_outs
    stacked = _with_stacked_residuals(known, num_known_outs, mesh, manual)
    per_device = per_device_spec(mesh, manual)
    known_outs: list[Any] = []
    if stacked.jaxpr.outvars or pe.jaxpr_has_effects(stacked.jaxpr):
        with core.set_current_trace(trace.parent_trace):
            known_outs = shard_map_p.bind(*known_args, **_params(
                params, stacked, known_in_specs,
                [*known_out_specs, *[per_device] * num_extra]))
    known_outs, extra = known_outs[:num_known_outs], known_outs[num_known_outs:]
    pools = {"in": known_args, "out": known_outs, "res": extra}
    spec_pools = {"in": known_in_specs, "out": known_out_specs}
    residuals = [where if kind == "const" else pools[kind][where] for kind, where in sources]
    residual_specs = [PartitionSpec() if kind == "const" else per_device if kind == "res"
                      else spec_pools[kind][where] for kind, where in sources]
    unstacked = _with_unstacked_residuals(unknown, tuple(kind == "res" for kind, _ in sources),
                                          mesh, manual)
    unknown_outs = staging.DynamicJaxprTrace.process_primitive(
        trace, shard_map_p, [*residuals, *unknown_args],
        _params(params, unstacked, [*residual_specs, *unknown_in_specs], unknown_out_specs))
    return pe.merge_lists(list(out_unknowns), known_outs, unknown_outs)


ad.partial_eval_rules[shard_map_p] = _partial_eval


def _partial_eval_custom(saveable: Any, unks_in: Sequence[bool], inst_in: Sequence[bool],
                         eqn: JaxprEqn) -> tuple[JaxprEqn, JaxprEqn, list[bool], list[bool],
                                                 list[Var]]:
    """A shard_map inside a checkpointed function, split by the checkpoint's policy: the
    known copy returns the residuals stacked per device, the staged copy reads them."""
    closed, mesh = eqn.params["jaxpr"], eqn.params["mesh"]
    in_specs, out_specs = eqn.params["in_specs"], eqn.params["out_specs"]
    manual = eqn.params["newly_manual_axes"]
    with body_axis(mesh, manual):
        known, staged, unks_out, inst_out, num_res = pe.partial_eval_jaxpr_custom(
            closed.jaxpr, unks_in, inst_in, False, False, saveable)
    num_known_outs = len(known.outvars) - num_res
    known_closed = _with_stacked_residuals(ClosedJaxpr(known, closed.consts), num_known_outs,
                                           mesh, manual)
    staged_closed = _with_unstacked_residuals(ClosedJaxpr(staged, closed.consts),
                                              (True,) * num_res + (False,) * (
                                                  len(staged.invars) - num_res), mesh, manual)
    per_device = per_device_spec(mesh, manual)
    known_in_specs, _ = pe.partition_list(unks_in, in_specs)
    known_out_specs, _ = pe.partition_list(unks_out, out_specs)
    _, staged_in_specs = pe.partition_list(inst_in, in_specs)
    _, staged_out_specs = pe.partition_list(inst_out, out_specs)
    residuals = [Var(a) for a in known_closed.out_avals[num_known_outs:]]
    ins_known, _ = pe.partition_list(unks_in, eqn.invars)
    outs_known, _ = pe.partition_list(unks_out, eqn.outvars)
    _, ins_staged = pe.partition_list(inst_in, eqn.invars)
    _, outs_staged = pe.partition_list(inst_out, eqn.outvars)
    eqn_known = eqn.replace(invars=ins_known, outvars=[*outs_known, *residuals],
                            params=_params(eqn.params, known_closed, known_in_specs,
                                           [*known_out_specs, *[per_device] * num_res]))
    eqn_staged = eqn.replace(invars=[*residuals, *ins_staged], outvars=outs_staged,
                             params=_params(eqn.params, staged_closed,
                                            [*[per_device] * num_res, *staged_in_specs],
                                            staged_out_specs))
    # Known inputs the staged copy reads but does not have yet become residuals too.
    new_inst = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(v, Var) and not inst]
    return eqn_known, eqn_staged, list(unks_out), list(inst_out), new_inst + residuals


pe.partial_eval_jaxpr_custom_rules[shard_map_p] = _partial_eval_custom


@pe.transform_cache
def _with_stacked_residuals(known: ClosedJaxpr, num_outs: int, mesh: Mesh,
                            manual: frozenset) -> ClosedJaxpr:
    """`known` with its residual outputs (after the first `num_outs`) given a leading
    dimension of size one: the device's block of a per-device stack."""
    if len(known.out_avals) == num_outs:
        return known

    def stacked(*args: Any) -> list[Any]:
        outs = eval_jaxpr(known.jaxpr, known.consts, *args)
        return [*outs[:num_outs], *[structural.expand_dims(r, (0,)) for r in outs[num_outs:]]]

    with body_axis(mesh, manual):
        return staging.trace_to_jaxpr(stacked, list(known.in_avals))


@pe.transform_cache
def _with_unstacked_residuals(unknown: ClosedJaxpr, stacked: tuple[bool, ...],
                              mesh: Mesh, manual: frozenset) -> ClosedJaxpr:
    """`unknown` reading its `stacked` residual inputs as blocks of a per-device stack."""
    if not any(stacked):
        return unknown
    count = len(stacked)
    avals = [a.update(shape=(1, *a.shape)) if s else a
             for a, s in zip(unknown.in_avals[:count], stacked, strict=True)]

    def unstacked(*args: Any) -> list[Any]:
        residuals = [structural.squeeze(r, (0,)) if s else r
                     for r, s in zip(args[:count], stacked, strict=True)]
        return eval_jaxpr(unknown.jaxpr, unknown.consts, *residuals, *args[count:])

    with body_axis(mesh, manual):
        return staging.trace_to_jaxpr(unstacked, [*avals, *unknown.in_avals[count:]])


# ---------------------------------------------------------------------------------------------
# Transposition: shard_map of the transposed jaxpr. A result replicated over some manual axes
# is counted once though each of their devices computes it, so its cotangent is split among
# them; an operand replicated over some is read by each of their devices, so its cotangent is
# the sum of theirs.

def _transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    in_linear = tuple(ad.is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is ad.Zero for ct in cts)
    transposed, in_zeros = _transposed_body(jaxpr, in_linear, out_zeros, mesh,
                                            params["newly_manual_axes"], in_specs, out_specs)
    nonlinear_args = [a for a, lin in zip(args, in_linear, strict=True) if not lin]
    nonlinear_specs = [s for s, lin in zip(in_specs, in_linear, strict=True) if not lin]
    nonzero_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    ct_specs = [s for s, z in zip(out_specs, out_zeros, strict=True) if not z]
    linear_specs = [s for s, lin in zip(in_specs, in_linear, strict=True) if lin]
    result_specs = [s for s, z in zip(linear_specs, in_zeros, strict=True) if not z]
    outs = shard_map_p.bind(*nonlinear_args, *nonzero_cts, **_params(
        params, transposed, [*nonlinear_specs, *ct_specs], result_specs))
    return ad.call_cotangents(args, in_zeros, outs)


@pe.transform_cache
def _transposed_body(jaxpr: ClosedJaxpr, in_linear: tuple[bool, ...],
                     out_zeros: tuple[bool, ...], mesh: Mesh, manual: frozenset,
                     in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...]
                     ) -> tuple[ClosedJaxpr, list[bool]]:
    axes = manual_axes(mesh, manual)

    def replicated_over(spec: PartitionSpec) -> tuple[Any, ...]:
        return tuple(a for a in axes if a not in spec_axes(spec))

    with body_axis(mesh, manual):
        transposed, in_zeros = pe.transpose_jaxpr(jaxpr, in_linear, out_zeros)
    num_nonlinear = len(in_linear) - sum(in_linear)
    ct_replicated = [replicated_over(s) for s, z in zip(out_specs, out_zeros, strict=True)
                     if not z]
    linear_specs = [s for s, lin in zip(in_specs, in_linear, strict=True) if lin]
    result_replicated = [replicated_over(s)
                         for s, z in zip(linear_specs, in_zeros, strict=True) if not z]

    def adjusted(*args: Any) -> list[Any]:
        cts = [_scale(ct, 1 / math.prod(mesh.shape[a] for a in over)) if over else ct
               for ct, over in zip(args[num_nonlinear:], ct_replicated, strict=True)]
        outs = eval_jaxpr(transposed.jaxpr, transposed.consts, *args[:num_nonlinear], *cts)
        return [_sum_over(o, over) if over else o
                for o, over in zip(outs, result_replicated, strict=True)]

    with body_axis(mesh, manual):
        return staging.trace_to_jaxpr(adjusted, list(transposed.in_avals)), in_zeros


def _differentiable(x: Any) -> bool:
    return np.issubdtype(core.get_aval(x).dtype, np.inexact)


def _scale(ct: Any, factor: float) -> Any:
    if not _differentiable(ct):
        return ct
    return elementwise.mul(ct, np.asarray(factor, core.get_aval(ct).dtype))


def _sum_over(ct: Any, axes: tuple[Any, ...]) -> Any:
    return parallel.psum(ct, axes) if _differentiable(ct) else ct


ad.primitive_transposes[shard_map_p] = _transpose


# ---------------------------------------------------------------------------------------------
# Batching: the batch becomes a new leading dimension of every batched operand and result,
# not split over the mesh.

def _batcher(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[list[Any], list[int | None]]:
    jaxpr = params["jaxpr"]
    vals = [v if d is None else batching.moveaxis(v, d, 0)
            for v, d in zip(vals, dims, strict=True)]
    in_dims = tuple(None if d is None else 0 for d in dims)
    with _body_axis(params):
        batched, out_dims = _batch_body(jaxpr, axis_data, in_dims)
    in_specs = [s if d is None else PartitionSpec(None, *s)
                for s, d in zip(params["in_specs"], in_dims, strict=True)]
    out_specs = [s if d is None else PartitionSpec(None, *s)
                 for s, d in zip(params["out_specs"], out_dims, strict=True)]
    return shard_map_p.bind(*vals, **_params(params, batched, in_specs, out_specs)), out_dims


@pe.transform_cache
def _batch_body(jaxpr: ClosedJaxpr, axis_data: batching.AxisData, in_dims: tuple[int | None]
                ) -> tuple[ClosedJaxpr, list[int | None]]:
    return batching.batch_jaxpr(jaxpr, axis_data, in_dims,
                                [batching.zero_if_mapped] * len(jaxpr.out_avals))


batching.primitive_batchers[shard_map_p] = _batcher


# ---------------------------------------------------------------------------------------------
# Dead-code elimination: unused results go, and operands the body no longer reads.

def _dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not pe.jaxpr_has_effects(eqn.params["jaxpr"].jaxpr):
        return [False] * len(eqn.invars), None
    closed = eqn.params["jaxpr"]
    jaxpr, used_inputs = pe.dce_jaxpr(closed.jaxpr, used_outputs)
    if all(used_outputs) and all(used_inputs):
        return list(used_inputs), eqn
    params = _params(eqn.params, ClosedJaxpr(jaxpr, closed.consts),
                     [s for s, u in zip(eqn.params["in_specs"], used_inputs, strict=True) if u],
                     [s for s, u in zip(eqn.params["out_specs"], used_outputs, strict=True)
                      if u])
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=params)
    return list(used_inputs), new_eqn


pe.dce_rules[shard_map_p] = _dce
