"""Autodiff of the slicing primitives (`_src/lax/slicing.py`,
`_src/lax/gather_scatter.py`) and of jnp indexing.

Expected jaxprs, equation lists and gradient values were read off real JAX 0.10.2; the
`needs_jax` tests at the end compare with it directly. Two deliberate departures from JAX are
checked against finite differences instead (see `test_pad_grad_of_padding_value_alone` and
`test_scatter_max_clip_mode_is_finite_and_right`).
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax.test_util import check_grads
from tests.harness import x64_mode

GDN = lax.GatherDimensionNumbers
SDN = lax.ScatterDimensionNumbers
ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
TAKE = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


def _golden_cases(jax, jnp, lax):
    """name -> (loss function, arguments); written once for justjax and for real jax."""
    rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
    take = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    x = np.arange(5, dtype=np.float32)
    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    return {
        "slice": (lambda x: x[1:3].sum(), (x,)),
        "strided": (lambda x: x[::2].sum(), (x,)),
        "fancy": (lambda x: x[jnp.array([0, 2])].sum(), (x,)),
        "at_set": (lambda x: x.at[1].set(3.).sum(), (x,)),
        "pad": (lambda x, v: lax.pad(x, v, [(-1, 2, 1)]).sum(), (x, np.float32(1.0))),
        "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i,), (2,)).sum(),
                          (x, np.int32(1))),
        "dus": (lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(3),)).sum(),
                (x, np.ones(2, np.float32))),
        "rev": (lambda m: (lax.rev(m, (0, 1)) * m).sum(), (m,)),
        "gather_fill": (lambda m: lax.gather(m, np.array([[5], [1]], np.int32), take, (1, 3),
                                             mode="fill").sum(), (m,)),
        "scatter_sub": (lambda m, u: lax.scatter_sub(m, np.array([[1], [7]], np.int32), u,
                                                     rows).sum(),
                        (m, np.ones((2, 3), np.float32))),
    }


def _grad_of(jax, fun, args):
    argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    return jax.grad(fun, argnums=argnums)


GOLDEN_GRAD_JAXPRS = {
    "slice": """\
{ lambda ; a:f32[5]. let
    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=None] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[2] = broadcast_in_dim 1.0:f32[]
    d:f32[5] = pad[padding_config=((1, np.int64(2), 0),)] c 0.0:f32[]
  in (d,) }""",
    "strided": """\
{ lambda ; a:f32[5]. let
    b:f32[3] = slice[limit_indices=(5,) start_indices=(0,) strides=(2,)] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[5] = pad[padding_config=((0, np.int64(0), np.int64(1)),)] c 0.0:f32[]
  in (d,) }""",
    "fancy": """\
{ lambda a:i32[2]; b:f32[5]. let
    c:bool[2] = lt a 0:i32[]
    d:i32[2] = add a 5:i32[]
    e:i32[2] = select_n c a d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1,)
      unique_indices=False
    ] b f
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    h:f32[2] = broadcast_in_dim 1.0:f32[]
    i:f32[5] = broadcast_in_dim 0.0:f32[]
    j:f32[5] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; k:f32[] l:f32[]. let m:f32[] = add k l in (m,) }
    ] i f h
  in (j,) }""",
    "at_set": """\
{ lambda ; a:f32[5]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[5] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a b 3.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[5] = broadcast_in_dim 1.0:f32[]
    e:f32[5] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] d b 0.0:f32[]
  in (e,) }""",
    "pad": """\
{ lambda ; a:f32[5] b:f32[]. let
    c:f32[10] = pad[padding_config=((-1, 2, 1),)] a b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[10] = broadcast_in_dim 1.0:f32[]
    e:f32[9] = pad[padding_config=((np.int64(1), np.int64(-2), np.int64(0)),)] d
      0.0:f32[]
    f:f32[5] = slice[
      limit_indices=(9,)
      start_indices=(np.int64(0),)
      strides=(np.int64(2),)
    ] e
    g:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    h:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    i:f32[] = sub g h
  in (f, i) }""",
    "dynamic_slice": """\
{ lambda ; a:f32[5] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 5:i32[]
    e:i32[] = select_n c b d
    f:f32[2] = dynamic_slice[slice_sizes=(2,)] a e
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    g:f32[2] = broadcast_in_dim 1.0:f32[]
    h:f32[5] = broadcast_in_dim 0.0:f32[]
    i:f32[5] = dynamic_update_slice h g e
  in (i,) }""",
    "dus": """\
{ lambda ; a:f32[5] b:f32[2]. let
    c:f32[5] = dynamic_update_slice a b 3:i32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[5] = broadcast_in_dim 1.0:f32[]
    e:f32[2] = broadcast_in_dim 0.0:f32[]
    f:f32[5] = dynamic_update_slice d e 3:i32[]
    g:f32[2] = dynamic_slice[slice_sizes=(2,)] d 3:i32[]
  in (f, g) }""",
    "rev": """\
{ lambda ; a:f32[4,3]. let
    b:f32[4,3] = rev[dimensions=(0, 1)] a
    c:f32[4,3] = mul b a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,3] = broadcast_in_dim 1.0:f32[]
    e:f32[4,3] = mul b d
    f:f32[4,3] = mul d a
    g:f32[4,3] = rev[dimensions=(0, 1)] f
    h:f32[4,3] = add_any e g
  in (h,) }""",
    "gather_fill": """\
{ lambda a:i32[2,1]; b:f32[4,3]. let
    c:f32[2,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=nan
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 3)
      unique_indices=False
    ] b a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,3] = broadcast_in_dim 1.0:f32[]
    e:f32[4,3] = broadcast_in_dim 0.0:f32[]
    f:f32[4,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; g:f32[] h:f32[]. let i:f32[] = add g h in (i,) }
    ] e a d
  in (f,) }""",
    "scatter_sub": """\
{ lambda a:i32[2,1]; b:f32[4,3] c:f32[2,3]. let
    d:f32[4,3] = scatter-sub[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = sub e f in (g,) }
    ] b a c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    h:f32[4,3] = broadcast_in_dim 1.0:f32[]
    i:f32[2,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=0
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 3)
      unique_indices=False
    ] h a
    j:f32[2,3] = neg i
  in (h, j) }""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_GRAD_JAXPRS))
