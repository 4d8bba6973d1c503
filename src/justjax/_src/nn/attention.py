"""`jax.nn.dot_product_attention`: scaled dot-product attention with JAX's "xla"
implementation (multi-head, grouped-query and multi-query; bias, boolean and causal masks,
sliding windows, padding by sequence lengths).

Shapes use JAX's letters: B batch, T query length, S key/value length, N query heads,
K key/value heads, G = N // K query heads per key/value head, H head dimension.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.interpreters import batching
from justjax._src.lax import dot as lax_dot
from justjax._src.lax import structural
from justjax._src.nn.functions import softmax
from justjax._src.numpy import (array_creation, diagonals, scalar_types, selection, shape_ops,
                                tensor, ufuncs)
from justjax._src.scipy.special import logsumexp

__all__ = ["dot_product_attention"]


def _large_negative(dtype: np.dtype) -> Any:
    """The logit of a masked-out position: very negative but finite once cast to float32,
    the dtype softmax runs in (so float64 logits are capped at float32's range)."""
    dtype_max = min(dtypes.finfo(dtype).max, dtypes.finfo(np.float32).max)
    return array_creation.asarray(-0.7 * dtype_max, dtype=dtype)


def _causal_mask(t: int, s: int) -> Any:
    return diagonals.tril(array_creation.ones((t, s), dtype=bool))[None, None, :, :]


def _window_mask(t: int, s: int, local_window_size: tuple[int, int]) -> Any:
    """Query position i sees key positions i - left ... i + right."""
    query_pos = array_creation.array(range(t))
    key_pos = array_creation.array(range(s))
    left_window, right_window = local_window_size
    left_mask = ufuncs.less_equal(query_pos[..., None], key_pos[..., None, :] + left_window)
    right_mask = ufuncs.greater_equal(query_pos[..., None], key_pos[..., None, :] - right_window)
    return ufuncs.logical_and(right_mask, left_mask)[None, None, :, :]


def _padding_mask_logits(t: int, s: int, q_seqlen: Any, kv_seqlen: Any) -> Any:
    """Logits (B, 1, T, S) whose query or key position lies past its sequence's length are
    masked out."""
    q_mask: Any = True
    kv_mask: Any = True
    if q_seqlen is not None:
        q_indices = array_creation.arange(0, t)[None, :, None]
        q_mask = ufuncs.less(q_indices, q_seqlen[:, None, None])
    if kv_seqlen is not None:
        kv_indices = array_creation.arange(0, s)[None, None, :]
        kv_mask = ufuncs.less(kv_indices, kv_seqlen[:, None, None])
    return ufuncs.logical_and(q_mask, kv_mask)[:, None, :, :]


def _padding_mask_encoded(t: int, q_seqlen: Any) -> Any:
    """Outputs (B, T, 1, 1) of query positions past the sequence's length are zeroed."""
    q_indices = array_creation.arange(0, t)[None, :]
    return ufuncs.less(q_indices, q_seqlen[:, None])[:, :, None, None]


def _apply_masks(logits: Any, mask: Any, is_causal: bool, q_seqlen: Any, kv_seqlen: Any,
                 local_window_size: tuple[int, int] | None) -> Any:
    """`logits` with every masked-out position set to a large negative number."""
    if (mask is None and not is_causal and q_seqlen is None and kv_seqlen is None
            and local_window_size is None):
        return logits
    combined = array_creation.ones_like(logits, dtype=bool)
    if mask is not None:
        combined = ufuncs.logical_and(combined, mask)
    t, s = logits.shape[2], logits.shape[3]
    if is_causal:
        combined = ufuncs.logical_and(combined, _causal_mask(t, s))
    if local_window_size is not None:
        combined = ufuncs.logical_and(combined, _window_mask(t, s, local_window_size))
    if q_seqlen is not None or kv_seqlen is not None:
        combined = ufuncs.logical_and(combined, _padding_mask_logits(t, s, q_seqlen, kv_seqlen))
    return selection.where(combined, logits, _large_negative(logits.dtype))


def _query_key_logits(query: Any, key: Any) -> Any:
    """The logits (B, N, T, S), accumulated in at least float32; half-precision operands
    multiply with the matching float32-accumulating algorithm, as in JAX.

    As JAX: where the platform refuses that algorithm (F16_F16_F32 on CPU) when the product
    is compiled on its own, the default precision is used instead. Under an enclosing jit the
    refusal comes when the whole program is compiled, so it stays an error there too.
    """
    logits_dtype = scalar_types.promote_types(query.dtype, np.float32)
    precision = {np.dtype(dtypes.bfloat16): lax_dot.DotAlgorithmPreset.BF16_BF16_F32,
                 np.dtype(np.float16): lax_dot.DotAlgorithmPreset.F16_F16_F32
                 }.get(np.dtype(query.dtype))
    try:
        return tensor.einsum("BTNH,BSNH->BNTS", query, key, precision=precision,
                             preferred_element_type=logits_dtype)
    except ValueError:
        return tensor.einsum("BTNH,BSNH->BNTS", query, key, precision=None,
                             preferred_element_type=logits_dtype)


def _attention_core(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
                    scale: float, q_seqlen: Any, kv_seqlen: Any,
                    local_window_size: tuple[int, int] | None, return_residual: bool) -> Any:
    """Attention of one query head per key/value head: query (B, T, K, H)."""
    logits = _query_key_logits(query, key)
    logits = ufuncs.multiply(logits, array_creation.array(scale, dtype=logits.dtype))
    if bias is not None:
        logits = ufuncs.add(logits, bias).astype(logits.dtype)
    padded_logits = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen,
                                 local_window_size)
    # The softmax always runs in float32.
    padded_logits = padded_logits.astype(np.float32)
    probs = softmax(padded_logits, axis=-1).astype(key.dtype)
    encoded = tensor.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_seqlen is not None:
        keep = _padding_mask_encoded(encoded.shape[1], q_seqlen)
        encoded = ufuncs.multiply(encoded, keep.astype(encoded.dtype))
    if return_residual:
        lse = logsumexp(padded_logits, axis=-1).astype(key.dtype)
        lse = shape_ops.transpose(lse, (0, 2, 1))  # B N T -> B T N
        return encoded, structural.stop_gradient(lse)
    return encoded


