"""Tests for justjax.tree_util and justjax.tree (JAX's pytree library).

Expected strings are what jax 0.10 prints; the `needs_jax` tests at the end
compare against real JAX directly when it is installed.
"""
import collections
import dataclasses
import functools
import operator
import pickle
import re
import timeit
import warnings

import numpy as np
import pytest

import justjax.tree as jt
import justjax.tree_util as tu
from justjax._src.pytrees import tree_util as stu
from justjax._src.pytrees import tree_errors

SequenceKey, DictKey = tu.SequenceKey, tu.DictKey
GetAttrKey, FlattenedIndexKey = tu.GetAttrKey, tu.FlattenedIndexKey

Point = collections.namedtuple("Point", ["x", "y"])
Point2 = collections.namedtuple("Point2", ["x", "y"])


class PointSub(Point):
    pass


class Box:
    """Custom node: children (a, b), aux data `tag`."""

    def __init__(self, a, b, tag="box"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return (type(other) is Box and (self.a, self.b, self.tag) ==
                (other.a, other.b, other.tag))

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, {self.tag!r})"


tu.register_pytree_node(Box, lambda b: ((b.a, b.b), b.tag),
                        lambda tag, ch: Box(ch[0], ch[1], tag))


class Other:
    def __init__(self, a):
        self.a = a

    def __repr__(self):
        return f"Other({self.a!r})"


tu.register_pytree_node(Other, lambda o: ((o.a,), None), lambda _, ch: Other(ch[0]))


@tu.register_pytree_with_keys_class
class Keyed:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Keyed and (self.x, self.y) == (other.x, other.y)

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("x"), self.x), (DictKey("why"), self.y)), "K"

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_pytree_node_class
class ByClass:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return type(other) is ByClass and self.x == other.x

    def tree_flatten(self):
        return (self.x,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    act: str = dataclasses.field(default="relu", metadata=dict(static=True))


@tu.register_dataclass
@dataclasses.dataclass
class WithStaticHelper:
    x: object
    op: str = jt.static(default="add")


@tu.register_static
class Name(str):
    pass


def _structure_roundtrip_cases():
    return [
        None, (None,), (), [()], (1, 2), ((1, "foo"), ["bar", (3, None, 7)]),
        {"a": 1, "b": 2}, {"b": [1, {"c": 2}], "a": (3,)},
        Point(1, (2, 3)), [Point(1, Point(2, None))], PointSub(1, 2),
        collections.OrderedDict([("z", 1), ("a", 2)]),
        collections.defaultdict(list, {"b": 1, "a": [2, 3]}),
        Box(1, [2, 3]), Keyed(1, (2,)), ByClass([1, 2]),
        Params(w=np.float32(1), b=(2, 3)), WithStaticHelper(1), Name("s"),
        "leaf", 0.5, 7, [[[[]]]], {"a": {}, "b": []}, {1: {2: [3]}, 0: (None, None)},
    ]


# ---------------------------------------------------------------- flatten / unflatten

def test_flatten_order_and_repr():
    leaves, treedef = tu.tree_flatten({"b": [3, None], "a": (1, 2)})
    assert leaves == [1, 2, 3]
    assert repr(treedef) == "PyTreeDef({'a': (*, *), 'b': [*, None]})"
    assert str(treedef) == repr(treedef)
    assert tu.tree_leaves([0, ((1, 2), 3, (4, (5, 6, 7))), 8, 9]) == list(range(10))


@pytest.mark.parametrize("tree", _structure_roundtrip_cases())
def test_roundtrip(tree):
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)
    assert treedef.num_leaves == len(leaves)
    assert tu.tree_unflatten(treedef, treedef.flatten_up_to(tree)) == tree
    assert pickle.loads(pickle.dumps(treedef)) == treedef


@pytest.mark.parametrize("tree, expected", [
    (None, "PyTreeDef(None)"),
    (1, "PyTreeDef(*)"),
    ((1,), "PyTreeDef((*,))"),
    ((), "PyTreeDef(())"),
    ([], "PyTreeDef([])"),
    ({}, "PyTreeDef({})"),
    ((1, {"a": 2, "b": [3, None]}), "PyTreeDef((*, {'a': *, 'b': [*, None]}))"),
    (Point(1, (2, None)), "PyTreeDef(CustomNode(namedtuple[Point], [*, (*, None)]))"),
    (collections.OrderedDict([("b", 1), ("a", 2)]),
     "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (collections.defaultdict(list, {"b": 1, "a": 2}),
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
    (Box(1, [2, 3]), "PyTreeDef(CustomNode(Box[box], [*, [*, *]]))"),
    (Other(1), "PyTreeDef(CustomNode(Other[None], [*]))"),
    (Params(1, 2), "PyTreeDef(CustomNode(Params[('relu',)], [*, *]))"),
    (Name("n"), "PyTreeDef(CustomNode(Name[n], []))"),
    (tu.Partial(operator.add, 1, k=2),
     "PyTreeDef(CustomNode(Partial[<built-in function add>], [(*,), {'k': *}]))"),
    ({"it's": 1}, "PyTreeDef({\"it's\": *})"),
])
def test_treedef_repr(tree, expected):
    assert repr(tu.tree_structure(tree)) == expected


def test_dict_keys_sorted_and_restored_in_sorted_order():
    leaves, treedef = tu.tree_flatten({"b": 1, "a": 2, "c": 3})
    assert leaves == [2, 1, 3]
    out = tu.tree_unflatten(treedef, [10, 20, 30])
    assert out == {"a": 10, "b": 20, "c": 30}
    assert list(out) == ["a", "b", "c"]
    assert tu.tree_leaves({2.5: "x", 1: "y", True: "z"}) == ["z", "x"]  # 1 == True


def test_dict_with_incomparable_keys_raises_like_jax():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting "
                       "pytree dictionary keys.") as info:
        tu.tree_flatten({1: "a", "b": 2})
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(ValueError, match="Comparator raised"):
        tu.tree_flatten({None: 1, "a": 2})


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]
    out = tu.tree_unflatten(treedef, ["Z", "A"])
    assert type(out) is collections.OrderedDict and list(out.items()) == [("z", "Z"), ("a", "A")]
    swapped = collections.OrderedDict([("a", 1), ("z", 2)])
    assert tu.tree_structure(swapped) != treedef  # order is part of the structure


