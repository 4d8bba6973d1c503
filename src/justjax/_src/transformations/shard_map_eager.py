"""A `shard_map` called on concrete arrays runs its body eagerly, op by op, on every device at
once, as JAX 0.10.2's does: Python in the body runs once, and each value it sees is a
`ShardMapTracer` holding every device's block, which prints them
(`On cpu:0 at mesh coordinates (i,) = (0,):` ...).

Each primitive the body binds runs as a one-op shard_map over the mesh (`run_sharded`: one
compiled per-device program, its collectives across the devices); a value is held stacked, one
block per device along a new leading dimension split over the manual axes. Constants the
body makes are every device's alike. The axes each value may vary along are tracked as it is
computed (`varying_axes`), for `check_vma`.
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.interpreters import staging
from justjax._src.lax import structural
from justjax._src.compilation import caches, execution, spmd
from justjax._src.runtime.mesh import Mesh
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.transformations import shard_map as shard_map_lib
from justjax._src.transformations import varying_axes

__all__ = ["ShardMapTrace", "ShardMapTracer", "run_eagerly"]


class ShardMapTracer(core.Tracer):
    """A value of an eager shard_map's body: `stacked`, every device's block along a leading
    dimension (an Array laid out one block per device); `varying`, the manual axes it may
    vary along."""

    __slots__ = ("stacked", "varying", "_aval")

    def __init__(self, trace: ShardMapTrace, stacked: Any, varying: frozenset) -> None:
        self._trace = trace
        self.stacked = stacked
        self.varying = varying
        full = core.get_aval(stacked)
        self._aval = full.update(shape=full.shape[1:], vma=tuple(
            a for a in trace.tracked if a in varying))

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def blocks(self) -> list[np.ndarray]:
        """Each device's block, in mesh order."""
        return [np.asarray(b)[0] for b in self.stacked.device_blocks()]

    def __repr__(self) -> str:
        trace = self._trace
        names = "(" + ", ".join(str(n) for n in trace.mesh.axis_names) + ",)"
        parts = []
        for device, block in zip(trace.mesh._flat_devices_tuple, self.blocks(), strict=True):
            coordinates = trace.coordinates(device)
            parts.append(f"On {device.platform}:{device.id} at mesh coordinates {names} = "
                         f"{coordinates}:\n{block}")
        return "\n\n".join(parts) + "\n"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self) if not spec else format(str(self), spec)


