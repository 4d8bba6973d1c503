"""The user-facing transformations and utilities (`make_jaxpr`, `eval_shape`, `device_put` ...).

Each has a `_flat` core working on flat lists of leaves and a thin pytree wrapper here.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

import collections
import inspect

from justjax._src import backends, monitoring, util
from justjax._src.compilation import caches
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.interpreters import batching, staging
from justjax._src.pytrees.tree_errors import flatten_axes, is_none, keystr
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import processes
from justjax._src.runtime import transfer_guard
from justjax._src.runtime.array import Array, put, to_array
from justjax._src.runtime.devices import Device
from justjax._src.runtime.sharding import Sharding, SingleDeviceSharding, device_put_target
from justjax._src.compilation.stages import ShapeDtypeStruct


def _static_positions(static_argnums: int | Sequence[int], nargs: int) -> frozenset[int]:
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    positions = set()
    for i in static_argnums:
        i = operator.index(i)
        if not -nargs <= i < nargs:
            raise ValueError(f"static_argnums {static_argnums} out of range for {nargs} "
                             "positional arguments")
        positions.add(i % nargs)
    return frozenset(positions)


def _partial_static(fun: Callable, args: Sequence[Any], static: frozenset[int]
                    ) -> tuple[Callable, list[Any]]:
    """Binds the static positional arguments of `fun`; returns it and the dynamic ones."""
    dynamic = [a for i, a in enumerate(args) if i not in static]
    if not static:
        return fun, dynamic

    def bound(*dyn_args: Any, **kwargs: Any) -> Any:
        it = iter(dyn_args)
        full = [args[i] if i in static else next(it) for i in range(len(args))]
        return fun(*full, **kwargs)

    return bound, dynamic


def trace_flat(fun: Callable, in_tree: tree_util.PyTreeDef, in_avals: Sequence[ShapedArray],
               debug: staging.DebugInfo | None) -> tuple[ClosedJaxpr, tree_util.PyTreeDef]:
    """Traces a pytree function on flat avals: its closed jaxpr and output tree structure."""
    out_tree_box: list[tree_util.PyTreeDef] = []

    def flat_fun(*flat_args: Any) -> list[Any]:
        args, kwargs = tree_util.tree_unflatten(in_tree, flat_args)
        out = fun(*args, **kwargs)
        out_flat, out_tree = tree_util.tree_flatten(out)
        out_tree_box.append(out_tree)
        return out_flat

    with monitoring.log_elapsed_time("Finished tracing {fun_name} for jit in "
                                     "{elapsed_time:.9f} sec", staging.fun_name(fun),
                                     monitoring.JAXPR_TRACE_EVENT):
        closed = staging.trace_to_jaxpr(flat_fun, in_avals, debug)
    return closed, out_tree_box[0]


def _abstractify(x: Any) -> ShapedArray:
    return core.get_aval(x)


def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = (), axis_env: Any = None,
               return_shape: bool = False, abstracted_axes: Any = None) -> Callable[..., Any]:
    """Returns a function that gives `fun`'s jaxpr (a ClosedJaxpr) for example arguments.

    Args:
      fun: the function to trace.
      static_argnums: positions of arguments that are Python values baked into the trace.
      return_shape: also return the output's pytree of `ShapeDtypeStruct`.
    Returns:
      `f(*args, **kwargs) -> ClosedJaxpr`, or `(ClosedJaxpr, shapes)` with `return_shape`.
    """
    @util.wraps(fun)
    def make_jaxpr_f(*args: Any, **kwargs: Any) -> Any:
        static = _static_positions(static_argnums, len(args))
        bound, dyn_args = _partial_static(fun, args, static)
        flat_args, in_tree = tree_util.tree_flatten((tuple(dyn_args), kwargs))
        in_avals = [_abstractify(a) for a in flat_args]
        names = staging.signature_arg_names(fun, args, kwargs)
        debug = staging.debug_info("jit", fun, names)
        closed, out_tree = trace_flat(bound, in_tree, in_avals, debug)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in closed.out_avals]
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed

    make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', repr(fun))})"
    return make_jaxpr_f


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The output shapes and dtypes of `fun(*args, **kwargs)`, computed without running it."""
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    in_avals = list(staging.abstractify_args(
        fun, flat_args, lambda: staging.leaf_arg_names(fun, args, kwargs, frozenset())))
    debug = staging.debug_info("eval_shape", fun, staging.signature_arg_names(fun, args, kwargs))
    closed, out_tree = trace_flat(fun, in_tree, in_avals, debug)
    return tree_util.tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                               for a in closed.out_avals])