def test_defaultdict_sorted_and_keeps_factory():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    out = tu.tree_map(lambda x: x * 10, dd)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"a": 20, "b": 10}


def test_none_is_an_empty_node():
    leaves, treedef = tu.tree_flatten([None, (None, 1)])
    assert leaves == [1]
    assert treedef.num_leaves == 1 and treedef.num_nodes == 5
    assert tu.tree_unflatten(tu.tree_structure(None), []) is None
    td_none = tu.tree_structure(None)
    assert (td_none.num_leaves, td_none.num_nodes) == (0, 1)
    assert tu.treedef_is_leaf(td_none) and not stu.treedef_is_strict_leaf(td_none)
    assert tu.tree_map(lambda x: x + 1, (None, 1)) == (None, 2)
    assert tu.tree_leaves([None, None]) == []


def test_none_leaf_registry_treats_none_as_leaf():
    leaves, treedef = stu.none_leaf_registry.flatten([None, {"a": None}])
    assert leaves == [None, None]
    assert repr(treedef) == "PyTreeDef([*, {'a': *}])"
    assert treedef == tu.tree_structure([1, {"a": 2}])


def test_namedtuples():
    p = Point(1, Point2(2, 3))
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    out = tu.tree_unflatten(treedef, [4, 5, 6])
    assert out == Point(4, Point2(5, 6)) and type(out.y) is Point2
    assert tu.tree_structure(Point(1, 2)) == tu.tree_structure(Point(3, 4))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Point2(1, 2))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    sub = tu.tree_unflatten(tu.tree_structure(PointSub(1, 2)), [3, 4])
    assert type(sub) is PointSub


def test_other_subclasses_are_leaves():
    class MyDict(dict):
        pass

    class MyList(list):
        pass

    class MyTuple(tuple):
        pass

    for x in (MyDict(a=1), MyList([1, 2]), MyTuple((1, 2)), collections.Counter(a=1)):
        leaves, treedef = tu.tree_flatten(x)
        assert leaves == [x] and leaves[0] is x
        assert repr(treedef) == "PyTreeDef(*)"


def test_tuple_subclass_gaining_fields_on_instance_is_a_namedtuple():
    class Loose(tuple):
        pass

    plain = Loose((1, 2))
    assert tu.tree_leaves(plain) == [plain]
    odd = Loose((1, 2))
    odd._fields = ("a", "b")  # jaxlib checks the instance, not the class
    assert tu.tree_leaves(odd) == [1, 2]
    assert tu.tree_leaves(plain) == [plain]


def test_registration_overrides_cached_leaf_type():
    class Late:
        def __init__(self, v):
            self.v = v

    late = Late(3)
    assert tu.tree_leaves([late]) == [late]  # classified (and cached) as a leaf
    tu.register_pytree_node(Late, lambda o: ((o.v,), None), lambda _, ch: Late(*ch))
    assert tu.tree_leaves([late]) == [3]


def test_unflatten_wrong_number_of_leaves():
    treedef = tu.tree_structure((1, 2))
    too_few = "Too few leaves for PyTreeDef; expected 2, got 1"
    with pytest.raises(ValueError, match=re.escape(too_few)):
        tu.tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match=re.escape("Too many leaves for PyTreeDef; expected 2.")):
        tu.tree_unflatten(treedef, [1, 2, 3])
    with pytest.raises(ValueError, match="Too many leaves"):
        tu.tree_structure(None).unflatten([1])


def test_unflatten_accepts_iterators_without_draining_them():
    import itertools
    treedef = tu.tree_structure([1, 2])
    assert treedef.unflatten(iter([5, 6])) == [5, 6]
    with pytest.raises(ValueError, match="Too many leaves"):
        treedef.unflatten(itertools.count())
    assert tu.tree_structure(7).unflatten(["x"]) == "x"


def test_iterators_as_leaves_warn():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaves = tu.tree_leaves([(i for i in range(2)), zip([1]), {}.values(), 5])
        tu.tree_leaves_with_path([iter(())])
    assert len(leaves) == 4
    messages = [str(w.message) for w in caught]
    assert all(w.category is DeprecationWarning for w in caught)
    assert messages[0].startswith("Python iterable type 'generator' is treated as a leaf")
    assert [m.split("'")[1] for m in messages] == ["generator", "zip", "dict_values",
                                                    "tuple_iterator"]


# ---------------------------------------------------------------- PyTreeDef API

