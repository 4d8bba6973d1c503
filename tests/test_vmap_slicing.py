"""vmap of the slicing primitives (`_src/lax/slicing.py`,
`_src/lax/gather_scatter.py`) and of jnp indexing.

Batched results are compared with the per-example results stacked, for every combination of
batched operand / indices / updates, with out-of-bounds indices under each mode. The golden
jaxprs were printed by real JAX 0.10.2; the `needs_jax` test at the end recomputes them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.interpreters import batching

GDN = lax.GatherDimensionNumbers
SDN = lax.ScatterDimensionNumbers
ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
ROWS_BACK = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
                scatter_dims_to_operand_dims=(0,))
POINTS = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
POINTS_BACK = SDN(update_window_dims=(), inserted_window_dims=(0, 1),
                  scatter_dims_to_operand_dims=(0, 1))
WINDOWS = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(1, 0))
WINDOWS_BACK = SDN(update_window_dims=(1, 2), inserted_window_dims=(),
                   scatter_dims_to_operand_dims=(1, 0))
# Dimension numbers that already pair a batch dim of operand and indices.
PAIRED = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
PAIRED_BACK = SDN(update_window_dims=(), inserted_window_dims=(1,),
                  scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                  scatter_indices_batching_dims=(0,))
SCATTERS = [lax.scatter, lax.scatter_add, lax.scatter_sub, lax.scatter_mul, lax.scatter_min,
            lax.scatter_max]
B = 4


def _requires_rules(*names: str) -> None:
    """Skips while another part of vmap this test goes through has no batching rule yet."""
    present = {p.name for p in batching.primitive_batchers}
    missing = [n for n in names if n not in present]
    if missing:
        pytest.skip(f"batching rules not written yet for {missing}")


def _stack_axis(values: Sequence[np.ndarray], axis: int | None) -> np.ndarray:
    return values[0] if axis is None else np.stack(values, axis=axis)


def _check_vmap(fun: Callable, examples: Sequence[Sequence[np.ndarray]],
                in_axes: Sequence[int | None], out_axes: int = 0) -> None:
    """vmap(fun) on the examples stacked along `in_axes` equals fun per example, stacked."""
    examples = [[jnp.asarray(a) for a in e] for e in examples]
    for example in examples[1:]:
        for i, axis in enumerate(in_axes):
            if axis is None:
                example[i] = examples[0][i]
    expected = np.stack([np.asarray(fun(*e)) for e in examples], axis=out_axes)
    batched = [jnp.asarray(_stack_axis([np.asarray(e[i]) for e in examples], axis))
               for i, axis in enumerate(in_axes)]
    got = justjax.vmap(fun, in_axes=tuple(in_axes), out_axes=out_axes)(*batched)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(got), expected)


def _examples(rng: np.random.Generator, makers: Sequence[Callable], count: int = B) -> list:
    return [[make(rng) for make in makers] for _ in range(count)]


def _floats(*shape: int) -> Callable:
    return lambda rng: rng.integers(-9, 10, shape).astype(np.float32)


def _ints(low: int, high: int, *shape: int, dtype: Any = np.int32) -> Callable:
    return lambda rng: rng.integers(low, high + 1, shape).astype(dtype)


AXIS_COMBOS_2 = [(0, None), (None, 0), (1, None), (None, 1), (0, 0), (2, 1), (-1, 0)]
AXIS_COMBOS_3 = [(0, None, None), (None, 0, None), (None, None, 0), (None, None, 1),
                 (1, 0, None), (None, 1, 2), (0, None, 1), (2, 0, 0), (0, 1, -1)]


# -- gather ------------------------------------------------------------------------------------

GATHERS = {
    "rows": (ROWS, (1, 3), (5, 3), (4, 1), -3, 7),
    "points": (POINTS, (1, 1), (4, 3), (5, 2), -1, 4),
    "windows": (WINDOWS, (2, 3), (5, 6), (3, 2), -2, 6),
    "paired": (PAIRED, (1, 1), (3, 4), (3, 1), -1, 4),
}
GATHER_MODES = [dict(mode="clip"), dict(mode="fill"), dict(mode="fill", fill_value=-2.5),
                dict(mode="promise_in_bounds"), dict(mode="clip", unique_indices=True,
                                                     indices_are_sorted=True)]


@pytest.mark.parametrize("kind", sorted(GATHERS))
@pytest.mark.parametrize("mode", range(len(GATHER_MODES)))
@pytest.mark.parametrize("in_axes", AXIS_COMBOS_2)
def test_gather(kind: str, mode: int, in_axes: tuple) -> None:
    dn, sizes, operand_shape, indices_shape, low, high = GATHERS[kind]
    kwargs = GATHER_MODES[mode]
    if in_axes[0] is not None and in_axes[0] > len(operand_shape) or \
            in_axes[1] is not None and in_axes[1] > len(indices_shape):
        pytest.skip("axis out of range")
    rng = np.random.default_rng(mode * 7 + len(kind))
    examples = _examples(rng, [_floats(*operand_shape), _ints(low, high, *indices_shape)])
    _check_vmap(lambda x, i: lax.gather(x, i, dn, sizes, **kwargs), examples, in_axes)


def test_gather_out_axes_and_nesting() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    i = rng.integers(-2, 7, (4, 6, 1)).astype(np.int32)

    def take(x, i):
        return lax.gather(x, i, ROWS, (1, 3), mode="fill", fill_value=0.5)

    got = justjax.vmap(justjax.vmap(take, in_axes=(None, 0)), in_axes=(0, None), out_axes=2)(x, i)
    want = np.stack([np.stack([np.asarray(take(x[a], i[b])) for b in range(4)])
                     for a in range(2)], axis=2)
    np.testing.assert_array_equal(np.asarray(got), want)


# -- scatter -----------------------------------------------------------------------------------

SCATTER_KINDS = {
    "rows": (ROWS_BACK, (5, 3), (4, 1), (4, 3), -1, 5),
    "points": (POINTS_BACK, (4, 3), (6, 2), (6,), 0, 3),
    "windows": (WINDOWS_BACK, (5, 6), (3, 2), (3, 2, 3), -2, 6),
    "paired": (PAIRED_BACK, (3, 4), (3, 1), (3,), -1, 4),
}


@pytest.mark.parametrize("op", SCATTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", sorted(SCATTER_KINDS))
@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("in_axes", AXIS_COMBOS_3)
def test_scatter(op: Callable, kind: str, mode: str | None, in_axes: tuple) -> None:
    dn, operand_shape, indices_shape, updates_shape, low, high = SCATTER_KINDS[kind]
    shapes = (operand_shape, indices_shape, updates_shape)
    if any(a is not None and a > len(s) for a, s in zip(in_axes, shapes)):
        pytest.skip("axis out of range")
    rng = np.random.default_rng(len(kind))
    # Integers, so the order in which duplicates combine cannot change the result.
    examples = _examples(rng, [_ints(-5, 5, *operand_shape), _ints(low, high, *indices_shape),
                               _ints(-5, 5, *updates_shape)])
    _check_vmap(lambda x, i, u: op(x, i, u, dn, mode=mode), examples, in_axes)


@pytest.mark.parametrize("op", SCATTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("in_axes", AXIS_COMBOS_3)
def test_scatter_unique_indices(op: Callable, in_axes: tuple) -> None:
    # Every example's indices are distinct, but examples share them: the batched scatter must
    # still keep each example's writes apart.
    rng = np.random.default_rng(3)
    examples = [[rng.normal(size=(6, 2)).astype(np.float32),
                 rng.permutation(8)[:4].reshape(4, 1).astype(np.int32) - 1,
                 rng.normal(size=(4, 2)).astype(np.float32)] for _ in range(B)]
    _check_vmap(lambda x, i, u: op(x, i, u, ROWS_BACK, unique_indices=True,
                                   indices_are_sorted=False), examples, in_axes)


@pytest.mark.parametrize("in_axes", AXIS_COMBOS_2)
def test_scatter_apply(in_axes: tuple) -> None:
    rng = np.random.default_rng(4)
    examples = _examples(rng, [_floats(5, 3), _ints(-1, 5, 4, 1)])
    _check_vmap(lambda x, i: lax.scatter_apply(x, i, lambda v: v * 2 + 1, ROWS_BACK,
                                               update_shape=(4, 3)), examples, in_axes)


def test_scatter_unmapped_operand_mapped_updates_broadcasts_operand() -> None:
    x = np.arange(6, dtype=np.float32)
    updates = np.arange(12, dtype=np.float32).reshape(4, 3) * 10
    i = np.array([[0], [2], [4]], np.int32)
    got = justjax.vmap(lambda u: lax.scatter_add(x, i, u, SDN((), (0,), (0,))))(updates)
    want = np.stack([x + np.bincount(i[:, 0], u, 6) for u in updates])
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.float32))


# -- dynamic_slice / dynamic_update_slice ------------------------------------------------------

@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (1, 0, None), (2, 0, 0), (None, 0, 0)])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_dynamic_slice(in_axes: tuple, dtype: Any) -> None:
    # Out-of-bounds starts clamp; negative ones are not wrapped (allow_negative_indices=False)
    # so no other batching rules are involved.
    rng = np.random.default_rng(5)
    low = 0 if np.dtype(dtype).kind == "u" else -4
    examples = _examples(rng, [_floats(4, 5), _ints(low, 6, dtype=dtype),
                               _ints(low, 6, dtype=dtype)])
    _check_vmap(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3),
                                                  allow_negative_indices=False),
                examples, in_axes)


@pytest.mark.parametrize("in_axes", [(0, None, None, None), (None, 0, None, None),
                                     (None, None, 0, None), (None, 1, None, 0),
                                     (1, 2, 0, None), (0, 0, 0, 0), (None, None, 0, 0)])
def test_dynamic_update_slice(in_axes: tuple) -> None:
    rng = np.random.default_rng(6)
    examples = _examples(rng, [_floats(4, 5), _floats(2, 3), _ints(-3, 6), _ints(-3, 6)])
    _check_vmap(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j),
                                                            allow_negative_indices=False),
                examples, in_axes)


def test_dynamic_ops_on_rank0_operands() -> None:
    x = np.arange(5, dtype=np.float32)
    got = justjax.vmap(lambda v: lax.dynamic_slice(v, (), ()))(x)
    np.testing.assert_array_equal(np.asarray(got), x)
    got = justjax.vmap(lambda v, u: lax.dynamic_update_slice(v, u, ()),
                       in_axes=(0, None))(x, np.float32(7))
    np.testing.assert_array_equal(np.asarray(got), np.full(5, 7, np.float32))


def test_dynamic_slice_negative_indices_wrap() -> None:
    _requires_rules("select_n")
    rng = np.random.default_rng(7)
    examples = _examples(rng, [_floats(4, 5), _ints(-6, 6)])
    for in_axes in [(None, 0), (0, 0), (1, None)]:
        _check_vmap(lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)), examples, in_axes)
        _check_vmap(lambda x, i: lax.dynamic_update_slice(x, x[:2, :2] * 3, (i, 1)),
                    examples, in_axes)


# -- slice, rev, pad ---------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2])
def test_slice_and_rev(axis: int) -> None:
    rng = np.random.default_rng(8)
    examples = _examples(rng, [_floats(5, 6)])
    _check_vmap(lambda x: lax.slice(x, (1, 0), (4, 5), (2, 3)), examples, (axis,))
    _check_vmap(lambda x: lax.slice(x, (1, 2), (3, 2)), examples, (axis,))
    _check_vmap(lambda x: lax.rev(x, (1,)), examples, (axis,))
    _check_vmap(lambda x: lax.rev(x, (0, 1)), examples, (axis,), out_axes=1)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (1, 0), (2, 0), (-1, None)])
@pytest.mark.parametrize("config", [[(1, 2, 0), (0, 1, 1)], [(-1, -2, 1), (2, -3, 2)]])
def test_pad(in_axes: tuple, config: list) -> None:
    rng = np.random.default_rng(9)
    examples = _examples(rng, [_floats(4, 3), _floats()])
    _check_vmap(lambda x, v: lax.pad(x, v, config), examples, in_axes)


def test_pad_batched_bool_value() -> None:
    x = np.array([True, False, True])
    values = np.array([True, False])
    got = justjax.vmap(lambda v: lax.pad(x, v, [(1, 1, 1)]))(values)
    want = [[v, True, v, False, v, True, v] for v in values]
    np.testing.assert_array_equal(np.asarray(got), want)


# -- jnp indexing ------------------------------------------------------------------------------

def _indexing_cases() -> dict[str, tuple[Callable, list, tuple]]:
    rng = np.random.default_rng(10)
    x, i = _floats(3, 4), _ints(-3, 2)
    return {
        "get_batched_index": (lambda x, i: x[i], [x, i], (None, 0)),
        "get_both": (lambda x, i: x[i, 1:3], [x, i], (1, 0)),
        "get_array_index": (lambda x, i: x[:, i], [x, _ints(-4, 3, 2)], (None, 0)),
        "set": (lambda x, i: x.at[i].set(7.0), [x, i], (None, 0)),
        "set_mapped_updates": (lambda x, u: x.at[1].set(u), [x, _floats(4)], (None, 0)),
        "add_duplicates": (lambda x, i: x.at[i].add(1.5), [x, _ints(-3, 2, 5)], (None, 0)),
        "mul_both": (lambda x, i, u: x.at[i, 1:3].mul(u), [x, i, _floats(2)], (0, 0, 1)),
        "min_max": (lambda x, i: x.at[i].min(0.0).at[(i + 1) % 3].max(1.0), [x, i], (1, 0)),
        "get_fill": (lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0),
                     [x, _ints(-5, 5, 3)], (0, 0)),
        "take": (lambda x, i: jnp.take(x, i, axis=1), [x, _ints(-4, 3, 2)], (None, 0)),
        "take_fill": (lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-7.0),
                      [x, _ints(-1, 4, 2)], (0, None)),
        "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1),
                            [x, _ints(-4, 3, 3, 2)], (0, 0)),
        "take_along_axis_index": (lambda x, i: jnp.take_along_axis(x, i, axis=0),
                                  [x, _ints(0, 2, 2, 4)], (None, 1)),
    }, rng


@pytest.mark.parametrize("name", sorted(_indexing_cases()[0]))
def test_jnp_indexing(name: str) -> None:
    _requires_rules("select_n", "squeeze", "broadcast_in_dim", "reshape", "concatenate",
                    "convert_element_type", "transpose", "clamp")
    cases, rng = _indexing_cases()
    fun, makers, in_axes = cases[name]
    _check_vmap(fun, _examples(rng, makers), in_axes)


# -- composition with grad, nested vmap --------------------------------------------------------

def test_vmap_of_grad_and_grad_of_vmap() -> None:
    x = np.arange(12, dtype=np.float32).reshape(2, 6) / 4
    v = np.array([0.5, -2.0], np.float32)
    i = np.array([1, 4], np.int32)
    j = np.array([[[5]], [[0]]], np.int32)

    def loss(x, v, i, j):
        window = lax.dynamic_slice(x, (i,), (2,), allow_negative_indices=False)
        rows = lax.gather(x, j, GDN((), (0,), (0,)), (1,), mode="clip")
        updated = lax.scatter_add(x, j, rows * 3, SDN((), (0,), (0,)))
        padded = lax.pad(x, v, [(1, 1, 1)])
        return (window ** 2).sum() + (updated * x).sum() + (padded * padded).sum()

    grad = justjax.grad(loss, argnums=(0, 1))
    per_example = [np.stack([np.asarray(grad(x[k], v[k], i[k], j[k])[n]) for k in range(2)])
                   for n in range(2)]
    batched = justjax.vmap(grad)(x, v, i, j)
    summed = justjax.grad(lambda x, v: justjax.vmap(loss)(x, v, i, j).sum(), argnums=(0, 1))(x, v)
    for n in range(2):
        np.testing.assert_allclose(np.asarray(batched[n]), per_example[n], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(summed[n]), per_example[n], rtol=1e-6)
    nested = justjax.vmap(justjax.vmap(loss, in_axes=(None, 0, None, None)),
                          in_axes=(0, None, 0, 0))(x, v, i, j)
    want = [[loss(x[a], v[b], i[a], j[a]) for b in range(2)] for a in range(2)]
    np.testing.assert_allclose(np.asarray(nested), np.asarray(want), rtol=1e-6)


def test_jacobians_through_vmap() -> None:
    _requires_rules("convert_element_type", "broadcast_in_dim", "transpose")
    x = np.array([-1.0, 0.5, 2.0, 1.0], np.float32)
    idx = np.array([[1], [0], [1]], np.int32)

    def f(x):
        gathered = lax.gather(x, idx, GDN((), (0,), (0,)), (1,))
        return lax.scatter_max(x, idx, gathered * 2, SDN((), (0,), (0,)))

    forward = np.asarray(justjax.jacfwd(f)(x))
    reverse = np.asarray(justjax.jacrev(f)(x))
    np.testing.assert_allclose(forward, reverse)
    eps = 1e-3
    numeric = np.stack([(np.asarray(f(x + eps * e)) - np.asarray(f(x - eps * e))) / (2 * eps)
                        for e in np.eye(4, dtype=np.float32)], axis=1)
    np.testing.assert_allclose(forward, numeric, atol=1e-2)


# -- jaxprs as JAX prints them -----------------------------------------------------------------

def _golden_cases(jax: Any, lax: Any) -> dict[str, tuple[Callable, tuple]]:
    """name -> (batched function, arguments); written once for justjax and for real jax."""
    f32, i32 = np.float32, np.int32
    rows = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    rows_back = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))
    z = np.zeros
    cfg = [(1, 2, 0), (0, 1, 1)]

    def ds(x, i):
        return lax.dynamic_slice(x, (i, 1), (2, 2), allow_negative_indices=False)

    def dus(x, u, i):
        return lax.dynamic_update_slice(x, u, (i, 1), allow_negative_indices=False)

    return {
        "slice_axis1": (jax.vmap(lambda x: lax.slice(x, (1, 0), (3, 2)), in_axes=1),
                        (z((3, 5, 4), f32),)),
        "rev_axis1": (jax.vmap(lambda x: lax.rev(x, (0, 1)), in_axes=1), (z((3, 5, 4), f32),)),
        "pad_value_batched": (jax.vmap(lambda x, v: lax.pad(x, v, cfg), in_axes=(None, 0)),
                              (z((3, 4), f32), z(5, f32))),
        "pad_both_batched": (jax.vmap(lambda x, v: lax.pad(x, v, cfg), in_axes=(1, 0)),
                             (z((3, 5, 4), f32), z(5, f32))),
        "dynamic_slice_both": (jax.vmap(ds, in_axes=(1, 0)), (z((3, 5, 4), f32), z(5, i32))),
        "dynamic_slice_operand": (jax.vmap(ds, in_axes=(0, None)),
                                  (z((5, 3, 4), f32), np.int32(1))),
        "dynamic_update_slice_index": (jax.vmap(dus, in_axes=(None, None, 0)),
                                       (z((3, 4), f32), z((2, 2), f32), z(5, i32))),
        "dynamic_update_slice_all": (jax.vmap(dus, in_axes=(0, 2, 0)),
                                     (z((5, 3, 4), f32), z((2, 2, 5), f32), z(5, i32))),
        "gather_operand": (
            jax.vmap(lambda x, i: lax.gather(x, i, rows, (1, 4), mode="fill", fill_value=-1.0),
                     in_axes=(1, None)), (z((3, 5, 4), f32), z((2, 1), i32))),
        "gather_indices": (
            jax.vmap(lambda x, i: lax.gather(x, i, rows, (1, 4), mode="clip",
                                             unique_indices=True, indices_are_sorted=True),
                     in_axes=(None, 1)), (z((3, 4), f32), z((2, 5, 1), i32))),
        "gather_both": (jax.vmap(lambda x, i: lax.gather(x, i, rows, (1, 4)), in_axes=(2, 1)),
                        (z((3, 4, 5), f32), z((2, 5, 1), i32))),
        "gather_nested": (
            jax.vmap(jax.vmap(lambda x, i: lax.gather(x, i, rows, (1, 4)), in_axes=(0, None)),
                     in_axes=(None, 0)), (z((2, 3, 4), f32), z((5, 2, 1), i32))),
        "scatter_add_operand": (
            jax.vmap(lambda x, i, u: lax.scatter_add(x, i, u, rows_back),
                     in_axes=(1, None, None)),
            (z((3, 5, 4), f32), z((2, 1), i32), z((2, 4), f32))),
        "scatter_updates": (
            jax.vmap(lambda x, i, u: lax.scatter(x, i, u, rows_back, mode="clip"),
                     in_axes=(None, None, 2)),
            (z((3, 4), f32), z((2, 1), i32), z((2, 4, 5), f32))),
        "scatter_mul_indices": (
            jax.vmap(lambda x, i, u: lax.scatter_mul(x, i, u, rows_back, unique_indices=True),
                     in_axes=(None, 0, None)),
            (z((3, 4), f32), z((5, 2, 1), i32), z((2, 4), f32))),
        "scatter_max_all": (
            jax.vmap(lambda x, i, u: lax.scatter_max(x, i, u, rows_back), in_axes=(0, 1, 2)),
            (z((5, 3, 4), f32), z((2, 5, 1), i32), z((2, 4, 5), f32))),
    }


GOLDEN_JAXPRS = {
    'slice_axis1': """\
{ lambda ; a:f32[3,5,4]. let
    b:f32[2,5,2] = slice[
      limit_indices=(3, 5, 2)
      start_indices=(1, 0, 0)
      strides=None
    ] a
    c:f32[5,2,2] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    'rev_axis1': """\
{ lambda ; a:f32[3,5,4]. let
    b:f32[3,5,4] = rev[dimensions=(0, 2)] a
    c:f32[5,3,4] = transpose[permutation=(1, 0, 2)] b
  in (c,) }""",
    'pad_value_batched': """\
{ lambda ; a:f32[3,4] b:f32[5]. let
    c:f32[5,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a
    d:f32[5,6,8] = pad[padding_config=((0, 0, 0), (1, 2, 0), (0, 1, 1))] c 0.0:f32[]
    e:bool[5,3,4] = broadcast_in_dim True:bool[]
    f:bool[5,6,8] = pad[padding_config=((0, 0, 0), (1, 2, 0), (0, 1, 1))] e False:bool[]
    g:f32[5,6,8] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    h:f32[5,6,8] = select_n f g d
  in (h,) }""",
    'pad_both_batched': """\
{ lambda ; a:f32[3,5,4] b:f32[5]. let
    c:f32[6,5,8] = pad[padding_config=((1, 2, 0), (0, 0, 0), (0, 1, 1))] a 0.0:f32[]
    d:bool[3,5,4] = broadcast_in_dim True:bool[]
    e:bool[6,5,8] = pad[padding_config=((1, 2, 0), (0, 0, 0), (0, 1, 1))] d False:bool[]
    f:f32[6,5,8] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    g:f32[6,5,8] = select_n e f c
    h:f32[5,6,8] = transpose[permutation=(1, 0, 2)] g
  in (h,) }""",
    'dynamic_slice_both': """\
{ lambda ; a:f32[3,5,4] b:i32[5]. let
    c:i32[5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    d:i32[5,1] = broadcast_in_dim 1:i32[]
    e:i32[5,2] = concatenate[dimension=1] c d
    f:f32[5,3,4] = transpose[permutation=(1, 0, 2)] a
    g:f32[5,2,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1), np.int64(2)), collapsed_slice_dims=(), start_index_map=(np.int64(1), np.int64(2)), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 2, 2)
      unique_indices=True
    ] f e
  in (g,) }""",
    'dynamic_slice_operand': """\
{ lambda ; a:f32[5,3,4] b:i32[]. let
    c:i32[1] = broadcast_in_dim b
    d:i32[1] = broadcast_in_dim 1:i32[]
    e:i32[2] = concatenate[dimension=0] c d
    f:f32[5,2,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, np.int64(1), np.int64(2)), collapsed_slice_dims=(), start_index_map=(np.int64(1), np.int64(2)), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(5, 2, 2)
      unique_indices=True
    ] a e
  in (f,) }""",
    'dynamic_update_slice_index': """\
{ lambda ; a:f32[3,4] b:f32[2,2] c:i32[5]. let
    d:i32[5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:i32[5,1] = broadcast_in_dim 1:i32[]
    f:i32[5,2] = concatenate[dimension=1] d e
    g:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] a
    h:f32[5,2,2] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] b
    i:f32[5,3,4] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(1), np.int64(2)), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1), np.int64(2)), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] g f h
  in (i,) }""",
    'dynamic_update_slice_all': """\
{ lambda ; a:f32[5,3,4] b:f32[2,2,5] c:i32[5]. let
    d:i32[5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:i32[5,1] = broadcast_in_dim 1:i32[]
    f:i32[5,2] = concatenate[dimension=1] d e
    g:f32[5,2,2] = transpose[permutation=(2, 0, 1)] b
    h:f32[5,3,4] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(1), np.int64(2)), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1), np.int64(2)), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a f g
  in (h,) }""",
    'gather_operand': """\
{ lambda ; a:f32[3,5,4] b:i32[2,1]. let
    c:f32[5,3,4] = transpose[permutation=(1, 0, 2)] a
    d:f32[5,2,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, np.int64(2)), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=-1.0
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(5, 1, 4)
      unique_indices=False
    ] c b
  in (d,) }""",
    'gather_indices': """\
{ lambda ; a:f32[3,4] b:i32[2,5,1]. let
    c:i32[5,2,1] = transpose[permutation=(1, 0, 2)] b
    d:f32[5,2,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 4)
      unique_indices=False
    ] a c
  in (d,) }""",
    'gather_both': """\
{ lambda ; a:f32[3,4,5] b:i32[2,5,1]. let
    c:f32[5,3,4] = transpose[permutation=(2, 0, 1)] a
    d:i32[5,2,1] = transpose[permutation=(1, 0, 2)] b
    e:f32[5,2,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(2),), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1, 4)
      unique_indices=False
    ] c d
  in (e,) }""",
    'gather_nested': """\
{ lambda ; a:f32[2,3,4] b:i32[5,2,1]. let
    c:f32[5,2,2,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1, np.int64(3)), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(2, 1, 4)
      unique_indices=False
    ] a b
  in (c,) }""",
    'scatter_add_operand': """\
{ lambda ; a:f32[3,5,4] b:i32[2,1] c:f32[2,4]. let
    d:f32[5,3,4] = transpose[permutation=(1, 0, 2)] a
    e:f32[5,2,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] c
    f:f32[5,3,4] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0, np.int64(2)), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; g:f32[] h:f32[]. let i:f32[] = add g h in (i,) }
    ] d b e
  in (f,) }""",
    'scatter_updates': """\
{ lambda ; a:f32[3,4] b:i32[2,1] c:f32[2,4,5]. let
    d:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] a
    e:f32[5,2,4] = transpose[permutation=(2, 0, 1)] c
    f:f32[5,3,4] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0, np.int64(2)), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] d b e
  in (f,) }""",
    'scatter_mul_indices': """\
{ lambda ; a:f32[3,4] b:i32[5,2,1] c:f32[2,4]. let
    d:f32[5,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] a
    e:f32[5,2,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] c
    f:f32[5,3,4] = scatter-mul[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(2),), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; g:f32[] h:f32[]. let i:f32[] = mul g h in (i,) }
    ] d b e
  in (f,) }""",
    'scatter_max_all': """\
{ lambda ; a:f32[5,3,4] b:i32[2,5,1] c:f32[2,4,5]. let
    d:f32[5,2,4] = transpose[permutation=(2, 0, 1)] c
    e:i32[5,2,1] = transpose[permutation=(1, 0, 2)] b
    f:f32[5,3,4] = scatter-max[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(2),), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; g:f32[] h:f32[]. let i:f32[] = max g h in (i,) }
    ] a e d
  in (f,) }""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_JAXPRS))
def test_jaxpr_matches_jax(name: str) -> None:
    fun, args = _golden_cases(justjax, lax)[name]
    assert str(justjax.make_jaxpr(fun)(*args)) == GOLDEN_JAXPRS[name]


def test_golden_cases_are_all_recorded() -> None:
    assert sorted(GOLDEN_JAXPRS) == sorted(_golden_cases(justjax, lax))


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_JAXPRS))
def test_golden_jaxprs_match_real_jax(name: str) -> None:
    real_jax = pytest.importorskip("jax")
    fun, args = _golden_cases(real_jax, real_jax.lax)[name]
    assert str(real_jax.make_jaxpr(fun)(*args)) == GOLDEN_JAXPRS[name]
