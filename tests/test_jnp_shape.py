"""Behaviour, error and golden-jaxpr tests for jax.numpy's shape functions and tensor products
(`_src/numpy/shape_ops.py` and the other modules split from JAX's `lax_numpy`, and
`_src/numpy/tensor.py`). Values against NumPy live in the op records (tests/records/jnp_shape.py,
jnp_tensor.py).

The golden jaxprs are what JAX 0.10.2 prints under `jax.disable_jit()`: JAX wraps some of these
functions (where, pad) in `jit`, so they are traced under `justjax.disable_jit()` too.
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import errors


def _ones(shape, dtype=np.float32):
    return jnp.asarray(np.ones(shape, dtype))


# ---------------------------------------------------------------------------------------------
# Golden jaxprs (read off real JAX, see the module docstring).

GOLDEN = {
    "reshape": (lambda x: jnp.reshape(x, (3, -1)), [(2, 3)], """\
{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a
  in (b,) }"""),
    "reshape_F": (lambda x: x.reshape((3, 2), order="F"), [(2, 3)], """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = reshape[dimensions=(1, 0) new_sizes=(2, 3) sharding=None] a
    c:f32[3,2] = transpose[permutation=(1, 0)] b
  in (c,) }"""),
    "ravel": (jnp.ravel, [(2, 3)], """\
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
  in (b,) }"""),
    "transpose": (jnp.transpose, [(2, 3, 4)], """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[4,3,2] = transpose[permutation=(2, 1, 0)] a
  in (b,) }"""),
    "moveaxis": (lambda x: jnp.moveaxis(x, 0, -1), [(2, 3, 4)], """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[3,4,2] = transpose[permutation=(1, 2, 0)] a
  in (b,) }"""),
    "matmul": (jnp.matmul, [(2, 3), (3, 4)], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""),
    "matmul_bcast": (lambda x, y: x @ y, [(2, 1, 3, 4), (5, 4, 2)], """\
{ lambda ; a:f32[2,1,3,4] b:f32[5,4,2]. let
    c:f32[2,3,4] = squeeze[dimensions=(1,)] a
    d:f32[2,3,5,2] = dot_general[
      dimension_numbers=(([2], [1]), ([], []))
      preferred_element_type=float32
    ] c b
    e:f32[2,5,3,2] = transpose[permutation=(0, 2, 1, 3)] d
  in (e,) }"""),
    "matmul_squeeze": (lambda x, y: x @ y, [(1, 3, 4), (1, 4, 2)], """\
{ lambda ; a:f32[1,3,4] b:f32[1,4,2]. let
    c:f32[3,4] = squeeze[dimensions=(0,)] a
    d:f32[4,2] = squeeze[dimensions=(0,)] b
    e:f32[3,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] c d
    f:f32[1,3,2] = broadcast_in_dim[broadcast_dimensions=(1, 2)] e
  in (f,) }"""),
    "dot_weak": (lambda x: jnp.dot(x, 2.0), [((2, 3), np.int32)], """\
{ lambda ; a:i32[2,3]. let
    b:f32[2,3] = dot_general[
      dimension_numbers=(([], []), ([], []))
      preferred_element_type=float32
    ] a 2.0:f32[]
    c:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=True] b
  in (c,) }"""),
    "einsum": (lambda x, y: jnp.einsum("ij,jk->ik", x, y), [(2, 3), (3, 4)], """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""),
    "einsum_diag": (lambda x: jnp.einsum("ii->i", x), [(3, 3)], """\
{ lambda ; a:f32[3,3]. let
    b:u32[3,3] = iota[dimension=0 dtype=uint32 shape=(3, 3) sharding=None] 
    c:u32[3,3] = iota[dimension=1 dtype=uint32 shape=(3, 3) sharding=None] 
    d:bool[3,3] = eq b c
    e:f32[3,3] = broadcast_in_dim 0.0:f32[]
    f:f32[3,3] = select_n d e a
    g:f32[3] = reduce_sum[axes=(0,) out_sharding=None] f
  in (g,) }"""),
    "einsum_three": (lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z),
                     [(2, 3), (3, 4), (4, 5)], """\
{ lambda ; a:f32[2,3] b:f32[3,4] c:f32[4,5]. let
    d:f32[4,2] = dot_general[
      dimension_numbers=(([0], [1]), ([], []))
      preferred_element_type=float32
    ] b a
    e:f32[2,5] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] d c
  in (e,) }"""),
    "einsum_perm": (lambda x, y: jnp.einsum("bij,bkj->kbi", x, y), [(2, 3, 4), (2, 5, 4)], """\
{ lambda ; a:f32[2,3,4] b:f32[2,5,4]. let
    c:f32[2,5,3] = dot_general[
      dimension_numbers=(([2], [2]), ([0], [0]))
      preferred_element_type=float32
    ] b a
    d:f32[5,2,3] = transpose[permutation=(1, 0, 2)] c
  in (d,) }"""),
    "where": (jnp.where, [((3,), np.bool_), (3,), (3,)], """\
{ lambda ; a:bool[3] b:f32[3] c:f32[3]. let d:f32[3] = select_n a c b in (d,) }"""),
    "where_scalar": (lambda x: jnp.where(x > 0, x, 0.0), [(3,)], """\
{ lambda ; a:f32[3]. let
    b:bool[3] = gt a 0.0:f32[]
    c:f32[3] = broadcast_in_dim 0.0:f32[]
    d:f32[3] = select_n b c a
  in (d,) }"""),
    "where_promote": (lambda c, x: jnp.where(c, x, 2), [((2, 3), np.int32), (3,)], """\
{ lambda ; a:i32[2,3] b:f32[3]. let
    c:bool[2,3] = ne a 0:i32[]
    d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    e:f32[2,3] = broadcast_in_dim 2.0:f32[]
    f:f32[2,3] = select_n c e d
  in (f,) }"""),
    "pad": (lambda x: jnp.pad(x, ((1, 0), (0, 1))), [(2, 3)], """\
{ lambda ; a:f32[2,3]. let
    b:f32[3,4] = pad[
      padding_config=((np.int64(1), np.int64(0), 0), (np.int64(0), np.int64(1), 0))
    ] a 0.0:f32[]
  in (b,) }"""),
    "pad_reflect": (lambda x: jnp.pad(x, 2, mode="reflect"), [(5,)], """\
{ lambda ; a:f32[5]. let
    _:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] a
    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=(1,)] a
    c:f32[2] = rev[dimensions=(0,)] b
    d:f32[7] = concatenate[dimension=0] c a
    _:f32[1] = slice[limit_indices=(7,) start_indices=(6,) strides=(1,)] d
    e:f32[2] = slice[limit_indices=(6,) start_indices=(4,) strides=(1,)] d
    f:f32[2] = rev[dimensions=(0,)] e
    g:f32[9] = concatenate[dimension=0] d f
  in (g,) }"""),
    "pad_edge": (lambda x: jnp.pad(x, 1, mode="edge"), [(3,)], """\
{ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] a
    c:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    d:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] c
    e:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=(1,)] a
    f:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] f
    h:f32[5] = concatenate[dimension=0] d a g
  in (h,) }"""),
    "split": (lambda x: jnp.split(x, [1, 4]), [(6,)], """\
{ lambda ; a:f32[6]. let
    b:f32[1] c:f32[3] d:f32[2] = split[
      axis=0
      sizes=(np.int64(1), np.int64(3), np.int64(2))
    ] a
  in (b, c, d) }"""),
    "stack": (lambda x, y: jnp.stack([x, y], axis=1), [(3,), (3,)], """\
{ lambda ; a:f32[3] b:f32[3]. let c:f32[3,2] = stack[axis=1] a b in (c,) }"""),
    "tile": (lambda x: jnp.tile(x, (2, 1)), [(2, 3)], """\
{ lambda ; a:f32[2,3]. let b:f32[4,3] = tile[reps=(2, 1)] a in (b,) }"""),
    "roll": (lambda x: jnp.roll(x, -1, axis=1), [(2, 3)], """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,2] = slice[limit_indices=(2, 3) start_indices=(0, 1) strides=(1, 1)] a
    c:f32[2,1] = slice[limit_indices=(2, 1) start_indices=(0, 0) strides=(1, 1)] a
    d:f32[2,3] = concatenate[dimension=1] b c
  in (d,) }"""),
    "repeat": (lambda x: jnp.repeat(x, 2, axis=0), [(2, 3)], """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,2,3] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
    c:f32[4,3] = reshape[dimensions=None new_sizes=(4, 3) sharding=None] b
  in (c,) }"""),
    "concatenate": (lambda x, y: jnp.concatenate([x, y]), [(3,), ((3,), np.int32)], """\
{ lambda ; a:f32[3] b:i32[3]. let
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[6] = concatenate[dimension=0] a c
  in (d,) }"""),
    "outer": (jnp.outer, [(3,), (3,)], """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    e:f32[3,3] = mul c d
  in (e,) }"""),
    "kron": (jnp.kron, [(2, 2), (2, 2)], """\
{ lambda ; a:f32[2,2] b:f32[2,2]. let
    c:f32[2,1,2,1] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
    d:f32[1,2,1,2] = broadcast_in_dim[broadcast_dimensions=(1, 3)] b
    e:f32[2,2,2,2] = mul c d
    f:f32[4,4] = reshape[dimensions=None new_sizes=(4, 4) sharding=None] e
  in (f,) }"""),
}