def test_treedef_equality_and_hash():
    a = tu.tree_structure({"x": (1, 2), "y": [3]})
    b = tu.tree_structure({"y": ["q"], "x": ("r", "s")})
    c = tu.tree_structure({"x": (1, 2), "y": (3,)})
    assert a == b and hash(a) == hash(b) and not a != b
    assert a != c and not a == c
    assert {a: "cached"}[b] == "cached"
    assert (a == 5) is False and (a != 5) is False  # as jaxlib
    assert tu.tree_structure({1: 0}) == tu.tree_structure({True: 0})
    assert tu.tree_structure(Box(1, 2, "t")) == tu.tree_structure(Box(5, 6, "t"))
    assert tu.tree_structure(Box(1, 2, "t")) != tu.tree_structure(Box(1, 2, "u"))
    assert tu.tree_structure(Box(1, 2)) != tu.tree_structure(Other((1, 2)))


def test_treedef_hash_with_unhashable_node_data():
    unhashable = tu.tree_structure(Box(1, 2, ["list", "aux"]))
    assert isinstance(hash(unhashable), int)
    assert hash(unhashable) == hash(tu.tree_structure(Box(3, 4, ["list", "aux"])))
    assert unhashable == tu.tree_structure(Box(3, 4, ["list", "aux"]))


def test_treedef_equality_with_array_node_data_raises():
    with pytest.raises(ValueError, match="Exception raised while checking equality of "
                       "metadata fields of pytree"):
        _ = tu.tree_structure(Box(1, 2, np.arange(3))) == tu.tree_structure(Box(1, 2, np.arange(3)))


def test_num_leaves_num_nodes_children():
    treedef = tu.tree_structure((1, {"a": 2, "b": [3, None]}))
    assert (treedef.num_leaves, treedef.num_nodes) == (3, 7)
    assert treedef.children() == [tu.tree_structure(0), tu.tree_structure({"a": 0, "b": [0, None]})]
    assert repr(tu.treedef_children(treedef)[1]) == "PyTreeDef({'a': *, 'b': [*, None]})"
    assert tu.tree_structure(1).children() == [] and tu.tree_structure(None).children() == []
    counts = [(tu.tree_structure(x).num_nodes, tu.tree_structure(x).num_leaves)
              for x in [1, None, (), [1, None], {"a": (1, 2)}, Point(1, (2,))]]
    assert counts == [(1, 1), (1, 0), (1, 0), (3, 1), (4, 2), (4, 2)]
    assert [c.num_leaves for c in treedef.children()] == [1, 2]


def test_treedef_is_leaf_and_tuple():
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure([1, 2]))
    built = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure({"a": 1})])
    assert repr(built) == "PyTreeDef((*, {'a': *}))" and built.num_leaves == 2
    assert built == tu.tree_structure((0, {"a": 0}))
    assert tu.treedef_tuple(tu.tree_structure(x) for x in [1, None]) == tu.tree_structure((1, None))
    tree = ((1, 2, (3, 4)), (5,))
    treedef = tu.tree_structure(tree)
    assert tu.treedef_tuple(treedef.children()) == treedef
    with pytest.raises(TypeError):
        tu.treedef_tuple([1])


def test_node_data_compose_and_rebuild():
    cases = {1: None, None: (type(None), None), (1,): (tuple, None),
             "list": ([1], (list, None)), "dict": ({"b": 1, "a": 2}, (dict, ["a", "b"])),
             "box": (Box(1, 2, "t"), (Box, "t")), "nt": (Point(1, 2), (Point, None))}
    for key, value in cases.items():
        tree, expected = (key, value) if not isinstance(key, str) else value
        treedef = tu.tree_structure(tree)
        assert treedef.node_data() == expected
        rebuilt = tu.PyTreeDef.from_node_data_and_children(
            tu.default_registry, treedef.node_data(), treedef.children())
        assert rebuilt == treedef
    composed = tu.tree_structure([0, 0]).compose(tu.tree_structure((0, None, 0)))
    assert repr(composed) == "PyTreeDef([(*, None, *), (*, None, *)])"
    assert composed.num_leaves == 4
    with pytest.raises(TypeError):
        tu.PyTreeDef()


def test_build_tree_and_from_iterable_tree():
    treedef = tu.tree_structure((1, {"a": 2, "b": 3}, None))
    assert tu.build_tree(treedef, [9, [7, 8], []]) == (9, {"a": 7, "b": 8}, None)
    with pytest.raises(ValueError, match="Arity mismatch between trees"):
        treedef.from_iterable_tree([9, [7], []])


# ---------------------------------------------------------------- flatten_up_to

@pytest.mark.parametrize("tree, xs, expected", [
    ([(1, 2), None, Point(3, 7)],
     [({"foo": 7}, (3, 4)), None, Point((11, 9), None)],
     [{"foo": 7}, (3, 4), (11, 9), None]),
    ([1], [{"a": 7}], [{"a": 7}]),
    ((1, 2), ({"a": 7}, {"a": 8}), [{"a": 7}, {"a": 8}]),
    ({"a": 1, "b": (2, 3)}, {"a": [7], "b": ([8], (9,))}, [[7], [8], (9,)]),
    (None, None, []),
    (1, (1, 2), [(1, 2)]),
    (Box(1, 2), Box([1], (2,)), [[1], (2,)]),
])
def test_flatten_up_to(tree, xs, expected):
    assert tu.tree_structure(tree).flatten_up_to(xs) == expected