def _vmap(fun: Callable[..., Any], in_axes: Sequence[int | None], out_axis: int
          ) -> Callable[..., Any]:
    """`vmap(fun, in_axes, out_axes=out_axis)` over array-or-None arguments (the library
    layer has no `api.vmap`; it drives `batching.batch_flat`, as `lax.map` does)."""
    def batched(*args: Any) -> Any:
        mapped = [i for i, ax in enumerate(in_axes) if ax is not None and args[i] is not None]
        size = core.get_aval(args[mapped[0]]).shape[in_axes[mapped[0]]]

        def flat(*mapped_args: Any) -> list[Any]:
            full = list(args)
            for i, arg in zip(mapped, mapped_args, strict=True):
                full[i] = arg
            out = fun(*full)
            return list(out) if isinstance(out, tuple) else [out]

        outs = batching.batch_flat(flat, batching.AxisData(batching.no_axis_name, size),
                                   [in_axes[i] for i in mapped], lambda n: [out_axis] * n,
                                   [args[i] for i in mapped])
        return tuple(outs) if len(outs) > 1 else outs[0]

    return batched


def _attention_xla(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
                   scale: float, q_seqlen: Any, kv_seqlen: Any,
                   local_window_size: tuple[int, int] | None, return_residual: bool) -> Any:
    """Grouped attention: the G query heads of each key/value head are vmapped."""
    b, t, n, h = query.shape
    k = key.shape[2]
    g = n // k
    query = shape_ops.reshape(query, (b, t, k, g, h))

    def grouped(x: Any) -> Any:
        if x is None:
            return None
        xb, xn, xt, xs = x.shape
        if xn == 1:
            return array_creation.broadcast_to(x[:, :, None, :, :], (xb, xn, g, xt, xs))
        return shape_ops.reshape(x, (xb, k, g, xt, xs))

    core_fn = _vmap(_attention_core, (3, None, None, 2, 2, None, None, None, None, None, None),
                    out_axis=3)
    out = core_fn(query, key, value, grouped(bias), grouped(mask), is_causal, scale, q_seqlen,
                  kv_seqlen, local_window_size, return_residual)
    if return_residual:
        encoded, lse = out
        return shape_ops.reshape(encoded, (b, t, n, h)), shape_ops.reshape(lse, (b, t, n))
    return shape_ops.reshape(out, (b, t, n, h))