def _golden_args(specs):
    out = []
    for spec in specs:
        shape, dtype = spec if isinstance(spec[0], tuple) else (spec, np.float32)
        out.append(_ones(shape, dtype))
    return out


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_jaxpr(name):
    fn, specs, expected = GOLDEN[name]
    with jax.disable_jit():
        text = str(jax.make_jaxpr(fn)(*_golden_args(specs)))
    assert text == expected


# ---------------------------------------------------------------------------------------------
# Errors: JAX's classes and messages.

ERRORS = [
    (lambda: jnp.reshape(_ones(6), (4, -1)), TypeError,
     "cannot reshape array of shape (6,) (size 6) into shape (4, -1) because the product of "
     "specified axis sizes (4) does not evenly divide 6"),
    (lambda: jnp.reshape(_ones(6), (4, 2)), TypeError,
     "cannot reshape array of shape (6,) (size 6) into shape (4, 2) (size 8)"),
    (lambda: jnp.reshape(_ones(6), (-1, -1)), TypeError,
     "can only specify one unknown axis size with a `-1` value, got (-1, -1)"),
    (lambda: jnp.reshape(_ones(6), (6,), order="Q"), ValueError,
     "Unexpected value for 'order' argument: Q."),
    (lambda: jnp.reshape([1, 2], (2,)), TypeError,
     "reshape requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jnp.transpose(_ones((2, 3)), (0, 2)), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: _ones(3).mT, ValueError,
     "x must be at least two-dimensional for matrix_transpose; got ndim=1"),
    (lambda: jnp.squeeze(_ones((2, 3)), 0), ValueError,
     "cannot select an axis to squeeze out which has size not equal to one, got shape=(2, 3) "
     "and dimensions=(0,)"),
    (lambda: jnp.expand_dims(_ones(3), (0, 0)), ValueError,
     "repeated axis in lax.expand_dims: (0, 0)"),
    (lambda: jnp.moveaxis(_ones((2, 3)), 0, 5), ValueError,
     "axis 5 is out of bounds for array of dimension 2"),
    (lambda: jnp.moveaxis(_ones((2, 3)), (0, 1), 0), ValueError,
     "Inconsistent number of elements: 2 vs 1"),
    (lambda: jnp.swapaxes(_ones((2, 3)), 0, 5), IndexError,
     "index 5 is out of bounds for axis 0 with size 2"),
    (lambda: jnp.broadcast_to(_ones(3), (2, 4)), ValueError,
     "Incompatible types for broadcasting: input type=float32[3] and requested "
     "type=float32[2,4]"),
    (lambda: jnp.broadcast_shapes((2, 3), (4,)), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"),
    (lambda: jnp.concatenate([_ones(()), _ones(())]), ValueError,
     "Zero-dimensional arrays cannot be concatenated."),
    (lambda: jnp.concatenate([]), ValueError, "Need at least one array to concatenate."),
    (lambda: jnp.stack([_ones(3), _ones(2)]), ValueError,
     "All input arrays must have the same shape. Got (3,), (2,)."),
    (lambda: jnp.stack([]), ValueError, "Need at least one array to stack."),
    (lambda: jnp.split(_ones(6), 4), ValueError,
     "array split does not result in an equal division: rest is 2"),
    (lambda: jnp.tile(_ones(3), 1.5), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (np.float64(4.5),)."),
    (lambda: jnp.pad(_ones(3), 1, mode="foo"), NotImplementedError,
     "Unimplemented padding mode 'foo' for np.pad."),
    (lambda: jnp.pad(_ones(3), 1, mode="edge", constant_values=1), ValueError,
     "unsupported keyword arguments for mode 'edge': {'constant_values'}"),
    (lambda: jnp.pad(_ones(3), -1), ValueError, "index can't contain negative values"),
    (lambda: jnp.pad(_ones(3), ((1, 2, 3),)), ValueError,
     "jnp.pad: pad_width with nd=1 has unsupported shape (1, 3). Valid shapes are (1, 2), "
     "(1, 2), (2,), (1,), or ()."),
    (lambda: jnp.pad(_ones(3), 1.5), TypeError, "`pad_width` must be of integral type."),
    (lambda: jnp.pad(_ones(0), 1, mode="wrap"), ValueError,
     "Cannot apply 'wrap' padding to empty axis"),
    (lambda: jnp.pad(_ones(3), 1, mode="mean", stat_length=0), ValueError,
     "stat_length of 0 yields no value for padding"),
    (lambda: jnp.tril(_ones(3)), ValueError, "Argument to jax.numpy.tril must be at least 2D"),
    (lambda: jnp.diagonal(_ones(3)), ValueError,
     "diagonal requires an array of at least two dimensions."),
    (lambda: jnp.diag(_ones((2, 2, 2))), ValueError, "diag input must be 1d or 2d"),
    (lambda: jnp.trace(_ones((2, 2)), axis1=1, axis2=-1), ValueError,
     "axis1 and axis2 can not be same. axis1=1 and axis2=-1"),
    (lambda: jnp.where(_ones(3) > 0, _ones(3), _ones(3), size=2), ValueError,
     "size and fill_value arguments cannot be used in three-term where function."),
    (lambda: jnp.where(_ones(3) > 0, _ones(3)), TypeError,
     "where requires ndarray or scalar arguments, got <class 'NoneType'> at position 2."),
    (lambda: jnp.select([_ones(3) > 0], [_ones(3), _ones(3)]), ValueError,
     "condlist must have length equal to choicelist (1 vs 2)"),
    (lambda: jnp.clip(), ValueError, "No input was provided to the clip function."),
    (lambda: jnp.clip(_ones(3, np.complex64), 0, 1), ValueError,
     "Clip received a complex value either through the input or the min/max keywords."),
    (lambda: jnp.clip(_ones(3), a_min=0), TypeError, "unexpected keyword argument 'a_min'"),
    (lambda: jnp.nonzero(_ones(())), ValueError,
     "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
     "instead."),
    (lambda: jnp.choose(_ones(3), [_ones(3)]), ValueError, "`a` array must be integer typed"),
    (lambda: jnp.compress(_ones((2, 3)) > 0, _ones(3)), ValueError,
     "condition must be a 1D array"),
    (lambda: _ones(()).view(jnp.int8), ValueError,
     "view() of a 0d array is only supported if the itemsize is unchanged."),
    (lambda: _ones(3, np.int8).view(jnp.int32), ValueError,
     "When changing to a larger dtype, its size must be a divisor of the total size in bytes "
     "of the last axis of the array."),
    (lambda: jnp.array_equiv(_ones(3), _ones(4)), TypeError,
     "eq got incompatible shapes for broadcasting: (3,), (4,)."),
    (lambda: jnp.matmul(_ones(3), 2.0), ValueError,
     "matmul input operand 1 must have ndim at least 1, but it has ndim 0"),
    (lambda: _ones((2, 3)) @ _ones((4, 5)), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."),
    (lambda: jnp.matmul(_ones((2, 2, 3)), _ones((3, 3, 4))), ValueError,
     "Incompatible types for matmul arguments: float32[2,2,3] and float32[3,3,4]"),
    (lambda: jnp.dot(_ones((2, 3)), _ones(4)), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."),
    (lambda: jnp.vdot(_ones(3), _ones(4)), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."),
    (lambda: jnp.tensordot(_ones((2, 3)), _ones((3, 4)), 3), TypeError,
     "Number of tensordot axes (axes 3) exceeds input ranks ((2, 3) and (3, 4))"),
    (lambda: jnp.tensordot(_ones((2, 3)), _ones((2, 4)), ([0, 1], [0])), TypeError,
     "tensordot requires axes lists to have equal length, got [0, 1] and [0]."),
    (lambda: jnp.tensordot(_ones((2, 3)), _ones((3, 4)), "a"), TypeError,
     "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples of "
     "ints."),
    (lambda: jnp.tensordot(_ones((2, 3)), _ones((3, 4)), (1, [0])), TypeError,
     "tensordot requires both axes lists to be either ints, tuples or lists, got 1 and [0]"),
    (lambda: jnp.einsum("ij,jk->ik", _ones((2, 3)), _ones((4, 5))), ValueError,
     "Size of label 'j' for operand 1 (3) does not match previous terms (4)."),
    (lambda: jnp.matvec(_ones((2, 3)), _ones(4)), ValueError,
     "inconsistent size for core dimension 'm': 4 vs 3 on vectorized function with "
     "excluded=frozenset() and signature='(n,m),(m)->(n)'"),
    (lambda: jnp.vecdot(_ones((2, 3)), _ones(4)), ValueError,
     "axes must match; got shapes (2, 3) and (4,) with axis=-1"),
    (lambda: jnp.vecdot(_ones((2, 3)), _ones((4, 3))), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(2,), (4,)]"),
    (lambda: jnp.convolve(_ones((2, 3)), _ones(3)), ValueError,
     "convolve() only support 1-dimensional inputs."),
    (lambda: jnp.convolve(_ones(3), _ones(3), mode="foo"), ValueError,
     "mode must be one of ['full', 'same', 'valid']"),
    (lambda: jnp.correlate(_ones(0), _ones(3)), ValueError,
     "correlate: inputs cannot be empty, got shapes (0,) and (3,)."),
    (lambda: jnp.cross(_ones(4), _ones(3)), ValueError,
     "Dimension must be either 2 or 3 for cross product"),
    (lambda: jnp.diff(_ones(3), -1), ValueError, "order must be non-negative but got -1"),
    (lambda: jnp.gradient(_ones(1)), ValueError,
     "Shape of array too small to calculate a numerical gradient, at least 2 elements are "
     "required."),
    (lambda: jnp.interp(_ones(3), _ones(4), _ones(3)), ValueError,
     "xp and fp must be one-dimensional arrays of equal size"),
    (lambda: jnp.rot90(_ones(3)), ValueError,
     "rot90 requires its first argument to have ndim at least two, but got first argument of "
     "shape (3,), which has ndim 1"),
    (lambda: jnp.rot90(_ones((2, 2)), axes=(0, 0)), ValueError, "Axes must be different"),
    (lambda: jnp.ravel(_ones((2, 2)), "K"), NotImplementedError,
     "Ravel not implemented for order='K'."),
    (lambda: jnp.resize(_ones((2, 2)), (-1, 2)), ValueError,
     "all elements of `new_shape` must be non-negative"),
    (lambda: jnp.unstack(_ones(())), ValueError,
     "axis 0 is out of bounds for array of dimension 0"),
    (lambda: jnp.ix_(_ones((2, 2), np.int32)), ValueError,
     "Arguments to jax.numpy.ix_ must be 1-dimensional, got shape (2, 2)"),
    (lambda: jnp.fill_diagonal(_ones((2, 2)), 1.0), NotImplementedError,
     "JAX arrays are immutable, must use inplace=False"),
    (lambda: jnp.atleast_1d([1, 2]), TypeError,
     "atleast_1d requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jnp.unravel_index(_ones(2, np.int32), ((3, 4),)), ValueError,
     "unravel_index: shape should be a scalar or 1D sequence."),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_error_message(index):
    fn, cls, message = ERRORS[index]
    with pytest.raises(cls) as info:
        fn()
    assert message in str(info.value)


TRACED_ERRORS = [
    (lambda x: jnp.nonzero(x), "The size argument of jnp.nonzero must be statically specified "
     "to use jnp.nonzero within JAX transformations."),
    (lambda x: jnp.argwhere(x), "The size argument of jnp.nonzero must be statically specified"),
    (lambda x: jnp.repeat(x, x.astype(int)), "When jit-compiling jnp.repeat, the total number "
     "of repeats must be static."),
    (lambda x: jnp.pad(x, x[0].astype(int)), "pad_width argument of jnp.pad"),
    (lambda x: jnp.array_split(x, x[0].astype(int)), "in jax.numpy.array_split argument 1"),
    (lambda x: jnp.choose(x.astype(int), [x]), "The error occurred because jnp.choose was "
     "jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' instead."),
    (lambda x: jnp.compress(x > 0, x), "Attempted boolean conversion of traced array"),
]


@pytest.mark.parametrize("index", range(len(TRACED_ERRORS)))
def test_traced_value_errors(index):
    fn, message = TRACED_ERRORS[index]
    with pytest.raises((errors.ConcretizationTypeError, IndexError)) as info:
        jax.make_jaxpr(fn)(_ones(3))
    assert message in str(info.value)


def test_nonzero_concrete_without_size():
    x = jnp.asarray(np.array([[0, 1, 0], [2, 0, 3]], np.float32))
    rows, cols = jnp.nonzero(x)
    np.testing.assert_array_equal(rows, [0, 1, 1])
    np.testing.assert_array_equal(cols, [1, 0, 2])
    assert rows.dtype == np.int32
    np.testing.assert_array_equal(jnp.argwhere(x), np.argwhere(np.asarray(x)))
    np.testing.assert_array_equal(jnp.flatnonzero(x), [1, 3, 5])
    np.testing.assert_array_equal(x.nonzero()[1], [1, 0, 2])
    np.testing.assert_array_equal(jnp.compress(np.array([True, False, True]), x, axis=1),
                                  [[0, 0], [2, 3]])


def test_nonzero_size_truncates_and_fills():
    x = jnp.asarray(np.array([0, 5, 0, 7, 9], np.int32))
    np.testing.assert_array_equal(jnp.nonzero(x, size=2)[0], [1, 3])
    np.testing.assert_array_equal(jnp.nonzero(x, size=5, fill_value=-1)[0], [1, 3, 4, -1, -1])
    assert jnp.nonzero(jnp.zeros(4), size=0)[0].shape == (0,)


# ---------------------------------------------------------------------------------------------
# dtypes and weak types.

def test_weak_types_follow_promotion():
    assert jnp.dot(2.0, 3.0).weak_type
    assert float(jnp.dot(2.0, 3.0)) == 6.0
    assert not jnp.dot(_ones(3), 2.0).weak_type
    assert jnp.dot(_ones(3, np.int32), 2.0).dtype == np.float32
    assert jnp.matmul(_ones((2, 2), np.int8), _ones((2, 2), np.int8)).dtype == np.int8
    assert jnp.matmul(_ones((2, 2), np.int8), _ones((2, 2), np.int8),
                      preferred_element_type=np.int32).dtype == np.int32
    assert jnp.einsum("i,i->", _ones(3, np.int32), _ones(3, np.bool_)).dtype == np.int32
    assert jnp.reshape(1.0, (1, 1)).weak_type
    assert jnp.stack([1.0, 2.0]).weak_type
    assert not jnp.stack([1.0, _ones(())]).weak_type
    assert jnp.concatenate([_ones(2, np.float16), np.ones(2, np.int8)]).dtype == np.float16
    assert jnp.astype(1, np.float32).weak_type is False
    assert jnp.astype(_ones(2, np.int32), None).dtype == np.float32


def test_astype_complex_to_real_warns():
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes"):
        out = jnp.astype(_ones(2, np.complex64), np.float32)
    assert out.dtype == np.float32


def test_clip_keeps_dtype_and_accepts_arrays():
    x = jnp.asarray(np.array([-3, 0, 7], np.int8))
    out = jnp.clip(x, 0, 5)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [0, 0, 5])
    np.testing.assert_array_equal(jnp.clip(x, max=jnp.asarray(np.int8(1))), [-3, 0, 1])


# ---------------------------------------------------------------------------------------------
# Array methods and operators routed to these modules.

def test_array_methods():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(x.T, np.arange(6).reshape(2, 3).T)
    np.testing.assert_array_equal(x.reshape(3, 2), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(x.reshape((3, 2)), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(x.reshape(-1, order="F"), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(x.transpose(1, 0), np.arange(6).reshape(2, 3).T)
    np.testing.assert_array_equal(x.flatten(), np.arange(6))
    np.testing.assert_array_equal(x.ravel(order="F"), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(x.swapaxes(0, 1), np.arange(6).reshape(2, 3).T)
    np.testing.assert_array_equal(x[None].squeeze(0), x)
    np.testing.assert_array_equal(x.repeat(2, axis=0)[:, 0], [0, 0, 3, 3])
    np.testing.assert_array_equal(x.diagonal(), [0, 4])
    assert float(x.trace()) == 4.0
    assert x.astype(np.int32).dtype == np.int32
    np.testing.assert_array_equal(x.clip(1, 4), np.clip(np.arange(6).reshape(2, 3), 1, 4))
    np.testing.assert_array_equal(x.view(np.int32), np.asarray(x).view(np.int32))
    np.testing.assert_array_equal(x @ jnp.ones(3), [3.0, 12.0])
    np.testing.assert_array_equal(np.ones((1, 2), np.float32) @ x, [[3.0, 5.0, 7.0]])
    np.testing.assert_array_equal(x.dot(jnp.ones(3)), [3.0, 12.0])
    assert jnp.ndim(x) == 2 and jnp.shape(x) == (2, 3) and jnp.size(x) == 6
    assert jnp.size(x, 1) == 3


def test_take_method_goes_through_jnp_take():
    x = jnp.asarray(np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(x.take(jnp.asarray(np.array([4, 0], np.int32))), [4.0, 0.0])


def test_mT_and_permute_dims_on_tracers():
    closed = jax.make_jaxpr(lambda x: (x.mT, jnp.permute_dims(x, (2, 0, 1))))(_ones((2, 3, 4)))
    assert [a.shape for a in closed.out_avals] == [(2, 4, 3), (4, 2, 3)]


# Printed by JAX 0.10.2 for `jax.lax.split/stack/unstack` on an f32[2,3] argument.
LAX_JOINING_GOLDEN = {
    "split": (lambda x: jax.lax.split(x, (1, 2), axis=1), """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,1] c:f32[2,2] = split[axis=1 sizes=(1, 2)] a
  in (b, c) }"""),
    "stack": (lambda x: jax.lax.stack([x, x], axis=-1), """\
{ lambda ; a:f32[2,3]. let b:f32[2,3,2] = stack[axis=2] a a in (b,) }"""),
    "unstack": (lambda x: jax.lax.unstack(x, -1), """\
{ lambda ; a:f32[2,3]. let
    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a
  in (b, c, d) }"""),
}


@pytest.mark.parametrize("name", sorted(LAX_JOINING_GOLDEN))
def test_lax_joining_wrappers_print_as_jax(name):
    fn, expected = LAX_JOINING_GOLDEN[name]
    assert str(jax.make_jaxpr(fn)(_ones((2, 3)))) == expected


def test_lax_joining_wrappers_values():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(jax.lax.tile(x, (2, 1)), np.tile(np.asarray(x), (2, 1)))
    first, second = jax.lax.split(x, (1, 2), axis=1)
    np.testing.assert_array_equal(first, [[0.0], [3.0]])
    np.testing.assert_array_equal(second, [[1.0, 2.0], [4.0, 5.0]])
    np.testing.assert_array_equal(jax.lax.stack([x, x], axis=0), np.stack([x, x]))
    columns = jax.lax.unstack(x, axis=1)
    assert isinstance(columns, tuple) and len(columns) == 3
    np.testing.assert_array_equal(columns[2], [2.0, 5.0])
    with pytest.raises(TypeError, match="reps length must be equal to the ndim of x"):
        jax.lax.tile(x, (2,))
    with pytest.raises(ValueError, match="Sum of sizes 2 must be equal to dimension 1"):
        jax.lax.split(x, (1, 1), axis=1)


# ---------------------------------------------------------------------------------------------
# einsum specifics.

def test_einsum_path_matches_opt_einsum_order():
    path, info = jnp.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)),
                                 np.ones((4, 5)), optimize="greedy")
    assert path == [(1, 2), (0, 1)]
    assert "Complete contraction:  ij,jk,kl->il" in str(info)
    unopt, _ = jnp.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)),
                               np.ones((4, 5)), optimize=False)
    assert unopt == [(0, 1), (0, 1)]


def test_einsum_explicit_path_and_precision():
    x, y, z = _ones((2, 3)), _ones((3, 4)), _ones((4, 5))
    out = jnp.einsum("ij,jk,kl->il", x, y, z, optimize=[(1, 2), (0, 1)])
    np.testing.assert_allclose(out, np.full((2, 5), 12.0))
    text = str(jax.make_jaxpr(lambda a, b: jnp.einsum("ij,jk->ik", a, b,
                                                      precision="highest"))(x, y))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text


def test_einsum_out_argument_rejected():
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.einsum"):
        jnp.einsum("i->i", _ones(3), out=_ones(3))


# ---------------------------------------------------------------------------------------------
# Comparison with real JAX, when it is installed.

@pytest.mark.needs_jax
def test_values_and_dtypes_match_real_jax():
    real_jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(4, 2)).astype(np.float32)
    cases = [
        lambda m: m.einsum("ij,jk->ki", x, y),
        lambda m: m.pad(x, ((1, 2), (3, 0)), mode="symmetric", reflect_type="odd"),
        lambda m: m.roll(x, (1, -2), axis=(0, 1)),
        lambda m: m.repeat(x, np.array([1, 0, 2]), axis=0, total_repeat_length=4),
        lambda m: m.nonzero(x > 0, size=5, fill_value=-1)[1],
        lambda m: m.vecdot(x, x[:1]),
        lambda m: m.interp(np.linspace(-1, 5, 7), np.arange(4.0), x[0]),
    ]
    for case in cases:
        want = case(real_jnp)
        got = case(jnp)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
