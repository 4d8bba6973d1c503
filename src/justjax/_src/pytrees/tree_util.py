"""Pytrees: flattening nested containers into leaves and a structure, and back.

This mirrors ``jax.tree_util`` (whose core is C++ in jaxlib) in pure Python,
with jaxlib's node kinds, orderings, reprs and error messages.

A ``PyTreeDef`` holds a nested *spec*: the singleton ``_LEAF`` for a leaf, or a
tuple ``(kind, node_data, child_specs)`` for a node. Nested tuples make
equality and hashing run at C speed (``tuple.__eq__``, ``tuple.__hash__``) and
``children()`` free.

Flattening is on the hot path of every jit call, so each registry builds
closures that dispatch on ``type(x)`` through one dict, with explicit loops
(on Python 3.11 a comprehension costs a function object per call). The dict
also caches types already classified as leaves; registering a type overwrites
its entry, so the cache cannot hide a registration.

Part of the lowest layer: imports only the standard library.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import types
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

# The type names are treedef's (one definition).
from justjax._src.pytrees.treedef import H, T


from justjax._src.pytrees.treedef import (  # noqa: F401  (public names re-exported)
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyLeafPair,
    KeyLeafPairs,
    KeyPath,
    Leaf,
    PyTree,
    PyTreeDef,
    PyTreeRegistry,
    SequenceKey,
    Typ,
    _CUSTOM,
    _DATACLASS,
    _LEAF,
    _NodeKind,
    _TUPLE_KIND,
    _all_registries,
    _default_flat,
    _default_flatten_general,
    _sorted_keys,
    _treedef,
    default_registry,
    keystr,
    none_leaf_registry,
)

# The node types of the default registry, live: JAX's private `jax._src.tree_util._registry`,
# which flax reads (`type(x) in _registry`).
_registry = default_registry.node_types

# ---------------------------------------------------------------- core API

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Leaf], PyTreeDef]:
    """Flattens a pytree into its leaves (depth first, left to right) and structure.

    Args:
        tree: a pytree. Dict children are taken in sorted key order.
        is_leaf: optional predicate called on each subtree; where it returns True
            the subtree is kept whole as a leaf.

    Returns:
        ``(leaves, treedef)``.
    """
    leaves: list = []
    if is_leaf is None:
        spec = _default_flat(tree, leaves.append)
    else:
        spec = _default_flatten_general(tree, leaves, is_leaf, None)
    td = object.__new__(PyTreeDef)
    td._spec = spec
    td._num_leaves = len(leaves)
    return leaves, td


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> Any:
    """Rebuilds a pytree from its structure and leaves (inverse of tree_flatten).

    Args:
        treedef: the structure.
        leaves: exactly ``treedef.num_leaves`` leaves.

    Returns:
        The pytree.
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                ) -> list[Leaf]:
    """The leaves of a pytree, in flattening order (see ``tree_flatten``)."""
    leaves: list = []
    if is_leaf is None:
        _default_flat(tree, leaves.append)
    else:
        _default_flatten_general(tree, leaves, is_leaf, None)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                   ) -> PyTreeDef:
    """The structure of a pytree (see ``tree_flatten``)."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the given structures."""
    treedefs = list(treedefs)
    for td in treedefs:
        if not isinstance(td, PyTreeDef):
            raise TypeError(f"treedef_tuple expects PyTreeDefs, got {type(td)}")
    spec = (_TUPLE_KIND, None, tuple(td._spec for td in treedefs))
    return _treedef(spec, sum(td._num_leaves for td in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root's immediate children."""
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True if the structure has a single node (a leaf, ``None`` or ``()``)."""
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True if the structure is exactly one leaf."""
    return treedef._spec is _LEAF


def all_leaves(iterable: Iterable[Any],
               is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf.

    Args:
        iterable: the objects to test.
        is_leaf: optional predicate marking subtrees that count as leaves.
    """
    if is_leaf is None:
        kind_of = default_registry.kind_of
        return all(kind_of(x) is None for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(
        item is leaf for item, leaf in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
    """True if ``typ`` is a registered node type or a namedtuple type."""
    return default_registry.is_node(typ)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """``(children, node_data)`` of a node; ValueError for a leaf."""
    out = default_registry.flatten_one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[KeyLeafPair], Hashable]:
    """``([(key, child)], node_data)`` of a node; ValueError for a leaf."""
    out = default_registry.flatten_one_level_with_keys(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def _map_rest(columns: list, treedef: PyTreeDef, tree: Any, rest: tuple,
              is_leaf: Callable | None, name: str) -> None:
    for r in rest:
        try:
            columns.append(treedef.flatten_up_to(r))
        except Exception as e:
            from justjax._src.pytrees.tree_errors import _prefix_error
            err = next(_prefix_error((), tree, r, is_leaf), None)
            raise (err(name) if err is not None else e) from None


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Maps ``f`` over the leaves of ``tree`` and, in parallel, of ``rest``.

    Args:
        f: function of ``1 + len(rest)`` arguments.
        tree: the pytree whose structure the result takes.
        *rest: pytrees having ``tree``'s structure as a prefix; the subtree at
            each leaf position of ``tree`` is passed to ``f`` whole.
        is_leaf: optional predicate marking subtrees of ``tree`` to keep whole.

    Returns:
        ``tree`` with each leaf ``x`` replaced by ``f(x, *xs)``.

    Raises:
        ValueError: if ``tree`` is not a prefix of a tree in ``rest``; the message
            names the key path of the mismatch.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    columns = [leaves]
    _map_rest(columns, treedef, tree, rest, is_leaf, "tree_map tree")
    return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like ``tree_flatten``, with each leaf paired with its key path.

    Args:
        tree: a pytree.
        is_leaf: optional predicate marking subtrees to keep whole.
        is_leaf_takes_path: call ``is_leaf(key_path, subtree)`` instead.

    Returns:
        ``([(key_path, leaf), ...], treedef)``.
    """
    pred = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        pred = lambda _, x: is_leaf(x)
    return default_registry.flatten_with_path(tree, pred)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False
                          ) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of a pytree (see tree_flatten_with_path)."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like ``tree_map`` but calls ``f(key_path, x, *xs)``.

    Args:
        f: function of ``2 + len(rest)`` arguments.
        tree: the pytree whose structure the result takes.
        *rest: pytrees having ``tree``'s structure as a prefix.
        is_leaf: optional predicate marking subtrees of ``tree`` to keep whole.
        is_leaf_takes_path: call ``is_leaf(key_path, subtree)`` instead.

    Returns:
        The mapped pytree.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    columns = [[p for p, _ in pairs], [x for _, x in pairs]]
    _map_rest(columns, treedef, tree, rest, is_leaf, "tree_map_with_path tree")
    return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def build_tree(treedef: PyTreeDef, xs: Any) -> Any:
    """Builds ``treedef``'s structure from nested iterables (older JAX API);
    see ``PyTreeDef.from_iterable_tree``."""
    return treedef.from_iterable_tree(xs)


class Unspecified:
    """Marks an argument that was not given (None can be a real value)."""


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: T | Unspecified = Unspecified(),
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """``functools.reduce`` over the leaves of a pytree.

    Args:
        function: binary reduction function.
        tree: a pytree.
        initializer: optional initial value.
        is_leaf: optional predicate marking subtrees to keep whole.

    Returns:
        The reduced value.
    """
    leaves = tree_leaves(tree, is_leaf=is_leaf)
    if isinstance(initializer, Unspecified):
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _parallel_reduce(sequence: list, operation: Callable, identity: Any) -> Any:
    if not sequence:
        if isinstance(identity, Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty "
                            "sequence.")
        return identity
    if len(sequence) == 1:
        return sequence[0]
    mid = len(sequence) // 2
    return operation(_parallel_reduce(sequence[:mid], operation, identity),
                     _parallel_reduce(sequence[mid:], operation, identity))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: T | Unspecified = Unspecified(),
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduces the leaves with an associative operation, as a balanced tree.

    Args:
        operation: associative binary operation.
        tree: a pytree.
        identity: identity of ``operation``; needed only for an empty tree.
        is_leaf: optional predicate marking subtrees to keep whole.

    Returns:
        The reduced value.
    """
    return _parallel_reduce(tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``all()`` over the leaves of a pytree."""
    return all(tree_leaves(tree, is_leaf=is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turns a tree of structure (outer, inner) into one of structure (inner, outer).

    Args:
        outer_treedef: the outer structure.
        inner_treedef: the inner structure, or None to take it from the first
            subtree at an outer leaf.
        pytree_to_transpose: the tree.

    Returns:
        The transposed tree.

    Raises:
        TypeError: if the tree does not have ``outer * inner`` leaves.
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected_treedef = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected_treedef}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    subtrees = [outer_treedef.unflatten(column) for column in zip(*rows)]
    return inner_treedef.unflatten(subtrees)


# ---------------------------------------------------------------- registration

def _register(kind: _NodeKind) -> None:
    for registry in _all_registries:  # check all first: no half registration
        if kind.type in registry._kinds:
            registry._add(kind.type, kind)  # raises the duplicate-registration error
    for registry in _all_registries:
        registry._add(kind.type, kind)


def register_pytree_node(nodetype: type[T],
                         flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
                         unflatten_func: Callable[[Hashable, Iterable[Any]], T],
                         flatten_with_keys_func: Callable[
                             [T], tuple[KeyLeafPairs, Hashable]] | None = None
                         ) -> None:
    """Makes ``nodetype`` (not its subclasses) a pytree node type.

    Args:
        nodetype: the type.
        flatten_func: ``x -> (children, aux_data)``; aux_data must be hashable
            and comparable: it is part of the treedef (static under jit).
        unflatten_func: ``(aux_data, children_tuple) -> x``.
        flatten_with_keys_func: optional ``x -> ([(key, child)], aux_data)`` for
            key paths; without it children get ``FlattenedIndexKey`` keys.

    Raises:
        ValueError: if ``nodetype`` is already registered.
    """
    _register(_NodeKind(_CUSTOM, nodetype, flatten_func, unflatten_func,
                        flatten_with_keys_func))


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: registers ``cls`` by its ``tree_flatten`` method and
    ``tree_unflatten`` classmethod; returns ``cls``."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype: type[T],
                              flatten_with_keys: Callable[
                                  [T], tuple[Iterable[KeyLeafPair], Hashable]],
                              unflatten_func: Callable[[Hashable, Iterable[Any]], T],
                              flatten_func: Callable[
                                  [T], tuple[Iterable[Any], Hashable]] | None = None
                              ) -> None:
    """Registers a node type whose children have keys (see key paths).

    Args:
        nodetype: the type.
        flatten_with_keys: ``x -> ([(key, child)], aux_data)``.
        unflatten_func: ``(aux_data, children_tuple) -> x``.
        flatten_func: optional faster ``x -> (children, aux_data)``, same order.
    """
    if not flatten_func:
        def flatten_func(tree):
            key_children, aux = flatten_with_keys(tree)
            return [c for _, c in key_children], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: registers ``cls`` by ``tree_flatten_with_keys``,
    ``tree_unflatten`` and (if defined) ``tree_flatten``; returns ``cls``."""
    flatten_func = (operator.methodcaller("tree_flatten")
                    if hasattr(cls, "tree_flatten") else None)
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten_func)
    return cls


def register_dataclass(nodetype: Typ, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
    """Registers a dataclass-like type: data fields are the children, meta
    fields static node data. Usable as a decorator.

    Args:
        nodetype: the type, rebuilt as ``nodetype(**fields)``.
        data_fields: child field names. Optional for a dataclass, whose fields are
            data unless declared with ``field(metadata=dict(static=True))``.
        meta_fields: static, hashable field names; given iff data_fields is.
        drop_fields: dataclass fields left out of the registration.

    Returns:
        ``nodetype``.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both "
                            "be specified when either is specified. Got "
                            f"{data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are "
                            "required when nodetype is not a dataclass. Got "
                            f"{nodetype=}.")
        # JAX's docs say drop_fields are left out; jax 0.10 still infers them.
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    meta_fields = tuple(meta_fields)
    data_fields = tuple(data_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if {*meta_fields, *data_fields} != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with"
                   " ``init=True`` and only them.")
            if missing := init_fields - {*meta_fields, *data_fields}:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to "
                        "suppress this error.")
            if unexpected := {*meta_fields, *data_fields} - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping "
                         f"fields: {overlap}.")
    _register(_NodeKind(_DATACLASS, nodetype, data_fields=data_fields,
                        meta_fields=meta_fields))
    return nodetype


