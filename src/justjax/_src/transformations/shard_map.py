"""The `shard_map` primitive: a function run once per device of a one-axis mesh, each run on
its block of every argument, as JAX 0.10.2 builds `pmap` on it.

Params, as JAX prints them: `jaxpr` (the per-device function, on blocks), `mesh`
(`Mesh('i': 4, axis_types=(Auto,))`), `in_specs` / `out_specs` (one `P(...)` per operand
and result: the dimension holding the mesh axis name is split into one block per device,
`P()` is the whole value on every device), `check_vma` and `newly_manual_axes`.

How it runs:
- called on concrete arrays (`pmap`'s call): the per-device jaxpr is lowered as one replica's
  program (`mhlo.num_replicas = N`, its collectives StableHLO collectives), compiled once
  and run as N replicas at once (`runtime/replicas.run_replicas`); blocks are cut and joined
  on the host and the results are sharded over the mesh's devices.
- inside a jitted program (`jit(pmap(f))`, or the programs `grad` and `vmap` of a pmap make):
  the whole program runs replicated on the mesh's devices; at the `shard_map` each replica
  takes its block (`dynamic_slice` at `replica_id`), runs the body, and the blocks are
  joined again with `all_gather`. This is how JAX lowered pmap inside jit before shard_map.

Transforms keep the call a `shard_map` over the same mesh: jvp, partial evaluation and
transposition transform the per-device jaxpr (a cotangent of a replicated result is divided
among the devices and the cotangent of a replicated operand summed over them, so psum
transposing to psum gives JAX's gradients), and vmap adds the batch as a new leading
dimension no device splits.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Sequence

import numpy as np

from justjax._src.compilation import compiler
from justjax._src.compilation import execution
from justjax._src.backends import get_backend
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, JaxprEqn, Var, eval_jaxpr
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import elementwise, parallel, slicing, structural
from justjax._src.lax import parallel_spmd  # noqa: F401 (registers the SPMD lowerings)
from justjax._src.hlo import ir
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import replicas
from justjax._src.runtime.array import donatable_buffer, set_sharding
from justjax._src.runtime.mesh import Mesh
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.runtime.sharding import NamedSharding

__all__ = ["Mesh", "PartitionSpec", "shard_map_p", "axis_mesh", "bind", "block_aval",
           "body_axis", "device_ids", "inside_body", "mesh_axis", "run_sharded", "spec_for",
           "split_dim"]


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


def block_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    """One device's block of a value of `aval` split by `spec` over `mesh`."""
    dim = split_dim(spec, mesh_axis(mesh))
    if dim is None:
        return aval
    shape = list(aval.shape)
    shape[dim] //= mesh.size
    return aval.update(shape=tuple(shape))


def _global_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    dim = split_dim(spec, mesh_axis(mesh))
    if dim is None:
        return aval
    shape = list(aval.shape)
    shape[dim] *= mesh.size
    return aval.update(shape=tuple(shape))


# Bodies being traced on this thread: a pmap inside one is mapped with vmap (nested pmap).
_tracing = threading.local()


@contextlib.contextmanager
def body_axis(mesh: Mesh) -> Iterator[None]:
    """Binds the mesh axis while a per-device function is traced or transformed."""
    depth = getattr(_tracing, "depth", 0)
    _tracing.depth = depth + 1
    try:
        with core.extend_axis_env(mesh_axis(mesh), mesh.size):
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
         in_specs: Sequence[PartitionSpec], out_specs: Sequence[PartitionSpec]) -> list[Any]:
    """`shard_map` of the per-device `jaxpr` on global `args`."""
    return shard_map_p.bind(*args, jaxpr=jaxpr, mesh=mesh, in_specs=tuple(in_specs),
                            out_specs=tuple(out_specs), check_vma=False,
                            newly_manual_axes=frozenset({mesh_axis(mesh)}))


def _params(params: dict, jaxpr: ClosedJaxpr, in_specs: Sequence[PartitionSpec],
            out_specs: Sequence[PartitionSpec]) -> dict:
    return dict(params, jaxpr=jaxpr, in_specs=tuple(in_specs), out_specs=tuple(out_specs))


