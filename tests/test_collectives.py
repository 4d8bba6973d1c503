"""Collectives over named axes (`_src/lax/parallel.py`) under vmap: values, dtypes and Python
types, jaxprs printed as real JAX 0.10.2 prints them (golden texts recorded from JAX), errors
(JAX's classes and texts) and their composition with grad."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def _inside(f, x=X):
    """What `f()` returns when called inside a vmap over axis 'i' of size x.shape[0]."""
    seen = []

    def body(y):
        seen.append(f())
        return y

    jax.vmap(body, axis_name="i")(x)
    return seen[0]


def _raises(exc, text, f):
    with pytest.raises(exc) as info:
        f()
    assert str(info.value) == text


# ---------------------------------------------------------------------------------------------
# Values.

@pytest.mark.parametrize("in_axes", [0, 1, -1])
@pytest.mark.parametrize("name,reduce", [("psum", np.sum), ("pmean", np.mean),
                                         ("pmax", np.max), ("pmin", np.min)])
def test_reductions_over_the_batch(name, reduce, in_axes):
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    out = jax.vmap(lambda y: getattr(lax, name)(y, "i"), in_axes=in_axes, axis_name="i")(x)
    axis = in_axes % 2
    want = np.broadcast_to(np.expand_dims(reduce(x, axis=axis), 0),
                           (x.shape[axis], x.shape[1 - axis]))
    assert out.dtype == np.float32 and not out.weak_type
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_integer_and_bool_operands():
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    total = jax.vmap(lambda y: lax.psum(y, "i"), axis_name="i")(xi)
    assert total.dtype == np.int32
    np.testing.assert_array_equal(total, [[3, 5, 7], [3, 5, 7]])
    mean = jax.vmap(lambda y: lax.pmean(y, "i"), axis_name="i")(xi)
    assert mean.dtype == np.float32
    np.testing.assert_array_equal(mean, [[1.5, 2.5, 3.5]] * 2)
    count = jax.vmap(lambda y: lax.psum(y > 2, "i"), axis_name="i")(xi)
    assert count.dtype == np.int32
    np.testing.assert_array_equal(count, [[1, 1, 1]] * 2)
    any_ = jax.vmap(lambda y: lax.pmax(y > 2, "i"), axis_name="i")(xi)
    assert any_.dtype == np.bool_
    np.testing.assert_array_equal(any_, [[True] * 3] * 2)


def test_constants_give_the_axis_size_times_the_value():
    assert type(_inside(lambda: lax.psum(1, "i"))) is int
    assert _inside(lambda: lax.psum(1, "i")) == 2
    assert type(_inside(lambda: lax.psum(2.0, "i"))) is float
    assert _inside(lambda: lax.psum(2.0, "i")) == 4.0
    scalar = _inside(lambda: lax.psum(np.float32(2.0), "i"))
    assert type(scalar) is np.float32 and scalar == 4.0
    host = _inside(lambda: lax.psum(np.ones(3), "i"))
    assert type(host) is np.ndarray and host.dtype == np.float64
    np.testing.assert_array_equal(host, [2.0, 2.0, 2.0])
    device = _inside(lambda: lax.psum(jnp.ones(3), "i"))
    assert isinstance(device, jax.Array) and device.dtype == np.float32
    np.testing.assert_array_equal(device, [2.0, 2.0, 2.0])
    boolean = _inside(lambda: lax.psum(True, "i"))
    assert isinstance(boolean, jax.Array) and boolean.dtype == np.int32
    assert not boolean.weak_type and int(boolean) == 2
    assert _inside(lambda: lax.pmean(2.0, "i")) == 2.0
    assert type(_inside(lambda: lax.pmean(1, "i"))) is float
    assert _inside(lambda: lax.pmax(2.0, "i")) == 2.0
    np.testing.assert_array_equal(_inside(lambda: lax.psum(jnp.ones((2, 3)), ("i", 0))),
                                  [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(_inside(lambda: lax.psum(jnp.ones((2, 3)), 1)), [3.0, 3.0])


def test_axis_size():
    size = _inside(lambda: lax.axis_size("i"), np.zeros((5, 2)))
    assert type(size) is int and size == 5
    out = jax.vmap(lambda y: (lax.psum(2.0, "i"), lax.axis_size("i")), axis_name="i")(X)
    assert out[0].weak_type and out[0].dtype == np.float32
    np.testing.assert_array_equal(out[0], [4.0, 4.0])
    assert out[1].weak_type and out[1].dtype == np.int32
    np.testing.assert_array_equal(out[1], [2, 2])
    sizes = jax.vmap(jax.vmap(lambda y: lax.axis_size(("i", "j")), axis_name="j"),
                     axis_name="i")(X)
    np.testing.assert_array_equal(sizes, np.full((2, 3), 6))


def test_pytrees():
    out = _inside(lambda: lax.psum({"a": 1, "b": 2.0}, "i"))
    assert out == {"a": 2, "b": 4.0}
    both = jax.vmap(lambda y: lax.pmean((y, {"twice": 2 * y}), "i"), axis_name="i")(X)
    np.testing.assert_allclose(both[0], [[1.5, 2.5, 3.5]] * 2)
    np.testing.assert_allclose(both[1]["twice"], [[3.0, 5.0, 7.0]] * 2)
    gathered = jax.vmap(lambda y: lax.all_gather([y, y[0]], "i"), axis_name="i")(X)
    np.testing.assert_array_equal(gathered[0], np.broadcast_to(X, (2, 2, 3)))
    np.testing.assert_array_equal(gathered[1], [[0.0, 3.0]] * 2)


def test_nested_names():
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    both = jax.vmap(jax.vmap(lambda y: lax.psum(y, ("i", "j")), axis_name="j"),
                    axis_name="i")(x)
    np.testing.assert_allclose(both, np.broadcast_to(x.sum((0, 1)), x.shape), rtol=1e-5)
    outer = jax.vmap(jax.vmap(lambda y: lax.psum(y, "i"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(outer, np.broadcast_to(x.sum(0), x.shape), rtol=1e-5)
    inner = jax.vmap(jax.vmap(lambda y: lax.pmax(y, "j"), axis_name="j", in_axes=1),
                     axis_name="i")(x)
    np.testing.assert_allclose(inner, np.broadcast_to(x.max(2)[:, None], (2, 4, 3)))
    mixed = jax.vmap(jax.vmap(lambda y: lax.psum(y * y, ("j", 0)), axis_name="j",
                              in_axes=1), axis_name="i")(x)
    np.testing.assert_allclose(mixed, np.broadcast_to((x * x).sum((1, 2))[:, None], (2, 4)),
                               rtol=1e-5)
    products = jax.vmap(jax.vmap(lambda y: lax.psum(y, "i") * y, axis_name="i"),
                        axis_name="j")(X)
    np.testing.assert_array_equal(products, [[0.0, 3.0, 6.0], [36.0, 48.0, 60.0]])


def test_axis_index():
    idx = jax.vmap(lambda y: lax.axis_index("i"), axis_name="i")(np.zeros((4, 2)))
    assert idx.dtype == np.int32 and not idx.weak_type
    np.testing.assert_array_equal(idx, [0, 1, 2, 3])
    outer = jax.vmap(jax.vmap(lambda y: lax.axis_index("i"), axis_name="j"),
                     axis_name="i")(X)
    np.testing.assert_array_equal(outer, [[0, 0, 0], [1, 1, 1]])
    both = jax.vmap(jax.vmap(lambda y: lax.axis_index(("i", "j")), axis_name="j"),
                    axis_name="i")(X)
    np.testing.assert_array_equal(both, [[0, 1, 2], [3, 4, 5]])


@pytest.mark.parametrize("axis,tiled,in_axes", [(0, False, 0), (1, False, 0), (-1, False, 2),
                                                (0, True, 0), (1, True, 2), (-1, True, 1)])
def test_all_gather(axis, tiled, in_axes):
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    out = jax.vmap(lambda y: lax.all_gather(y, "i", axis=axis, tiled=tiled), axis_name="i",
                   in_axes=in_axes)(x)
    members = np.moveaxis(x, in_axes, 0)
    gathered = (np.concatenate(list(members), axis=axis) if tiled
                else np.stack(list(members), axis=axis))
    np.testing.assert_array_equal(out, np.broadcast_to(gathered, (len(members),) + gathered.shape))


def test_all_gather_of_an_unmapped_value_and_an_outer_name():
    s = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    out = jax.vmap(lambda y: lax.all_gather(s, "i", axis=1, tiled=True), axis_name="i")(X)
    np.testing.assert_array_equal(out, np.broadcast_to(np.concatenate([s, s], 1), (2, 4, 10)))
    outer = jax.vmap(jax.vmap(lambda y: lax.all_gather(y, "i"), axis_name="j"),
                     axis_name="i")(X)
    np.testing.assert_array_equal(outer, np.broadcast_to(X.T, (2, 3, 2)))


def test_psum_scatter():
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    tiled = jax.vmap(lambda y: lax.psum_scatter(y, "i", tiled=True), axis_name="i")(x)
    np.testing.assert_array_equal(tiled, [[4.0, 6.0], [8.0, 10.0]])
    square = np.arange(12.0, dtype=np.float32).reshape(2, 3, 2)
    nested = jax.vmap(jax.vmap(lambda y: lax.psum_scatter(y, "i"), axis_name="j"),
                      axis_name="i")(square)
    np.testing.assert_array_equal(nested, [[6.0, 10.0, 14.0], [8.0, 12.0, 16.0]])
    # Batched after the scatter dimension in an inner vmap (JAX's rule fails here).
    later = jax.vmap(jax.vmap(lambda y: lax.psum_scatter(y, "i"), axis_name="j", in_axes=1),
                     axis_name="i")(np.arange(12.0, dtype=np.float32).reshape(2, 2, 3))
    np.testing.assert_array_equal(later, [[6.0, 8.0, 10.0], [12.0, 14.0, 16.0]])
    s = np.ones((2, 5), np.float32)
    unmapped = jax.vmap(lambda y: lax.psum_scatter(s, "i"), axis_name="i")(X)
    np.testing.assert_array_equal(unmapped, np.full((2, 5), 2.0))


def test_positional_axes_outside_vmap():
    np.testing.assert_array_equal(lax.psum(X, 0), [3.0, 5.0, 7.0])
    assert float(lax.psum(X, (0, 1))) == 15.0
    np.testing.assert_array_equal(lax.psum(X, -1), [3.0, 12.0])  # eager: canonicalized
    np.testing.assert_array_equal(lax.pmax(X, 0), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(lax.pmin(X, 1), [0.0, 3.0])
    assert lax.psum(X, ()) is X


# ---------------------------------------------------------------------------------------------
# Differentiation.

def _psum_loss(y):
    return (lax.psum(y, "i") * y).sum()


def _pmean_loss(y):
    return (lax.pmean(y, "i") * jnp.sin(y)).sum()


def _gather_loss(y):
    return (lax.all_gather(y, "i") * jnp.cos(y)).sum()


# Values real JAX computes for both orders (vmap of grad, grad of vmap).
GRADS = {
    "psum": (_psum_loss, X, [[6.0, 10.0, 14.0], [6.0, 10.0, 14.0]]),
    "pmean": (_pmean_loss, X, [[1.57056, 1.3930899, -1.4813274],
                               [-1.4144287, -1.5917748, 0.9680042]]),
    "all_gather": (_gather_loss, X, [[0.0100075, -4.320696, -6.497566],
                                     [-0.4133525, 3.6706712, 6.5799856]]),
    "psum_scatter": (lambda y: (lax.psum_scatter(y, "i") ** 2).sum(),
                     np.arange(4.0, dtype=np.float32).reshape(2, 2), [[4.0, 8.0], [4.0, 8.0]]),
    "all_gather tiled": (lambda y: (lax.all_gather(y, "i", tiled=True) ** 2
                                    * jnp.arange(6.0)).sum(),
                         X, [[0.0, 4.0, 16.0], [36.0, 64.0, 100.0]]),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_vmap_of_grad(case):
    loss, x, want = GRADS[case]
    np.testing.assert_allclose(jax.vmap(jax.grad(loss), axis_name="i")(x), want, rtol=2e-6,
                               atol=1e-6)


@pytest.mark.parametrize("case", sorted(GRADS))
def test_grad_of_vmap(case):
    loss, x, want = GRADS[case]
    got = jax.grad(lambda x: jax.vmap(loss, axis_name="i")(x).sum())(x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_jacobians():
    f = jax.vmap(lambda y: lax.psum(y, "i") * y, axis_name="i")
    x = np.arange(2.0, dtype=np.float32)
    np.testing.assert_array_equal(jax.jacfwd(f)(x), [[1.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(jax.jacrev(f)(x), [[1.0, 0.0], [1.0, 2.0]])


def test_grad_of_positional_psum():
    np.testing.assert_array_equal(jax.grad(lambda y: lax.psum(y, 0).sum())(X), np.ones((2, 3)))
    np.testing.assert_array_equal(jax.grad(lambda y: lax.psum(y, (0, 1)) ** 2)(X),
                                  np.full((2, 3), 30.0))


def test_pmax_and_pmin_are_not_differentiable():
    text = "Differentiation rule for '{}' not implemented"
    _raises(NotImplementedError, text.format("pmax"), lambda: jax.vmap(
        jax.grad(lambda y: lax.pmax(y, "i").sum()), axis_name="i")(X))
    _raises(NotImplementedError, text.format("pmin"), lambda: jax.grad(
        lambda x: jax.vmap(lambda y: lax.pmin(y, "i").sum(), axis_name="i")(x).sum())(X))
    _raises(NotImplementedError, text.format("pmax"),
            lambda: jax.grad(lambda y: lax.pmax(y, 0).sum())(X))


# ---------------------------------------------------------------------------------------------
# Errors.

def _found(name, api):
    return (f"Found an unbound axis name: {name}. To fix this, please call {api} under "
            "`jax.shard_map`.")


def test_unbound_names():
    _raises(NameError, "unbound axis name: i", lambda: lax.psum(X, "i"))
    _raises(NameError, "unbound axis name: i", lambda: lax.psum(1, "i"))
    _raises(NameError, "unbound axis name: i", lambda: lax.all_gather(X, "i"))
    _raises(NameError, "unbound axis name: i", lambda: lax.axis_size("i"))
    _raises(NameError, _found("i", "psum"), lambda: lax.pmax(X, "i"))
    _raises(NameError, _found("i", "axis_index"), lambda: lax.axis_index("i"))
    _raises(NameError, _found("i", "psum"),
            lambda: jax.make_jaxpr(lambda x: lax.psum(x, "i"))(X))
    _raises(NameError, _found("i", "psum"),
            lambda: jax.make_jaxpr(lambda x: lax.pmin(x, "i"))(X))
    _raises(NameError, _found("i", "axis_index"),
            lambda: jax.make_jaxpr(lambda x: lax.axis_index("i"))(X))
    _raises(NameError, "unbound axis name: i",
            lambda: jax.make_jaxpr(lambda x: lax.all_gather(x, "i"))(X))


def test_names_unbound_inside_vmap():
    _raises(NameError, _found("j", "psum"),
            lambda: jax.vmap(lambda y: lax.psum(y, "j"), axis_name="i")(X))
    _raises(NameError, _found("j", "psum"), lambda: jax.vmap(lambda y: lax.psum(y, "j"))(X))
    _raises(NameError, _found("j", "axis_index"),
            lambda: jax.vmap(lambda y: lax.axis_index("j"), axis_name="i")(X))
    _raises(NameError, "unbound axis name: j",
            lambda: jax.vmap(lambda y: lax.psum(1, "j"), axis_name="i")(X))
    _raises(NameError, "unbound axis name: j",
            lambda: jax.vmap(lambda y: lax.all_gather(y, "j"), axis_name="i")(X))
    _raises(NameError, _found("j", "psum"), lambda: jax.make_jaxpr(
        jax.vmap(lambda y: lax.psum(y, "j"), axis_name="i"))(X))


def test_axis_index_groups():
    groups = [[0], [1]]
    vmap_text = ("axis_index_groups not supported in vmap collectives. Please open a feature "
                 "request!")
    _raises(NotImplementedError, vmap_text, lambda: jax.vmap(
        lambda y: lax.psum(y, "i", axis_index_groups=groups), axis_name="i")(X))
    _raises(NotImplementedError, vmap_text, lambda: jax.vmap(
        lambda y: lax.pmax(y, "i", axis_index_groups=groups), axis_name="i")(X))
    _raises(NotImplementedError, "axis_index_groups not supported in vmap", lambda: jax.vmap(
        lambda y: lax.all_gather(y, "i", axis_index_groups=groups), axis_name="i")(X))
    # A constant's sum over a group is the group size times the value.
    sizes = jax.vmap(lambda y: lax.psum(1, "i", axis_index_groups=groups), axis_name="i")(X)
    np.testing.assert_array_equal(sizes, [1, 1])
    _raises(ValueError, "axis_index_groups only supported for sums over just named axes",
            lambda: jax.vmap(lambda y: lax.psum(y, ("i", 0), axis_index_groups=groups),
                             axis_name="i")(X))
    _raises(ValueError, "axis_index_groups must cover all indices exactly once",
            lambda: jax.vmap(lambda y: lax.psum(y, "i", axis_index_groups=[[0], [0]]),
                             axis_name="i")(X))


def test_shape_errors():
    _raises(ValueError, "axis 3 is out of bounds for array of dimension 3",
            lambda: jax.vmap(lambda y: lax.all_gather(y, "i", axis=3), axis_name="i")(
                np.zeros((2, 3, 2))))
    _raises(ValueError, "axis 1 is out of bounds for array of dimension 1",
            lambda: jax.vmap(lambda y: lax.all_gather(y, "i", axis=1, tiled=True),
                             axis_name="i")(X))
    _raises(ValueError, "reduction axes (-1,) contains out-of-bounds indices for float32[2,3].",
            lambda: jax.make_jaxpr(lambda x: lax.psum(x, -1))(X))
    _raises(ValueError, "reduction axes (2,) contains out-of-bounds indices for float32[2,3].",
            lambda: jax.make_jaxpr(lambda x: lax.psum(x, 2))(X))
    _raises(ValueError, "axis 0 is out of bounds for array of dimension 0",
            lambda: lax.pmean(X, 0))
    _raises(AssertionError, "axis size doesn't match", lambda: jax.vmap(jax.vmap(
        lambda y: lax.all_gather(y, ("i", "j")), axis_name="j"), axis_name="i")(X))
    # JAX's vmap rule skips this check (and computes garbage); the primitive's error applies.
    _raises(ValueError, "reduce_scatter operand scatter dimension size 3 must match shard "
            "count 2", lambda: jax.vmap(lambda y: lax.psum_scatter(y, "i"), axis_name="i")(X))
    _raises(ValueError, "tiled reduce_scatter operand scatter dimension size 3 must be "
            "divisible by shard_count 2",
            lambda: jax.vmap(lambda y: lax.psum_scatter(y, "i", tiled=True), axis_name="i")(X))


# ---------------------------------------------------------------------------------------------
# pswapaxes and all_to_all (values, texts and messages read off JAX 0.10.2).

X4 = np.arange(4 ** 3, dtype=np.float32).reshape(4, 4, 4)


@pytest.mark.parametrize("axis,in_axes", [(0, 0), (1, 0), (0, 1)])
def test_pswapaxes_swaps_the_mapped_axis(axis, in_axes):
    got = jax.vmap(lambda v: lax.pswapaxes(v, "i", axis), axis_name="i", in_axes=in_axes)(X4)
    # Member k's row i along `axis` is member i's row k.
    per_member = np.moveaxis(X4, in_axes, 0)
    np.testing.assert_array_equal(np.asarray(got), np.swapaxes(per_member, 0, axis + 1))


def test_pswapaxes_of_a_pytree_and_its_gradient():
    out = jax.vmap(lambda v: lax.pswapaxes({"a": v, "b": (v * 2,)}, "i", 1), axis_name="i")(X4)
    np.testing.assert_array_equal(np.asarray(out["b"][0]), 2 * np.swapaxes(X4, 0, 2))
    weights = np.arange(64.0, dtype=np.float32).reshape(4, 4, 4)

    def total(v):
        return jnp.sum(jax.vmap(lambda u: lax.pswapaxes(u, "i", 1), axis_name="i")(v) * weights)

    # The transpose swaps back: the gradient is the weights swapped the same way.
    np.testing.assert_array_equal(np.asarray(jax.grad(total)(jnp.asarray(X4))),
                                  np.swapaxes(weights, 0, 2))


def test_pswapaxes_errors():
    _raises(ValueError, "all_to_all requires the size of the mapped axis axis_name to equal "
            "x.shape[split_axis], but they are 4 and 3 respectively.",
            lambda: jax.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(
                np.ones((4, 3, 4), np.float32)))
    _raises(NameError, "unbound axis name: i", lambda: lax.pswapaxes(jnp.ones(3), "i", 0))
    _raises(ValueError, "The size of all_to_all split_axis (3) has to be divisible by the size "
            "of the named axis i (4)", lambda: jax.vmap(
                lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(
                    np.ones((4, 3, 2), np.float32)))


A2A_GOLDEN = {
    "vmap pswapaxes": """\
{ lambda ; a:f32[4,4,4]. let
    b:f32[4,4,4,1] = reshape[
      dimensions=None
      new_sizes=(4, 4, 4, 1)
      sharding=None
    ] a
    c:f32[4,4,4,1] = transpose[permutation=(2, 1, 0, 3)] b
    d:f32[4,4,4] = reshape[dimensions=None new_sizes=(4, 4, 4) sharding=None] c
  in (d,) }""",
    "vmap pswapaxes in_axes=1": """\
{ lambda ; a:f32[4,4,4]. let
    b:f32[4,1,4,4] = reshape[
      dimensions=None
      new_sizes=(4, 1, 4, 4)
      sharding=None
    ] a
    c:f32[4,1,4,4] = transpose[permutation=(2, 1, 0, 3)] b
    d:f32[4,4,4] = reshape[dimensions=None new_sizes=(4, 4, 4) sharding=None] c
    e:f32[4,4,4] = transpose[permutation=(1, 0, 2)] d
  in (e,) }""",
    "vmap all_to_all 0 1": """\
{ lambda ; a:f32[4,4,4]. let
    b:f32[4,4,4,1] = broadcast_in_dim[
      broadcast_dimensions=(0, np.int64(1), np.int64(2))
    ] a
    c:f32[4,4,4,1] = transpose[permutation=(1, 2, 0, 3)] b
    d:f32[4,4,4] = reshape[dimensions=None new_sizes=(4, 4, 4) sharding=None] c
    e:f32[4,1,4,4] = reshape[
      dimensions=None
      new_sizes=(4, 1, 4, 4)
      sharding=None
    ] d
    f:f32[4,4,4] = squeeze[dimensions=(1,)] e
  in (f,) }""",
    "vmap all_to_all 1 0 tiled": """\
{ lambda ; a:f32[4,4,4]. let
    b:f32[16,4] = reshape[dimensions=None new_sizes=(16, 4) sharding=None] a
    c:f32[16,4,1] = reshape[dimensions=None new_sizes=(16, 4, 1) sharding=None] b
    d:f32[4,16,1] = transpose[permutation=(1, 0, 2)] c
  in (d,) }""",
    "staged inside vmap": """\
{ lambda ; a:f32[4,4]. let
    b:f32[4,4] = all_to_all[
      axis_index_groups=None
      axis_name=i
      concat_axis=1
      split_axis=1
      tiled=False
    ] a
    c:f32[4,4,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a
    d:f32[1,4,4] = all_to_all[
      axis_index_groups=None
      axis_name=i
      concat_axis=2
      split_axis=0
      tiled=False
    ] c
    e:f32[4,4] = squeeze[dimensions=(0,)] d
    f:f32[1,4,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a
    g:f32[4,4,1] = all_to_all[
      axis_index_groups=None
      axis_name=i
      concat_axis=0
      split_axis=2
      tiled=False
    ] f
    h:f32[4,4] = squeeze[dimensions=(2,)] g
    i:f32[1,16] = all_to_all[
      axis_index_groups=None
      axis_name=i
      concat_axis=1
      split_axis=0
      tiled=True
    ] a
  in (b, e, h, i) }""",

}


def _a2a_cases():
    return {
        "vmap pswapaxes": jax.vmap(lambda v: lax.pswapaxes(v, "i", 1), axis_name="i"),
        "vmap pswapaxes in_axes=1": jax.vmap(lambda v: lax.pswapaxes(v, "i", 0),
                                             axis_name="i", in_axes=1),
        "vmap all_to_all 0 1": jax.vmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i"),
        "vmap all_to_all 1 0 tiled": jax.vmap(
            lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), axis_name="i"),
    }


@pytest.mark.parametrize("name", sorted(set(A2A_GOLDEN) - {"staged inside vmap"}))
def test_all_to_all_jaxprs_match_jax(name):
    assert str(jax.make_jaxpr(_a2a_cases()[name])(X4)) == A2A_GOLDEN[name]


def test_all_to_all_staged_inside_vmap_matches_jax():
    texts = []

    def body(u):
        texts.append(str(jax.make_jaxpr(lambda w: (
            lax.pswapaxes(w, "i", 1), lax.all_to_all(w, "i", 0, 1), lax.all_to_all(w, "i", 1, 0),
            lax.all_to_all(w, "i", 0, 1, tiled=True)))(u)))
        return u

    jax.vmap(body, axis_name="i")(X4)
    assert texts == [A2A_GOLDEN["staged inside vmap"]]


# ---------------------------------------------------------------------------------------------
# Printed jaxprs, against the text real JAX printed for the same programs.

def jaxpr_cases(jax, lax, jnp, np):
    """name -> (function, example args) for make_jaxpr comparisons, plus a function to vmap
    that stages collectives with make_jaxpr inside the vmap (their texts land in `texts`).
    GOLDEN holds what real JAX printed running this same function with its own modules."""
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x3 = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    vmap = jax.vmap

    def vgrad_psum(y):
        return (lax.psum(y, "i") * y).sum()

    def gvmap_psum(x):
        return vmap(lambda y: (lax.psum(y, "i") * y).sum(), axis_name="i")(x).sum()

    def vgrad_axis_index(y):
        return (lax.axis_index("i") * y).sum()

    def staged_inside(y):
        # make_jaxpr inside the vmap: the collectives are staged with their names.
        def body(z):
            return (lax.all_gather(z, "i"), lax.all_gather(z, "i", axis=1, tiled=True),
                    lax.axis_index("i"), lax.psum(z, "i"), lax.pmin(z, "i"),
                    lax.pmean(z, "i"), lax.psum_scatter(lax.all_gather(z, "i"), "i"),
                    lax.psum_scatter(z, "i", tiled=True, scatter_dimension=0))
        texts.append(str(jax.make_jaxpr(body)(np.ones((4, 2), np.float32))))
        texts.append(str(jax.make_jaxpr(jax.grad(
            lambda z: lax.all_gather(z, "i", axis=1, tiled=True).sum()))(
                np.ones((4, 2), np.float32))))
        texts.append(str(jax.make_jaxpr(jax.grad(lambda z: lax.pmean(z, "i").sum()))(
            np.ones((4, 2), np.float32))))
        texts.append(str(jax.make_jaxpr(jax.grad(lambda z: lax.psum(z, ("i", 0)).sum()))(
            np.ones((4, 2), np.float32))))
        texts.append(str(jax.make_jaxpr(jax.grad(lambda z: lax.psum_scatter(z, "i").sum()))(
            np.ones((2, 2), np.float32))))
        return y

    texts = []
    cases = {
        "psum": (vmap(lambda y: lax.psum(y, "i"), axis_name="i"), (x,)),
        "psum in_axes=1": (vmap(lambda y: lax.psum(y, "i"), axis_name="i", in_axes=1), (x,)),
        "pmean": (vmap(lambda y: lax.pmean(y, "i"), axis_name="i"), (x,)),
        "pmax": (vmap(lambda y: lax.pmax(y, "i"), axis_name="i"), (x,)),
        "pmin nested outer name": (vmap(vmap(lambda y: lax.pmin(y, "i"), axis_name="j",
                                             in_axes=1), axis_name="i"), (x3,)),
        "psum of a constant": (vmap(lambda y: lax.psum(1, "i"), axis_name="i"), (x,)),
        "axis_index": (vmap(lambda y: lax.axis_index("i"), axis_name="i"), (x,)),
        "axis_index outer name": (vmap(vmap(lambda y: lax.axis_index("i"), axis_name="j"),
                                       axis_name="i"), (x,)),
        "axis_index of two names": (vmap(vmap(lambda y: lax.axis_index(("i", "j")),
                                              axis_name="j"), axis_name="i"), (x,)),
        "all_gather": (vmap(lambda y: lax.all_gather(y, "i"), axis_name="i"), (x,)),
        "all_gather tiled": (vmap(lambda y: lax.all_gather(y, "i", tiled=True),
                                  axis_name="i"), (x,)),
        "all_gather axis=1": (vmap(lambda y: lax.all_gather(y, "i", axis=1), axis_name="i"),
                              (x3,)),
        "all_gather tiled in_axes=2": (vmap(lambda y: lax.all_gather(y, "i", axis=1,
                                                                     tiled=True),
                                            axis_name="i", in_axes=2),
                                       (np.ones((4, 5, 2), np.float32),)),
        "all_gather outer name": (vmap(vmap(lambda y: lax.all_gather(y, "i"), axis_name="j"),
                                       axis_name="i"), (x,)),
        "psum over two names": (vmap(vmap(lambda y: lax.psum(y, ("i", "j")), axis_name="j"),
                                     axis_name="i"), (x,)),
        "psum outer name": (vmap(vmap(lambda y: lax.psum(y, "i"), axis_name="j"),
                                 axis_name="i"), (x,)),
        "psum positional": (lambda y: lax.psum(y, 0), (x,)),
        "psum positional in vmap": (vmap(lambda y: lax.psum(y, 0), axis_name="i", in_axes=1),
                                    (x,)),
        "psum named and positional": (vmap(lambda y: lax.psum(y, ("i", 0)), axis_name="i",
                                           in_axes=1), (x,)),
        "psum bool": (lambda y: lax.psum(y, 0), (x > 2,)),
        "psum unmapped scalar": (lambda s, y: vmap(lambda z: lax.psum(s, "i") + z,
                                                   axis_name="i")(y), (1.0, x)),
        "psum unmapped product": (lambda s, y: vmap(lambda z: lax.psum(s * z.sum(), "i"),
                                                    axis_name="i")(y),
                                  (np.ones(4, np.float32), x)),
        "pmax unmapped": (lambda s, y: vmap(lambda z: lax.pmax(s, "i") + z, axis_name="i")(y),
                          (1.0, x)),
        "psum unmapped named and positional": (
            lambda s, y: vmap(lambda z: lax.psum(s, ("i", 0)), axis_name="i")(y),
            (np.ones((4, 5), np.float32), x)),
        "all_gather unmapped": (lambda s, y: vmap(lambda z: lax.all_gather(s, "i", axis=1),
                                                  axis_name="i")(y),
                                (np.ones((4, 5), np.float32), x)),
        "all_gather unmapped tiled": (
            lambda s, y: vmap(lambda z: lax.all_gather(s, "i", axis=1, tiled=True),
                              axis_name="i")(y), (np.ones((4, 5), np.float32), x)),
        "psum_scatter": (vmap(vmap(lambda y: lax.psum_scatter(y, "i"), axis_name="j"),
                              axis_name="i"), (np.arange(12.0, dtype=np.float32).reshape(2, 3, 2),)),
        "psum_scatter tiled": (vmap(lambda y: lax.psum_scatter(y, "i", tiled=True),
                                    axis_name="i"), (np.arange(8.0, dtype=np.float32).reshape(2, 4),)),
        "psum_scatter unmapped": (lambda s, y: vmap(lambda z: lax.psum_scatter(s, "i"),
                                                    axis_name="i")(y),
                                  (np.ones((2, 5), np.float32), x)),
        "vmap of grad of psum": (vmap(jax.grad(vgrad_psum), axis_name="i"), (x,)),
        "grad of vmap of psum": (jax.grad(gvmap_psum), (x,)),
        "grad of positional psum": (jax.grad(lambda y: lax.psum(y, 0).sum()), (x,)),
        "vmap of grad of axis_index": (vmap(jax.grad(vgrad_axis_index), axis_name="i"), (x,)),
    }
    return cases, staged_inside, texts


GOLDEN = {
    'psum': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
    c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
  in (c,) }""",
    'psum in_axes=1': """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
    c:f32[2] = psum[axes=(0,) axis_index_groups=None] b
    d:f32[3,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
  in (d,) }""",
    'pmean': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
    c:f32[3] = div b 2.0:f32[]
    d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
  in (d,) }""",
    'pmax': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = pmax[axes=(0,) axis_index_groups=None] a
    c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
  in (c,) }""",
    'pmin nested outer name': """{ lambda ; a:f32[2,3,4]. let
    b:f32[3,4] = pmin[axes=(0,) axis_index_groups=None] a
    c:f32[4,3] = transpose[permutation=(1, 0)] b
    d:f32[2,4,3] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] c
  in (d,) }""",
    'psum of a constant': """{ lambda ; a:f32[2,3]. let b:i32[2] = broadcast_in_dim 2:i32[] in (b,) }""",
    'axis_index': """{ lambda ; a:f32[2,3]. let
    b:i32[2] = iota[dimension=0 dtype=int32 shape=(2,) sharding=None] 
  in (b,) }""",
    'axis_index outer name': """{ lambda ; a:f32[2,3]. let
    b:i32[2] = iota[dimension=0 dtype=int32 shape=(2,) sharding=None] 
    c:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(0,)] b
  in (c,) }""",
    'axis_index of two names': """{ lambda ; a:f32[2,3]. let
    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    c:i32[3] = mul b 1:i32[]
    d:i32[3] = add 0:i32[] c
    e:i32[2] = iota[dimension=0 dtype=int32 shape=(2,) sharding=None] 
    f:i32[2] = mul e 3:i32[]
    g:i32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] d
    h:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    i:i32[2,3] = add g h
  in (i,) }""",
    'all_gather': """{ lambda ; a:f32[2,3]. let
    b:f32[2,2,3] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] a
  in (b,) }""",
    'all_gather tiled': """{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    c:f32[2,6] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
  in (c,) }""",
    'all_gather axis=1': """{ lambda ; a:f32[2,3,4]. let
    b:f32[3,2,4] = transpose[permutation=(1, 0, 2)] a
    c:f32[2,3,2,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2), np.int64(3))
    ] b
  in (c,) }""",
    'all_gather tiled in_axes=2': """{ lambda ; a:f32[4,5,2]. let
    b:f32[4,2,5] = transpose[permutation=(0, 2, 1)] a
    c:f32[4,10] = reshape[dimensions=None new_sizes=(4, 10) sharding=None] b
    d:f32[2,4,10] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] c
  in (d,) }""",
    'all_gather outer name': """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
    c:f32[2,3,2] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] b
  in (c,) }""",
    'psum over two names': """{ lambda ; a:f32[2,3]. let
    b:f32[] = psum[axes=(0, 1) axis_index_groups=None] a
    c:f32[3] = broadcast_in_dim b
    d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
  in (d,) }""",
    'psum outer name': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
    c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
  in (c,) }""",
    'psum positional': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
  in (b,) }""",
    'psum positional in vmap': """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
    c:f32[3] = psum[axes=(1,) axis_index_groups=None] b
  in (c,) }""",
    'psum named and positional': """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
    c:f32[] = psum[axes=(0, 1) axis_index_groups=None] b
    d:f32[3] = broadcast_in_dim c
  in (d,) }""",
    'psum bool': """{ lambda ; a:bool[2,3]. let
    b:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[3] = psum[axes=(0,) axis_index_groups=None] b
  in (c,) }""",
    'psum unmapped scalar': """{ lambda ; a:f32[] b:f32[2,3]. let
    c:f32[] = mul 2.0:f32[] a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    e:f32[2,3] = add d b
  in (e,) }""",
    'psum unmapped product': """{ lambda ; a:f32[4] b:f32[2,3]. let
    c:f32[2] = reduce_sum[axes=(np.int64(1),) out_sharding=None] b
    d:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] a
    e:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    f:f32[2,4] = mul d e
    g:f32[4] = psum[axes=(0,) axis_index_groups=None] f
    h:f32[2,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] g
  in (h,) }""",
    'pmax unmapped': """{ lambda ; a:f32[] b:f32[2,3]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[2,3] = add c b
  in (d,) }""",
    'psum unmapped named and positional': """{ lambda ; a:f32[4,5] b:f32[2,3]. let
    c:f32[5] = psum[axes=(0,) axis_index_groups=None] a
    d:f32[5] = mul 2.0:f32[] c
    e:f32[2,5] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] d
  in (e,) }""",
    'all_gather unmapped': """{ lambda ; a:f32[4,5] b:f32[2,3]. let
    c:f32[4,2,5] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
    d:f32[2,4,2,5] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2), np.int64(3))
    ] c
  in (d,) }""",
    'all_gather unmapped tiled': """{ lambda ; a:f32[4,5] b:f32[2,3]. let
    c:f32[4,2,5] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
    d:f32[4,10] = reshape[dimensions=None new_sizes=(4, 10) sharding=None] c
    e:f32[2,4,10] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] d
  in (e,) }""",
    'psum_scatter': """{ lambda ; a:f32[2,3,2]. let
    b:f32[3,2] = reduce_sum[axes=(0,) out_sharding=None] a
    c:f32[2,3] = transpose[permutation=(1, 0)] b
  in (c,) }""",
    'psum_scatter tiled': """{ lambda ; a:f32[2,4]. let
    b:f32[4] = reduce_sum[axes=(0,) out_sharding=None] a
    c:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] b
  in (c,) }""",
    'psum_scatter unmapped': """{ lambda ; a:f32[2,5] b:f32[2,3]. let c:f32[2,5] = mul a 2.0:f32[] in (c,) }""",
    'vmap of grad of psum': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
    d:f32[2,3] = mul c a
    _:f32[2] = reduce_sum[axes=(np.int64(1),) out_sharding=None] d
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul b e
    g:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] e
    h:f32[2,3] = mul g a
    i:f32[3] = psum[axes=(0,) axis_index_groups=None] h
    j:f32[3] = add_any f i
    k:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] j
  in (k,) }""",
    'grad of vmap of psum': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] b
    d:f32[2,3] = mul c a
    e:f32[2] = reduce_sum[axes=(np.int64(1),) out_sharding=None] d
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    f:f32[2] = broadcast_in_dim 1.0:f32[]
    g:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(0),)] f
    h:f32[2,3] = mul c g
    i:f32[2,3] = mul g a
    j:f32[3] = reduce_sum[axes=(0,) out_sharding=None] i
    k:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] j
    l:f32[3] = reduce_sum[axes=(0,) out_sharding=None] k
    m:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] l
    n:f32[2,3] = psum[axes=() axis_index_groups=None] m
    o:f32[2,3] = add_any h n
  in (o,) }""",
    'grad of positional psum': """{ lambda ; a:f32[2,3]. let
    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    e:f32[2,3] = psum[axes=() axis_index_groups=None] d
  in (e,) }""",
    'vmap of grad of axis_index': """{ lambda ; a:f32[2,3]. let
    b:i32[2] = iota[dimension=0 dtype=int32 shape=(2,) sharding=None] 
    c:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:f32[2,3] = mul d a
    _:f32[2] = reduce_sum[axes=(np.int64(1),) out_sharding=None] e
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] f
    h:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    i:f32[2,3] = mul h g
  in (i,) }""",
    'staged inside vmap': """{ lambda ; a:f32[4,2]. let
    b:f32[2,4,2] = all_gather[
      all_gather_dimension=0
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      tiled=False
    ] a
    c:f32[4,4] = all_gather[
      all_gather_dimension=1
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      tiled=True
    ] a
    d:i32[] = axis_index[axis_name=i] 
    e:f32[4,2] = psum[axes=('i',) axis_index_groups=None] a
    f:f32[4,2] = pmin[axes=('i',) axis_index_groups=None] a
    g:f32[4,2] = psum[axes=('i',) axis_index_groups=None] a
    h:f32[4,2] = div g 2.0:f32[]
    i:f32[2,4,2] = all_gather[
      all_gather_dimension=0
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      tiled=False
    ] a
    j:f32[4,2] = reduce_scatter[
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      scatter_dimension=0
      tiled=False
    ] i
    k:f32[2,2] = reduce_scatter[
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      scatter_dimension=0
      tiled=True
    ] a
  in (b, c, d, e, f, h, j, k) }
{ lambda ; a:f32[4,2]. let
    b:f32[4,4] = all_gather[
      all_gather_dimension=1
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      tiled=True
    ] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[4,4] = broadcast_in_dim 1.0:f32[]
    d:f32[4,2] = reduce_scatter[
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      scatter_dimension=1
      tiled=True
    ] c
  in (d,) }
{ lambda ; a:f32[4,2]. let
    b:f32[4,2] = psum[axes=('i',) axis_index_groups=None] a
    c:f32[4,2] = div b 2.0:f32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,2] = broadcast_in_dim 1.0:f32[]
    e:f32[4,2] = div d 2.0:f32[]
    f:f32[4,2] = psum[axes=('i',) axis_index_groups=None] e
  in (f,) }
{ lambda ; a:f32[4,2]. let
    b:f32[2] = psum[axes=('i', 0) axis_index_groups=None] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[2] = broadcast_in_dim 1.0:f32[]
    d:f32[4,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    e:f32[4,2] = psum[axes=('i',) axis_index_groups=None] d
  in (e,) }
{ lambda ; a:f32[2,2]. let
    b:f32[2] = reduce_scatter[
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      scatter_dimension=0
      tiled=False
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[2] = broadcast_in_dim 1.0:f32[]
    d:f32[2,2] = all_gather[
      all_gather_dimension=0
      axis_index_groups=None
      axis_name=('i',)
      axis_size=2
      tiled=False
    ] c
  in (d,) }""",
}

CASES, STAGED_INSIDE, STAGED_TEXTS = jaxpr_cases(jax, lax, jnp, np)


def test_golden_covers_every_case():
    assert set(GOLDEN) == set(CASES) | {"staged inside vmap"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_matches_jax(name):
    f, args = CASES[name]
    assert str(jax.make_jaxpr(f)(*args)) == GOLDEN[name]


def test_jaxprs_staged_inside_vmap_match_jax():
    STAGED_TEXTS.clear()
    jax.vmap(STAGED_INSIDE, axis_name="i")(np.zeros((2, 3), np.float32))
    assert "\n".join(STAGED_TEXTS) == GOLDEN["staged inside vmap"]
