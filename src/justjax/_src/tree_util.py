"""Pytrees: flattening nested containers into leaves and a structure, and back.

This mirrors ``jax.tree_util`` (whose core is C++ in jaxlib) in pure Python.
A ``PyTreeDef`` holds a nested *spec*: the singleton ``_LEAF`` for a leaf, or a
tuple ``(kind, node_data, child_specs)`` for a node. Nested tuples let equality
run at C speed (``tuple.__eq__``) and make ``children()`` free.

Flattening is on the hot path of every jit call, so each registry builds its
own closures that dispatch on ``type(x)`` through one dict. That dict also
caches types already classified as plain leaves; registering a type overwrites
its entry, so the cache can never hide a registration.

This module is part of the lowest layer: it imports only the standard library.
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import itertools
import operator
import textwrap
import types
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
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

class SequenceKey:
  """Key of a child of a tuple, list or other sequence: prints as ``[0]``."""
  __slots__ = ("_idx",)
  __match_args__ = ("idx",)

  def __init__(self, idx: int):
    self._idx = operator.index(idx)

  @property
  def idx(self) -> int:
    return self._idx

  def __str__(self) -> str:
    return f"[{self._idx}]"

  def __repr__(self) -> str:
    return f"SequenceKey(idx={self._idx})"

  def __eq__(self, other: object) -> bool:
    return isinstance(other, SequenceKey) and self._idx == other._idx

  def __hash__(self) -> int:
    return self._idx + 1  # jaxlib's salt, so hashes agree with JAX

  def __reduce__(self):
    return (SequenceKey, (self._idx,))


class DictKey:
  """Key of a dict entry: prints as ``['a']``."""
  __slots__ = ("_key",)
  __match_args__ = ("key",)

  def __init__(self, key: Hashable):
    self._key = key

  @property
  def key(self) -> Hashable:
    return self._key

  def __str__(self) -> str:
    return f"[{self._key!r}]"

  def __repr__(self) -> str:
    return f"DictKey(key={self._key!r})"

  def __eq__(self, other: object) -> bool:
    return isinstance(other, DictKey) and bool(self._key == other._key)

  def __hash__(self) -> int:
    return hash(self._key)

  def __reduce__(self):
    return (DictKey, (self._key,))


class GetAttrKey:
  """Key of an attribute (namedtuple field, dataclass field): prints as ``.name``."""
  __slots__ = ("_name",)
  __match_args__ = ("name",)

  def __init__(self, name: str):
    if not isinstance(name, str):
      raise TypeError(f"GetAttrKey name must be a str, got {type(name)}")
    self._name = name

  @property
  def name(self) -> str:
    return self._name

  def __str__(self) -> str:
    return f".{self._name}"

  def __repr__(self) -> str:
    return f"GetAttrKey(name='{self._name}')"

  def __eq__(self, other: object) -> bool:
    return isinstance(other, GetAttrKey) and self._name == other._name

  def __hash__(self) -> int:
    return hash(self._name)

  def __reduce__(self):
    return (GetAttrKey, (self._name,))


class FlattenedIndexKey:
  """Key of the i-th child of a custom node registered without keys."""
  __slots__ = ("_key",)
  __match_args__ = ("key",)

  def __init__(self, key: int):
    self._key = operator.index(key)

  @property
  def key(self) -> int:
    return self._key

  def __str__(self) -> str:
    return f"[<flat index {self._key}>]"

  def __repr__(self) -> str:
    return f"FlattenedIndexKey(key={self._key})"

  def __eq__(self, other: object) -> bool:
    return isinstance(other, FlattenedIndexKey) and self._key == other._key

  def __hash__(self) -> int:
    return self._key + 42

  def __reduce__(self):
    return (FlattenedIndexKey, (self._key,))


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
  """Pretty-prints a key path, e.g. ``"['foo'][0].bar"``.

  Args:
    keys: a tuple of key entries (or any objects convertible with ``str``).
    simple: if True, print each key bare (``foo``, ``0``, ``bar``) instead.
    separator: string placed between the printed keys.

  Returns:
    The joined string.
  """
  str_fn = _simple_entrystr if simple else str
  return separator.join(map(str_fn, keys))


def _simple_entrystr(key: Any) -> str:
  if isinstance(key, SequenceKey):
    return str(key.idx)
  if isinstance(key, DictKey):
    return str(key.key)
  if isinstance(key, GetAttrKey):
    return key.name
  if isinstance(key, FlattenedIndexKey):
    return str(key.key)
  return str(key)


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
  """How one kind of node flattens and rebuilds (a jaxlib 'Registration').

  Builtin kinds are module singletons; a custom registration is one object
  shared by every registry, so treedefs from different registries compare.
  """
  __slots__ = ("code", "type", "to_iterable", "from_iterable",
               "to_iterable_with_keys", "data_fields", "meta_fields", "make")

  def __init__(self, code: int, typ: type | None, make: Callable[[Any, list], Any],
               to_iterable=None, from_iterable=None, to_iterable_with_keys=None,
               data_fields: tuple[str, ...] = (), meta_fields: tuple[str, ...] = ()):
    self.code = code
    self.type = typ
    self.make = make  # (node_data, children list) -> node
    self.to_iterable = to_iterable
    self.from_iterable = from_iterable
    self.to_iterable_with_keys = to_iterable_with_keys
    self.data_fields = data_fields
    self.meta_fields = meta_fields

  def __repr__(self) -> str:
    return f"_NodeKind({self.code}, {self.type!r})"

  def children_and_aux(self, x: Any) -> tuple[Iterable[Any], Any]:
    """Calls a custom flatten function and checks its result as jaxlib does."""
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

  def keyed_children_and_aux(self, x: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """(key, child) pairs of a custom node; FlattenedIndexKey when keyless."""
    if self.to_iterable_with_keys is None:
      children, aux = self.children_and_aux(x)
      return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    out = self.to_iterable_with_keys(x)
    if not isinstance(out, tuple) or len(out) != 2:
      raise ValueError("The to_iterable_with_keys function for a custom PyTree "
                       "node should return a (key_leaf_pairs, aux_data) tuple, "
                       f"got {out!r}")
    pairs = []
    for pair in out[0]:
      if not isinstance(pair, tuple) or len(pair) != 2:
        raise ValueError("The to_iterable_with_keys function for a custom PyTree "
                         "node should return a (key_leaf_pairs, aux_data) tuple "
                         f"where 'child{pair!r}")
      pairs.append(pair)
    return pairs, out[1]

  def one_level(self, x: Any, with_keys: bool) -> tuple[Any, Any]:
    """(children, node_data) of ``x``, children paired with keys if asked."""
    code = self.code
    if code == _NONE:
      return (), None
    if code == _TUPLE or code == _LIST:
      if with_keys:
        return tuple((SequenceKey(i), c) for i, c in enumerate(x)), None
      return x, None
    if code == _DICT:
      keys = _sorted_keys(x)
      if with_keys:
        return tuple((DictKey(k), x[k]) for k in keys), tuple(keys)
      return tuple(x[k] for k in keys), tuple(keys)
    if code == _NAMEDTUPLE:
      if with_keys:
        fields = getattr(x, "_fields")
        if not isinstance(fields, tuple) or len(fields) != len(x):
          raise ValueError("A namedtuple's _fields attribute should have the "
                           "same size as the tuple.")
        return [(GetAttrKey(str(f)), c) for f, c in zip(fields, x)], type(x)
      return list(x), type(x)
    if code == _DATACLASS:
      aux = tuple(getattr(x, name) for name in self.meta_fields)
      if with_keys:
        return [(GetAttrKey(n), getattr(x, n)) for n in self.data_fields], aux
      return [getattr(x, n) for n in self.data_fields], aux
    if with_keys:
      return self.keyed_children_and_aux(x)
    return self.children_and_aux(x)


def _make_dataclass(kind: _NodeKind, meta: tuple, children: list) -> Any:
  kwargs = dict(zip(kind.meta_fields, meta))
  kwargs.update(zip(kind.data_fields, children))
  return kind.type(**kwargs)


_NONE_KIND = _NodeKind(_NONE, type(None), lambda data, xs: None)
_TUPLE_KIND = _NodeKind(_TUPLE, tuple, lambda data, xs: tuple(xs))
_NAMEDTUPLE_KIND = _NodeKind(_NAMEDTUPLE, None, lambda data, xs: data(*xs))
_LIST_KIND = _NodeKind(_LIST, list, lambda data, xs: xs)
_DICT_KIND = _NodeKind(_DICT, dict, lambda data, xs: dict(zip(data, xs)))
_NONE_SPEC = (_NONE_KIND, None, ())


def _sorted_keys(d: dict) -> list:
  # jaxlib sorts with `<` and turns a failing comparison into a ValueError.
  try:
    return sorted(d)
  except Exception as e:
    raise ValueError("Comparator raised exception while sorting pytree "
                     "dictionary keys.") from e


# Iterators that are leaves but are probably a mistake; jaxlib warns for them.
_WARN_ITERABLE_TYPES = tuple({
    types.GeneratorType, zip, map, filter, enumerate, reversed,
    type(iter([])), type(iter(())), type(iter(set())), type(iter({})),
    type(iter({}.values())), type(iter({}.items())), type({}.values())})
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
  if result is False or result is None:  # None accepted for old callers
    return False
  raise ValueError(f"is_leaf predicate returned a non-boolean value {result!r}; "
                   "expected a boolean")


# ---------------------------------------------------------------- registry

class PyTreeRegistry:
  """A set of node types and the flatten functions bound to it.

  Args:
    enable_none, enable_tuple, enable_namedtuple, enable_list, enable_dict:
      which builtin node kinds this registry knows; anything else is a leaf
      unless registered.
  """

  def __init__(self, enable_none: bool = True, enable_tuple: bool = True,
               enable_namedtuple: bool = True, enable_list: bool = True,
               enable_dict: bool = True):
    self._kinds: dict[type, _NodeKind] = {}
    # type -> flattener(x, leaves) -> spec, or _PLAIN_LEAF for a cached leaf type
    self._dispatch: dict[type, Any] = {}
    self._num_cached_leaf_types = 0
    self._enable_namedtuple = enable_namedtuple
    self._flat = self._build_flatten()
    builtins = [(enable_none, _NONE_KIND), (enable_tuple, _TUPLE_KIND),
                (enable_list, _LIST_KIND), (enable_dict, _DICT_KIND)]
    for enabled, kind in builtins:
      if enabled:
        self._kinds[kind.type] = kind
        self._dispatch[kind.type] = self._builtin_flatteners[kind.code]

  def _build_flatten(self) -> Callable[[Any, list], Any]:
    """Builds the fast (no is_leaf, no paths) recursive flatten closures."""
    dispatch = self._dispatch
    get = dispatch.get
    classify = self._classify

    def flat(x, leaves):
      fn = get(type(x))
      if fn is _PLAIN_LEAF:
        leaves.append(x)
        return _LEAF
      if fn is None:
        fn = classify(x)
        if fn is _PLAIN_LEAF:
          leaves.append(x)
          return _LEAF
      return fn(x, leaves)

    def flat_none(x, leaves):
      return _NONE_SPEC

    def flat_tuple(x, leaves):
      return (_TUPLE_KIND, None, tuple([flat(c, leaves) for c in x]))

    def flat_list(x, leaves):
      return (_LIST_KIND, None, tuple([flat(c, leaves) for c in x]))

    def flat_dict(x, leaves):
      keys = _sorted_keys(x)
      return (_DICT_KIND, tuple(keys), tuple([flat(x[k], leaves) for k in keys]))

    def flat_namedtuple(x, leaves):
      return (_NAMEDTUPLE_KIND, type(x), tuple([flat(c, leaves) for c in x]))

    def flat_iterable_leaf(x, leaves):
      _warn_iterable_leaf(x)
      leaves.append(x)
      return _LEAF

    self._builtin_flatteners = {_NONE: flat_none, _TUPLE: flat_tuple,
                                _LIST: flat_list, _DICT: flat_dict,
                                _NAMEDTUPLE: flat_namedtuple}
    self._flat_iterable_leaf = flat_iterable_leaf
    return flat

  def _custom_flattener(self, kind: _NodeKind) -> Callable[[Any, list], Any]:
    flat = self._flat
    if kind.code == _DATACLASS:
      data_fields, meta_fields = kind.data_fields, kind.meta_fields

      def flat_dataclass(x, leaves):
        aux = tuple([getattr(x, name) for name in meta_fields])
        return (kind, aux, tuple([flat(getattr(x, n), leaves) for n in data_fields]))
      return flat_dataclass

    children_and_aux = kind.children_and_aux

    def flat_custom(x, leaves):
      children, aux = children_and_aux(x)
      return (kind, aux, tuple([flat(c, leaves) for c in children]))
    return flat_custom

  def _classify(self, x: Any) -> Any:
    """Dispatch entry for an unregistered type; cached when that is exact."""
    tp = type(x)
    if issubclass(tp, tuple):
      if self._enable_namedtuple and hasattr(x, "_fields"):
        fn = self._builtin_flatteners[_NAMEDTUPLE]
        if hasattr(tp, "_fields"):  # a class attribute: true of every instance
          self._cache(tp, fn)
        return fn
      return _PLAIN_LEAF  # not cached: an instance could still gain `_fields`
    fn = (self._flat_iterable_leaf if issubclass(tp, _WARN_ITERABLE_TYPES)
          else _PLAIN_LEAF)
    self._cache(tp, fn)
    return fn

  def _cache(self, tp: type, fn: Any) -> None:
    if self._num_cached_leaf_types < _MAX_CACHED_LEAF_TYPES:
      self._num_cached_leaf_types += 1
      self._dispatch[tp] = fn

  def kind_of(self, x: Any) -> _NodeKind | None:
    """The node kind of ``x``, or None if ``x`` is a leaf."""
    kind = self._kinds.get(type(x))
    if kind is not None:
      return kind
    if self._enable_namedtuple and isinstance(x, tuple) and hasattr(x, "_fields"):
      return _NAMEDTUPLE_KIND
    return None

  def _add(self, typ: type, kind: _NodeKind, what: str) -> None:
    if typ in self._kinds:
      raise ValueError(f"Duplicate custom {what}PyTreeDef type registration for "
                       f"{typ!r}.")
    self._kinds[typ] = kind
    self._dispatch[typ] = self._custom_flattener(kind)

  def register_node(self, type: type, to_iterable: Callable,
                    from_iterable: Callable,
                    to_iterable_with_keys: Callable | None = None) -> None:
    """Registers ``type`` as a custom node in this registry only."""
    kind = _NodeKind(_CUSTOM, type, None, to_iterable, from_iterable,
                     to_iterable_with_keys)
    kind.make = lambda data, xs: from_iterable(data, tuple(xs))
    self._add(type, kind, "")

  def register_dataclass_node(self, type: type, data_fields: Sequence[str],
                              meta_fields: Sequence[str]) -> None:
    """Registers ``type`` as a dataclass-like node in this registry only."""
    kind = _NodeKind(_DATACLASS, type, None, data_fields=tuple(data_fields),
                     meta_fields=tuple(meta_fields))
    kind.make = functools.partial(_make_dataclass, kind)
    self._add(type, kind, "dataclass ")

  def is_node(self, type: type) -> bool:
    """True if instances of ``type`` are nodes (registered, or namedtuples)."""
    if type in self._kinds:
      return True
    return (isinstance(type, _builtin_type) and issubclass(type, tuple)
            and hasattr(type, "_fields"))

  def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None
              ) -> tuple[list[Leaf], PyTreeDef]:
    """Flattens ``tree`` into (leaves, treedef)."""
    leaves: list = []
    if leaf_predicate is None:
      spec = self._flat(tree, leaves)
    else:
      spec = self._flatten_general(tree, leaves, leaf_predicate, None)
    return leaves, _treedef(spec, len(leaves))

  def flatten_with_path(self, tree: Any,
                        leaf_predicate: Callable[[Any, Any], bool] | None = None
                        ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Flattens ``tree`` into ([(key_path, leaf)], treedef); the predicate
    receives (key_path, node)."""
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
    if path is None:
      children, aux = kind.one_level(x, False)
      specs = tuple([self._flatten_general(c, leaves, pred, None) for c in children])
      return (kind, aux, specs)
    pairs, aux = kind.one_level(x, True)
    specs = []
    for key, child in pairs:
      path.append(key)
      specs.append(self._flatten_general(child, leaves, pred, path))
      path.pop()
    return (kind, aux, tuple(specs))

  def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Any] | None:
    """(children, node_data) of a node, or None for a leaf."""
    kind = self.kind_of(tree)
    return None if kind is None else kind.one_level(tree, False)

  def flatten_one_level_with_keys(self, tree: Any
                                  ) -> tuple[Iterable[KeyLeafPair], Any] | None:
    """([(key, child)], node_data) of a node, or None for a leaf."""
    kind = self.kind_of(tree)
    return None if kind is None else kind.one_level(tree, True)


