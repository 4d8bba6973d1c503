"""Pytree structure: key entries, node kinds, the node registry and `PyTreeDef`.

Split from `tree_util` (the public functions) to keep files small. A ``PyTreeDef`` holds a
nested *spec*: the singleton ``_LEAF`` for a leaf, or a tuple ``(kind, node_data, child_specs)``
for a node, so equality and hashing run at C speed (``tuple.__eq__``, ``tuple.__hash__``).

Flattening is on the hot path of every jit call, so each registry builds closures that
dispatch on ``type(x)`` through one dict, with explicit loops. The dict also caches types
already classified as leaves; registering a type overwrites its entry, so the cache cannot
hide a registration.

Part of the lowest layer: imports only the standard library.
"""
from __future__ import annotations

import itertools
import operator
import types
import warnings
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)
H = TypeVar("H", bound=Hashable)
Leaf = Any
PyTree = Any
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyLeafPairs = Iterable[KeyLeafPair]
KeyPath = tuple[KeyEntry, ...]


# ---------------------------------------------------------------- key entries

class _KeyBase:
    """Immutable one-value key; equal to keys of the same class and value."""
    __slots__ = ("_v",)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and bool(self._v == other._v)

    def __hash__(self) -> int:
        return hash(self._v)

    def __reduce__(self):
        return (type(self), (self._v,))


class SequenceKey(_KeyBase):
    """Key of a tuple or list child: prints as ``[0]``."""
    __slots__ = ()
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        self._v = operator.index(idx)

    idx = property(lambda self: self._v, doc="The child's index.")

    def __str__(self) -> str:
        return f"[{self._v}]"

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self._v})"

    def __hash__(self) -> int:
        return self._v + 1  # jaxlib's salt, so hashes agree with JAX


class DictKey(_KeyBase):
    """Key of a dict entry: prints as ``['a']``."""
    __slots__ = ()
    __match_args__ = ("key",)

    def __init__(self, key: Hashable):
        self._v = key

    key = property(lambda self: self._v, doc="The dict key.")

    def __str__(self) -> str:
        return f"[{self._v!r}]"

    def __repr__(self) -> str:
        return f"DictKey(key={self._v!r})"


class GetAttrKey(_KeyBase):
    """Key of an attribute (namedtuple or dataclass field): prints as ``.name``."""
    __slots__ = ()
    __match_args__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey name must be a str, got {type(name)}")
        self._v = name

    name = property(lambda self: self._v, doc="The attribute name.")

    def __str__(self) -> str:
        return f".{self._v}"

    def __repr__(self) -> str:
        return f"GetAttrKey(name='{self._v}')"


class FlattenedIndexKey(_KeyBase):
    """Key of the i-th child of a custom node registered without keys."""
    __slots__ = ()
    __match_args__ = ("key",)

    def __init__(self, key: int):
        self._v = operator.index(key)

    key = property(lambda self: self._v, doc="The child's position.")

    def __str__(self) -> str:
        return f"[<flat index {self._v}>]"

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self._v})"

    def __hash__(self) -> int:
        return self._v + 42


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Pretty-prints a key path, e.g. ``"['foo'][0].bar"``.

    Args:
        keys: a tuple of key entries (or any objects, printed with ``str``).
        simple: print each key bare (``foo``, ``0``, ``bar``) instead.
        separator: string placed between the printed keys.

    Returns:
        The joined string.
    """
    if not simple:
        return separator.join(map(str, keys))
    return separator.join(str(k._v) if isinstance(k, _KeyBase) else str(k)
                          for k in keys)


# ---------------------------------------------------------------- node kinds

_NONE, _TUPLE, _NAMEDTUPLE, _LIST, _DICT, _CUSTOM, _DATACLASS = range(7)


class _LeafSpec:
    """The spec of a leaf: a singleton compared by identity."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


_LEAF = _LeafSpec()
_PLAIN_LEAF = object()  # dispatch-dict value for types known to be leaves


