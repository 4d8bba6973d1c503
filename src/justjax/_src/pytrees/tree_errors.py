"""Pytree prefix matching and the structure-mismatch error messages JAX gives.

Split from `tree_util`; `tree_map` calls into it only when structures differ.
"""
from __future__ import annotations

import difflib
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

from justjax._src.pytrees.treedef import KeyPath


from justjax._src.pytrees.treedef import (  # noqa: F401
    _KeyBase,
    keystr,
)
from justjax._src.pytrees.tree_util import (  # noqa: F401
    flatten_one_level,
    flatten_one_level_with_keys,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_is_strict_leaf,
)


# ---------------------------------------------------------------- prefixes and errors

def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """Repeats each leaf of ``prefix_tree`` once per leaf of the matching
    subtree of ``full_tree``; returns the list of ``full_tree``'s length."""
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
    """Broadcasts a tree prefix into the structure of a full tree.

    Args:
        prefix_tree: a pytree that is a prefix of ``full_tree``.
        full_tree: the pytree whose structure the result takes.
        is_leaf: optional predicate marking subtrees of ``prefix_tree`` as leaves.

    Returns:
        ``full_tree``'s structure holding ``prefix_tree``'s leaves.
    """
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf)
    return tree_structure(full_tree).unflatten(leaves)


def _child_keys(tree: Any) -> KeyPath:
    return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def _key_of(k: Any) -> Any:
    # JAX prints `k.key`, which SequenceKey and GetAttrKey lack (it would crash).
    return k._v if isinstance(k, _KeyBase) else k


def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None
                  ) -> list[Callable[[str], ValueError]]:
    """Why ``prefix_tree`` is not a prefix of ``full_tree``: one function per
    mismatch, mapping the name to show in the message to a ValueError."""
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
        # The children's counts, not len(): a named tuple may define its own __len__.
        if len(prefix_children) != len(full_children):
            ty = type(prefix_tree).__name__
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {ty} at key path\n"
                f"    {name}{path}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{ty} of length {len(prefix_children)}, but the full pytree has a subtree "
                f"of the same type but of length {len(full_children)}.")
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
        # Unlike jax 0.10, is_leaf is passed down: subtrees it marks as leaves
        # are prefixes of anything and must not be reported.
        yield from _prefix_error((*key_path, k), t1, t2, is_leaf)


def equality_errors(tree1: Any, tree2: Any,
                    is_leaf: Callable[[Any], bool] | None = None
                    ) -> Iterator[tuple[KeyPath, str, str, str]]:
    """Structural differences between two pytrees, as
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


def is_none(x: Any) -> bool:
    return x is None


class PytreeLeaf:
    """Stands for a leaf of the arguments in a prefix-mismatch message."""

    def __repr__(self) -> str:
        return "pytree leaf"


def flatten_axes(name: str, treedef: Any, axis_tree: Any, *,
                 kws: bool = False) -> list[Any]:
    """The axis spec `axis_tree` (a prefix of `treedef`, None leaves included) broadcast
    to one entry per leaf of `treedef`; JAX's prefix error when it is not a prefix."""
    if axis_tree is None or type(axis_tree) is int:
        return [axis_tree] * treedef.num_leaves
    dummy = tree_unflatten(treedef, [PytreeLeaf()] * treedef.num_leaves)
    axes: list[Any] = []

    def add(axis: Any, subtree: Any) -> None:
        axes.extend([axis] * tree_structure(subtree).num_leaves)

    try:
        tree_map(add, axis_tree, dummy, is_leaf=is_none)
    except ValueError:
        if kws:
            # Only the positional arguments can mismatch: keyword arguments take axis 0.
            dummy, axis_tree = dummy[0], axis_tree[0]
        found = prefix_errors(axis_tree, dummy, is_leaf=is_none)
        details = "\n  ".join(e(name).args[0] for e in found)
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value; \n  Mismatch details ({len(found)} found):\n  {details}"
                         ) from None
    return axes