_builtin_type = type  # `type` is shadowed by parameter names above
default_registry = PyTreeRegistry()
# A registry in which None is a leaf (jit uses it for e.g. donate/sharding specs).
none_leaf_registry = PyTreeRegistry(enable_none=False)
_all_registries = (default_registry, none_leaf_registry)
_default_flat = default_registry._flat
_default_flatten_general = default_registry._flatten_general


# ---------------------------------------------------------------- PyTreeDef

def _treedef(spec: Any, num_leaves: int | None) -> PyTreeDef:
  td = object.__new__(PyTreeDef)
  td._spec = spec
  td._num_leaves = num_leaves if num_leaves is not None else _count_leaves(spec)
  return td


def _count_leaves(spec: Any) -> int:
  if spec is _LEAF:
    return 1
  return sum([_count_leaves(c) for c in spec[2]])


def _count_nodes(spec: Any) -> int:
  if spec is _LEAF:
    return 1
  return 1 + sum([_count_nodes(c) for c in spec[2]])


def _spec_hash(spec: Any) -> int:
  # Custom node data is left out, as in jaxlib: it may be unhashable.
  if spec is _LEAF:
    return 0x9E3779B9
  kind, data, children = spec
  keyed = data if kind.code == _DICT or kind.code == _NAMEDTUPLE else None
  return hash((kind.code, kind.type, keyed, tuple([_spec_hash(c) for c in children])))


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
  return kind.make(data, [nxt() if c is _LEAF else _build(c, nxt) for c in children])