class ShardMapTrace(core.Trace):
    """The body of a shard_map running eagerly over `mesh`, per-device over its
    `manual` axes."""

    tracer_name = "ShardMapTracer"

    def __init__(self, mesh: Mesh, manual: frozenset, check_vma: bool = False) -> None:
        super().__init__()
        self.mesh = mesh
        self.manual = manual
        # The manual axes a value's type says it varies along (under check_vma), in order.
        self.tracked = tuple(a for a in mesh.axis_names if a in manual) if check_vma else ()
        self.spec = shard_map_lib.per_device_spec(mesh, manual)
        self._mesh_shape = spmd.mesh_shape(mesh)
        # Which block of a stacked value each mesh position holds.
        self._stacked = shard_map_lib._compiler_sharding(mesh, self.spec, 1)
        self._positions = {d: p for p, d in enumerate(mesh._flat_devices_tuple)}

    def coordinates(self, device: Any) -> tuple[int, ...]:
        """`device`'s coordinates on the mesh's axes, in their order."""
        found = self._mesh_shape.coordinates(self._positions[device])
        return tuple(found[name] for name in self._mesh_shape.names)

    @property
    def count(self) -> int:
        """How many distinct blocks a value has: one per combination of the manual axes'
        coordinates (devices differing only on the other axes hold the same)."""
        return self._stacked.tiles()[0]

    def stacked_index(self, position: int) -> int:
        """The block of the device at mesh `position`: its manual coordinates, the first
        axis major."""
        return self._stacked.block_index(position)[0]

    def stack(self, x: Any) -> tuple[Any, frozenset]:
        """`x` as stacked blocks and the axes it varies along: a tracer of this trace as it
        is; a constant, the same block on every device."""
        if isinstance(x, ShardMapTracer) and x._trace is self:
            return x.stacked, x.varying
        value = np.asarray(execution.host_buffer(x, core.get_aval(x).dtype))
        stacked = np.broadcast_to(value, (self.count, *value.shape))
        return np.ascontiguousarray(stacked), frozenset()

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any],
                          params: dict) -> Any:
        stacked, varying = zip(*(self.stack(a) for a in args)) if args else ((), ())
        avals = [core.get_aval(s) for s in stacked]
        closed = _one_op(primitive, params, tuple(avals), self.mesh, self.manual)
        outs = shard_map_lib.run_sharded(closed, self.mesh, [self.spec] * len(avals),
                                         [self.spec] * len(closed.out_avals), list(stacked),
                                         primitive.name, newly_manual_axes=self.manual)
        out_varying = varying_axes.infer(closed.jaxpr, list(varying))
        tracers = [ShardMapTracer(self, o, v & self.manual)
                   for o, v in zip(outs, out_varying, strict=True)]
        return tracers if primitive.multiple_results else tracers[0]

    def process_custom_jvp_call(self, primitive: core.Primitive, fun: Callable, jvp: Callable,
                                args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        return fun(*args)

    def process_custom_vjp_call(self, primitive: core.Primitive, fun: Callable, fwd: Callable,
                                bwd: Callable, args: Sequence[Any], *, symbolic_zeros: bool
                                ) -> list[Any]:
        return fun(*args)


# Each op's per-device program, by primitive, params, shapes and mesh (the oldest dropped
# first beyond the bound); `jax.clear_caches` empties it.
_one_op_cache: collections.OrderedDict[tuple, ClosedJaxpr] = collections.OrderedDict()
_ONE_OP_CACHE_SIZE = 512
caches.register_cache(_one_op_cache.clear)


def _one_op(primitive: core.Primitive, params: dict, avals: tuple[ShapedArray, ...],
            mesh: Mesh, manual: frozenset) -> ClosedJaxpr:
    """The per-device program of one primitive on stacked blocks (cached when its params
    hash, so each is compiled once)."""
    try:
        key: tuple | None = (primitive, tuple(sorted(params.items())), avals, mesh, manual)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _one_op_cache:
        return _one_op_cache[key]

    def body(*blocks: Any) -> list[Any]:
        outs = primitive.bind(*[structural.squeeze(b, (0,)) for b in blocks], **params)
        outs = outs if primitive.multiple_results else [outs]
        return [structural.expand_dims(o, (0,)) for o in outs]

    block_avals = [a.update(shape=(1, *a.shape[1:])) for a in avals]
    with shard_map_lib.body_axis(mesh, manual):
        closed = staging.trace_to_jaxpr(body, block_avals)
    if key is not None:
        _one_op_cache[key] = closed
        if len(_one_op_cache) > _ONE_OP_CACHE_SIZE:
            _one_op_cache.popitem(last=False)
    return closed


def run_eagerly(f: Callable[..., Any], args: Sequence[Any], in_specs: Sequence[PartitionSpec],
                mesh: Mesh, manual: frozenset, check_vma: bool = False
                ) -> tuple[list[Any], list[frozenset], ShardMapTrace]:
    """Runs `f` (on flat leaves) over the devices of `mesh`, op by op: returns each output's
    stacked blocks, the axes each may vary along, and the trace."""
    from justjax._src.runtime.array import Array, place
    from justjax._src.runtime.sharding import NamedSharding
    trace = ShardMapTrace(mesh, manual, check_vma)
    tracers = []
    for x, spec in zip(args, in_specs, strict=True):
        aval = core.get_aval(x)
        sharding = shard_map_lib._compiler_sharding(mesh, spec, aval.ndim)
        whole = execution.host_buffer(x, aval.dtype)
        blocks: dict[int, np.ndarray] = {}
        for p in range(mesh.size):
            blocks.setdefault(trace.stacked_index(p), shard_map_lib._block(whole, sharding, p))
        stacked = np.stack([blocks[m] for m in range(trace.count)])
        tracers.append(ShardMapTracer(trace, place(Array(stacked),
                                                    NamedSharding(mesh, trace.spec)),
                                      shard_map_lib.spec_axes(spec) & manual))
    with shard_map_lib.body_axis(mesh, manual), core.set_current_trace(trace), \
            core.tracking_varying_axes(trace.tracked):
        outs = f(*tracers)
    stacked, varying = zip(*(trace.stack(o) for o in outs)) if outs else ((), ())
    return list(stacked), list(varying), trace