def test_grad_jaxpr_matches_jax(name):
    fun, args = _golden_cases(justjax, jnp, lax)[name]
    text = str(justjax.make_jaxpr(_grad_of(justjax, fun, args))(*args))
    assert text == GOLDEN_GRAD_JAXPRS[name]


# Equations (primitive, result type, mode) of rules whose printed jaxprs also depend on how
# shared `update_jaxpr`s print: the equations themselves must be JAX's, in JAX's order.
_SCATTER_MAX_JVP = """\
scatter-max f32[4,3] FILL_OR_DROP
gather f32[3,3] PROMISE_IN_BOUNDS
gather f32[3,3] PROMISE_IN_BOUNDS
eq bool[3,3]
eq bool[3,3]
broadcast_in_dim f32[4,3]
broadcast_in_dim f32[3,3]
broadcast_in_dim f32[3,3]
select_n f32[3,3]
scatter-add f32[4,3] FILL_OR_DROP
gather f32[3,3] PROMISE_IN_BOUNDS
broadcast_in_dim f32[4,3]
broadcast_in_dim f32[3,3]
scatter-add f32[4,3] FILL_OR_DROP
gather f32[3,3] PROMISE_IN_BOUNDS
add f32[3,3]
div f32[3,3]
div f32[3,3]
select_n f32[3,3]
broadcast_in_dim f32[3,3]
select_n f32[3,3]
add f32[3,3]
div f32[3,3]
broadcast_in_dim f32[3,3]
select_n f32[3,3]
add f32[3,3]
div f32[3,3]"""