class _NodeKind:
    """How one kind of node flattens and rebuilds (jaxlib's 'Registration').

    Builtin kinds are module singletons; a custom registration is one object
    shared by all registries, so treedefs from different registries compare.
    """
    __slots__ = ("code", "type", "to_iterable", "from_iterable",
                 "to_iterable_with_keys", "data_fields", "meta_fields")

    def __init__(self, code: int, typ: type | None, to_iterable: Callable | None = None,
                 from_iterable: Callable | None = None,
                 to_iterable_with_keys: Callable | None = None,
                 data_fields: Sequence[str] = (), meta_fields: Sequence[str] = ()):
        self.code = code
        self.type = typ
        self.to_iterable = to_iterable
        self.from_iterable = from_iterable
        self.to_iterable_with_keys = to_iterable_with_keys
        self.data_fields = tuple(data_fields)
        self.meta_fields = tuple(meta_fields)

    def make(self, data: Any, children: list) -> Any:
        """Rebuilds a node from its node data and children."""
        code = self.code
        if code == _TUPLE:
            return tuple(children)
        if code == _LIST:
            return children
        if code == _DICT:
            return dict(zip(data, children))
        if code == _NONE:
            return None
        if code == _NAMEDTUPLE:
            return data(*children)
        if code == _CUSTOM:
            return self.from_iterable(data, tuple(children))
        kwargs = dict(zip(self.meta_fields, data))
        kwargs.update(zip(self.data_fields, children))
        return self.type(**kwargs)

    def children_and_aux(self, x: Any) -> tuple[Iterable[Any], Any]:
        """Calls a custom flatten function, checking its result as jaxlib does."""
        out = self.to_iterable(x)
        if not isinstance(out, tuple) or len(out) != 2:
            raise ValueError("The to_iterable function for a custom PyTree node should "
                             f"return a (children, aux_data) tuple, got {out!r}")
        try:
            iter(out[0])
        except TypeError:
            raise ValueError(
                "The to_iterable function for a custom PyTree node should return a "
                "(children, aux_data) tuple where 'children' is iterable, got "
                f"{out!r}") from None
        return out

    def one_level(self, x: Any, with_keys: bool) -> tuple[Any, Any]:
        """``(children, node_data)`` of ``x``; children are (key, child) pairs if
        ``with_keys``. Shapes follow jaxlib's ``flatten_one_level``."""
        code = self.code
        if code == _NONE:
            return (), None
        if code == _TUPLE or code == _LIST:
            if with_keys:
                return tuple((SequenceKey(i), c) for i, c in enumerate(x)), None
            return x, None
        if code == _DICT:
            keys = tuple(_sorted_keys(x))
            if with_keys:
                return tuple((DictKey(k), x[k]) for k in keys), keys
            return tuple(x[k] for k in keys), keys
        if code == _NAMEDTUPLE:
            if not with_keys:
                # Not list(x): that asks the class's __len__ (a length hint) for the size.
                return list(tuple.__iter__(x)), type(x)
            fields = getattr(x, "_fields")
            # tuple's own length: a named tuple may define __len__ (jax's Rotation does).
            if not isinstance(fields, tuple) or len(fields) != tuple.__len__(x):
                raise ValueError("A namedtuple's _fields attribute should have the "
                                 "same size as the tuple.")
            return [(GetAttrKey(str(f)), c) for f, c in zip(fields, x)], type(x)
        if code == _DATACLASS:
            aux = tuple(getattr(x, name) for name in self.meta_fields)
            if with_keys:
                return [(GetAttrKey(n), getattr(x, n)) for n in self.data_fields], aux
            return [getattr(x, n) for n in self.data_fields], aux
        if not with_keys:
            return self.children_and_aux(x)
        if self.to_iterable_with_keys is None:
            children, aux = self.children_and_aux(x)
            return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
        out = self.to_iterable_with_keys(x)
        if not isinstance(out, tuple) or len(out) != 2:
            raise ValueError("The to_iterable_with_keys function for a custom PyTree "
                             "node should return a (key_leaf_pairs, aux_data) tuple, "
                             f"got {out!r}")
        pairs = list(out[0])
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise ValueError("The to_iterable_with_keys function for a custom PyTree "
                                 "node should return a (key_leaf_pairs, aux_data) tuple "
                                 f"where 'child{pair!r}")
        return pairs, out[1]