def _abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, mesh: Mesh,
                   in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...],
                   **_: Any) -> list[ShapedArray]:
    for aval, spec in zip(avals, in_specs, strict=True):
        dim = split_dim(spec, mesh_axis(mesh))
        if dim is not None and aval.shape[dim] % mesh.size:
            raise ValueError(f"shard_map applied to an operand of shape {aval.shape}, whose "
                             f"dimension {dim} ({aval.shape[dim]}) is not divisible by the "
                             f"{mesh.size} devices of mesh axis {mesh_axis(mesh)!r}")
    return [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]


shard_map_p.def_abstract_eval(_abstract_eval)


def _impl(*args: Any, jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
          out_specs: tuple[PartitionSpec, ...], **_: Any) -> list[Any]:
    return run_sharded(jaxpr, mesh, in_specs, out_specs, args, "shmap_body")


core.impl_rules[shard_map_p] = _impl


# ---------------------------------------------------------------------------------------------
# Running on concrete arrays: one replica program, blocks cut and joined on the host.

class _ReplicaProgram:
    """The per-device jaxpr lowered as one replica's program and compiled; each donated
    block is aliased to an output block of its type (`tf.aliasing_output`)."""

    def __init__(self, jaxpr: ClosedJaxpr, mesh: Mesh, name: str,
                 donated: tuple[bool, ...]) -> None:
        count = len(jaxpr.out_avals)
        infos = ["result"] if count == 1 else [f"result[{i}]" for i in range(count)]
        avals = tuple(jaxpr.in_avals)
        aliases = compiler.donation_aliases(avals, donated, jaxpr.out_avals)
        module = lowering.lower_jaxpr_to_module(jaxpr, name, infos,
                                                replica_axes={mesh_axis(mesh): mesh.size},
                                                prefix="pmap", arg_attrs=aliases)
        info = execution.ModuleInfo(module, tuple(range(len(avals))), avals,
                                    tuple(jaxpr.out_avals), donated)
        self.call = compiler.compile_lowered(info, name, jaxpr)
        # The replicas' threads are readied by the backend that compiled their program.
        self.thread_setup = get_backend(self.call.backend).prepare_replica_thread
        # Argument -> the output its blocks are donated to.
        self.aliased = module.function("main").aliased_outputs


@pe.transform_cache
def _replica_program(jaxpr: ClosedJaxpr, mesh: Mesh, name: str,
                     donated: tuple[bool, ...]) -> _ReplicaProgram:
    return _ReplicaProgram(jaxpr, mesh, name, donated)


def run_sharded(jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: Sequence[PartitionSpec],
                out_specs: Sequence[PartitionSpec], args: Sequence[Any], name: str,
                donated: Sequence[bool] | None = None) -> list[Any]:
    """Runs the per-device `jaxpr` on every device of `mesh` at once, each on its blocks of
    the concrete `args`; the results are the blocks joined, sharded over the devices.

    `donated`: per argument, whether the caller donates it (pmap's `donate_argnums`). As in
    JAX, a donated Array already laid out on the mesh's devices as its spec cuts it (a pmap
    result, or any array on a one-device mesh) is deleted, when an output can use it; if its
    buffer belongs to it alone, the replicas write that output over their blocks of it and
    the result is that memory. Other donated arguments are left as they are.
    """
    axis = mesh_axis(mesh)
    program = _replica_program(jaxpr, mesh, name, tuple(donated or (False,) * len(args)))
    taken = [k for k in program.aliased if _placed_as(args[k], in_specs[k], mesh)]
    given = {k: buffer for k in taken
             if (buffer := _given_buffer(args, k, split_dim(in_specs[k], axis),
                                         jaxpr.in_avals[k], mesh)) is not None}
    per_replica = [[_block(x, split_dim(spec, axis), i, aval, given.get(k))
                    for k, (x, spec, aval) in enumerate(zip(args, in_specs, jaxpr.in_avals,
                                                            strict=True))]
                   for i in range(mesh.size)]
    try:
        outs = replicas.run_replicas(program.call.executable, per_replica, device_ids(mesh),
                                     program.thread_setup, frozenset(given))
    except BaseException:
        for k in given:  # the replicas may have written the buffers before they failed
            execution.device_array(args[k]).delete()
        raise
    donor_of = {j: k for k, j in program.aliased.items() if k in given}
    results = []
    for j, (spec, aval) in enumerate(zip(out_specs, jaxpr.out_avals, strict=True)):
        blocks = [outs[i][j] for i in range(mesh.size)]
        k = donor_of.get(j)
        # The replicas wrote this output over their blocks of a donated buffer laid out as
        # the output is: the buffer is the result.
        reused = (given[k] if k is not None and in_specs[k] == spec
                  and all(b is per_replica[i][k] for i, b in enumerate(blocks)) else None)
        results.append(_join(blocks, split_dim(spec, axis), aval, mesh, reused))
    for k in taken:
        execution.device_array(args[k]).delete()
    return results