@pytest.mark.parametrize("tree, xs, message", [
    ([1, 2], [7], "List arity mismatch: 1 != 2; list: [7]."),
    ((1,), (7, 8), "Tuple arity mismatch: 2 != 1; tuple: (7, 8)."),
    ({"a": 1}, {"a": 7, "b": 8},
     "Dict key mismatch; expected keys: ['a']; present keys: ['a', 'b']."),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2},
     "Dict key mismatch; expected keys: ['a', 'b']; present keys: ['a', 'c']."),
    ([1], {"a": 7}, "Expected list, got {'a': 7}."),
    ((1,), [7], "Expected tuple, got [7]."),
    ({"a": 1}, (7,), "Expected dict, got (7,)."),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict([('a', 1)])."),
    ([[1]], [7], "Expected list, got 7."),
    ([Point(1, 2)], [(1, 2)], "Expected named tuple, got (1, 2)."),
    ([Point(1, 2)], [Point2(1, 2)],
     f"Named tuple type mismatch: expected type: <class '{__name__}.Point'>, "
     "tuple: Point2(x=1, y=2)."),
    (Box(1, 2), Other(1),
     f"Custom node type mismatch: expected type: <class '{__name__}.Box'>, value: Other(1)."),
    (Box(1, 2, "x"), Box(1, 2, "y"),
     "Mismatch custom node data: 'x' != 'y'; value: Box(1, 2, 'y')."),
    (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2),
     "Mismatch custom node data: ('a', 'b') != ('b', 'a'); value: "
     "OrderedDict([('b', 1), ('a', 2)])."),
    (Params(1, 2), Params(1, 2, "tanh"),
     "Mismatch custom dataclass node data: ('relu',) != ('tanh',); value: "
     "Params(w=1, b=2, act='tanh')."),
    (Params(1, 2), Box(1, 2),
     f"Custom dataclass node type mismatch: expected type: <class "
     f"'{__name__}.Params'>, value: Box(1, 2, 'box')."),
    # Like jaxlib, the rightmost mismatch is the one reported.
    ((1, (1, 2), [1]), (1, (1, 2, 3), [1, 2]), "List arity mismatch: 2 != 1; list: [1, 2]."),
])
def test_flatten_up_to_errors(tree, xs, message):
    with pytest.raises(ValueError) as info:
        tu.tree_structure(tree).flatten_up_to(xs)
    assert str(info.value) == message


def test_flatten_up_to_none_error_explains_old_behaviour():
    with pytest.raises(ValueError) as info:
        tu.tree_structure(None).flatten_up_to(3)
    assert str(info.value).startswith("Expected None, got 3.\n\nIn previous releases of JAX")
    assert "is_leaf=lambda x: x is None" in str(info.value)


# ---------------------------------------------------------------- tree_map

def test_tree_map_basic_and_multiple_trees():
    assert tu.tree_map(lambda x: x + 1, {"x": 7, "y": 42}) == {"x": 8, "y": 43}
    assert tu.tree_map(lambda *a: sum(a), (1, 2), (3, 4), (5, 6)) == (9, 12)
    x = ((1, 2), (3, 4, 5))
    y = (([3], None), ({"foo": "bar"}, 7, [5, 6]))
    assert tu.tree_map(lambda *xs: tuple(xs), x, y) == (
        ((1, [3]), (2, None)), ((3, {"foo": "bar"}), (4, 7), (5, [5, 6])))
    assert jt.map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]


def test_tree_map_is_leaf():
    out = tu.tree_map(lambda x: ("leaf", x), [(1, 2), [3]], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [("leaf", (1, 2)), [("leaf", 3)]]
    out = tu.tree_map(lambda x, y: (x, y), [None, 1], [2, 3], is_leaf=lambda x: x is None)
    assert out == [(None, 2), (1, 3)]


@pytest.mark.parametrize("a, b, message", [
    ((1, 2), (1, 2, 3),
     "pytree structure error: different lengths of tuple at key path\n"
     "    tree_map tree\n"
     "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
     "length 2, but the full pytree has a subtree of the same type but of length 3."),
    ((1, 2), [1, 2],
     "pytree structure error: different types at key path\n"
     "    tree_map tree\n"
     "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
     "    <class 'tuple'>\n"
     "but at the same key path the full pytree has a subtree of different type\n"
     "    <class 'list'>."),
    ({"a": [1, (2, 3)]}, {"a": [2, (3, 4, 5)]},
     "pytree structure error: different lengths of tuple at key path\n"
     "    tree_map tree['a'][1]\n"
     "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
     "length 2, but the full pytree has a subtree of the same type but of length 3."),
    ({"a": 1, "b": 2}, {"a": 2},
     "pytree structure error: different numbers of pytree children at key path\n"
     "    tree_map tree\n"
     "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
     "    <class 'dict'>\n"
     "with 2 child keys\n"
     "    a b\n"
     "but at the same key path the full pytree has a subtree of the same type but with "
     "1 child keys\n"
     "    a\n"
     "so the symmetric difference on key sets is\n"
     "    b"),
    ({"a": 1}, {"b": 1},
     "pytree structure error: different pytree metadata at key path\n"
     "    tree_map tree\n"
     "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
     "    <class 'dict'>\n"
     "with metadata\n"
     "    ('a',)\n"
     "but at the same key path the full pytree has a subtree of the same type but with "
     "metadata\n"
     "    ('b',)\n"
     "so the diff in the metadata at these pytree nodes is\n"
     "    - ('a',)\n"
     "    ?   ^\n"
     "\n"
     "    + ('b',)\n"
     "    ?   ^\n"),
    ((None, 2), (1, 2),
     "pytree structure error: different types at key path\n"
     "    tree_map tree[0]\n"
     "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
     "    <class 'NoneType'>\n"
     "but at the same key path the full pytree has a subtree of different type\n"
     "    <class 'int'>."),
])
def test_tree_map_structure_errors(a, b, message):
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda x, y: x, a, b)
    assert str(info.value) == message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_tree_map_custom_node_errors():
    with pytest.raises(ValueError, match=r"different types at key path\n    tree_map tree\n"):
        tu.tree_map(lambda a, b: a, Box(1, 2), Other(1))
    with pytest.raises(ValueError, match=r"(?s)different pytree metadata.*\n    x\n.*\n    y\n"
                       r"so the diff in the metadata at these pytree nodes is\n    - x\n    \+ y"):
        tu.tree_map(lambda a, b: a, Box(1, 2, "x"), Box(1, 2, "y"))
    with pytest.raises(ValueError, match=r"different pytree metadata"):
        tu.tree_map(lambda a, b: a, Params(1, 2), Params(1, 2, "tanh"))