_NONE_KIND = _NodeKind(_NONE, type(None))
_TUPLE_KIND = _NodeKind(_TUPLE, tuple)
_NAMEDTUPLE_KIND = _NodeKind(_NAMEDTUPLE, None)
_LIST_KIND = _NodeKind(_LIST, list)
_DICT_KIND = _NodeKind(_DICT, dict)
_NONE_SPEC = (_NONE_KIND, None, ())
_BUILTIN_KINDS = {k.code: k for k in
                  (_NONE_KIND, _TUPLE_KIND, _NAMEDTUPLE_KIND, _LIST_KIND, _DICT_KIND)}


def _sorted_keys(d: dict) -> list:
    # jaxlib sorts with `<` and turns a failing comparison into a ValueError.
    try:
        return sorted(d)
    except Exception as e:
        raise ValueError("Comparator raised exception while sorting pytree "
                         "dictionary keys.") from e


# Iterators that are leaves but are probably a mistake; jaxlib warns for them.
_WARN_ITERABLE_TYPES = (
    types.GeneratorType, zip, map, filter, enumerate, reversed,
    type(iter([])), type(iter(())), type(iter(set())), type(iter({})),
    type(iter({}.values())), type(iter({}.items())), type({}.values()))
_MAX_CACHED_LEAF_TYPES = 4096  # bounds memory if classes are made on the fly


def _warn_iterable_leaf(x: Any) -> None:
    warnings.warn(
        f"Python iterable type '{type(x).__name__}' is treated as a leaf in PyTree. "
        "Use is_leaf to suppress this warning if you want this behavior. In a "
        "future version of JAX, this will become an error.",
        DeprecationWarning, stacklevel=2)


def _check_is_leaf(result: Any) -> bool:
    if result is True:
        return True
    if result is False or result is None:  # jaxlib accepts None for old callers
        return False
    raise ValueError(f"is_leaf predicate returned a non-boolean value {result!r}; "
                     "expected a boolean")


# ---------------------------------------------------------------- registry

