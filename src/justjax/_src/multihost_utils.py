"""Moving data between the processes of a multi-process run
(`jax.experimental.multihost_utils`), as JAX does it: each is a partitioned program over the
mesh of every process's devices (`processes` × `local_devices`), so its collectives go
between the processes through MPI (`runtime/processes.py`). In a run of one process each is
the plain local operation.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from justjax._src import api
from justjax._src.compilation.jit import jit
from justjax._src.core import core, dtypes
from justjax._src.pytrees import tree_util
from justjax._src.pytrees.tree_errors import broadcast_prefix
from justjax._src.runtime import mesh as mesh_lib
from justjax._src.runtime.array import Array
from justjax._src.runtime.global_arrays import global_to_host_local, host_local_to_global
from justjax._src.runtime.mesh import Mesh
from justjax._src.runtime.partition_spec import PartitionSpec
from justjax._src.runtime.sharding import NamedSharding

__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "process_allgather", "sync_global_devices"]


def _process_mesh() -> Mesh:
    """Every process's devices, one row per process."""
    devices = np.array(api.devices()).reshape(api.process_count(), api.local_device_count())
    return Mesh(devices, ("processes", "local_devices"))


def _sum_over_processes(xs: Any) -> Any:
    from justjax._src.numpy import reductions
    return tree_util.tree_map(lambda x: reductions.sum(x, dtype=x.dtype, axis=0), xs)


def _identity(x: Any) -> Any:
    return x


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Every leaf of `in_tree` as the source process gives it (process 0 unless
    `is_source` says otherwise), as NumPy arrays; every process's leaves must have the
    same shapes."""
    if api.process_count() == 1:
        return tree_util.tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = api.process_index() == 0
    mesh = _process_mesh()
    spec = PartitionSpec("processes")

    def pre(x: Any) -> Any:
        value = np.asarray(x) if is_source else np.zeros_like(np.asarray(x))
        return host_local_array_to_global_array(value[None], mesh, spec)

    staged = tree_util.tree_map(pre, in_tree)
    with mesh_lib.set_mesh(mesh):
        out = jit(_sum_over_processes, out_shardings=PartitionSpec())(staged)
    return tree_util.tree_map(lambda x: np.asarray(x.addressable_data(0)), out)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's leaves of `in_tree`, as NumPy arrays: stacked along a new leading
    axis (concatenated along the first when `tiled`); a global array's whole value.

    Raises:
      ValueError: a global array with `tiled` false (JAX's message).
    """
    return tree_util.tree_map(lambda x: _allgather(x, tiled), in_tree)


def _allgather(x: Any, tiled: bool) -> np.ndarray:
    if type(x) is Array and not x.is_fully_addressable:
        if not tiled:
            raise ValueError("Gathering global non-fully-addressable arrays only supports "
                             "tiled=True")
        replicated = x.sharding.update(spec=PartitionSpec()) \
            if isinstance(x.sharding, NamedSharding) else None
        out = jit(_identity, out_shardings=replicated)(x)
        return np.asarray(out.addressable_data(0))
    value = np.asarray(x)
    if api.process_count() == 1:
        return value if tiled else value[None]
    if value.ndim == 0 or not tiled:
        value = value[None]
    mesh = _process_mesh()
    whole = host_local_to_global(value, mesh, PartitionSpec("processes"))
    with mesh_lib.set_mesh(mesh):
        out = jit(_identity, out_shardings=PartitionSpec())(whole)
    return np.asarray(out.addressable_data(0))


def sync_global_devices(name: str) -> None:
    """Waits until every process reaches the barrier `name` (processes reaching barriers of
    different names raise AssertionError)."""
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Checks that every process has the same leaves of `in_tree`.

    Raises:
      AssertionError: they differ (JAX's message).
    """
    def repeated(x: Any) -> np.ndarray:
        if type(x) is Array and not x.is_fully_addressable:
            return np.asarray(x.addressable_data(0))
        value = np.asarray(x)
        if value.ndim == 0:
            value = value[None]
        return np.concatenate([value] * api.process_count())

    out = process_allgather(in_tree, tiled=True)
    expected = tree_util.tree_map(repeated, in_tree)
    same = tree_util.tree_map(lambda a, b: bool(np.all(np.equal(a, b))), expected, out)
    if not all(tree_util.tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")


def _check_spec(spec: Any) -> None:
    if spec is None:
        raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                         "jax.sharding.PartitionSpec() if you wanted to replicate your input.")


def _with_specs(convert: Any, inputs: Any, mesh: Mesh, pspecs: Any) -> Any:
    """`convert(leaf, mesh, spec)` of each leaf of `inputs` with its spec of `pspecs` (a
    prefix of `inputs`)."""
    leaves, tree = tree_util.tree_flatten(inputs)
    specs = broadcast_prefix(pspecs, tree_util.tree_unflatten(tree, [0] * tree.num_leaves),
                             is_leaf=lambda x: x is None or isinstance(x, PartitionSpec))
    return tree_util.tree_unflatten(tree, [convert(x, mesh, spec)
                                           for x, spec in zip(leaves, specs, strict=True)])


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """Each process's values of `local_inputs`, its part of global arrays laid out on
    `global_mesh` as `pspecs` say: along a dimension split over processes the global array
    is the processes' values side by side; each process's value is cut over its devices
    (which must form a block of the mesh: `Mesh.local_mesh`)."""
    return _with_specs(_to_global, local_inputs, global_mesh, pspecs)


def _to_global(x: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    _check_spec(spec)
    if isinstance(x, core.Tracer):
        raise TypeError("host_local_array_to_global_array takes concrete values: call it "
                        "outside jit")
    if type(x) is Array and not x.is_fully_addressable:
        return x
    value = np.asarray(x)
    if value.dtype == dtypes.float0:
        value = np.zeros(value.shape, np.bool_)
    return host_local_to_global(value, mesh, spec)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """Each global array of `global_inputs` as this process's part of it: an array over
    the process's devices (`global_mesh.local_mesh`) laid out as `pspecs` say."""
    return _with_specs(_to_local, global_inputs, global_mesh, pspecs)


def _to_local(x: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    _check_spec(spec)
    if type(x) is Array and x.is_fully_addressable:
        return x
    if type(x) is not Array:
        value = np.asarray(x)
        value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
        return api.device_put(value, NamedSharding(mesh.local_mesh, spec))
    sharding = NamedSharding(mesh, spec)
    if not x.sharding.is_equivalent_to(sharding, x.ndim):
        x = api.device_put(x, sharding)
    return global_to_host_local(x, mesh, spec)