def test_tree_map_with_path():
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y), {"a": [1]}, {"a": [2]})
    assert out == {"a": [("['a'][0]", 3)]}
    assert jt.map_with_path(lambda path, x: x + path[0].idx, [1, 2, 3]) == [1, 3, 5]
    with pytest.raises(ValueError, match=r"different lengths of list at key path\n"
                       r"    tree_map_with_path tree\['a'\]"):
        tu.tree_map_with_path(lambda p, x, y: 0, {"a": [1]}, {"a": [2, 3]})
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p, simple=True, separator="/"),
                                {"a": [1, (2, 3)]},
                                is_leaf=lambda p, x: isinstance(x, tuple),
                                is_leaf_takes_path=True)
    assert out == {"a": ["a/0", "a/1"]}


# ---------------------------------------------------------------- is_leaf

def test_is_leaf_predicate():
    leaves, treedef = tu.tree_flatten([(1, 2), 3], is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3] and repr(treedef) == "PyTreeDef([*, *])"
    assert tu.tree_leaves([None, (None, 1)], is_leaf=lambda x: x is None) == [None, None, 1]
    assert tu.tree_leaves((1, 2), is_leaf=lambda x: None) == [1, 2]  # None means False
    assert repr(jt.structure([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))) == \
        "PyTreeDef([*, *])"


@pytest.mark.parametrize("bad", [1, "yes", np.bool_(False)])
def test_is_leaf_must_return_bool(bad):
    with pytest.raises(ValueError, match=re.escape(
        f"is_leaf predicate returned a non-boolean value {bad!r}; expected a boolean")):
        tu.tree_flatten((1, 2), is_leaf=lambda x: bad)


# ---------------------------------------------------------------- custom nodes

def test_custom_node_flatten_and_unflatten_receive_tuple():
    seen = []

    class Rec:
        def __init__(self, *c):
            self.c = c

    tu.register_pytree_node(Rec, lambda r: (list(r.c), None),
                            lambda aux, ch: seen.append(type(ch)) or Rec(*ch))
    leaves, treedef = tu.tree_flatten(Rec(1, (2, 3)))
    assert leaves == [1, 2, 3]
    rebuilt = tu.tree_unflatten(treedef, [4, 5, 6])
    assert rebuilt.c == (4, (5, 6)) and seen == [tuple]


def test_duplicate_registration_raises():
    with pytest.raises(ValueError, match=re.escape(
        f"Duplicate custom PyTreeDef type registration for <class '{__name__}.Box'>.")):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(tuple, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef type"):
        tu.register_dataclass(Params, data_fields=["w", "b"], meta_fields=["act"])


def test_bad_custom_flatten_results():
    class NotTuple: pass
    class NotIterable: pass
    tu.register_pytree_node(NotTuple, lambda x: [(1,), None], lambda a, c: None)
    tu.register_pytree_node(NotIterable, lambda x: (1, None), lambda a, c: None)
    with pytest.raises(ValueError, match=re.escape(
        "The to_iterable function for a custom PyTree node should return a "
        "(children, aux_data) tuple, got [(1,), None]")):
        tu.tree_flatten(NotTuple())
    with pytest.raises(ValueError, match=re.escape(
        "should return a (children, aux_data) tuple where 'children' is iterable, got (1, None)")):
        tu.tree_flatten([NotIterable()])


def test_register_dataclass():
    p = Params(w=np.ones(2), b=3.0, act="tanh")
    leaves, treedef = tu.tree_flatten(p)
    assert [type(x) for x in leaves] == [np.ndarray, float]
    assert repr(treedef) == "PyTreeDef(CustomNode(Params[('tanh',)], [*, *]))"
    rebuilt = tu.tree_unflatten(treedef, [1, 2])
    assert rebuilt == Params(1, 2, "tanh")
    assert repr(tu.tree_structure(WithStaticHelper(1))) == \
        "PyTreeDef(CustomNode(WithStaticHelper[('add',)], [*]))"
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Params((1, 2), 3))]
    assert paths == [".w[0]", ".w[1]", ".b"]