class PyTreeRegistry:
    """A set of node types and the flatten functions bound to it.

    Args:
        enable_none, enable_tuple, enable_namedtuple, enable_list, enable_dict:
            which builtin kinds are nodes; other types are leaves unless registered.
    """

    def __init__(self, enable_none: bool = True, enable_tuple: bool = True,
                 enable_namedtuple: bool = True, enable_list: bool = True,
                 enable_dict: bool = True):
        self._kinds: dict[type, _NodeKind] = {}
        # type -> flattener(x, append_leaf) -> spec, or _PLAIN_LEAF
        self._dispatch: dict[type, Any] = {}
        self._num_cached = 0
        self._enable_namedtuple = enable_namedtuple
        self._flat = self._build_flatten()
        enabled = [(enable_none, _NONE_KIND), (enable_tuple, _TUPLE_KIND),
                   (enable_list, _LIST_KIND), (enable_dict, _DICT_KIND)]
        for on, kind in enabled:
            if on:
                self._kinds[kind.type] = kind
                self._dispatch[kind.type] = self._builtin_flatteners[kind.code]

    @property
    def node_types(self) -> dict[type, Any]:
        """The types that are nodes (builtin and registered), as a live mapping."""
        return self._kinds

    def _build_flatten(self) -> Callable[[Any, Callable], Any]:
        """Builds the fast recursive flatten closures (no is_leaf, no key paths)."""
        get = self._dispatch.get
        classify = self._classify

        def flat(x, app):
            fn = get(type(x))
            if fn is _PLAIN_LEAF:
                app(x)
                return _LEAF
            if fn is None:
                fn = classify(x)
                if fn is _PLAIN_LEAF:
                    app(x)
                    return _LEAF
            return fn(x, app)

        def flat_seq(kind):
            def flat_sequence(x, app):
                specs = []
                for child in x:
                    specs.append(flat(child, app))
                return (kind, type(x) if kind is _NAMEDTUPLE_KIND else None, tuple(specs))
            return flat_sequence

        def flat_dict(x, app):
            keys = _sorted_keys(x)
            specs = []
            for k in keys:
                specs.append(flat(x[k], app))
            return (_DICT_KIND, tuple(keys), tuple(specs))

        def flat_iterable_leaf(x, app):
            _warn_iterable_leaf(x)
            app(x)
            return _LEAF

        self._builtin_flatteners = {
            _NONE: lambda x, app: _NONE_SPEC, _TUPLE: flat_seq(_TUPLE_KIND),
            _LIST: flat_seq(_LIST_KIND), _DICT: flat_dict,
            _NAMEDTUPLE: flat_seq(_NAMEDTUPLE_KIND)}
        self._flat_iterable_leaf = flat_iterable_leaf
        return flat

    def _custom_flattener(self, kind: _NodeKind) -> Callable[[Any, Callable], Any]:
        flat = self._flat
        if kind.code == _DATACLASS:
            data_fields, meta_fields = kind.data_fields, kind.meta_fields

            def flat_dataclass(x, app):
                aux = tuple([getattr(x, name) for name in meta_fields])
                specs = []
                for name in data_fields:
                    specs.append(flat(getattr(x, name), app))
                return (kind, aux, tuple(specs))
            return flat_dataclass

        children_and_aux = kind.children_and_aux

        def flat_custom(x, app):
            children, aux = children_and_aux(x)
            specs = []
            for child in children:
                specs.append(flat(child, app))
            return (kind, aux, tuple(specs))
        return flat_custom

    def _classify(self, x: Any) -> Any:
        """Dispatch entry of an unregistered type; cached only when exact."""
        tp = type(x)
        if issubclass(tp, tuple):
            if self._enable_namedtuple and hasattr(x, "_fields"):
                fn = self._builtin_flatteners[_NAMEDTUPLE]
                if hasattr(tp, "_fields"):  # a class attribute holds for every instance
                    self._cache(tp, fn)
                return fn
            return _PLAIN_LEAF  # not cached: an instance could still gain `_fields`
        fn = _PLAIN_LEAF
        if issubclass(tp, _WARN_ITERABLE_TYPES):
            fn = self._flat_iterable_leaf
        self._cache(tp, fn)
        return fn

    def _cache(self, tp: type, fn: Any) -> None:
        if self._num_cached < _MAX_CACHED_LEAF_TYPES:
            self._num_cached += 1
            self._dispatch[tp] = fn

    def kind_of(self, x: Any) -> _NodeKind | None:
        """The node kind of ``x``, or None if ``x`` is a leaf."""
        kind = self._kinds.get(type(x))
        if kind is not None:
            return kind
        if self._enable_namedtuple and isinstance(x, tuple) and hasattr(x, "_fields"):
            return _NAMEDTUPLE_KIND
        return None

    def _add(self, typ: type, kind: _NodeKind) -> None:
        if typ in self._kinds:
            what = "dataclass " if kind.code == _DATACLASS else ""
            raise ValueError(f"Duplicate custom {what}PyTreeDef type registration for "
                             f"{typ!r}.")
        self._kinds[typ] = kind
        self._dispatch[typ] = self._custom_flattener(kind)

    def is_node(self, typ: type) -> bool:
        """True if instances of ``typ`` are nodes (registered, or namedtuples)."""
        if typ in self._kinds:
            return True
        return isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields")

    def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None
                ) -> tuple[list[Leaf], PyTreeDef]:
        """Flattens ``tree`` into ``(leaves, treedef)``."""
        leaves: list = []
        if leaf_predicate is None:
            spec = self._flat(tree, leaves.append)
        else:
            spec = self._flatten_general(tree, leaves, leaf_predicate, None)
        return leaves, _treedef(spec, len(leaves))

    def flatten_with_path(self, tree: Any,
                          leaf_predicate: Callable[[Any, Any], bool] | None = None
                          ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
        """Flattens into ``([(key_path, leaf)], treedef)``; the predicate, if
        given, is called as ``leaf_predicate(key_path, subtree)``."""
        leaves: list = []
        spec = self._flatten_general(tree, leaves, leaf_predicate, [])
        return leaves, _treedef(spec, len(leaves))

    def _flatten_general(self, x: Any, leaves: list, pred: Callable | None,
                         path: list | None) -> Any:
        """Slow path: honours ``is_leaf`` and/or records key paths (``path``)."""
        if pred is not None:
            result = pred(tuple(path), x) if path is not None else pred(x)
            if _check_is_leaf(result):
                leaves.append((tuple(path), x) if path is not None else x)
                return _LEAF
        kind = self.kind_of(x)
        if kind is None:
            if isinstance(x, _WARN_ITERABLE_TYPES):
                _warn_iterable_leaf(x)
            leaves.append((tuple(path), x) if path is not None else x)
            return _LEAF
        if kind is _NONE_KIND:
            return _NONE_SPEC
        specs = []
        if path is None:
            children, aux = kind.one_level(x, False)
            for child in children:
                specs.append(self._flatten_general(child, leaves, pred, None))
        else:
            pairs, aux = kind.one_level(x, True)
            for key, child in pairs:
                path.append(key)
                specs.append(self._flatten_general(child, leaves, pred, path))
                path.pop()
        return (kind, aux, tuple(specs))

    def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Any] | None:
        """``(children, node_data)`` of a node, or None for a leaf."""
        kind = self.kind_of(tree)
        return None if kind is None else kind.one_level(tree, False)

    def flatten_one_level_with_keys(self, tree: Any
                                    ) -> tuple[Iterable[KeyLeafPair], Any] | None:
        """``([(key, child)], node_data)`` of a node, or None for a leaf."""
        kind = self.kind_of(tree)
        return None if kind is None else kind.one_level(tree, True)