def _put_leaf(x: Any, target: Device | Sharding | None) -> Any:
    """One leaf moved to `target` (a device or a sharding, committed), or to the default
    device (uncommitted) for None; a traced value passes unchanged."""
    if isinstance(x, core.Tracer):
        return x
    if dtypes.is_extended(getattr(x, "dtype", None)):
        # A key array moves with its base array.
        return type(x)(x._impl, _put_leaf(x._base_array, target))
    _guard_put(x, target)
    if target is None:
        return to_array(x)
    cluster = processes.cluster()
    if (cluster is not None and isinstance(target, Sharding)
            and len({d.process_index for d in target.device_set}) == cluster.count > 1
            and not (type(x) is Array and x.committed)):
        # Host data put on every process's devices: each gives its devices' blocks of its
        # own copy, so the copies must agree (as JAX checks).
        processes.check_same_everywhere(x, str(type(x)))
    if type(x) is Array and not x._holds_value() and x.sharding != target:
        # A global array of a run of several processes: its blocks move between them as a
        # partitioned program moves them.
        from justjax._src.compilation.jit import jit
        return jit(lambda v: v, out_shardings=target)(x)
    return put(x, target)


def _guard_put(x: Any, target: Device | Sharding | None) -> None:
    """`device_put`'s transfers are explicit: only the `*_explicit` guard levels see them."""
    if isinstance(target, Device):
        target = SingleDeviceSharding(target)
    if type(x) is not Array:
        if transfer_guard.guarded("host_to_device"):
            device = devices_lib.default_device_override() or devices_lib.default_device()
            transfer_guard.host_to_device(core.get_aval(x),
                                          target or SingleDeviceSharding(device), explicit=True)
    elif target is not None and transfer_guard.guarded("device_to_device") and \
            set(x.devices()) != set(target._device_assignment):
        transfer_guard.device_to_device(x.aval, x.sharding, target, explicit=True)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: Any = False,
               may_alias: bool | None = None) -> Any:
    """Moves (copies) every leaf of `x` to a device as an Array (`jax.device_put`).

    Args:
      x: a pytree of arrays (or NumPy values, scalars).
      device: None (the default device, uncommitted), a `Device`, a `Sharding`, a
        `PartitionSpec` (over the mesh of `jax.set_mesh`), or a pytree of these that is a
        prefix of `x`.
      src: the source devices (multi-process JAX); unused in one process.
      donate, may_alias: accepted as in JAX; values are never aliased here.
    Returns:
      `x` with each leaf an Array laid out as asked.
    """
    leaves, tree = tree_util.tree_flatten(x)
    targets = flatten_axes("device_put device", tree, device)
    return tree_util.tree_unflatten(tree, [_put_leaf(leaf, device_put_target(target))
                                           for leaf, target in zip(leaves, targets,
                                                                   strict=True)])


def device_get(x: Any) -> Any:
    """Leaves of `x` as NumPy arrays (`jax.device_get`)."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if type(leaf) is Array else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Waits until every array in `x` has been computed; returns `x`."""
    def wait(leaf: Any) -> Any:
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
        return leaf
    return tree_util.tree_map(wait, x)


devices = devices_lib.devices
default_device = devices_lib.default_device


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    """The devices of process `process_index` (default: this process's)."""
    return devices_lib.local_devices(process_index, backend)