def test_register_dataclass_explicit_fields_and_non_dataclass():
    class Plain:
        def __init__(self, a, m):
            self.a, self.m = a, m

    tu.register_dataclass(Plain, data_fields=["a"], meta_fields=["m"])
    leaves, treedef = tu.tree_flatten(Plain([1, 2], "meta"))
    assert leaves == [1, 2]
    assert repr(treedef) == "PyTreeDef(CustomNode(Plain[('meta',)], [[*, *]]))"
    out = tu.tree_unflatten(treedef, [3, 4])
    assert type(out) is Plain and out.a == [3, 4] and out.m == "meta"


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class Two:
        x: int
        y: int

    with pytest.raises(ValueError, match=re.escape(
        "data_fields and meta_fields must include all dataclass fields with ``init=True`` "
        "and only them. Missing fields: {'y'}. Add them to drop_fields to suppress this error.")):
        tu.register_dataclass(Two, data_fields=["x"], meta_fields=[])
    with pytest.raises(TypeError, match="must both be specified when either is specified"):
        tu.register_dataclass(Two, data_fields=["x"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(int)
    with pytest.raises(ValueError, match=re.escape("must not overlap. Overlapping fields: {'x'}.")):
        tu.register_dataclass(object, data_fields=["x"], meta_fields=["x"])


def test_register_dataclass_drop_fields():
    @dataclasses.dataclass
    class Dropped:
        x: int
        cache: object = None

    tu.register_dataclass(Dropped, drop_fields=["cache"])
    leaves, treedef = tu.tree_flatten(Dropped(1, cache="big"))
    assert leaves == [1] and repr(treedef) == "PyTreeDef(CustomNode(Dropped[()], [*]))"
    assert tu.tree_unflatten(treedef, [2]) == Dropped(2, None)


def test_register_static():
    leaves, treedef = tu.tree_flatten([Name("a"), 1])
    assert leaves == [1]
    assert tu.tree_unflatten(treedef, [2]) == [Name("a"), 2]
    assert tu.tree_structure(Name("a")) != tu.tree_structure(Name("b"))


def test_partial():
    p = tu.Partial(operator.add, 1)
    assert p(2) == 3
    leaves, treedef = tu.tree_flatten(tu.Partial(operator.add, 1, k=2))
    assert leaves == [1, 2]
    doubled = tu.tree_map(lambda x: x * 10, p)
    assert isinstance(doubled, tu.Partial) and doubled(2) == 12
    add1, add2 = tu.Partial(operator.add, 1), tu.Partial(operator.add, 2)
    assert tu.tree_structure(add1) == tu.tree_structure(add2)

    def f(a, b, c):
        return (a, b, c)
    h = tu.Partial(functools.partial(f, 2), 3)
    assert h.args == (3,) and tu.tree_leaves(h) == [3] and h(4) == (2, 3, 4)
    fun = functools.partial(print, 1)
    p1, p2 = tu.Partial(fun, 2), tu.Partial(fun, 2)
    assert p1.func == fun and fun == p1.func and hash(p1.func) == hash(p2.func)


# ---------------------------------------------------------------- key paths

def test_key_entries_str_repr_eq_hash():
    assert (str(SequenceKey(0)), repr(SequenceKey(0))) == ("[0]", "SequenceKey(idx=0)")
    assert (str(DictKey("a")), repr(DictKey("a"))) == ("['a']", "DictKey(key='a')")
    assert str(DictKey(1)) == "[1]"
    assert (str(GetAttrKey("x")), repr(GetAttrKey("x"))) == (".x", "GetAttrKey(name='x')")
    assert (str(FlattenedIndexKey(3)), repr(FlattenedIndexKey(3))) == \
        ("[<flat index 3>]", "FlattenedIndexKey(key=3)")
    assert SequenceKey(0) == SequenceKey(0) and SequenceKey(0) != SequenceKey(1)
    assert SequenceKey(0) != FlattenedIndexKey(0) and DictKey("a") != "a"
    assert (hash(SequenceKey(3)), hash(FlattenedIndexKey(3))) == (4, 45)
    assert hash(DictKey("a")) == hash("a") and hash(GetAttrKey("a")) == hash("a")
    assert (SequenceKey(2).idx, DictKey("k").key, GetAttrKey("n").name,
            FlattenedIndexKey(4).key) == (2, "k", "n", 4)
    assert repr(SequenceKey(idx=1)) == "SequenceKey(idx=1)" and DictKey(key=None).key is None
    with pytest.raises(TypeError):
        SequenceKey("a")
    with pytest.raises(TypeError):
        GetAttrKey(1)
    with pytest.raises(TypeError):
        _ = SequenceKey(0) < SequenceKey(1)
    with pytest.raises(AttributeError):
        SequenceKey(0).idx = 3
    for key in (SequenceKey(1), DictKey((1, "a")), GetAttrKey("n"), FlattenedIndexKey(2)):
        assert pickle.loads(pickle.dumps(key)) == key


def test_key_entries_pattern_match():
    def describe(key):
        match key:
            case SequenceKey(idx=i):
                return f"seq {i}"
            case DictKey(key=k):
                return f"dict {k}"
            case GetAttrKey(name=n):
                return f"attr {n}"
        return "other"
    assert [describe(k) for k in (SequenceKey(1), DictKey("a"), GetAttrKey("z"), 5)] == \
        ["seq 1", "dict a", "attr z", "other"]


def test_keystr():
    path = (DictKey("a"), SequenceKey(0), GetAttrKey("x"), FlattenedIndexKey(2))
    assert tu.keystr(path) == "['a'][0].x[<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "a/0/x/2"
    assert tu.keystr(("a", 1)) == "a1" and tu.keystr(()) == ""
    params = {"foo": {"bar": {"baz": 1, "bat": [2, 3]}}}
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(params)] == [
        "['foo']['bar']['bat'][0]", "['foo']['bar']['bat'][1]", "['foo']['bar']['baz']"]


def test_flatten_with_path_every_node_kind():
    tree = [1, {"x": Point(2, 3)}, collections.OrderedDict(b=4, a=5), Box(6, (7,)),
            Keyed(8, 9), Params(10, 11), None, collections.defaultdict(int, z=12)]
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert [x for _, x in pairs] == list(range(1, 13))
    assert treedef == tu.tree_structure(tree)
    assert [tu.keystr(p) for p, _ in pairs] == [
        "[0]", "[1]['x'].x", "[1]['x'].y", "[2]['b']", "[2]['a']",
        "[3][<flat index 0>]", "[3][<flat index 1>][0]", "[4].x", "[4]['why']",
        "[5].w", "[5].b", "[7]['z']"]
    assert pairs[0][0] == (SequenceKey(0),)
    assert jt.leaves_with_path([1, {"x": 3}]) == [
        ((SequenceKey(0),), 1), ((SequenceKey(1), DictKey("x")), 3)]


def test_flatten_with_path_is_leaf():
    pairs, treedef = tu.tree_flatten_with_path(
        {"a": [1, (2, 3)]}, is_leaf=lambda p, x: len(p) == 2, is_leaf_takes_path=True)
    assert pairs == [((DictKey("a"), SequenceKey(0)), 1), ((DictKey("a"), SequenceKey(1)), (2, 3))]
    assert repr(treedef) == "PyTreeDef({'a': [*, *]})"
    pairs = tu.tree_leaves_with_path({"a": [1, (2, 3)]}, is_leaf=lambda x: isinstance(x, tuple))
    assert [x for _, x in pairs] == [1, (2, 3)]


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": 1, "a": [2]}) == (([2], 1), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
    assert tu.flatten_one_level(collections.OrderedDict(b=1, a=2)) == ([1, 2], ("b", "a"))
    assert tu.flatten_one_level_with_keys({"b": 1, "a": [2]}) == (
        ((DictKey("a"), [2]), (DictKey("b"), 1)), ("a", "b"))
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)


