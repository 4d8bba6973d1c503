"""Sharding propagation (`hlo/passes/sharding_propagation.py`): from argument and result
shardings, a sharding for every value of lowered programs, forward and backward."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.hlo.passes.sharding_propagation import ShardingMismatchError, propagate
from justjax._src.hlo.sharding import MeshShape, TensorSharding

MESH = MeshShape.iota([("a", 2), ("b", 2)])
F32 = np.float32


def _lowered(f, *shapes):
    return jax.jit(f).lower(*[jax.ShapeDtypeStruct(s, F32) for s in shapes]).compiler_ir()


def _spec(*dims, mesh=MESH):
    return TensorSharding(mesh, tuple(tuple(d) if isinstance(d, tuple) else
                                      ((d,) if d else ()) for d in dims))


def _run(f, shapes, args=(), results=()):
    """Propagates from shardings of arguments (index, sharding) and results; returns the
    shardings of every argument and result."""
    module = _lowered(f, *shapes)
    main = module.main
    outs = main.body.terminator.operands
    seeds = {main.args[i]: s for i, s in args}
    seeds.update({outs[i]: s for i, s in results})
    found = propagate(main, seeds)
    return [found[a] for a in main.args], [found[o] for o in outs], found, main


def test_elementwise_forward_and_backward():
    args, outs, _, _ = _run(lambda x, y: jnp.tanh(x) * y + 1.0, [(4, 6), (4, 6)],
                            args=[(0, _spec("a", None))])
    assert outs == [_spec("a", None)]
    # y, read next to x's split, is split the same way.
    assert args[1] == _spec("a", None)


def test_dot_takes_rows_from_one_operand_and_columns_from_the_other():
    args, outs, _, _ = _run(lambda x, w: x @ w, [(8, 4), (4, 6)],
                            args=[(0, _spec("a", None)), (1, _spec(None, "b"))])
    assert outs == [_spec("a", "b")]


def test_contracted_axes_leave_the_result():
    _, outs, _, _ = _run(lambda x, w: x @ w, [(8, 4), (4, 6)],
                         args=[(0, _spec(None, "a")), (1, _spec("a", None))])
    assert outs == [_spec(None, None)]


def test_batch_dimensions_of_a_dot():
    _, outs, _, _ = _run(lambda x, y: jnp.einsum("bij,bjk->bik", x, y), [(4, 2, 3), (4, 3, 5)],
                         args=[(0, _spec("a", None, None))])
    assert outs == [_spec("a", None, None)]


def test_reduce_keeps_the_kept_dimensions():
    _, outs, _, _ = _run(lambda x: jnp.sum(x, axis=0), [(4, 6)], args=[(0, _spec("a", "b"))])
    assert outs == [_spec("b")]


def test_broadcast_carries_the_operand_dimension():
    _, outs, _, _ = _run(lambda v: jnp.broadcast_to(v, (3, 8)) * 2.0, [(8,)],
                         args=[(0, _spec("a"))])
    assert outs == [_spec(None, "a")]


def test_result_sharding_flows_backward_to_the_arguments():
    args, _, _, _ = _run(lambda x: jnp.exp(x).T, [(4, 6)], results=[(0, _spec("b", "a"))])
    assert args == [_spec("a", "b")]


@pytest.mark.parametrize("spec,want", [
    (("a",), [_spec("a", None)]),             # (8@a, 3) -> 24@a -> (2@a, 12)
    ((("a", "b"),), [_spec(None, None)]),     # 4 blocks do not divide the 2 rows
])
def test_reshape_carries_a_split_through_merges_and_splits(spec, want):
    _, outs, found, main = _run(lambda x: x.reshape(24).reshape(2, 12), [(8, 3)],
                                args=[(0, _spec(spec[0], None))])
    merged = next(op.result for op in main.body.ops if op.result.type.shape == (24,))
    assert found[merged] == TensorSharding(MESH, (spec[0] if isinstance(spec[0], tuple)
                                                  else (spec[0],),))
    assert outs == want


def test_ops_without_a_rule_are_replicated():
    _, outs, _, _ = _run(lambda x: jnp.sort(x, axis=0), [(4, 6)], args=[(0, _spec("a", None))])
    assert outs == [_spec(None, None)]


def test_arguments_keep_their_shardings():
    args, outs, _, _ = _run(lambda x, y: x + y, [(4, 6), (4, 6)],
                            args=[(0, _spec("a", None)), (1, _spec(None, "b"))])
    assert args == [_spec("a", None), _spec(None, "b")]
    assert outs == [_spec("a", "b")]


def test_shardings_over_different_meshes_are_an_error():
    other = MeshShape.iota([("x", 4)])
    with pytest.raises(ShardingMismatchError, match="one mesh"):
        _run(lambda x, y: x + y, [(4, 6), (4, 6)],
             args=[(0, _spec("a", None)), (1, _spec("x", None, mesh=other))])


def test_nothing_sharded_gives_nothing():
    module = _lowered(lambda x: x + 1, (4,))
    assert propagate(module.main, {}) == {}


def test_reshape_to_a_leading_dimension_of_one_keeps_the_split():
    """A bias f32[32] reshaped to f32[1, 32] (as a broadcast's transpose does) stays split."""
    _, outs, _, _ = _run(lambda b: b.reshape(1, 32) * 2.0, [(32,)], args=[(0, _spec("a"))])
    assert outs == [_spec(None, "a")]