def device_count(backend: str | None = None) -> int:
    """The number of devices of every process."""
    return len(devices_lib.devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """The number of this process's devices."""
    return len(devices_lib.local_devices(None, backend))


def default_backend() -> str:
    return "cpu"


def process_index() -> int:
    """This process's index among the processes of the run (`jax.distributed`)."""
    return devices_lib.this_process()


def process_count() -> int:
    """The number of processes of the run (1 unless `jax.distributed.initialize` joined
    others)."""
    cluster = processes.cluster()
    return 1 if cluster is None else cluster.count


# ---------------------------------------------------------------------------------------------
# vmap.

def check_callable(fun: Any) -> None:
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _valid_axis_spec(leaf: Any) -> bool:
    return leaf is None or type(leaf) is int


def _mapped_axis_size(fun: Callable, in_tree: tree_util.PyTreeDef, vals: Sequence[Any],
                      dims: Sequence[int | None], name: str, axis_size: int | None) -> int:
    """The size of the mapped axis; JAX's errors for ranks too small and sizes that differ."""
    if not vals:
        if axis_size is not None:
            return axis_size
        args, kwargs = tree_util.tree_unflatten(in_tree, vals)
        raise ValueError(f"{name} wrapped function must be passed at least one argument "
                         "containing an array or axis_size must be specified, got empty "
                         f"*args={args} and **kwargs={kwargs}")

    def size_of(x: Any, axis: int) -> int | None:
        shape = np.shape(x)
        if -len(shape) <= axis < len(shape):
            return shape[axis]
        if not core.valid_jaxtype(x):
            return None
        min_rank = axis + 1 if axis >= 0 else -axis
        raise ValueError(f"{name} was requested to map its argument along axis {axis}, which "
                         f"implies that its rank should be at least {min_rank}, but is only "
                         f"{len(shape)} (its shape is {shape})")

    mapped_sizes = [None if d is None else size_of(x, d) for x, d in zip(vals, dims, strict=True)]
    sizes = {s for s in mapped_sizes if s is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) == 1:
        _check_mapped_specs(vals, dims)
        return sizes.pop()
    if not sizes:
        raise ValueError(f"{name} must have at least one non-None value in in_axes or "
                         "axis_size must be specified")
    raise ValueError(_inconsistent_sizes_message(fun, in_tree, vals, dims, mapped_sizes, name,
                                                 axis_size))


def _check_mapped_specs(vals: Sequence[Any], dims: Sequence[int | None]) -> None:
    """JAX's error when the mapped dimensions' types are split over different Explicit mesh
    axes (an unsplit one after a split one counts as different, as in JAX)."""
    seen = None
    for x, d in zip(vals, dims, strict=True):
        if d is None or not isinstance(x, (core.Tracer, Array)):
            continue
        spec = core.get_aval(x).type_spec
        entry = None if spec is None else spec[d]
        if seen is not None and entry != seen:
            raise ValueError("Mapped away dimension of inputs passed to vmap should be sharded "
                             f"the same. Got inconsistent axis specs: {seen} vs {entry}")
        seen = entry


def _inconsistent_sizes_message(fun: Callable, in_tree: tree_util.PyTreeDef,
                                vals: Sequence[Any], dims: Sequence[int | None],
                                mapped_sizes: list[int | None], name: str,
                                axis_size: int | None) -> str:
    args, kwargs = tree_util.tree_unflatten(in_tree, vals)
    try:
        parameters: list[str] | None = list(inspect.signature(fun).bind(*args, **kwargs)
                                            .signature.parameters)
    except (TypeError, ValueError):
        parameters = None

    def arg_name(path: tuple) -> str:
        index = path[0].idx
        if parameters is None or index >= len(parameters):
            return f"args{keystr(path)}"
        return f"argument {parameters[index]}{keystr(path[1:])}"

    def type_of(x: Any) -> str:
        try:
            return core.get_aval(x).str_short(short_dtypes=False)
        except TypeError:
            return "unknown"

    paths = [f"{arg_name(p)} of type {type_of(x)}"
             for p, x in tree_util.tree_flatten_with_path(args)[0]]
    paths += [f"kwargs{keystr(p)} of type {type_of(x)}"
              for p, x in tree_util.tree_flatten_with_path(kwargs)[0]]
    counts = collections.Counter(s for s in mapped_sizes if s is not None).most_common()
    lines = [f"{name} got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};\n")
    for rank, (size, count) in enumerate(counts):
        index = mapped_sizes.index(size)
        where = f"axis {dims[index]} of {paths[index]}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {where};\n")
        else:
            quantity = "most" if rank == 0 else "some"
            lines.append(f"  * {quantity} axes ({count} of them) had size {size}, e.g. "
                         f"{where};\n")
    return "".join(lines)[:-2]


