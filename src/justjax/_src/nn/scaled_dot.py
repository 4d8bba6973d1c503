"""`jax.nn`'s block-scaled matrix products: `scaled_matmul`, `scaled_dot_general` and
`get_scaled_dot_general_config` (the microscaling formats mxfp8 and nvfp4).

JAX runs these only through cuDNN on NVIDIA GPUs; on CPU its `scaled_matmul` has no
lowering. Here `scaled_matmul` computes what JAX documents it to compute, in float32;
`scaled_dot_general` without configs is `lax.dot_general`, as in JAX. With configs it must
quantize to float8/float4 types, which justjax does not have: that raises JAX's own CPU
error.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Literal

import ml_dtypes
import numpy as np

from justjax._src.lax import dot as lax_dot
from justjax._src.numpy import array_creation, rearranging, scalar_types, ufuncs

__all__ = ["get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"]


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """How one operand of `scaled_dot_general` is quantized: blocks of `block_size`
    elements along the contracting axis share one scale of `scale_type`; the values are
    stored as `data_type` (nvfp4 also divides by a float32 `global_scale`)."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any | None
    infer_only: bool


def get_scaled_dot_general_config(mode: Literal["nvfp4", "mxfp8"], global_scale: Any = None
                                  ) -> BlockScaleConfig:
    """The quantization config of a microscaling format, for `scaled_dot_general`.

    Args:
      mode: "mxfp8" (float8_e4m3fn values, float8_e8m0fnu scales per 32) or "nvfp4"
        (float4_e2m1fn values, float8_e4m3fn scales per 16, and a global scale).
      global_scale: nvfp4's float32 global scale (default `[1.]`); unused by mxfp8.
    Returns:
      A `BlockScaleConfig`.
    """
    if mode == "nvfp4":
        one = array_creation.ones((1,), dtype=np.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=ml_dtypes.float4_e2m1fn,
                                scale_type=ml_dtypes.float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=ml_dtypes.float8_e4m3fn,
                                scale_type=ml_dtypes.float8_e8m0fnu, global_scale=None,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def _check_scaled_matmul_shapes(a: Any, b: Any, a_scales: Any, b_scales: Any) -> None:
    """JAX's ValueErrors for operands that are not (B, M, K), (B, N, K) with scales
    (B, M, K_s), (B, N, K_s)."""
    if not all(x.ndim == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    batch_a, m, k_a = a.shape
    batch_b, n, k_b = b.shape
    if k_a != k_b or batch_a != batch_b:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a.shape} and {b.shape}")
    batch_as, m_s, k_as = a_scales.shape
    batch_bs, n_s, k_bs = b_scales.shape
    if k_as != k_bs or batch_as != batch_bs:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                         f"{b_scales.shape}")
    if m_s != m or n_s != n:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_scales.shape}, b_scales: {b_scales.shape}")


def _dequantize(x: Any, scales: Any) -> Any:
    """`x * repeat(scales, block)` along the last axis, in float32."""
    block = x.shape[-1] // scales.shape[-1]
    wide_scales = rearranging.repeat(scales.astype(np.float32), block, axis=-1)
    return ufuncs.multiply(x.astype(np.float32), wide_scales)


def scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                  preferred_element_type: Any = np.float32) -> Any:
    """Block-scaled batched matmul: `einsum('BMK,BNK->BMN', lhs * lhs_scales,
    rhs * rhs_scales)` with each scale repeated over its block of the contracting axis,
    computed in float32.

    Args:
      lhs: (B, M, K).
      rhs: (B, N, K).
      lhs_scales: (B, M, K_a), K a multiple of K_a.
      rhs_scales: (B, N, K_b), K a multiple of K_b, K_b == K_a.
      preferred_element_type: the result dtype.
    Returns:
      (B, M, N) of `preferred_element_type`.
    """
    _check_scaled_matmul_shapes(lhs, rhs, lhs_scales, rhs_scales)
    out_dtype = scalar_types.check_and_canonicalize_user_dtype(preferred_element_type,
                                                               "scaled_matmul")
    a = _dequantize(lhs, lhs_scales)
    b = _dequantize(rhs, rhs_scales)
    out = lax_dot.dot_general(a, b, (((2,), (2,)), ((0,), (0,))),
                              preferred_element_type=np.float32)
    return out.astype(out_dtype)


_SCALED_DOT_OUTPUT_TYPES = (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16),
                            np.dtype(np.float16))


def scaled_dot_general(lhs: Any, rhs: Any, dimension_numbers: Any,
                       preferred_element_type: Any = np.float32, configs: Any = None,
                       implementation: Literal["cudnn"] | None = None) -> Any:
    """A `lax.dot_general` whose operands (and, in reverse mode, cotangents) are quantized
    block by block as `configs` say.

    Args:
      lhs, rhs: the operands.
      dimension_numbers: `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`.
      preferred_element_type: the result dtype (float32, bfloat16 or float16 with configs).
      configs: three `BlockScaleConfig`s (lhs, rhs, gradients); None: no quantization,
        a plain `lax.dot_general`.
      implementation: deprecated and ignored.
    Returns:
      The product, laid out as `lax.dot_general`'s.
    """
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax_dot.dot_general(lhs, rhs, dimension_numbers,
                                   preferred_element_type=preferred_element_type)
    if preferred_element_type not in _SCALED_DOT_OUTPUT_TYPES:
        # JAX's message, its placeholder unfilled.
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        "{preferred_element_type}")
    # JAX lowers the quantized product only for GPUs; on CPU it fails with this error, and
    # justjax has none of the float8/float4 types the quantization produces.
    raise NotImplementedError(
        "MLIR translation rule for primitive 'scaled_matmul' not found for platform cpu")
