"""The user-facing transformations and utilities (`make_jaxpr`, `eval_shape`, `device_put` ...).

Each has a `_flat` core working on flat lists of leaves and a thin pytree wrapper here.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr
from justjax._src.interpreters import staging
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime.array import Array, from_numpy
from justjax._src.runtime.devices import Device


class ShapeDtypeStruct:
    """A shape, dtype and weak type standing in for an array (`jax.ShapeDtypeStruct`)."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, sharding: Any = None,
                 weak_type: bool = False) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return (f"ShapeDtypeStruct(shape={self.shape}, dtype={dtypes.dtype_name(self.dtype)}"
                f"{weak})")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


def _shape_dtype_aval(x: ShapeDtypeStruct) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)


core.pytype_aval_mappings[ShapeDtypeStruct] = _shape_dtype_aval


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
    @functools.wraps(fun)
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
    in_avals = [_abstractify(a) for a in flat_args]
    debug = staging.debug_info("eval_shape", fun, staging.signature_arg_names(fun, args, kwargs))
    closed, out_tree = trace_flat(fun, in_tree, in_avals, debug)
    return tree_util.tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                               for a in closed.out_avals])


def _put_leaf(x: Any, device: Device | None) -> Any:
    if isinstance(x, core.Tracer):
        return x
    if isinstance(x, Array):
        if device is None or x.device == device:
            return x if device is None else Array(x._value, x.weak_type, device, committed=True)
        return Array(x._value, x.weak_type, device, committed=True)
    aval = core.get_aval(x)
    value = dtypes.coerce_to_array(x, aval.dtype)
    out = from_numpy(np.array(value, copy=True), aval)
    if device is not None:
        out = Array(out._value, out.weak_type, device, committed=True)
    return out


def device_put(x: Any, device: Device | None = None, *, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """Moves (copies) every leaf of `x` to `device` as an Array (`jax.device_put`)."""
    return tree_util.tree_map(lambda leaf: _put_leaf(leaf, device), x)


def device_get(x: Any) -> Any:
    """Leaves of `x` as NumPy arrays (`jax.device_get`)."""
    return tree_util.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


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
    return devices_lib.devices(backend)


def device_count(backend: str | None = None) -> int:
    return len(devices_lib.devices(backend))


def local_device_count(backend: str | None = None) -> int:
    return len(devices_lib.devices(backend))


def default_backend() -> str:
    return "cpu"


def process_index() -> int:
    return 0


def process_count() -> int:
    return 1