def vmap(fun: Callable, in_axes: int | None | Sequence[Any] = 0, out_axes: Any = 0,
         axis_name: Any = None, axis_size: int | None = None,
         spmd_axis_name: Any = None) -> Callable:
    """Vectorizes `fun` over an axis of its arguments (`jax.vmap`).

    Args:
      fun: the function to map; its arguments and outputs are pytrees of arrays.
      in_axes: which axis of each argument is mapped: an int, None (not mapped: the same
        value for every example) or a pytree prefix of the positional arguments with those
        as leaves. Keyword arguments are always mapped over axis 0.
      out_axes: where the mapped axis goes in each output (None: the output must not be
        mapped), as a pytree prefix of the outputs.
      axis_name: names the mapped axis for collectives (`lax.psum(x, axis_name)` ...).
      axis_size: the size of the mapped axis, needed when no argument is mapped.
      spmd_axis_name: accepted for compatibility; single-process justjax ignores it.
    Returns:
      The vectorized function: each output gains the mapped axis at its `out_axes`.
    """
    check_callable(fun)
    if axis_name is None:
        axis_name = batching.no_axis_name
    if spmd_axis_name is not None and not isinstance(spmd_axis_name, tuple):
        spmd_axis_name = (spmd_axis_name,)
    if isinstance(in_axes, list):
        # Lists and tuples of argument specs mean the same to users (JAX's issue #2367).
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        f"to the positional arguments passed to the function, but got {in_axes}.")
    if not all(map(_valid_axis_spec, tree_util.tree_leaves(in_axes, is_leaf=is_none))):
        raise TypeError("vmap in_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {in_axes}.")
    if not all(map(_valid_axis_spec, tree_util.tree_leaves(out_axes, is_leaf=is_none))):
        raise TypeError("vmap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")

    @util.wraps(fun)
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                             "corresponding to the positional arguments passed to the function, "
                             f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_axes is None or type(in_axes) is int:
            # The common spec: every positional leaf on in_axes, keyword leaves on 0.
            args_tree, kwargs_tree = tree_util.treedef_children(in_tree)
            in_dims = [in_axes] * args_tree.num_leaves + [0] * kwargs_tree.num_leaves
        else:
            in_dims = flatten_axes("vmap in_axes", in_tree, (in_axes, 0), kws=True)
        for x, d in zip(flat_args, in_dims, strict=True):
            if d is not None and not core.valid_jaxtype(x):
                kind = type(x) if isinstance(x, str) else f"'{type(x)}'"
                raise TypeError(f"Argument '{x}' of type {kind} is not a valid JAX type")
        size = _mapped_axis_size(fun, in_tree, flat_args, in_dims, "vmap", axis_size)
        in_dims = [None if d is None else d % max(np.ndim(x), 1)
                   for x, d in zip(flat_args, in_dims, strict=True)]
        out_tree_box: list[tree_util.PyTreeDef] = []

        def flat_fun(*flat: Any) -> list[Any]:
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, flat)
            out_flat, out_tree = tree_util.tree_flatten(fun(*call_args, **call_kwargs))
            out_tree_box.append(out_tree)
            return out_flat

        def out_dims(count: int) -> list[Any]:
            return flatten_axes("vmap out_axes", out_tree_box[0], out_axes)

        axis_data = batching.AxisData(axis_name, size, spmd_axis_name)
        try:
            out_flat = batching.batch_flat(flat_fun, axis_data, in_dims, out_dims, flat_args)
        except batching.SpecMatchError as e:
            spec = tree_util.tree_unflatten(out_tree_box[0], out_dims(0))
            path, _ = tree_util.tree_flatten_with_path(spec, is_leaf=is_none)[0][e.leaf_index]
            raise ValueError(f"at vmap out_axes{keystr(path)}, got axis spec {e.dst} but output "
                             f"was batched on axis {e.src}") from None
        return tree_util.tree_unflatten(out_tree_box[0], out_flat)

    return vmap_f


# ---------------------------------------------------------------------------------------------
# Caches and effects.

def clear_caches() -> None:
    """Empties every in-memory tracing and compilation cache (`jax.clear_caches`): the next
    call of a jitted function (or an eager operation) traces and compiles again. The
    persistent compilation cache on disk is kept; turn it off with
    `jax_enable_compilation_cache=False`."""
    caches.clear_all_caches()


def effects_barrier() -> None:
    """Waits until every computation started so far has finished, its side effects (host
    callbacks, prints) included (`jax.effects_barrier`)."""
    backends.effects_barrier()


def copy_to_host_async(x: Any) -> Any:
    """Starts copying every array in `x` to the host (`jax.copy_to_host_async`); returns `x`.
    Arrays live in host memory here, so there is nothing to wait for."""
    for leaf in tree_util.tree_leaves(x):
        copy = getattr(leaf, "copy_to_host_async", None)
        if copy is not None:
            copy()
    return x
