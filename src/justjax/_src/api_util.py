"""Helpers for writing transformations on top of the extension API (`jax.api_util`):
flattening a `WrappedFun`'s pytree arguments and results, naming its arguments for error
messages, splitting static arguments off, donation vectors.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Sequence

from justjax._src.pytrees import tree_util
from justjax._src.pytrees.tree_errors import flatten_axes as flatten_axes
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.interpreters import linear_util as lu
from justjax._src.interpreters import staging

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "rebase_donate_argnums", "safe_map", "shaped_abstractify"]


@lu.transformation_with_aux2
def flatten_fun(f: Callable, store: lu.Store, in_tree: tree_util.PyTreeDef,
                *args_flat: Any) -> list[Any]:
    """`f(*args, **kwargs)` on the leaves of `(args, kwargs)` (of structure `in_tree`);
    returns the leaves of the result and stores its structure."""
    args, kwargs = tree_util.tree_unflatten(in_tree, args_flat)
    leaves, out_tree = tree_util.tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return leaves


@lu.transformation_with_aux2
def flatten_fun_nokwargs(f: Callable, store: lu.Store, in_tree: tree_util.PyTreeDef,
                         *args_flat: Any) -> list[Any]:
    """`f(*args)` on the leaves of `args` (of structure `in_tree`); returns the leaves of
    the result and stores its structure."""
    args = tree_util.tree_unflatten(in_tree, args_flat)
    leaves, out_tree = tree_util.tree_flatten(f(*args))
    store.store(out_tree)
    return leaves


def debug_info(traced_for: str, fun: Callable, args: Sequence[Any], kwargs: dict[str, Any],
               *, static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (),
               result_paths_thunk: Any = None, sourceinfo: str | None = None,
               signature: inspect.Signature | None = None) -> staging.DebugInfo:
    """What error messages say about `fun` traced for `traced_for` on example `args` and
    `kwargs`: its name and source location, and the names of its non-static argument
    leaves."""
    if sourceinfo is None:
        sourceinfo = staging.debug_info(traced_for, fun).func_src_info
    static = frozenset(i % len(args) if args else i for i in static_argnums)
    static_names = set(static_argnames)
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
    names = staging.leaf_arg_names(fun, tuple(args), dynamic_kwargs, static)
    return staging.DebugInfo(traced_for, sourceinfo, tuple(names))


class _HashableByTypeAndValue:
    """A static argument as part of a cache key: equal only to the same type and value."""

    __slots__ = ("val",)

    def __init__(self, val: Any) -> None:
        self.val = val

    def __hash__(self) -> int:
        return hash(self.val)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _HashableByTypeAndValue) and type(self.val) is type(other.val)
                and self.val == other.val)


def _index_tuple(argnums: int | Iterable[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


@lu.transformation2
def _with_fixed_args(f: Callable, dyn_argnums: tuple[int, ...], fixed: tuple[Any, ...],
                     *dyn_args: Any, **kwargs: Any) -> Any:
    fixed_iter, dyn_iter = iter(fixed), iter(dyn_args)
    args = [next(dyn_iter) if i in dyn_argnums else next(fixed_iter).val
            for i in range(len(fixed) + len(dyn_args))]
    return f(*args, **kwargs)


def argnums_partial(f: lu.WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence[Any],
                    require_static_args_hashable: bool = True
                    ) -> tuple[lu.WrappedFun, tuple[Any, ...]]:
    """`f` with the arguments not in `dyn_argnums` fixed to their values in `args`, and the
    dynamic arguments.

    Raises:
      ValueError: a fixed (static) argument is not hashable.
    """
    dyn = tuple(sorted(i % len(args) for i in _index_tuple(dyn_argnums))) if args else ()
    fixed = []
    for i, arg in enumerate(args):
        if i in dyn:
            continue
        if require_static_args_hashable:
            try:
                hash(arg)
            except TypeError:
                raise ValueError(
                    "Non-hashable static arguments are not supported, as this can lead to "
                    f"unexpected cache-misses. Static argument (index {i}) of type "
                    f"{type(arg)} for function {f.__name__} is non-hashable.") from None
        fixed.append(_HashableByTypeAndValue(arg))
    return _with_fixed_args(f, dyn, tuple(fixed)), tuple(args[i] for i in dyn)


def donation_vector(donate_argnums: Sequence[int], donate_argnames: Sequence[str],
                    in_tree: tree_util.PyTreeDef, kws: bool = True) -> tuple[bool, ...]:
    """For each leaf of the arguments (`(args, kwargs)` when `kws`), whether it is
    donated."""
    if kws:
        args_tree, kwargs_tree = in_tree.children()
    else:
        args_tree, kwargs_tree = in_tree, None
    donated: list[bool] = []
    for i, child in enumerate(args_tree.children()):
        donated.extend([i in donate_argnums] * child.num_leaves)
    if kwargs_tree is not None:
        keys = kwargs_tree.node_data()[1] or ()
        for key, child in zip(keys, kwargs_tree.children(), strict=True):
            donated.extend([key in donate_argnames] * child.num_leaves)
    return tuple(donated)


def rebase_donate_argnums(donate_argnums: Iterable[int], static_argnums: Iterable[int]
                          ) -> tuple[int, ...]:
    """The donated argument positions counted among the non-static arguments only:
    `rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)`."""
    static = sorted(set(static_argnums))
    rebased = set()
    for i in set(donate_argnums):
        if i in static:
            raise ValueError(f"Argument {i} cannot be both static and donated.")
        rebased.add(i - sum(1 for s in static if s < i))
    return tuple(sorted(rebased))


def safe_map(f: Callable, *args: Sequence[Any]) -> list[Any]:
    """`map` over sequences that must all have the same length."""
    lists = [list(a) for a in args]
    for other in lists[1:]:
        if len(other) != len(lists[0]):
            raise ValueError(f"length mismatch: {[len(a) for a in lists]}")
    return list(map(f, *lists))


def shaped_abstractify(x: Any) -> ShapedArray:
    """The abstract value of `x` (an array, a scalar, a tracer, a ShapeDtypeStruct, or an
    abstract value itself)."""
    if isinstance(x, ShapedArray):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, core.Tracer) \
            and not core.valid_jaxtype(x):
        return ShapedArray(x.shape, x.dtype, getattr(x, "weak_type", False))
    return core.get_aval(x)