GOLDEN_EQUATIONS = {
    "scatter_jvp": """\
iota u32[3]
reshape u32[3,1]
broadcast_in_dim u32[3,3]
add u32[3,3]
broadcast_in_dim u32[4,3]
scatter u32[4,3] FILL_OR_DROP
gather u32[3,3] PROMISE_IN_BOUNDS
broadcast_in_dim u32[4,3]
eq bool[4,3]
broadcast_in_dim f32[4,3]
select_n f32[4,3]
eq bool[3,3]
broadcast_in_dim f32[3,3]
select_n f32[3,3]
broadcast_in_dim u32[4,3]
eq bool[4,3]
broadcast_in_dim f32[4,3]
select_n f32[4,3]
eq bool[3,3]
broadcast_in_dim f32[3,3]
select_n f32[3,3]
scatter-add f32[4,3] FILL_OR_DROP
scatter-add f32[4,3] FILL_OR_DROP""",
    "scatter_max_jvp": _SCATTER_MAX_JVP + """
gather f32[3,3] PROMISE_IN_BOUNDS
mul f32[3,3]
mul f32[3,3]
add f32[3,3]
scatter-add f32[4,3] FILL_OR_DROP""",
    "scatter_min_grad": _SCATTER_MAX_JVP.replace("scatter-max", "scatter-min") + """
reduce_sum f32[]
broadcast_in_dim f32[4,3]
gather f32[3,3] FILL_OR_DROP
mul f32[3,3]
mul f32[3,3]
broadcast_in_dim f32[4,3]
scatter-add f32[4,3] PROMISE_IN_BOUNDS
add_any f32[4,3]""",
    "scatter_mul_grad": """\
slice f32[2,3]
scatter-mul f32[4,3] FILL_OR_DROP
broadcast_in_dim f32[4,3]
reduce_sum f32[]
broadcast_in_dim f32[4,3]
mul f32[4,3]
gather f32[2,3] FILL_OR_DROP
scatter-mul f32[4,3] FILL_OR_DROP
pad f32[3,3]""",
}


def _equation_cases(jax, lax):
    rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
    idx = np.array([[1], [1], [3]], np.int32)

    def jvp(f):
        return lambda x, u: jax.jvp(f, (x, u), (x, u))

    return {
        "scatter_jvp": jvp(lambda x, u: lax.scatter(x, idx, u, rows)),
        "scatter_max_jvp": jvp(lambda x, u: lax.scatter_max(x, idx, u, rows)),
        "scatter_min_grad": jax.grad(lambda x, u: lax.scatter_min(x, idx, u, rows).sum(),
                                     (0, 1)),
        "scatter_mul_grad": jax.grad(lambda x, u: lax.scatter_mul(
            x, idx[1:], u[1:], rows, unique_indices=True).sum(), (0, 1)),
    }


def _equations(closed, short_dtype) -> str:
    lines = []
    for eqn in closed.jaxpr.eqns:
        words = [eqn.primitive.name]
        words += [short_dtype(v.aval) for v in eqn.outvars]
        mode = eqn.params.get("mode")
        if mode is not None:
            words.append(mode.name)
        lines.append(" ".join(words))
    return "\n".join(lines)


_EQN_ARGS = (np.arange(12, dtype=np.float32).reshape(4, 3), np.ones((3, 3), np.float32))


@pytest.mark.parametrize("name", sorted(GOLDEN_EQUATIONS))
def test_equations_match_jax(name):
    closed = justjax.make_jaxpr(_equation_cases(justjax, lax)[name])(*_EQN_ARGS)
    assert _equations(closed, lambda a: a.str_short()) == GOLDEN_EQUATIONS[name]


# ---------------------------------------------------------------------------------------------
# Conventions at ties, duplicates and out-of-bounds indices (values from JAX).

XT = np.array([1., 3., 2., 3., 0.])
W = np.array([1., 2., 3., 4., 5.])


def _value_cases(jnp, lax):
    """name -> (function of the differentiated args, args); the loss weights outputs by W."""
    return {
        # slot 1: the operand and two updates tie at 3 (a third each); slot 3: a half each.
        "max_ties": (lambda x, y: x.at[jnp.array([1, 1, 3])].max(y), (XT, np.array([3., 3., 3.]))),
        "max_ties_lower": (lambda x, y: x.at[jnp.array([1, 1, 3])].max(y),
                           (XT, np.array([3., 2., 4.]))),
        "min_ties": (lambda x, y: x.at[jnp.array([2, 2, 0])].min(y), (XT, np.array([2., 2., 5.]))),
        # the last of duplicate updates wins; the overwritten operand slot gets nothing.
        "set_duplicates": (lambda x, y: x.at[jnp.array([1, 4, 1])].set(y),
                           (XT, np.array([7., 8., 9.]))),
        # out-of-bounds gathers: promise_in_bounds clamps forward but drops backward (JAX's
        # rule), clip clamps both ways, fill gets no gradient.
        "gather_promise_oob": (lambda x: x[jnp.array([7, 1, -9])], (XT,)),
        "gather_clip": (lambda x: x.at[jnp.array([7, 1, -9])].get(mode="clip"), (XT,)),
        "gather_fill": (lambda x: x.at[jnp.array([7, 1, -9])].get(mode="fill", fill_value=0.),
                        (XT,)),
        # out-of-bounds scatter updates are dropped (and get no gradient) unless clipped.
        "add_oob": (lambda x, y: x.at[jnp.array([7, 1, -9])].add(y), (XT, np.array([1., 2., 3.]))),
        "add_clip": (lambda x, y: x.at[jnp.array([7, 1, -9])].add(y, mode="clip"),
                     (XT, np.array([1., 2., 3.]))),
        "set_drop": (lambda x, y: x.at[jnp.array([7, 1])].set(y, mode="drop"),
                     (XT, np.array([1., 2.]))),
        "pad_negative": (lambda x, v: lax.pad(x, v, [(-1, 2, 1)]), (XT, np.float64(0.5))),
        "dynamic_slice_clamped": (lambda x: lax.dynamic_slice(x, (np.int32(4),), (2,)), (XT,)),
        "dus_clamped": (lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(-9),)),
                        (XT, np.array([1., 2.]))),
    }