class PyTreeDef:
  """The structure of a pytree: its nodes and node data, without the leaves.

  Immutable, hashable and comparable; printed as JAX prints it, e.g.
  ``PyTreeDef((*, {'a': *, 'b': *}))``. Made by ``tree_flatten`` and friends.
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
    """Number of nodes, leaves and ``None`` included."""
    try:
      return self._num_nodes
    except AttributeError:
      self._num_nodes = _count_nodes(self._spec)
      return self._num_nodes

  def unflatten(self, leaves: Iterable[Leaf]) -> Any:
    """Builds the pytree with this structure holding ``leaves`` (in order).

    Raises:
      ValueError: if the number of leaves does not match ``num_leaves``.
    """
    n = self._num_leaves
    if type(leaves) is not list and type(leaves) is not tuple:
      leaves = list(itertools.islice(leaves, n + 1))  # never drain a long iterator
    if len(leaves) != n:
      if len(leaves) < n:
        raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got "
                         f"{len(leaves)}")
      raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
    spec = self._spec
    if spec is _LEAF:
      return leaves[0]
    return _build(spec, iter(leaves).__next__)

  def flatten_up_to(self, tree: Any) -> list[Any]:
    """Flattens ``tree`` only as deep as this structure: the subtrees of
    ``tree`` sitting at this structure's leaves are returned whole.

    Raises:
      ValueError: if this structure is not a prefix of ``tree``'s, with
        jaxlib's message (``Tuple arity mismatch: ...``, ``Expected dict, got
        ...``, ``Dict key mismatch; ...``, ``Custom node type mismatch: ...``).
    """
    out: list = []
    _flatten_up_to(self._spec, tree, out)
    out.reverse()
    return out

  def children(self) -> list[PyTreeDef]:
    """The treedefs of the root's children (empty for a leaf or None)."""
    if self._spec is _LEAF:
      return []
    return [_treedef(c, None) for c in self._spec[2]]

  def node_data(self) -> tuple[type, Any] | None:
    """``(node type, node data)`` of the root, or None for a leaf."""
    spec = self._spec
    if spec is _LEAF:
      return None
    kind, data, _ = spec
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
    if kind is _NONE_KIND:
      return _treedef(_NONE_SPEC, 0)
    if kind is _DICT_KIND:
      data = tuple(data)
    elif kind.code != _CUSTOM and kind.code != _DATACLASS:
      data = None
    return _treedef((kind, data, specs), None)

  def compose(self, inner: PyTreeDef) -> PyTreeDef:
    """The structure of this tree with every leaf replaced by ``inner``."""
    def sub(spec):
      if spec is _LEAF:
        return inner._spec
      kind, data, children = spec
      return (kind, data, tuple([sub(c) for c in children]))
    return _treedef(sub(self._spec), self._num_leaves * inner._num_leaves)

  def walk(self, f_node: Callable[[tuple, Any], Any],
           f_leaf: Callable[[Any], Any] | None, leaves: Iterable[Any]) -> Any:
    """Folds over the tree: ``f_leaf`` at leaves, ``f_node(children, node_data)``
    at nodes (dict node data is the key list)."""
    it = iter(leaves)

    def go(spec):
      if spec is _LEAF:
        try:
          leaf = next(it)
        except StopIteration:
          raise ValueError("Too few leaves for PyTreeDef") from None
        return leaf if f_leaf is None else f_leaf(leaf)
      kind, data, children = spec
      results = tuple([go(c) for c in children])
      if kind.code == _DICT:
        data = list(data)
      return f_node(results, data)
    out = go(self._spec)
    if next(it, _LEAF) is not _LEAF:
      raise ValueError("Too many leaves for PyTreeDef")
    return out

  def from_iterable_tree(self, xs: Any) -> Any:
    """Builds this structure from nested iterables: each node of ``xs`` is
    an iterable of its children (e.g. ``[9, [7, 8]]`` for ``(*, {'a','b'})``)."""
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
      return False  # as jaxlib: neither == nor != holds for non-treedefs
    return not self == other

  def __hash__(self) -> int:
    try:
      return self._hash
    except AttributeError:
      self._hash = _spec_hash(self._spec)
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
  if code in (_CUSTOM, _DATACLASS):
    kind = default_registry._kinds.get(typ)
    if kind is None:
      raise ValueError(f"Unknown custom type in pickled PyTreeDef: {typ!r}")
  else:
    kind = {_NONE: _NONE_KIND, _TUPLE: _TUPLE_KIND, _LIST: _LIST_KIND,
            _DICT: _DICT_KIND, _NAMEDTUPLE: _NAMEDTUPLE_KIND}[code]
  return (kind, data, tuple(_from_portable(c) for c in children))