def test_is_tree_node_and_all_leaves():
    assert [tu.is_tree_node(t) for t in (list, dict, type(None), Point, PointSub, Box,
                                         int, collections.Counter, Params)] == \
        [True, True, True, True, True, True, False, False, True]
    assert tu.all_leaves([1, "a", np.ones(2)]) and not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([1, None])
    assert tu.all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple))
    assert tu.all_leaves(iter([1, 2]))


# ---------------------------------------------------------------- reduce, all, transpose, broadcast

def test_tree_reduce():
    assert jt.reduce(operator.add, [1, (2, 3), [4, 5, 6]]) == 21
    assert tu.tree_reduce(operator.add, [1, (2, 3)], 10) == 16
    assert tu.tree_reduce(operator.add, [], 7) == 7
    collected = tu.tree_reduce(lambda a, b: a + [b], [(1, 2), 3], [],
                               is_leaf=lambda x: isinstance(x, tuple))
    assert collected == [(1, 2), 3]
    with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
        tu.tree_reduce(operator.add, [])
    assert jt.reduce_associative(lambda a, b: f"({a}+{b})", [1, 2, 3, 4, 5]) == "((1+2)+(3+(4+5)))"
    assert jt.reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        jt.reduce_associative(operator.add, [])


def test_tree_all():
    assert jt.all([True, {"a": True, "b": (True, True)}]) is True
    assert jt.all([False, (True, False)]) is False
    assert tu.tree_all([]) is True and tu.tree_all(None) is True
    assert tu.tree_all([(1,), 0], is_leaf=lambda x: isinstance(x, tuple)) is False
    assert tu.tree_all([[]], is_leaf=lambda x: x == []) is False


def test_tree_transpose():
    tree = [(1, 2, 3), (4, 5, 6)]
    outer, inner = jt.structure(["*", "*"]), jt.structure(("*", "*", "*"))
    assert jt.transpose(outer, inner, tree) == ([1, 4], [2, 5], [3, 6])
    assert jt.transpose(outer, None, tree) == ([1, 4], [2, 5], [3, 6])
    out = jt.transpose(jt.structure({"a": 0, "b": 0}), None, {"a": [1, 2], "b": [3, 4]})
    assert out == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    with pytest.raises(TypeError) as info:
        jt.transpose(outer, jt.structure((0, 0)), tree)
    assert str(info.value) == ("Mismatch\nPyTreeDef([(*, *, *), (*, *, *)])\n != \n"
                               "PyTreeDef([(*, *), (*, *)])")


def test_tree_broadcast():
    assert jt.broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == (1, {"a": 2, "b": 2}, (3, 3))
    assert tree_errors.broadcast_prefix((1, [2]), (0, [(0, 0)])) == [1, 2, 2]
    with pytest.raises(ValueError, match=r"different lengths of tuple at key path\n"
                       r"    broadcast_prefix prefix_tree\n"):
        jt.broadcast((1, 2), (0, 1, 2))