EXPECTED_GRADS = {
    "max_ties": ([1., 2 / 3, 3., 2., 5.], [2 / 3, 2 / 3, 2.]),
    "max_ties_lower": ([1., 1., 3., 0., 5.], [1., 0., 4.]),
    "min_ties": ([1., 2., 1., 4., 5.], [1., 1., 0.]),
    "set_duplicates": ([1., 0., 3., 4., 0.], [0., 5., 2.]),
    "gather_promise_oob": ([0., 2., 0., 0., 0.],),
    "gather_clip": ([3., 2., 0., 0., 1.],),
    "gather_fill": ([0., 2., 0., 0., 0.],),
    "add_oob": ([1., 2., 3., 4., 5.], [0., 2., 0.]),
    "add_clip": ([1., 2., 3., 4., 5.], [5., 2., 1.]),
    "set_drop": ([1., 0., 3., 4., 5.], [0., 2.]),
    "pad_negative": ([0., 2., 4., 6., 8.], 35.),
    "dynamic_slice_clamped": ([0., 0., 0., 1., 2.],),
    "dus_clamped": ([0., 0., 3., 4., 5.], [1., 2.]),
}


def _weighted_grads(jax, fun, args):
    def loss(*xs):
        out = fun(*xs)
        weights = np.arange(1., np.size(out) + 1).reshape(np.shape(out))
        return (out * weights).sum()
    return jax.grad(loss, argnums=tuple(range(len(args))))(*args)


@pytest.mark.parametrize("name", sorted(EXPECTED_GRADS))
def test_gradient_conventions(name):
    fun, args = _value_cases(jnp, lax)[name]
    with x64_mode(True):
        grads = _weighted_grads(justjax, fun, args)
    assert len(grads) == len(EXPECTED_GRADS[name])
    for got, want in zip(grads, EXPECTED_GRADS[name], strict=True):
        assert got.dtype == np.float64
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Errors JAX raises, and where justjax deliberately does better.

def test_scatter_mul_update_gradient_needs_unique_indices():
    x, y = jnp.ones(5, np.float32), jnp.ones(2, np.float32)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        justjax.grad(lambda y: x.at[jnp.array([0, 2])].mul(y).sum())(y)
    # The operand's derivative needs no promise, whatever the indices.
    grad = justjax.grad(lambda x: x.at[jnp.array([1, 1])].mul(y * 3.).sum())(x)
    np.testing.assert_allclose(np.asarray(grad), [1., 9., 1., 1., 1.])


def test_scatter_mul_with_unique_indices_to_second_order():
    x, y = np.array([1.5, -2., 0.5, 3.]), np.array([0.3, -1.2])
    with x64_mode(True):
        check_grads(lambda x, y: lax.scatter_mul(x, np.array([[3], [0]]), y,
                                                 SDN((), (0,), (0,)), unique_indices=True),
                    (x, y), order=2)


def test_scatter_apply_has_no_jvp():
    f = lambda x: lax.scatter_apply(x, np.array([[1]], np.int32), jnp.sin,
                                    SDN((), (0,), (0,)))
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        justjax.jvp(f, (np.ones(3, np.float32),), (np.ones(3, np.float32),))