default_registry = PyTreeRegistry()
# None is a leaf here; jit uses it for specs where None means "unspecified".
none_leaf_registry = PyTreeRegistry(enable_none=False)
_all_registries = (default_registry, none_leaf_registry)
_default_flat = default_registry._flat
_default_flatten_general = default_registry._flatten_general


# ---------------------------------------------------------------- PyTreeDef

def _treedef(spec: Any, num_leaves: int | None) -> PyTreeDef:
    td = object.__new__(PyTreeDef)
    td._spec = spec
    td._num_leaves = _count(spec, True) if num_leaves is None else num_leaves
    return td


def _count(spec: Any, leaves_only: bool) -> int:
    if spec is _LEAF:
        return 1
    total = 0 if leaves_only else 1
    for child in spec[2]:
        total += _count(child, leaves_only)
    return total


def _hash_without_custom_data(spec: Any) -> int:
    if spec is _LEAF:
        return hash(_LEAF)
    kind, data, children = spec
    if kind.code == _CUSTOM or kind.code == _DATACLASS:
        data = None
    return hash((kind, data, tuple(_hash_without_custom_data(c) for c in children)))


def _spec_str(spec: Any) -> str:
    if spec is _LEAF:
        return "*"
    kind, data, children = spec
    parts = [_spec_str(c) for c in children]
    code = kind.code
    if code == _NONE:
        return "None"
    if code == _TUPLE:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if code == _LIST:
        return "[" + ", ".join(parts) + "]"
    if code == _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(data, parts)) + "}"
    if code == _NAMEDTUPLE:
        name, node_data = "namedtuple", data.__name__
    else:
        name, node_data = kind.type.__name__, str(data)
    return f"CustomNode({name}[{node_data}], [{', '.join(parts)}])"


def _build(spec: Any, nxt: Callable[[], Any]) -> Any:
    kind, data, children = spec
    xs = []
    for child in children:
        xs.append(nxt() if child is _LEAF else _build(child, nxt))
    if kind is _TUPLE_KIND:
        return tuple(xs)
    if kind is _DICT_KIND:
        return dict(zip(data, xs))
    if kind is _LIST_KIND:
        return xs
    return kind.make(data, xs)