def _ensure_4d(x: Any) -> Any:
    """Leading axes of size 1 up to rank 4 (the unbatched `TNH` forms)."""
    x = array_creation.asarray(x)
    missing = 4 - x.ndim
    if missing > 0:
        return shape_ops.expand_dims(x, axis=tuple(range(missing)))
    return x


def _check_shape_and_dtype(x: Any, shape: Sequence[int], dtype: np.dtype | None,
                           name: str) -> None:
    """JAX's ValueErrors for a rank, dtype or size (-1: any size) that does not fit."""
    if x is None:
        return
    if x.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {x.ndim}")
    if dtype is not None and x.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {x.dtype}")
    for i in range(x.ndim):
        if shape[i] != -1 and x.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {x.shape}")


def _check_cudnn(local_window_size: tuple[int, int] | None, is_causal: bool,
                 use_padding: bool) -> None:
    """The "cudnn" implementation's argument check, then its absence on this machine."""
    if local_window_size is not None:
        right_window = local_window_size[1]
        # cuDNN takes a right window only with a plain causal mask (no padding).
        if right_window != 0 and not (is_causal and not use_padding):
            raise ValueError(f"cuDNN doesn't support right window: {right_window} "
                             "when causal mask is not used.")
    raise RuntimeError("cuDNN is not detected.")


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: Literal["xla", "cudnn"] | None = None,
                          return_residual: bool = False) -> Any:
    """Scaled dot-product attention, `softmax(Q K^T * scale + bias) V` per head.

    Args:
      query: (B, T, N, H) or (T, N, H).
      key: (B, S, K, H) or (S, K, H); N must be a multiple of K (K == N: multi-head,
        K == 1: multi-query, else grouped-query attention).
      value: the same shape and dtype as `key`.
      bias: added to the logits; 4D (or fewer axes), broadcastable to (B, N, T, S).
      mask: boolean, True where a logit takes part; broadcastable to (B, N, T, S).
      scale: the logits' factor (default `1 / sqrt(H)`).
      is_causal: mask out keys after each query position.
      query_seq_lengths: int32 (B,): query positions at or past it are masked and give 0.
      key_value_seq_lengths: int32 (B,): key positions at or past it are masked.
      local_window_size: (left, right) window each query position attends in, or an int
        for a symmetric one.
      implementation: None or "xla" (the same computation); "cudnn" needs an NVIDIA GPU.
      return_residual: also return the logsumexp of the logits, shaped (B, T, N) or (T, N).
    Returns:
      The attention output, shaped as `query`; with `return_residual`, `(output, lse)`.
    """
    output_shape = array_creation.asarray(query).shape
    residual_shape = output_shape[:-1]
    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    if query_seq_lengths is not None:
        query_seq_lengths = array_creation.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = array_creation.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    b, s, k, h = key_arr.shape
    _check_shape_and_dtype(value_arr, [b, s, k, h], key_arr.dtype, "value")
    _check_shape_and_dtype(query_arr, [b, -1, -1, h], key_arr.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(query_seq_lengths, [b], np.dtype(np.int32), "query_seq_lengths")
    _check_shape_and_dtype(key_value_seq_lengths, [b], np.dtype(np.int32),
                           "key_value_seq_lengths")
    if query_arr.shape[-2] % k != 0:
        raise ValueError("The number of query heads must be a multiple of key/value heads, "
                         f"but got {query_arr.shape[-2]} vs {k}")
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale

    if implementation == "cudnn":
        use_padding = query_seq_lengths is not None or key_value_seq_lengths is not None
        _check_cudnn(local_window_size, is_causal, use_padding)
    elif implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention_xla(query_arr, key_arr, value_arr, bias, mask, is_causal, scale_val,
                         query_seq_lengths, key_value_seq_lengths, local_window_size,
                         return_residual)
    if return_residual:
        encoded, residual = out
        return (shape_ops.reshape(encoded, output_shape),
                shape_ops.reshape(residual, residual_shape))
    return shape_ops.reshape(out, output_shape)
