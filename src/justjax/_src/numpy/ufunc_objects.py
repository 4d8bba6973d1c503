"""`jnp.ufunc`: NumPy's universal-function objects, with `reduce`, `accumulate`, `at`,
`reduceat` and `outer`, and `jnp.frompyfunc` to make one from a scalar function.

As in JAX, `jnp.add`, `jnp.multiply`, `jnp.maximum` ... are ufunc objects: calling one runs
the elementwise function; their reductions use the fast reducers (`jnp.add.reduce` is
`jnp.sum`). A ufunc made by `frompyfunc` is vectorized over its arguments and reduces and
accumulates with a loop of its own calls.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from justjax._src.core import dtypes
from justjax._src.lax.control_flow.library import fori_loop
from justjax._src.lax.control_flow.scan import scan
from justjax._src.numpy import (array_creation, joining, reductions, selection, shape_ops,
                                ufuncs, util)
from justjax._src.numpy import vectorize as vectorize_module

__all__ = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "frompyfunc", "logaddexp",
           "logaddexp2", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
           "multiply", "negative", "subtract", "ufunc"]

_AT_INPLACE_ERROR = ("Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace "
                     "like\nnp.ufunc.at(). Instead, you can pass inplace=False and capture the "
                     "result; e.g.\n>>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")


class ufunc:  # noqa: N801 (NumPy's and JAX's name)
    """A universal function: an elementwise function of `nin` arrays with `nout` results.

    Args:
      func: the elementwise function (of scalars, for `frompyfunc`-style ufuncs).
      nin, nout: the numbers of inputs and outputs.
      name: the name (default `func.__name__`).
      nargs: the number of arguments (default `nin`).
      identity: the reduction's identity (None: none).
      call, reduce, accumulate, at, reduceat: fast implementations of the methods; the
        defaults vectorize `func` and loop over it.
    """

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 name: str | None = None, nargs: int | None = None, identity: Any = None,
                 call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None,
                 accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None,
                 reduceat: Callable[..., Any] | None = None) -> None:
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._func = func
        self._nin = operator.index(nin)
        self._nout = operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._fast = {"call": call, "reduce": reduce, "accumulate": accumulate, "at": at,
                      "reduceat": reduceat}

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nargs)
    identity = property(lambda self: self._identity)

    def _key(self) -> tuple:
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    # -- calling ----------------------------------------------------------------------------
    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        util.check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        call = self._fast["call"] or vectorize_module.vectorize(self._func)
        return call(*args)

    def _result_dtype(self, *examples: Any) -> np.dtype:
        """The dtype `func` gives for arguments of the examples' dtypes."""
        ones = [array_creation.ones((), dtype=array_creation.asarray(x).dtype) for x in examples]
        return array_creation.asarray(self._func(*ones)).dtype

    def _check_binary(self, method: str) -> None:
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    # -- reduce -------------------------------------------------------------------------------
    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """Repeated application along `axis`: `op(op(a[0], a[1]), a[2]) ...`.

        Args:
          a: the array.
          axis: the axis (None: all).
          dtype: the result dtype.
          keepdims: keep the reduced axis as size 1.
          initial: the starting value (default: the identity, else the first element).
          where: a boolean mask of the elements to include (needs an identity or `initial`).
        Returns:
          The reduction.
        """
        util.check_arraylike(f"{self.__name__}.reduce", a)
        self._check_binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            util.check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            util.check_arraylike(f"{self.__name__}.reduce", where)
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'.")
            where_dtype = array_creation.asarray(where).dtype
            if where_dtype != bool:
                raise ValueError(f"where argument must have dtype=bool; got dtype={where_dtype}")
        reduce = self._fast["reduce"] or self._reduce_by_loop
        return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                      where=where)

    def _reduce_by_loop(self, a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
                        initial: Any = None, where: Any = None) -> Any:
        arr = array_creation.asarray(a)
        initial = self._identity if initial is None else initial
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        if where is not None:
            where = util.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = arr.ravel()
            where = None if where is None else where.ravel()
            axis = 0
        else:
            axis = util.canonicalize_axis(axis, arr.ndim)
            final_shape = arr.shape[:axis] + ((1,) if keepdims else ()) + arr.shape[axis + 1:]
        arr = shape_ops.moveaxis(arr, axis, 0)
        where = None if where is None else shape_ops.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return array_creation.full(final_shape, initial, dtype)

        def step(i: Any, acc: Any) -> Any:
            combined = self(acc, arr[i].astype(dtype))
            return combined if where is None else selection.where(where[i], combined, acc)

        start, first = (1, arr[0]) if initial is None else (0, initial)
        first = util.broadcast_to(array_creation.asarray(first).astype(dtype), arr.shape[1:])
        result = fori_loop(start, arr.shape[0], step, first)
        return result.reshape(final_shape) if keepdims else result

    # -- accumulate ---------------------------------------------------------------------------
    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running reduction along `axis` (`add.accumulate` is `cumsum`).

        Args:
          a: the array.
          axis: the axis.
          dtype: the result dtype.
        Returns:
          An array shaped like `a`.
        """
        self._check_binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        accumulate = self._fast["accumulate"] or self._accumulate_by_scan
        return accumulate(a, axis=axis, dtype=dtype)

    def _accumulate_by_scan(self, a: Any, axis: int = 0, dtype: Any = None) -> Any:
        util.check_arraylike(f"{self.__name__}.accumulate", a)
        arr = array_creation.asarray(a)
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = util.canonicalize_axis(axis, arr.ndim)
        if arr.size == 0:
            return array_creation.full(arr.shape, 0, dtype)
        arr = shape_ops.moveaxis(arr, axis, 0).astype(dtype)

        def step(acc: Any, x: Any) -> tuple[Any, Any]:
            new = self(acc, x)
            return new, new

        _, rest = scan(step, arr[0], arr[1:])
        result = joining.concatenate([arr[:1], rest.astype(dtype)])
        return shape_ops.moveaxis(result, 0, axis)

    # -- at -----------------------------------------------------------------------------------
    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """`a` with `op` applied at `indices` (with `b`), unbuffered: repeated indices apply
        repeatedly (`add.at` is `a.at[indices].add(b)`).

        Args:
          a: the array.
          indices: an index expression.
          b: the second operand of a binary ufunc.
          inplace: must be False.
        Returns:
          The updated array.
        """
        if inplace:
            raise NotImplementedError(_AT_INPLACE_ERROR)
        at = self._fast["at"] or self._at_by_scan
        return at(a, indices) if b is None else at(a, indices, b)

    def _at_by_scan(self, a: Any, indices: Any, *args: Any) -> Any:
        util.check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = self._result_dtype(a, *args)
        a = array_creation.asarray(a).astype(dtype)
        args = tuple(array_creation.asarray(arg).astype(dtype) for arg in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
        shape = util.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = math.prod(shape)
        if args:
            arg = util.broadcast_to(args[0], (*shape, *args[0].shape[len(shape):]))
            args = (arg.reshape(count, *arg.shape[len(shape):]),)
        flat_indices = tuple(i if isinstance(i, slice)
                             else util.broadcast_to(i, shape).reshape(count) for i in indices)

        def step(k: Any, acc: Any) -> Any:
            index = tuple(i if isinstance(i, slice) else i[k] for i in flat_indices)
            return acc.at[index].set(self(acc.at[index].get(), *(arg[k] for arg in args)))

        return fori_loop(0, count, step, a)

    # -- reduceat and outer --------------------------------------------------------------------
    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """Reductions over the slices `a[indices[i]:indices[i+1]]` along `axis` (a single
        element where `indices[i] >= indices[i+1]`, as NumPy's).

        Args:
          a: the array.
          indices: the slice starts (1-D integers).
          axis: the axis.
          dtype: the result dtype.
        Returns:
          One reduction per index.
        """
        self._check_binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        if self._fast["reduceat"] is not None:
            return self._fast["reduceat"](a, indices, axis=axis, dtype=dtype)
        return self._reduceat_by_scan(a, indices, axis=axis, dtype=dtype)

    def _reduceat_by_scan(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None) -> Any:
        arr, idx = util.ensure_arraylike(f"{self.__name__}.reduceat", a, indices)
        if idx.ndim != 1:
            raise ValueError("reduceat: indices must be one-dimensional.")
        axis = util.canonicalize_axis(axis, arr.ndim)
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        arr = shape_ops.moveaxis(arr, axis, 0).astype(dtype)
        n = arr.shape[0]
        idx = selection.where(idx < 0, idx + n, idx)
        stops = joining.concatenate([idx[1:], array_creation.asarray([n], dtype=idx.dtype)])
        # Each output starts as a[idx[i]] and takes in a[j] for idx[i] < j < stop[i].
        starts = arr[idx]

        def step(j: Any, acc: Any) -> Any:
            inside = (j > idx) & (j < stops)
            inside = inside.reshape(inside.shape + (1,) * (arr.ndim - 1))
            return selection.where(inside, self(acc, arr[j]), acc)

        result = fori_loop(0, n, step, starts)
        return shape_ops.moveaxis(result, 0, axis)

    def outer(self, A: Any, B: Any, /, **kwargs: Any) -> Any:
        """`op(A[i, j, ...], B[k, l, ...])` for every pair of elements.

        Args:
          A, B: the arrays.
        Returns:
          An array of shape `A.shape + B.shape`.
        """
        if self._nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError("outer only supported for functions returning a single value")
        A, B = util.ensure_arraylike(f"{self.__name__}.outer", A, B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B, **kwargs)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A ufunc from a function of scalars (vectorized over its arguments).

    Args:
      func: the function; it must be traceable by justjax.
      nin, nout: the numbers of inputs and outputs.
      identity: the identity of its reduction, if any.
    Returns:
      The ufunc.
    """
    return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------------------------------------
# NumPy's binary ufuncs with fast methods, over the elementwise functions of `ufuncs`.

def _binary(func: Callable[..., Any], identity: Any, **fast: Any) -> ufunc:
    return ufunc(func, 2, 1, name=func.__name__, call=func, identity=identity, **fast)


def _bitwise_reducer(name: str, op: str, identity: int) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr = util.ensure_arraylike(name, a)
        if not (dtypes.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
            raise ValueError(f"{name} requires integer or boolean inputs")
        return reductions._reduction(arr, name, op, identity, axis=axis, dtype=dtype,
                                     keepdims=keepdims, initial=initial, where_mask=where)
    return reduce


def _logical_reducer(name: str, op: str, identity: bool) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr = array_creation.asarray(a).astype(bool)
        result = reductions._reduction(arr, name, op, identity, axis=axis, keepdims=keepdims,
                                       initial=initial, where_mask=where)
        return result if dtype is None else result.astype(dtype)
    return reduce


def _log_add_exp_reducer(base_two: bool) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr = array_creation.asarray(a)
        [arr] = util.promote_dtypes_inexact(arr)
        scale = np.log(2.0) if base_two else 1.0
        peak = reductions.max(arr, axis=axis, keepdims=True, initial=-np.inf, where=where)
        peak = selection.where(ufuncs.isfinite(peak), peak, 0)
        exps = ufuncs.exp((arr - peak) * scale)
        total = reductions.sum(exps, axis=axis, keepdims=True, where=where)
        if initial is not None:
            total = total + ufuncs.exp((initial - peak) * scale)
        result = ufuncs.log(total) / scale + peak
        if not keepdims:
            result = shape_ops.squeeze(result, axis=axis if axis is not None else None)
        return result if dtype is None else result.astype(dtype)
    return reduce


def _extremum_reducer(reduction: Callable[..., Any]) -> Callable[..., Any]:
    """`jnp.max`/`jnp.min` with the ufunc reduce signature (they take no dtype)."""
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        result = reduction(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        return result if dtype is None else result.astype(dtype)
    return reduce


def _at_method(method: str) -> Callable[..., Any]:
    def at(a: Any, indices: Any, b: Any) -> Any:
        return getattr(array_creation.asarray(a).at[indices], method)(b)
    return at


add = _binary(ufuncs.add, 0, reduce=reductions.sum, accumulate=reductions.cumsum,
              at=_at_method("add"))
multiply = _binary(ufuncs.multiply, 1, reduce=reductions.prod,
                   accumulate=reductions.cumprod, at=_at_method("multiply"))
subtract = _binary(ufuncs.subtract, None, at=_at_method("subtract"))
maximum = _binary(ufuncs.maximum, None, reduce=_extremum_reducer(reductions.max))
minimum = _binary(ufuncs.minimum, None, reduce=_extremum_reducer(reductions.min))
bitwise_and = _binary(ufuncs.bitwise_and, -1,
                      reduce=_bitwise_reducer("bitwise_and", "and", -1))
bitwise_or = _binary(ufuncs.bitwise_or, 0, reduce=_bitwise_reducer("bitwise_or", "or", 0))
bitwise_xor = _binary(ufuncs.bitwise_xor, 0, reduce=_bitwise_reducer("bitwise_xor", "xor", 0))
logical_and = _binary(ufuncs.logical_and, True,
                      reduce=_logical_reducer("logical_and", "and", True))
logical_or = _binary(ufuncs.logical_or, False,
                     reduce=_logical_reducer("logical_or", "or", False))
logical_xor = _binary(ufuncs.logical_xor, False,
                      reduce=_logical_reducer("logical_xor", "xor", False))
logaddexp = _binary(ufuncs.logaddexp, -np.inf, reduce=_log_add_exp_reducer(False))
logaddexp2 = _binary(ufuncs.logaddexp2, -np.inf, reduce=_log_add_exp_reducer(True))
negative = ufunc(ufuncs.negative, 1, 1, name="negative", call=ufuncs.negative)