def _placed_as(x: Any, spec: PartitionSpec, mesh: Mesh) -> bool:
    """Whether `x` is an Array (or key array) laid out on `mesh` as `spec` cuts it."""
    array = execution.device_array(x)
    return array is not None and not array.is_deleted() and array.sharding.is_equivalent_to(
        NamedSharding(mesh, spec), array.ndim)


def _given_buffer(args: Sequence[Any], k: int, dim: int | None, aval: ShapedArray,
                  mesh: Mesh) -> np.ndarray | None:
    """The buffer of donated argument `k` if the replicas may write their outputs over
    their blocks of it: it belongs to the Array alone (`donatable_buffer`), the Array is no
    other argument, and each replica's block is a contiguous piece (the blocks of a split
    along the leading dimensions; a replicated value only on one device)."""
    array = execution.device_array(args[k])
    if any(execution.device_array(x) is array for i, x in enumerate(args) if i != k):
        return None
    buffer = donatable_buffer(array)
    physical = aval.dtype.physical_dtype if dtypes.is_extended(aval.dtype) else aval.dtype
    if buffer is None or buffer.dtype != physical:
        return None
    if dim is None:
        return buffer if mesh.size == 1 else None
    return buffer if _cut(buffer, dim, 0, aval.shape[dim]).flags.c_contiguous else None


def _cut(value: np.ndarray, dim: int, index: int, size: int) -> np.ndarray:
    """Block `index` (of `size` along `dim`) of `value`, a view."""
    return value[(slice(None),) * dim + (slice(index * size, (index + 1) * size),)]


def _block(x: Any, dim: int | None, index: int, aval: ShapedArray,
           given: np.ndarray | None = None) -> np.ndarray:
    """Replica `index`'s block of `x` (a key array's base array keeps its key dimensions
    last, so its blocks are cut the same way); of `given`, the buffer of `x` given up to
    the replicas, a view."""
    if given is not None:
        return given if dim is None else _cut(given, dim, index, aval.shape[dim])
    value = execution.host_buffer(x, aval.dtype)
    if dim is None:
        return value
    return np.ascontiguousarray(_cut(value, dim, index, aval.shape[dim]))


def _join(blocks: Sequence[np.ndarray], dim: int | None, aval: ShapedArray,
          mesh: Mesh, reused: np.ndarray | None = None) -> Any:
    """Every replica's block of one result as one Array whose blocks along `dim` live on the
    mesh's devices (its `sharding`, `devices()` and `addressable_shards` say so); `reused`:
    the donated buffer the blocks were written over, which the Array then holds."""
    if reused is not None:
        out = execution.result_array(reused, _global_aval(aval, spec_for(dim, mesh_axis(mesh)),
                                                       mesh))
    elif dim is None:
        # A replicated result is the same on every device (JAX returns device 0's).
        out = execution.result_array(np.array(blocks[0], copy=True), aval)
    else:
        joined = np.concatenate([np.asarray(b) for b in blocks], axis=dim)
        out = execution.result_array(joined,
                                  _global_aval(aval, spec_for(dim, mesh_axis(mesh)), mesh))
    # A key array's sharding is its base array's; a float0 result (NumPy) has none.
    array = execution.device_array(out)
    if array is not None:
        set_sharding(array, NamedSharding(mesh, spec_for(dim, mesh_axis(mesh))))
    return out