def register_static(cls: type[H]) -> type[H]:
    """Registers ``cls`` as a node without children: instances live in the
    treedef (static under jit), so they must be hashable. Returns ``cls``."""
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


def static(**kwargs: Any) -> Any:
    """``dataclasses.field(**kwargs)`` with ``metadata['static'] = True``, which
    makes the field meta data under ``register_dataclass`` (``jax.tree.static``)."""
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


# ---------------------------------------------------------------- builtins

class _HashableCallableShim:
    """Delegates call, hash and equality to a wrapped callable."""

    def __init__(self, fun: Callable):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the bound arguments are its
    children and the function its static node data."""

    def __new__(klass, func, *args, **kw):
        # functools.partial merges a partial `func` into itself; box it so that
        # exactly the arguments given here become pytree children.
        if isinstance(func, functools.partial):
            original = func
            func = _HashableCallableShim(original)
            out = super().__new__(klass, func, *args, **kw)
            func.func = original.func
            func.args = original.args
            func.keywords = original.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))

register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), x[k]) for k in x), tuple(x)),
    lambda keys, values: collections.OrderedDict(zip(keys, values, strict=True)),
    lambda x: (list(x.values()), tuple(x)))


def _defaultdict_flatten(d: collections.defaultdict, with_keys: bool = False):
    keys = tuple(_sorted_keys(d))
    children = [(DictKey(k), d[k]) if with_keys else d[k] for k in keys]
    return children, (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict,
    functools.partial(_defaultdict_flatten, with_keys=True),
    lambda s, values: collections.defaultdict(s[0], zip(s[1], values, strict=True)),
    _defaultdict_flatten)