class PyTreeDef:
    """The structure of a pytree: its nodes and node data, without the leaves.

    Immutable, hashable and comparable; printed as JAX prints it, e.g.
    ``PyTreeDef((*, {'a': *, 'b': *}))``. Made by ``tree_structure`` and friends.
    """
    __slots__ = ("_spec", "_num_leaves", "_num_nodes", "_hash", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("PyTreeDef has no public constructor; use tree_structure")

    @property
    def num_leaves(self) -> int:
        """Number of leaves."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes, counting leaves and ``None``s."""
        try:
            return self._num_nodes
        except AttributeError:
            self._num_nodes = _count(self._spec, False)
            return self._num_nodes

    def unflatten(self, leaves: Iterable[Leaf]) -> Any:
        """Builds the pytree of this structure holding ``leaves`` in order.

        Raises:
            ValueError: if the number of leaves is not ``num_leaves``.
        """
        n = self._num_leaves
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(itertools.islice(leaves, n + 1))  # never drain a long iterator
        if len(leaves) != n:
            if len(leaves) < n:
                raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got "
                                 f"{len(leaves)}")
            raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
        if self._spec is _LEAF:
            return leaves[0]
        return _build(self._spec, iter(leaves).__next__)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flattens ``tree`` only as deep as this structure goes: the subtrees of
        ``tree`` at this structure's leaves are returned whole.

        Raises:
            ValueError: if this structure is not a prefix of ``tree``'s, with
                jaxlib's messages (``Tuple arity mismatch: 3 != 2; tuple: ...``,
                ``Expected dict, got ...``, ``Dict key mismatch; ...``, ...).
        """
        if self._spec is _LEAF:
            return [tree]
        out: list = []
        _flatten_up_to(self._spec, tree, out)
        out.reverse()
        return out

    def children(self) -> list[PyTreeDef]:
        """The structures of the root's children (none for a leaf or None)."""
        if self._spec is _LEAF:
            return []
        return [_treedef(c, None) for c in self._spec[2]]

    def node_data(self) -> tuple[type, Any] | None:
        """``(node type, node data)`` of the root, or None for a leaf."""
        if self._spec is _LEAF:
            return None
        kind, data, _ = self._spec
        if kind.code == _DICT:
            return dict, list(data)
        if kind.code == _NAMEDTUPLE:
            return data, None
        return kind.type, data

    @staticmethod
    def from_node_data_and_children(registry: PyTreeRegistry,
                                    node_data: tuple[type, Any] | None,
                                    children: Iterable[PyTreeDef]) -> PyTreeDef:
        """Inverse of ``node_data()`` and ``children()``."""
        specs = tuple(c._spec for c in children)
        if node_data is None:
            if specs:
                raise ValueError("A leaf PyTreeDef cannot have children.")
            return _treedef(_LEAF, 1)
        typ, data = node_data
        if issubclass(typ, tuple) and hasattr(typ, "_fields"):
            return _treedef((_NAMEDTUPLE_KIND, typ, specs), None)
        kind = registry._kinds.get(typ)
        if kind is None:
            raise ValueError(f"Could not find type: {typ!r}.")
        if kind is _DICT_KIND:
            data = tuple(data)
        elif kind.code != _CUSTOM and kind.code != _DATACLASS:
            data = None
        return _treedef(_NONE_SPEC if kind is _NONE_KIND else (kind, data, specs), None)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by the ``inner`` structure."""
        def sub(spec):
            if spec is _LEAF:
                return inner._spec
            kind, data, children = spec
            return (kind, data, tuple(sub(c) for c in children))
        return _treedef(sub(self._spec), self._num_leaves * inner._num_leaves)

    def from_iterable_tree(self, xs: Any) -> Any:
        """Builds this structure from nested iterables, one per node: e.g.
        ``[9, [7, 8]]`` for the structure of ``(*, {'a': *, 'b': *})``."""
        def go(spec, x):
            if spec is _LEAF:
                return x
            kind, data, children = spec
            ys = list(x)
            if len(ys) != len(children):
                raise ValueError("Arity mismatch between trees")
            return kind.make(data, [go(c, y) for c, y in zip(children, ys)])
        return go(self._spec, xs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return False
        try:
            return self._spec == other._spec
        except Exception as e:
            raise ValueError(
                "Exception raised while checking equality of metadata fields of "
                "pytree. Make sure that metadata fields are hashable and have simple "
                "equality semantics. (Note: arrays cannot be passed as metadata "
                "fields!)") from e

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return False  # as jaxlib: neither == nor != holds against non-treedefs
        return not self == other

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            pass
        try:
            self._hash = hash(self._spec)
        except TypeError:
            # Unhashable custom node data (JAX requires hashable, but does not check).
            # Equal treedefs can then hash differently: a cache miss, never a wrong hit.
            self._hash = _hash_without_custom_data(self._spec)
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({_spec_str(self._spec)})"

    def __reduce__(self):
        return (_treedef_from_portable, (_to_portable(self._spec),))


def _to_portable(spec: Any) -> Any:
    # Kinds are process-local objects; pickle them as (code, type) instead.
    if spec is _LEAF:
        return None
    kind, data, children = spec
    typ = kind.type if kind.code in (_CUSTOM, _DATACLASS) else None
    return (kind.code, typ, data, tuple(_to_portable(c) for c in children))


def _from_portable(p: Any) -> Any:
    if p is None:
        return _LEAF
    code, typ, data, children = p
    kind = _BUILTIN_KINDS.get(code) if typ is None else default_registry._kinds.get(typ)
    if kind is None:
        raise ValueError(f"Unknown custom type in pickled PyTreeDef: {typ!r}")
    return (kind, data, tuple(_from_portable(c) for c in children))


def _treedef_from_portable(p: Any) -> PyTreeDef:
    return _treedef(_from_portable(p), None)


def _flatten_up_to(spec: Any, x: Any, out: list) -> None:
    """Appends leaves right to left: jaxlib walks its traversal backwards, so
    when several subtrees mismatch it reports the rightmost one; so do we."""
    kind, data, children = spec
    code = kind.code
    arity = len(children)
    if code == _TUPLE or code == _LIST:
        if type(x) is not kind.type:
            raise ValueError(f"Expected {kind.type.__name__}, got {x!r}.")
        if len(x) != arity:
            raise ValueError(f"{kind.type.__name__.capitalize()} arity mismatch: "
                             f"{len(x)} != {arity}; {kind.type.__name__}: {x!r}.")
        items = x
    elif code == _DICT:
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if tuple(keys) != data:
            raise ValueError(f"Dict key mismatch; expected keys: {list(data)!r}; "
                             f"present keys: {keys!r}.")
        items = list(map(x.__getitem__, keys))
    elif code == _NONE:
        if x is not None:
            raise ValueError(
                f"Expected None, got {x!r}.\n\nIn previous releases of JAX, "
                "flatten-up-to used to consider None to be a tree-prefix of non-None "
                "values. To obtain the previous behavior, you can usually write:\n"
                "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
                "is_leaf=lambda x: x is None)")
        return
    elif code == _NAMEDTUPLE:
        if not isinstance(x, tuple) or not hasattr(x, "_fields"):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if tuple.__len__(x) != arity:
            raise ValueError(f"Named tuple arity mismatch: {tuple.__len__(x)} != {arity}; "
                             f"tuple: {x!r}.")
        if type(x) != data:
            raise ValueError(f"Named tuple type mismatch: expected type: {data!r}, "
                             f"tuple: {x!r}.")
        # A plain tuple (not tuple(x), which asks the class's __len__ for a length hint):
        # reversed() below would also go by that __len__.
        items = tuple(tuple.__iter__(x))
    else:
        dc = "dataclass " if code == _DATACLASS else ""
        if type(x) is not kind.type:
            raise ValueError(f"Custom {dc}node type mismatch: expected type: "
                             f"{kind.type!r}, value: {x!r}.")
        items, aux = kind.one_level(x, False)
        if data != aux:
            raise ValueError(f"Mismatch custom {dc}node data: {data!r} != {aux!r}; "
                             f"value: {x!r}.")
        items = list(items)
        if len(items) != arity:
            raise ValueError(f"Custom type arity mismatch: {len(items)} != {arity}; "
                             f"value: {x!r}.")
    for child, item in zip(reversed(children), reversed(items)):
        if child is _LEAF:
            out.append(item)
        else:
            _flatten_up_to(child, item, out)