# ---------------------------------------------------------------------------------------------
# Lowering inside a jitted program: the program runs replicated on the mesh's devices; each
# replica cuts its blocks at the shard_map and the results are gathered back.

def _lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value, jaxpr: ClosedJaxpr,
              mesh: Mesh, in_specs: tuple[PartitionSpec, ...],
              out_specs: tuple[PartitionSpec, ...], **_: Any) -> list[ir.Value]:
    module_context = ctx.module_context
    if module_context.replica_axes:
        raise ValueError("a shard_map (pmap) inside another's per-device function is not "
                         "supported: map the inner function with vmap")
    module = module_context.module
    if module.device_assignment not in (None, device_ids(mesh)):
        raise ValueError(f"one jitted program uses pmaps over different devices: "
                         f"{list(module.device_assignment)} and {list(device_ids(mesh))}")
    module.device_assignment = device_ids(mesh)
    module.attributes["mhlo.num_replicas"] = ir.IntegerAttr(mesh.size, "i32")
    name = mesh_axis(mesh)
    in_dims = [split_dim(s, name) for s in in_specs]
    out_dims = [split_dim(s, name) for s in out_specs]
    block_avals = [block_aval(a, s, mesh) for a, s in zip(ctx.avals_in, in_specs, strict=True)]

    def replicated(*xs: Any) -> list[Any]:
        index = parallel.axis_index(name)
        blocks = [x if d is None else _own_block(x, d, aval.shape, index)
                  for x, d, aval in zip(xs, in_dims, block_avals, strict=True)]
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *blocks)
        return [o if d is None else parallel.all_gather(o, name, axis=d, tiled=True)
                for o, d in zip(outs, out_dims, strict=True)]

    with body_axis(mesh):
        closed = staging.trace_to_jaxpr(replicated, list(ctx.avals_in))
    module_context.replica_axes = {name: mesh.size}
    try:
        return lowering.lower_closed_jaxpr_inline(ctx, closed, args)
    finally:
        module_context.replica_axes = {}


lowering.register_lowering(shard_map_p, _lowering)


def _own_block(x: Any, dim: int, block_shape: tuple[int, ...], index: Any) -> Any:
    """This replica's block of `x` along `dim`: a `dynamic_slice` starting at
    `replica_id * block` (in the form the simplifier knows as a replica's own block of an
    `all_gather`, which it then skips)."""
    zero = np.int32(0)
    starts = [elementwise.mul(index, np.int32(block_shape[dim])) if d == dim else zero
              for d in range(len(block_shape))]
    return slicing.dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(block_shape))


def _result_shardings(eqn: JaxprEqn) -> list[NamedSharding]:
    mesh = eqn.params["mesh"]
    return [NamedSharding(mesh, spec_for(split_dim(s, mesh_axis(mesh)), mesh_axis(mesh)))
            for s in eqn.params["out_specs"]]


execution.result_shardings[shard_map_p] = _result_shardings


# ---------------------------------------------------------------------------------------------
# Forward mode: shard_map of the jvp jaxpr; tangents are split as their primals.

def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
         ) -> tuple[list[Any], list[Any]]:
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    with body_axis(mesh):
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
    in_unknowns = tuple(trace._is_unknown(a) for a in args)
    with body_axis(mesh):
        known, unknown, out_unknowns, sources = pe.split_jaxpr(jaxpr, in_unknowns)
    known_args, unknown_args = pe.partition_list(in_unknowns, args)
    known_in_specs, unknown_in_specs = pe.partition_list(in_unknowns, in_specs)
    known_out_specs, unknown_out_specs = pe.partition_list(out_unknowns, out_specs)
    num_known_outs = len(known_out_specs)
    num_extra = len(known.out_avals) - num_known_outs
    stacked = _with_stacked_residuals(known, num_known_outs, mesh)
    per_device = spec_for(0, mesh_axis(mesh))
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
                                          mesh)
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
    with body_axis(mesh):
        known, staged, unks_out, inst_out, num_res = pe.partial_eval_jaxpr_custom(
            closed.jaxpr, unks_in, inst_in, False, False, saveable)
    num_known_outs = len(known.outvars) - num_res
    known_closed = _with_stacked_residuals(ClosedJaxpr(known, closed.consts), num_known_outs,
                                           mesh)
    staged_closed = _with_unstacked_residuals(ClosedJaxpr(staged, closed.consts),
                                              (True,) * num_res + (False,) * (
                                                  len(staged.invars) - num_res), mesh)
    per_device = spec_for(0, mesh_axis(mesh))
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
def _with_stacked_residuals(known: ClosedJaxpr, num_outs: int, mesh: Mesh) -> ClosedJaxpr:
    """`known` with its residual outputs (after the first `num_outs`) given a leading
    dimension of size one: the device's block of a per-device stack."""
    if len(known.out_avals) == num_outs:
        return known

    def stacked(*args: Any) -> list[Any]:
        outs = eval_jaxpr(known.jaxpr, known.consts, *args)
        return [*outs[:num_outs], *[structural.expand_dims(r, (0,)) for r in outs[num_outs:]]]

    with body_axis(mesh):
        return staging.trace_to_jaxpr(stacked, list(known.in_avals))