def test_prefix_and_equality_errors():
    errors = tree_errors.prefix_errors({"a": (1, 2)}, {"a": (1, 2, 3)})
    assert len(errors) == 1
    assert str(errors[0]("in_axes")).startswith(
        "pytree structure error: different lengths of tuple at key path\n    in_axes['a']\n")
    assert tree_errors.prefix_errors((1, [2]), (1, [2])) == []
    assert list(tree_errors.equality_errors((1, [2]), (1, [2, 3]))) == [
        ((SequenceKey(1),), "list of length 1", "list of length 2", "the lengths do not match")]
    assert list(tree_errors.equality_errors({"a": 1}, {"a": 1, "b": 2})) == [
        ((), "<class 'dict'> with 1 child", "<class 'dict'> with 2 children",
         "the numbers of children do not match, with the symmetric difference of key sets: {'b'}")]


# ---------------------------------------------------------------- jax.tree namespace and speed

def test_jax_tree_namespace():
    assert sorted(n for n in dir(jt) if not n.startswith("_")) == sorted([
        "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
        "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
        "transpose", "unflatten"])
    vals, treedef = jt.flatten([1, (2, 3), [4, 5]])
    assert vals == [1, 2, 3, 4, 5] and repr(treedef) == "PyTreeDef([*, (*, *), [*, *]])"
    assert jt.unflatten(treedef, [100, 200, 300, 400, 500]) == [100, (200, 300), [400, 500]]
    assert jt.leaves([1, (2, 3), [4, 5]]) == [1, 2, 3, 4, 5]
    path_vals, _ = jt.flatten_with_path([1, {"x": 3}])
    assert path_vals == [((SequenceKey(0),), 1), ((SequenceKey(1), DictKey("x")), 3)]


def test_flatten_is_fast():
    tree = {"a": (np.float32(1), np.float32(2)), "b": [np.float32(3), np.float32(4)]}
    tu.tree_flatten(tree)
    per_call = min(timeit.repeat(lambda: tu.tree_flatten(tree), number=500, repeat=20)) / 500
    assert per_call < 50e-6, f"tree_flatten took {per_call * 1e6:.1f} us"  # ~3 us unloaded


# ---------------------------------------------------------------- against real JAX

_DIFF_TREES = [
    None, (None,), (), [()], (1, 2), ((1, "foo"), ["bar", (3, None, 7)]), {"a": 1, "b": 2},
    {"b": [1, {"c": 2}], "a": (3,)}, Point(1, (2, 3)), collections.OrderedDict(z=1, a=2),
    collections.defaultdict(list, {"b": 1, "a": [2, 3]}), [[[[]]]], {1: {2: [3]}, 0: ()}, 5,
]


@pytest.mark.needs_jax
@pytest.mark.parametrize("tree", _DIFF_TREES)
def test_matches_jax_flatten(tree):
    jax_tu = pytest.importorskip("jax.tree_util")
    leaves, treedef = tu.tree_flatten(tree)
    jax_leaves, jax_treedef = jax_tu.tree_flatten(tree)
    assert leaves == jax_leaves
    assert repr(treedef) == repr(jax_treedef)
    assert treedef.num_leaves == jax_treedef.num_leaves
    assert treedef.num_nodes == jax_treedef.num_nodes
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(tree)] == \
        [jax_tu.keystr(p) for p, _ in jax_tu.tree_leaves_with_path(tree)]


@pytest.mark.needs_jax
@pytest.mark.parametrize("a, b", [
    ((1, 2), (1, 2, 3)), ([1, 2], [1]), ({"a": 1}, {"b": 1}), ({"a": 1, "b": 2}, {"a": 1}),
    ((1, 2), [1, 2]), ((None, 2), (1, 2)), ({"a": [1, (2, 3)]}, {"a": [2, (3, 4, 5)]}),
    (Point(1, 2), Point2(1, 2)),
    (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2)),
])
def test_matches_jax_errors(a, b):
    jax_tu = pytest.importorskip("jax.tree_util")

    def message(module, fn):
        with pytest.raises(ValueError) as info:
            fn(module)
        return str(info.value)
    up_to = lambda m: m.tree_structure(a).flatten_up_to(b)
    mapped = lambda m: m.tree_map(lambda x, y: x, a, b)
    assert message(tu, up_to) == message(jax_tu, up_to)
    assert message(tu, mapped) == message(jax_tu, mapped)


def test_named_tuple_with_its_own_len() -> None:
    """A named tuple's children are its fields even when the class defines __len__ (as
    jax.scipy.spatial.transform.Rotation does): flatten with keys and map over two trees."""
    from typing import NamedTuple

    class Batch(NamedTuple):
        values: object
        label: object

        def __len__(self) -> int:
            return 7

    tree = Batch(np.zeros(3), 1)
    assert [tu.keystr(path) for path, _ in tu.tree_flatten_with_path(tree)[0]] == \
        [".values", ".label"]
    assert tu.tree_map(lambda a, b: b, tree, Batch(2, 3)) == Batch(2, 3)
    assert tu.tree_leaves(Batch(0, 1), is_leaf=lambda x: x is None) == [0, 1]
    with pytest.raises(ValueError, match="pytree structure error: different types"):
        tu.tree_map(lambda a, b: b, Batch(0, 1), (2, 3))