def _treedef_from_portable(p: Any) -> PyTreeDef:
  return _treedef(_from_portable(p), None)


def _flatten_up_to(spec: Any, x: Any, out: list) -> None:
  """Appends the leaves right to left: jaxlib walks the traversal backwards,
  so when several subtrees mismatch, the rightmost one is reported."""
  if spec is _LEAF:
    out.append(x)
    return
  kind, data, children = spec
  code = kind.code
  arity = len(children)
  if code == _NONE:
    if x is not None:
      raise ValueError(
          f"Expected None, got {x!r}.\n\nIn previous releases of JAX, "
          "flatten-up-to used to consider None to be a tree-prefix of non-None "
          "values. To obtain the previous behavior, you can usually write:\n"
          "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
          "is_leaf=lambda x: x is None)")
    return
  if code == _TUPLE or code == _LIST:
    name = "tuple" if code == _TUPLE else "list"
    if type(x) is not kind.type:
      raise ValueError(f"Expected {name}, got {x!r}.")
    if len(x) != arity:
      raise ValueError(f"{name.capitalize()} arity mismatch: {len(x)} != {arity}; "
                       f"{name}: {x!r}.")
    items = x
  elif code == _DICT:
    if type(x) is not dict:
      raise ValueError(f"Expected dict, got {x!r}.")
    keys = _sorted_keys(x)
    if len(keys) != len(data) or any(a != b for a, b in zip(keys, data)):
      raise ValueError(f"Dict key mismatch; expected keys: {list(data)!r}; "
                       f"present keys: {keys!r}.")
    items = [x[k] for k in keys]
  elif code == _NAMEDTUPLE:
    if not isinstance(x, tuple) or not hasattr(x, "_fields"):
      raise ValueError(f"Expected named tuple, got {x!r}.")
    if len(x) != arity:
      raise ValueError(f"Named tuple arity mismatch: {len(x)} != {arity}; "
                       f"tuple: {x!r}.")
    if type(x) != data:
      raise ValueError(f"Named tuple type mismatch: expected type: {data!r}, "
                       f"tuple: {x!r}.")
    items = x
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
  for i in range(arity - 1, -1, -1):
    _flatten_up_to(children[i], items[i], out)