def test_pad_grad_of_padding_value_alone():
    # JAX's pad transpose assumes the operand is linear too and fails on a None here; the
    # padding value's cotangent is the total minus what the operand's slots received.
    x = np.arange(5, dtype=np.float32)
    weights = np.arange(1., 11., dtype=np.float32)
    grad = justjax.grad(lambda v: (lax.pad(x, v, [(-1, 2, 1)]) * weights).sum())(
        np.float32(0.5))
    np.testing.assert_allclose(np.asarray(grad), 1. + 3 + 5 + 7 + 9 + 10)


def test_scatter_max_clip_mode_is_finite_and_right():
    # JAX counts the contenders with the default (dropping) mode, so a clipped update makes
    # its tangent 0/0; counting in clip mode gives the derivative finite differences give.
    x, y = np.array([[1., -2.], [0.5, 4.]]), np.array([[3., -1.], [2., 5.]])
    f = lambda x, y: lax.scatter_max(x, np.array([[-1], [7]]), y, ROWS, mode="clip")
    with x64_mode(True):
        _, tangent = justjax.jvp(f, (x, y), (np.ones_like(x), np.ones_like(y)))
        assert np.isfinite(np.asarray(tangent)).all()
        check_grads(f, (x, y), order=2)


# ---------------------------------------------------------------------------------------------
# Second order through jnp indexing.

_SECOND_ORDER = {
    "basic": lambda x: x[1:, ::2] * x[:-1, 1::2],
    "fancy": lambda x: x[jnp.array([0, 2, 2]), 1:] ** 2,
    "at_set": lambda x: x.at[jnp.array([0, 0, 1]), 2].set(x[2, :3] ** 2),
    "at_add": lambda x: jnp.sin(x.at[1:, jnp.array([1, 1])].add(x[:2, :2])),
    "at_mul_unique": lambda x: x.at[jnp.array([0, 2])].mul(x[1] ** 2, unique_indices=True),
    "at_max": lambda x: x.at[jnp.array([2, 0, 2])].max(x[1, :] * 1.5),
    "at_min": lambda x: x.at[:, jnp.array([3, 0])].min(-x[:, 1:3]),
    "take_along_axis": lambda x: jnp.take_along_axis(x ** 2, jnp.array([[3], [0], [2]]), axis=1),
    "dynamic": lambda x: lax.dynamic_update_slice(
        x, lax.dynamic_slice(x, (np.int32(1), np.int32(2)), (2, 2)) ** 2,
        (np.int32(0), np.int32(-1))),
}


@pytest.mark.parametrize("name", sorted(_SECOND_ORDER))
def test_indexing_second_order(name):
    x = np.array([[0.3, -1.1, 2.0, 0.7], [1.4, -0.2, -0.9, 2.2], [-1.7, 0.6, 1.1, -0.4]])
    with x64_mode(True):
        check_grads(lambda x: _SECOND_ORDER[name](jnp.asarray(x)), (x,), order=2)


# ---------------------------------------------------------------------------------------------
# Directly against real JAX.

@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_GRAD_JAXPRS))
def test_grad_jaxpr_matches_real_jax(name):
    real_jax = pytest.importorskip("jax")
    fun, args = _golden_cases(real_jax, real_jax.numpy, real_jax.lax)[name]
    assert str(real_jax.make_jaxpr(_grad_of(real_jax, fun, args))(*args)) == \
        GOLDEN_GRAD_JAXPRS[name]


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_EQUATIONS))
def test_equations_match_real_jax(name):
    real_jax = pytest.importorskip("jax")
    closed = real_jax.make_jaxpr(_equation_cases(real_jax, real_jax.lax)[name])(*_EQN_ARGS)
    assert _equations(closed, lambda a: a.str_short(short_dtypes=True)) == \
        GOLDEN_EQUATIONS[name]


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(EXPECTED_GRADS))
def test_gradient_conventions_match_real_jax(name):
    real_jax = pytest.importorskip("jax")
    fun, args = _value_cases(real_jax.numpy, real_jax.lax)[name]
    with real_jax.enable_x64(True) if hasattr(real_jax, "enable_x64") else \
            real_jax.experimental.enable_x64():
        grads = _weighted_grads(real_jax, fun, args)
        for got, want in zip(grads, EXPECTED_GRADS[name], strict=True):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
