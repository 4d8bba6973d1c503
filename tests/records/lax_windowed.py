"""Op records for the windowed reductions, against a loop-based NumPy reference that folds
each window element by element (holes and padding hold the initial value)."""
from __future__ import annotations

import operator

import numpy as np

from justjax import lax
from justjax._src.lax import windowed
from tests.harness import (BF16, BOOL, F16, F32, I32, I8, U8, OpRecord, rand_default, widen)
def _wide(x: np.ndarray) -> np.ndarray:
    return widen(x, integers_to=np.int64)

def _pads(padding, shape, window, strides):
    if not isinstance(padding, str):
        return list(padding)
    if padding == "VALID":
        return [(0, 0)] * len(shape)
    pads = []
    for n, k, s in zip(shape, window, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2) if padding == "SAME"
                    else (total - total // 2, total // 2))
    return pads


def reduce_window_reference(x: np.ndarray, init, op, window_dimensions, window_strides=None,
                            padding="VALID", base_dilation=None, window_dilation=None):
    ndim = x.ndim
    strides = window_strides or (1,) * ndim
    base = base_dilation or (1,) * ndim
    wdil = window_dilation or (1,) * ndim
    window = [(k - 1) * d + 1 for k, d in zip(window_dimensions, wdil)]
    pads = _pads(padding, x.shape, window, strides)
    dilated = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base)]
    out_shape = [max((n + lo + hi - k) // s + 1, 0)
                 for n, (lo, hi), k, s in zip(dilated, pads, window, strides)]
    values = _wide(x)
    init = _wide(np.asarray(init))[()]
    out = np.empty(out_shape, values.dtype)
    for index in np.ndindex(*out_shape):
        acc = init
        for tap in np.ndindex(*window_dimensions):
            q = [i * s + t * d - lo for i, s, t, d, (lo, _) in zip(index, strides, tap, wdil, pads)]
            inside = all(0 <= qi < n and qi % b == 0 for qi, n, b in zip(q, dilated, base))
            # XLA CPU: the initial value enters once; padding and holes are skipped.
            if inside:
                acc = op(acc, values[tuple(qi // b for qi, b in zip(q, base))])
        out[index] = acc
    return out


def _identity(kind: str):
    """The identity of add/max/min as a NumPy scalar of `dtype`."""
    def make(dtype: np.dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        if kind == "add":
            return np.zeros((), dtype)
        if dtype.kind == "b":
            return np.array(kind == "min")
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return np.array(info.min if kind == "max" else info.max, dtype)
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    return make


def window_record(name, lax_op, np_op, init, shapes, dtypes, differentiable=True,
                  grad_modes=("fwd", "rev"), **params) -> OpRecord:
    """`init` maps the operand dtype to the initial value."""
    def fun(x):
        return lax.reduce_window(x, init(x.dtype), lax_op, **params)

    def reference(x):
        return reduce_window_reference(x, init(x.dtype), np_op, **params)

    return OpRecord(f"reduce_window_{name}", fun, reference, shapes, dtypes,
                    differentiable=differentiable, grad_modes=grad_modes)


# Records checked in forward mode only, as JAX differentiates them: reverse mode of the
# generic `reduce_window` primitive and of a max with window dilation is not implemented
# there either.
_FORWARD_ONLY = ("fwd",)


def _ones(dtype):
    return np.ones((), dtype)


def rand_small(rng, shape, dtype):
    """Values near 1, so windowed products stay well scaled."""
    return rng.uniform(0.5, 1.5, shape).astype(dtype)


def _through_rank_1(x):
    """`x` unchanged, by way of shape (1,): equations no elementwise evaluation can batch."""
    return lax.reshape(lax.broadcast_in_dim(x, (1,), ()), ())


_SUM, _MAX, _MIN = _identity("add"), _identity("max"), _identity("min")


def _chosen_positions(x, window_dimensions, window_strides, padding, base=None, skip_pads=True):
    """Per output window, the operand index of its first maximum in row-major window order
    (None when nothing is chosen). With `skip_pads`, padding and holes are never candidates;
    otherwise padding holds -inf and may be chosen (its index then lies outside `x`)."""
    base = base or (1,) * x.ndim
    dilated = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base)]
    out_shape = [max((n + lo + hi - k) // s + 1, 0)
                 for n, (lo, hi), k, s in zip(dilated, padding, window_dimensions, window_strides)]
    chosen = {}
    for index in np.ndindex(*out_shape):
        best, best_value = None, None
        for tap in np.ndindex(*window_dimensions):
            q = [i * s + t - lo for i, s, t, (lo, _) in zip(index, window_strides, tap, padding)]
            inside = all(0 <= qi < n and qi % b == 0 for qi, n, b in zip(q, dilated, base))
            if not inside and skip_pads:
                continue
            value = float(x[tuple(qi // b for qi, b in zip(q, base))]) if inside else -np.inf
            if best_value is None or value > best_value:
                best, best_value = (tuple(qi // b for qi, b in zip(q, base)) if inside
                                    else None), value
        chosen[index] = best
    return out_shape, chosen


def select_and_gather_add_reference(tangents, operand, window_dimensions, window_strides,
                                    padding, base_dilation):
    out_shape, chosen = _chosen_positions(widen(operand), window_dimensions, window_strides,
                                          padding, base_dilation)
    out = np.zeros(out_shape, np.float64)
    for index, position in chosen.items():
        out[index] = 0.0 if position is None else widen(tangents)[position]
    return out


def select_and_scatter_add_reference(source, operand, window_dimensions, window_strides,
                                     padding):
    _, chosen = _chosen_positions(widen(operand), window_dimensions, window_strides, padding,
                                  skip_pads=False)
    out = np.zeros(operand.shape, np.float64)
    for index, position in chosen.items():
        if position is not None:
            out[position] += widen(source)[index]
    return out


def _gather_record() -> OpRecord:
    params = dict(window_dimensions=(2, 3), window_strides=(2, 1), padding=((1, 0), (1, 1)),
                  base_dilation=(1, 2))

    def fun(tangents, operand):
        return windowed._select_and_gather_add(tangents, operand, lax.ge_p,
                                               window_dilation=(1, 1), **params)

    return OpRecord("select_and_gather_add", fun,
                    lambda t, x: select_and_gather_add_reference(t, x, **params),
                    [[(5, 4), (5, 4)]], (F32, BF16))


def _scatter_record() -> OpRecord:
    params = dict(window_dimensions=(2, 3), window_strides=(2, 1), padding=((1, 0), (1, 1)))

    def fun(source, operand):
        return windowed._select_and_scatter_add(source, operand, lax.ge_p, **params)

    return OpRecord("select_and_scatter_add", fun,
                    lambda s, x: select_and_scatter_add_reference(s, x, **params),
                    [[(3, 6), (5, 6)]], (F32, BF16), expected_dtype=lambda s, x: s)

RECORDS = [
    window_record("sum_valid", lax.add, operator.add, _SUM, [[(4, 5)]], (F32, F16, BF16, I32, I8),
                  window_dimensions=(2, 2), window_strides=(1, 1), padding="VALID"),
    window_record("sum_same_strided", lax.add, operator.add, _SUM, [[(5, 7)]], (F32, I32),
                  window_dimensions=(3, 2), window_strides=(2, 3), padding="SAME"),
    window_record("max_pool", lax.max, max, _MAX, [[(2, 6, 6, 3)]], (F32, BF16, I32, U8),
                  window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1), padding="SAME"),
    window_record("max_bool", lax.max, operator.or_, _MAX, [[(7,)]], (BOOL,),
                  window_dimensions=(3,), window_strides=(2,), padding="VALID"),
    window_record("min_same_lower", lax.min, min, _MIN, [[(6, 5)]], (F32, I32),
                  window_dimensions=(2, 3), window_strides=(2, 2), padding="SAME_LOWER"),
    window_record("max_explicit_padding", lax.max, max, _MAX, [[(9,)]], (F32,),
                  window_dimensions=(3,), window_strides=(2,), padding=((1, 2),)),
    window_record("sum_negative_padding", lax.add, operator.add, _SUM, [[(10,)]], (F32,),
                  window_dimensions=(3,), window_strides=(2,), padding=((-1, 2),)),
    window_record("max_window_dilation", lax.max, max, _MAX, [[(10,)]], (F32,),
                  window_dimensions=(3,), window_strides=(2,), padding=((1, 2),),
                  window_dilation=(2,), grad_modes=_FORWARD_ONLY),
    # Some windows hold only holes and padding: their -inf output makes finite differences
    # NaN. tests/test_ad_dot_conv.py differentiates a max with base dilation instead.
    window_record("max_base_dilation", lax.max, max, _MAX, [[(5, 4)]], (F32,),
                  window_dimensions=(3, 2), window_strides=(2, 1), padding=((1, 2), (0, 1)),
                  base_dilation=(2, 3), differentiable=False),
    window_record("sum_all_dilations", lax.add, operator.add, _SUM, [[(4, 5)]], (F32, I32),
                  window_dimensions=(2, 2), window_strides=(1, 2), padding=((1, 0), (2, 1)),
                  base_dilation=(2, 1), window_dilation=(1, 2)),
    window_record("sum_empty", lax.add, operator.add, _SUM, [[(3,)]], (F32,),
                  window_dimensions=(5,), window_strides=(1,), padding="VALID"),
    window_record("sum_scalar", lax.add, operator.add, _SUM, [[()]], (F32,),
                  window_dimensions=(), window_strides=(), padding=()),
    # Other computations (or non-identity initial values) go through the generic primitive.
    window_record("prod_generic", lax.mul, operator.mul, _ones, [[(3, 6)]], (F32, I32),
                  window_dimensions=(2, 3), window_strides=(1, 2), padding="SAME",
                  grad_modes=_FORWARD_ONLY),
    window_record("max_lambda_generic", lambda a, b: lax.max(a, b), max, _MAX, [[(4, 5)]],
                  (F32, I8), window_dimensions=(2, 2), window_strides=(2, 1),
                  padding=((0, 1), (1, 1)), base_dilation=(1, 2),
                  grad_modes=_FORWARD_ONLY),
    window_record("sum_nonzero_init", lax.add, operator.add, _ones, [[(6,)]], (F32, I32),
                  window_dimensions=(2,), window_strides=(1,), padding=((1, 1),),
                  grad_modes=_FORWARD_ONLY),
    # A computation that is not elementwise on arrays, evaluated window by window.
    window_record("generic_reshape", lambda a, b: lax.mul(_through_rank_1(a), b), operator.mul,
                  _ones, [[(2, 5)]], (F32,), window_dimensions=(1, 2), window_strides=(1, 2),
                  padding="SAME", grad_modes=_FORWARD_ONLY),
    OpRecord("reduce_window_variadic",
             lambda x, y: lax.reduce_window(
                 (x, y), (np.float32(0), np.float32(1)),
                 lambda a, b: (lax.add(a[0], b[0]), lax.mul(a[1], b[1])), (2, 2), (1, 1),
                 "VALID"),
             lambda x, y: (reduce_window_reference(x, 0.0, operator.add, (2, 2), (1, 1)),
                           reduce_window_reference(y, 1.0, operator.mul, (2, 2), (1, 1))),
             [[(3, 4), (3, 4)]], (F32,), [rand_default, rand_small],
             # Its float32 initial values cannot meet the float64 operands of the gradient
             # checks; tests/test_ad_dot_conv.py checks its forward derivative.
             differentiable=False),
    # The pair that differentiates windowed max/min.
    _gather_record(),
    _scatter_record(),
]