@pe.transform_cache
def _with_unstacked_residuals(unknown: ClosedJaxpr, stacked: tuple[bool, ...],
                              mesh: Mesh) -> ClosedJaxpr:
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

    with body_axis(mesh):
        return staging.trace_to_jaxpr(unstacked, [*avals, *unknown.in_avals[count:]])


# ---------------------------------------------------------------------------------------------
# Transposition: shard_map of the transposed jaxpr. A replicated result's value is counted
# once though every device computes it, so its cotangent is split among them; a replicated
# operand is read by every device, so its cotangent is the sum of theirs.

def _transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    in_linear = tuple(ad.is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is ad.Zero for ct in cts)
    transposed, in_zeros = _transposed_body(jaxpr, in_linear, out_zeros, mesh, in_specs,
                                            out_specs)
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
                     out_zeros: tuple[bool, ...], mesh: Mesh,
                     in_specs: tuple[PartitionSpec, ...], out_specs: tuple[PartitionSpec, ...]
                     ) -> tuple[ClosedJaxpr, list[bool]]:
    name = mesh_axis(mesh)
    with body_axis(mesh):
        transposed, in_zeros = pe.transpose_jaxpr(jaxpr, in_linear, out_zeros)
    num_nonlinear = len(in_linear) - sum(in_linear)
    ct_replicated = [split_dim(s, name) is None
                     for s, z in zip(out_specs, out_zeros, strict=True) if not z]
    linear_specs = [s for s, lin in zip(in_specs, in_linear, strict=True) if lin]
    result_replicated = [split_dim(s, name) is None
                         for s, z in zip(linear_specs, in_zeros, strict=True) if not z]

    def adjusted(*args: Any) -> list[Any]:
        cts = [_scale(ct, 1 / mesh.size) if rep else ct
               for ct, rep in zip(args[num_nonlinear:], ct_replicated, strict=True)]
        outs = eval_jaxpr(transposed.jaxpr, transposed.consts, *args[:num_nonlinear], *cts)
        return [_sum_over(o, name) if rep else o
                for o, rep in zip(outs, result_replicated, strict=True)]

    with body_axis(mesh):
        return staging.trace_to_jaxpr(adjusted, list(transposed.in_avals)), in_zeros


def _differentiable(x: Any) -> bool:
    return np.issubdtype(core.get_aval(x).dtype, np.inexact)


def _scale(ct: Any, factor: float) -> Any:
    if not _differentiable(ct):
        return ct
    return elementwise.mul(ct, np.asarray(factor, core.get_aval(ct).dtype))


def _sum_over(ct: Any, name: Any) -> Any:
    return parallel.psum(ct, name) if _differentiable(ct) else ct


ad.primitive_transposes[shard_map_p] = _transpose


# ---------------------------------------------------------------------------------------------
# Batching: the batch becomes a new leading dimension of every batched operand and result,
# not split over the mesh.

def _batcher(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[list[Any], list[int | None]]:
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    vals = [v if d is None else batching.moveaxis(v, d, 0)
            for v, d in zip(vals, dims, strict=True)]
    in_dims = tuple(None if d is None else 0 for d in dims)
    with body_axis(mesh):
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
