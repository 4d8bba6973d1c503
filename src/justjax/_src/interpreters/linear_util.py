"""Functions with transformations stacked on them (`jax.extend.linear_util`).

justjax's own transforms call plain Python functions; this is the form JAX's extension API
hands to libraries: a `WrappedFun` is a function plus the transformations to apply around
it, each a function `transform(inner, *static_args, *args, **kwargs)` that calls `inner`
(`transformation2`), possibly leaving an auxiliary result in a `Store`
(`transformation_with_aux2`). The older generator style (`transformation`,
`transformation_with_aux`: the generator yields the inner call's arguments and receives its
result) is accepted too.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, Sequence

from justjax._src.interpreters.staging import DebugInfo, fun_name


class StoreException(Exception):
    """A store read while empty, or written twice."""


_EMPTY = object()


class Store:
    """A write-once box for a transformation's auxiliary result."""

    __slots__ = ("_val",)

    def __init__(self) -> None:
        self._val = _EMPTY

    def store(self, val: Any) -> None:
        if self._val is not _EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = _EMPTY

    @property
    def val(self) -> Any:
        if self._val is _EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class EqualStore(Store):
    """A store that may be written again with an equal value."""

    __slots__ = ()

    def store(self, val: Any) -> None:
        if self._val is not _EMPTY:
            try:
                equal = bool(self._val == val)
            except Exception:
                equal = False
            if not equal:
                raise StoreException("Store occupied with not-equal value")
            return
        self._val = val


class WrappedFun:
    """`f` with `transforms` to apply around it (outermost first) and keyword `params`."""

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
                 "debug_info")

    def __init__(self, f: Callable, f_transformed: Callable,
                 transforms: tuple[tuple[Callable, tuple[Hashable, ...]], ...],
                 stores: tuple[Store | None, ...], params: tuple[tuple[str, Any], ...],
                 in_type: Any, debug_info: DebugInfo | None) -> None:
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return fun_name(self.f)

    def wrap(self, transform: Callable, static_args: tuple, out_store: Store | None
             ) -> WrappedFun:
        """Adds `transform` around the function (and the store for its auxiliary result)."""
        leading = (self.f_transformed,) if out_store is None else (self.f_transformed, out_store)
        return WrappedFun(self.f, functools.partial(transform, *leading, *static_args),
                          ((transform, static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, None, self.debug_info)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the function with its transformations."""
        return self.f_transformed(*args, **kwargs)

    def populate_stores(self, stores: Sequence[Store | None]) -> None:
        """Copies the values of another run's `stores` into this function's stores."""
        for mine, other in zip(self.stores, stores, strict=True):
            if mine is not None:
                mine.store(other.val)

    def replace_debug_info(self, debug_info: DebugInfo) -> WrappedFun:
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                          self.params, self.in_type, debug_info)

    def __repr__(self) -> str:
        names = "\n".join(f"{i}   : {fun_name(t)}   {args}"
                          for i, (t, args) in enumerate(self.transforms))
        return f"Wrapped function:\n{names}\nCore: {fun_name(self.f)}\n"

    def __hash__(self) -> int:
        return hash((self.f, self.transforms, self.params, self.in_type, self.debug_info))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params
                and self.in_type == other.in_type and self.debug_info == other.debug_info)


def wrap_init(f: Callable, params: dict[str, Any] | None = None, *,
              debug_info: DebugInfo | None = None) -> WrappedFun:
    """`f` as a `WrappedFun` with no transformations; `params` are passed as keywords."""
    params = params or {}
    return WrappedFun(f, functools.partial(f, **params), (), (), tuple(sorted(params.items())),
                      None, debug_info)


def _curried(transform_adder: Callable) -> Callable:
    """`adder(transform)` may also be called as `adder(transform, fun, *static_args)`."""
    @functools.wraps(transform_adder)
    def adder(transform: Callable, *rest: Any, **kwargs: Any) -> Any:
        if rest:
            return transform_adder(transform, *rest, **kwargs)
        return functools.partial(transform_adder, transform)
    return adder


@_curried
def transformation2(transform: Callable, fun: WrappedFun, *static_args: Any) -> WrappedFun:
    """Adds `transform(inner, *static_args, *args, **kwargs)` around `fun`."""
    return fun.wrap(transform, static_args, None)


@_curried
def transformation_with_aux2(transform: Callable, fun: WrappedFun, *static_args: Any,
                             use_eq_store: bool = False) -> tuple[WrappedFun, Callable[[], Any]]:
    """Adds `transform(inner, store, *static_args, *args, **kwargs)` around `fun`; returns
    the new function and a thunk reading what the transform stored."""
    store = EqualStore() if use_eq_store else Store()
    return fun.wrap(transform, static_args, store), lambda: store.val


def _generator_call(gen: Callable, inner: Callable, *args: Any, **kwargs: Any) -> Any:
    running = gen(*args, **kwargs)
    inner_args, inner_kwargs = next(running)
    return running.send(inner(*inner_args, **inner_kwargs))


@_curried
def transformation(gen: Callable, fun: WrappedFun, *static_args: Any) -> WrappedFun:
    """Adds a generator transformation: `gen(*static_args, *args)` yields the inner call's
    `(args, kwargs)`, receives its result and yields the transformed result."""
    return fun.wrap(functools.partial(_run_generator, gen), static_args, None)


def _run_generator(gen: Callable, inner: Callable, *args: Any, **kwargs: Any) -> Any:
    return _generator_call(gen, inner, *args, **kwargs)


def _run_generator_with_aux(gen: Callable, inner: Callable, store: Store, *args: Any,
                            **kwargs: Any) -> Any:
    ans, aux = _generator_call(gen, inner, *args, **kwargs)
    store.store(aux)
    return ans


@_curried
def transformation_with_aux(gen: Callable, fun: WrappedFun, *static_args: Any
                            ) -> tuple[WrappedFun, Callable[[], Any]]:
    """As `transformation`, the generator yielding `(result, aux)` at the end."""
    return transformation_with_aux2(functools.partial(_run_generator_with_aux, gen), fun,
                                    *static_args)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two stores of which exactly one was written: (whether it was the first, value)."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, out1
    raise StoreException("both stores occupied")


def cache(call: Callable, *, explain: Callable | None = None) -> Callable:
    """Memoizes `call(fun: WrappedFun, *args)` on the function and the arguments, replaying
    the stores the first run filled."""
    results: dict[Any, tuple[Any, list[Any]]] = {}

    @functools.wraps(call)
    def memoized(fun: WrappedFun, *args: Any) -> Any:
        key = (fun.f, fun.transforms, fun.params, fun.in_type, args)
        hit = results.get(key)
        if hit is None:
            ans = call(fun, *args)
            results[key] = (ans, list(fun.stores))
            return ans
        ans, stores = hit
        fun.populate_stores(stores)
        return ans

    memoized.cache_clear = results.clear  # type: ignore[attr-defined]
    return memoized