# ---------------------------------------------------------------- core API

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Leaf], PyTreeDef]:
  """Flattens a pytree into its leaves (depth-first, left to right) and structure.

  Args:
    tree: a pytree.
    is_leaf: optional predicate called on every subtree; where it returns True
      the subtree is kept whole as a leaf.

  Returns:
    ``(leaves, treedef)``; dict children come in sorted key order.
  """
  leaves: list = []
  if is_leaf is None:
    spec = _default_flat(tree, leaves)
  else:
    spec = _default_flatten_general(tree, leaves, is_leaf, None)
  td = object.__new__(PyTreeDef)
  td._spec = spec
  td._num_leaves = len(leaves)
  return leaves, td


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> Any:
  """Rebuilds a pytree from a treedef and its leaves (inverse of tree_flatten).

  Args:
    treedef: the structure.
    leaves: exactly ``treedef.num_leaves`` leaves.

  Returns:
    The pytree.
  """
  return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                ) -> list[Leaf]:
  """The leaves of a pytree, in flattening order.

  Args:
    tree: a pytree.
    is_leaf: optional predicate marking subtrees to keep whole.

  Returns:
    A list of leaves.
  """
  leaves: list = []
  if is_leaf is None:
    _default_flat(tree, leaves)
  else:
    _default_flatten_general(tree, leaves, is_leaf, None)
  return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                   ) -> PyTreeDef:
  """The treedef of a pytree.

  Args:
    tree: a pytree.
    is_leaf: optional predicate marking subtrees to keep whole.

  Returns:
    Its PyTreeDef.
  """
  return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
  """The treedef of a tuple whose children have the given structures.

  Args:
    treedefs: child structures.

  Returns:
    A tuple treedef.
  """
  treedefs = list(treedefs)
  for td in treedefs:
    if not isinstance(td, PyTreeDef):
      raise TypeError(f"treedef_tuple expects PyTreeDefs, got {type(td)}")
  spec = (_TUPLE_KIND, None, tuple(td._spec for td in treedefs))
  return _treedef(spec, sum(td._num_leaves for td in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
  """The treedefs of the root's immediate children.

  Args:
    treedef: a structure.

  Returns:
    A list of child structures.
  """
  return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
  """True if the treedef has a single node (a leaf, or None, or an empty node).

  Args:
    treedef: a structure.

  Returns:
    ``treedef.num_nodes == 1``.
  """
  return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
  """True if the treedef is exactly one leaf."""
  return treedef._spec is _LEAF


def all_leaves(iterable: Iterable[Any],
               is_leaf: Callable[[Any], bool] | None = None) -> bool:
  """Tests whether every element of ``iterable`` is a leaf.

  Args:
    iterable: objects to test.
    is_leaf: optional predicate marking subtrees to treat as leaves.

  Returns:
    True if all elements are leaves.
  """
  if is_leaf is None:
    kind_of = default_registry.kind_of
    return all(kind_of(x) is None for x in iterable)
  items = list(iterable)
  leaves = tree_leaves(items, is_leaf)
  return len(leaves) == len(items) and all(
      item is leaf for item, leaf in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
  """True if ``typ`` is a registered node type or a namedtuple type.

  Args:
    typ: a type.

  Returns:
    Whether instances are pytree nodes.
  """
  return default_registry.is_node(typ)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
  """Flattens a node by one level.

  Args:
    tree: a pytree node (not a leaf).

  Returns:
    ``(children, node_data)``.

  Raises:
    ValueError: if ``tree`` is a leaf.
  """
  out = default_registry.flatten_one_level(tree)
  if out is None:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  return out


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[KeyLeafPair], Hashable]:
  """Like ``flatten_one_level`` but each child comes as a ``(key, child)`` pair."""
  out = default_registry.flatten_one_level_with_keys(tree)
  if out is None:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  return out


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
  """Maps ``f`` over the leaves of ``tree`` (and of ``rest``, in parallel).

  Args:
    f: function taking ``1 + len(rest)`` arguments.
    tree: the pytree whose structure the result takes.
    *rest: pytrees that have ``tree``'s structure as a prefix; the subtree at
      each of ``tree``'s leaves is passed to ``f`` whole.
    is_leaf: optional predicate marking subtrees of ``tree`` to keep whole.

  Returns:
    A pytree like ``tree`` with leaf ``x`` replaced by ``f(x, *xs)``.

  Raises:
    ValueError: if a tree in ``rest`` does not have ``tree`` as a prefix; the
      message names the key path of the mismatch.
  """
  leaves, treedef = tree_flatten(tree, is_leaf)
  if not rest:
    return treedef.unflatten([f(x) for x in leaves])
  all_leaves = [leaves]
  for r in rest:
    try:
      all_leaves.append(treedef.flatten_up_to(r))
    except Exception as e:
      err = next(_prefix_error((), tree, r, is_leaf), None)
      raise (err("tree_map tree") if err is not None else e) from None
  return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
  """Like ``tree_flatten`` but each leaf comes with its key path.

  Args:
    tree: a pytree.
    is_leaf: optional predicate marking subtrees to keep whole.
    is_leaf_takes_path: if True, ``is_leaf`` is called as ``is_leaf(path, x)``.

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
  """The ``(key_path, leaf)`` pairs of a pytree.

  Args:
    tree: a pytree.
    is_leaf: optional predicate marking subtrees to keep whole.
    is_leaf_takes_path: if True, ``is_leaf`` is called as ``is_leaf(path, x)``.

  Returns:
    A list of ``(key_path, leaf)``.
  """
  return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
  """Like ``tree_map`` but ``f`` also receives each leaf's key path first.

  Args:
    f: function called as ``f(key_path, x, *xs)``.
    tree: the pytree whose structure the result takes.
    *rest: pytrees that have ``tree``'s structure as a prefix.
    is_leaf: optional predicate marking subtrees to keep whole.
    is_leaf_takes_path: if True, ``is_leaf`` is called as ``is_leaf(path, x)``.

  Returns:
    The mapped pytree.
  """
  path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
  columns = [[p for p, _ in path_leaves], [x for _, x in path_leaves]]
  for r in rest:
    try:
      columns.append(treedef.flatten_up_to(r))
    except Exception as e:
      err = next(_prefix_error((), tree, r, is_leaf), None)
      raise (err("tree_map_with_path tree") if err is not None else e) from None
  return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def build_tree(treedef: PyTreeDef, xs: Any) -> Any:
  """Builds ``treedef``'s structure from nested iterables (an older JAX API).

  Args:
    treedef: the structure to build.
    xs: nested iterables, one per node, holding the leaves.

  Returns:
    The pytree.
  """
  return treedef.from_iterable_tree(xs)


class Unspecified:
  """Marks an argument that was not given (None can be a real value)."""


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: T | Unspecified = Unspecified(),
                is_leaf: Callable[[Any], bool] | None = None) -> T:
  """``functools.reduce`` over the leaves of a tree.

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
  """Reduces the leaves with an associative operation as a balanced tree.

  Args:
    operation: associative binary operation.
    tree: a pytree.
    identity: the identity of ``operation``, needed only for an empty tree.
    is_leaf: optional predicate marking subtrees to keep whole.

  Returns:
    The reduced value.
  """
  return _parallel_reduce(tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
  """``all()`` over the leaves of a tree.

  Args:
    tree: a pytree.
    is_leaf: optional predicate marking subtrees to keep whole.

  Returns:
    True if every leaf is truthy.
  """
  return all(tree_leaves(tree, is_leaf=is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
  """Turns a tree of structure (outer, inner) into one of structure (inner, outer).

  Args:
    outer_treedef: the outer structure.
    inner_treedef: the inner structure, or None to infer it from the first
      outer leaf.
    pytree_to_transpose: the tree to transpose.

  Returns:
    The transposed tree.

  Raises:
    TypeError: if the leaf count is not ``outer.num_leaves * inner.num_leaves``.
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
  subtrees = [outer_treedef.unflatten(col) for col in zip(*rows)]
  return inner_treedef.unflatten(subtrees)


# ---------------------------------------------------------------- registration

def register_pytree_node(nodetype: type[T],
                         flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
                         unflatten_func: Callable[[Hashable, Iterable[Any]], T],
                         flatten_with_keys_func: Callable[
                             [T], tuple[KeyLeafPairs, Hashable]] | None = None
                         ) -> None:
  """Makes ``nodetype`` a pytree node type (subclasses are not included).

  Args:
    nodetype: the type to register.
    flatten_func: ``x -> (children, aux_data)``; aux_data must be hashable
      and comparable, it becomes part of the treedef.
    unflatten_func: ``(aux_data, children) -> x``; children is a tuple.
    flatten_with_keys_func: optional ``x -> ([(key, child)], aux_data)`` for
      key paths; without it children get ``FlattenedIndexKey`` keys.

  Raises:
    ValueError: if ``nodetype`` is already registered.
  """
  for registry in _all_registries:
    if nodetype in registry._kinds:
      raise ValueError("Duplicate custom PyTreeDef type registration for "
                       f"{nodetype!r}.")
  kind = _NodeKind(_CUSTOM, nodetype, None, flatten_func, unflatten_func,
                   flatten_with_keys_func)
  kind.make = lambda data, xs: unflatten_func(data, tuple(xs))
  for registry in _all_registries:
    registry._add(nodetype, kind, "")


def register_pytree_node_class(cls: Typ) -> Typ:
  """Class decorator: registers ``cls`` using its ``tree_flatten`` method and
  ``tree_unflatten`` classmethod.

  Args:
    cls: the class.

  Returns:
    ``cls`` unchanged.
  """
  register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
  return cls


def register_pytree_with_keys(nodetype: type[T],
                              flatten_with_keys: Callable[
                                  [T], tuple[Iterable[KeyLeafPair], Hashable]],
                              unflatten_func: Callable[[Hashable, Iterable[Any]], T],
                              flatten_func: Callable[
                                  [T], tuple[Iterable[Any], Hashable]] | None = None
                              ) -> None:
  """Registers a node type whose children carry keys (for key paths).

  Args:
    nodetype: the type to register.
    flatten_with_keys: ``x -> ([(key, child)], aux_data)``.
    unflatten_func: ``(aux_data, children) -> x``.
    flatten_func: optional faster ``x -> (children, aux_data)``, same order.
  """
  if not flatten_func:
    def flatten_func(tree):
      key_children, aux = flatten_with_keys(tree)
      return [c for _, c in key_children], aux
  register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: Typ) -> Typ:
  """Class decorator: registers ``cls`` using ``tree_flatten_with_keys``,
  ``tree_unflatten`` and, if present, ``tree_flatten``.

  Args:
    cls: the class.

  Returns:
    ``cls`` unchanged.
  """
  flatten_func = (operator.methodcaller("tree_flatten")
                  if hasattr(cls, "tree_flatten") else None)
  register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                            cls.tree_unflatten, flatten_func)
  return cls


def register_dataclass(nodetype: Typ, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
  """Registers a dataclass-like type: data fields are children, meta fields
  are static node data. Usable as a decorator.

  Args:
    nodetype: the type; rebuilt as ``nodetype(**fields)``.
    data_fields: names of child fields. Optional for a dataclass: fields are
      data unless marked ``field(metadata=dict(static=True))``.
    meta_fields: names of static (hashable) fields; given iff data_fields is.
    drop_fields: dataclass fields left out of the registration.

  Returns:
    ``nodetype`` unchanged.
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
    # JAX's docs say drop_fields are excluded; jax 0.10 still infers them.
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
  for registry in _all_registries:
    if nodetype in registry._kinds:
      raise ValueError("Duplicate custom dataclass PyTreeDef type registration "
                       f"for {nodetype!r}.")
  for registry in _all_registries:
    registry.register_dataclass_node(nodetype, data_fields, meta_fields)
  return nodetype


def register_static(cls: type[H]) -> type[H]:
  """Registers ``cls`` as a node with no children: instances are part of the
  treedef (so they are static under jit) and must be hashable.

  Args:
    cls: the class.

  Returns:
    ``cls`` unchanged.
  """
  register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
  return cls


def static(**kwargs: Any) -> Any:
  """``dataclasses.field`` marked ``metadata={'static': True}`` (``jax.tree.static``).

  Args:
    **kwargs: arguments of ``dataclasses.field``.

  Returns:
    The field.
  """
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
  """A ``functools.partial`` that is a pytree: its bound arguments are the
  children, its function the static node data. ``Partial(f, x)(y) == f(x, y)``.
  """

  def __new__(klass, func, *args, **kw):
    # functools.partial flattens a partial `func` into one; box it so exactly
    # the arguments given here become pytree children.
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


def _defaultdict_with_keys(d: collections.defaultdict):
  keys = tuple(_sorted_keys(d))
  return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _defaultdict_flatten(d: collections.defaultdict):
  keys = tuple(_sorted_keys(d))
  return [d[k] for k in keys], (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict,
    _defaultdict_with_keys,
    lambda s, values: collections.defaultdict(s[0], zip(s[1], values, strict=True)),
    _defaultdict_flatten)


# ---------------------------------------------------------------- prefixes and errors

def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
  """Repeats each leaf of ``prefix_tree`` once per leaf of the matching
  subtree of ``full_tree``.

  Returns:
    A list with ``tree_structure(full_tree).num_leaves`` entries.
  """
  result: list = []
  def add_leaves(x, subtree):
    result.extend([x] * tree_structure(subtree).num_leaves)
  try:
    tree_map(add_leaves, prefix_tree, full_tree, is_leaf=is_leaf)
  except ValueError:
    e, *_ = prefix_errors(prefix_tree, full_tree)
    raise e("broadcast_prefix prefix_tree") from None
  return result


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
  """Broadcasts a tree prefix into the structure of ``full_tree``.

  Args:
    prefix_tree: a pytree that is a prefix of ``full_tree``.
    full_tree: the pytree whose structure the result takes.
    is_leaf: optional predicate marking subtrees of ``prefix_tree`` as leaves.

  Returns:
    A pytree shaped like ``full_tree`` holding ``prefix_tree``'s leaves.
  """
  leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf)
  return tree_structure(full_tree).unflatten(leaves)


def broadcast_flattened_prefix_with_treedef(prefix_leaves: list[Any],
                                            prefix_treedef: PyTreeDef,
                                            full_treedef: PyTreeDef) -> list[Any]:
  """``broadcast_prefix`` on an already flattened prefix (for vmap's in_axes)."""
  out: list = []

  def go(start: int, prefix_td: PyTreeDef, td: PyTreeDef) -> None:
    if treedef_is_strict_leaf(prefix_td):
      out.extend(prefix_leaves[start:start + 1] * td.num_leaves)
      return
    if treedef_is_strict_leaf(td):
      raise ValueError("`prefix_treedef` is not a prefix of `full_treedef`")
    if prefix_td.node_data() != td.node_data():
      raise ValueError(f"expected {td.node_data()}, got {prefix_td.node_data()}")
    for p_child, child in zip(prefix_td.children(), td.children(), strict=True):
      go(start, p_child, child)
      start += p_child.num_leaves

  go(0, prefix_treedef, full_treedef)
  return out


def _child_keys(tree: Any) -> KeyPath:
  return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None
                  ) -> list[Callable[[str], ValueError]]:
  """Describes why ``prefix_tree`` is not a prefix of ``full_tree``: each
  entry maps a name (used in the message) to a ValueError."""
  return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


def _prefix_error(key_path: KeyPath, prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None
                  ) -> Iterator[Callable[[str], ValueError]]:
  if treedef_is_strict_leaf(tree_structure(prefix_tree, is_leaf=is_leaf)):
    return  # a leaf is a prefix of anything
  path = keystr(key_path)
  if type(prefix_tree) != type(full_tree):
    yield lambda name: ValueError(
        "pytree structure error: different types at key path\n"
        f"    {name}{path}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix_tree)}\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        f"    {type(full_tree)}.")
    return
  prefix_children, prefix_meta = flatten_one_level(prefix_tree)
  full_children, full_meta = flatten_one_level(full_tree)
  prefix_children = tuple(prefix_children)
  full_children = tuple(full_children)
  prefix_keys = _child_keys(prefix_tree)
  full_keys = _child_keys(full_tree)
  if isinstance(prefix_tree, (list, tuple)):
    if len(prefix_tree) != len(full_tree):
      ty = type(prefix_tree).__name__
      yield lambda name: ValueError(
          f"pytree structure error: different lengths of {ty} at key path\n"
          f"    {name}{path}\n"
          f"At that key path, the prefix pytree {name} has a subtree of type "
          f"{ty} of length {len(prefix_tree)}, but the full pytree has a subtree "
          f"of the same type but of length {len(full_tree)}.")
      return
  elif len(prefix_children) != len(full_children):
    try:
      diff = set(prefix_keys).symmetric_difference(set(full_keys))
    except Exception:
      diff = None
    yield lambda name: ValueError(
        "pytree structure error: different numbers of pytree children at key path\n"
        f"    {name}{path}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix_tree)}\n"
        f"with {len(prefix_children)} child keys\n"
        f"    {' '.join(str(_key_of(k)) for k in prefix_keys)}\n"
        "but at the same key path the full pytree has a subtree of the same "
        f"type but with {len(full_children)} child keys\n"
        f"    {' '.join(str(_key_of(k)) for k in full_keys)}\n"
        + ("" if diff is None else
           "so the symmetric difference on key sets is\n"
           f"    {' '.join(str(_key_of(k)) for k in diff)}"))
    return
  if prefix_meta != full_meta:
    prefix_str, full_str = str(prefix_meta), str(full_meta)
    meta_diff = textwrap.indent("\n".join(
        difflib.ndiff(prefix_str.splitlines(), full_str.splitlines())),
        prefix="    ")
    yield lambda name: ValueError(
        "pytree structure error: different pytree metadata at key path\n"
        f"    {name}{path}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix_tree)}\n"
        "with metadata\n"
        f"    {prefix_str}\n"
        "but at the same key path the full pytree has a subtree of the same "
        "type but with metadata\n"
        f"    {full_str}\n"
        "so the diff in the metadata at these pytree nodes is\n"
        f"{meta_diff}")
    return
  for k, t1, t2 in zip(prefix_keys, prefix_children, full_children):
    # Unlike jax 0.10, is_leaf is passed down, so subtrees it marks as leaves
    # are not reported as mismatches.
    yield from _prefix_error((*key_path, k), t1, t2, is_leaf)


def _key_of(k: Any) -> Any:
  # JAX prints `k.key` here; SequenceKey and GetAttrKey name it differently.
  for attr in ("key", "idx", "name"):
    if hasattr(k, attr):
      return getattr(k, attr)
  return k


def equality_errors(tree1: Any, tree2: Any,
                    is_leaf: Callable[[Any], bool] | None = None
                    ) -> Iterator[tuple[KeyPath, str, str, str]]:
  """Describes structural differences between two pytrees as
  ``(key_path, thing1, thing2, explanation)`` tuples."""
  yield from _equality_errors((), tree1, tree2, is_leaf)


def _equality_errors(path: KeyPath, t1: Any, t2: Any, is_leaf: Callable | None
                     ) -> Iterator[tuple[KeyPath, str, str, str]]:
  if (treedef_is_strict_leaf(tree_structure(t1, is_leaf=is_leaf)) and
      treedef_is_strict_leaf(tree_structure(t2, is_leaf=is_leaf))):
    return
  if type(t1) != type(t2):
    yield path, str(type(t1)), str(type(t2)), "their Python types differ"
    return
  if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
    yield (path, f"{type(t1).__name__} of length {len(t1)}",
           f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
    return
  c1, meta1 = flatten_one_level(t1)
  c2, meta2 = flatten_one_level(t2)
  c1, c2 = tuple(c1), tuple(c2)
  keys1, keys2 = _child_keys(t1), _child_keys(t2)
  try:
    diff = " ".join(repr(_key_of(k)) for k in set(keys1).symmetric_difference(keys2))
  except Exception:
    diff = ""
  if len(c1) != len(c2):
    def children(n):
      return f"{n} child{'ren' if n > 1 else ''}"
    yield (path, f"{type(t1)} with {children(len(c1))}",
           f"{type(t2)} with {children(len(c2))}",
           "the numbers of children do not match" +
           (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
    return
  if meta1 != meta2:
    yield (path, f"{type(t1)} with pytree metadata {meta1}",
           f"{type(t2)} with pytree metadata {meta2}",
           "the pytree node metadata does not match")
    return
  for k, a, b in zip(keys1, c1, c2):
    yield from _equality_errors((*path, k), a, b, is_leaf)
