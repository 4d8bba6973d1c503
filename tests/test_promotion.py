"""JAX's type promotion, checked against tables real JAX 0.10.2 produced (copied below from
/work/ref/dtype_promotion.txt): `jnp.promote_types` for every pair of dtypes, the dtype and
weak type of `jnp.add` and `jnp.result_type` for Python scalars, weak arrays and every dtype,
and the result types of common constructors and functions, with x64 off and on.
"""
from __future__ import annotations

import re
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from tests.harness import dtype_by_name, x64_mode

# The tables, verbatim from /work/ref/dtype_promotion.txt (x64 off, then on).
TABLES = {
    (False, "promote_types"): """
               b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
        b1     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
        u8     u8     u8    u16    u32    u64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
       u16    u16    u16    u16    u32    u64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
       u32    u32    u32    u32    u32    u64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
       u64    u64    u64    u64    u64    u64    f64    f64    f64    f64   bf16    f16    f32    f64    c64   c128
        i8     i8    i16    i32    i32    f64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
       i16    i16    i16    i32    i32    f64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
       i32    i32    i32    i32    i32    f64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
       i64    i64    i64    i64    i64    f64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
      bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f64    c64   c128
       f16    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f64    c64   c128
       f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f64    c64   c128
       f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64   c128   c128
       c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64   c128    c64   c128
      c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128
""",
    (False, "add"): """
          pyB    pyI    pyF    pyC     wI     wF     wC     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyB     b1   i32*   f32*   c64*   i32*   f32*   c64*     b1     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   pyI   i32*   i32*   f32*   c64*   i32*   f32*   c64*   i32*     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   pyF   f32*   f32*   f32*   c64*   f32*   f32*   c64*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   bf16    f16    f32    f32    c64    c64
   pyC   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*    c64    c64    c64    c64    c64    c64
    wI   i32*   i32*   f32*   c64*   i32*   f32*   c64*   i32*     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
    wF   f32*   f32*   f32*   c64*   f32*   f32*   c64*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   bf16    f16    f32    f32    c64    c64
    wC   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*    c64    c64    c64    c64    c64    c64
    b1     b1   i32*   f32*   c64*   i32*   f32*   c64*     b1     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
    u8     u8     u8   f32*   c64*     u8   f32*   c64*     u8     u8    u16    u32    u32    i16    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   u16    u16    u16   f32*   c64*    u16   f32*   c64*    u16    u16    u16    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   u32    u32    u32   f32*   c64*    u32   f32*   c64*    u32    u32    u32    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   u64    u32    u32   f32*   c64*    u32   f32*   c64*    u32    u32    u32    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
    i8     i8     i8   f32*   c64*     i8   f32*   c64*     i8    i16    i32    i32    i32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   i16    i16    i16   f32*   c64*    i16   f32*   c64*    i16    i16    i32    i32    i32    i16    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   i32    i32    i32   f32*   c64*    i32   f32*   c64*    i32    i32    i32    i32    i32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   i64    i32    i32   f32*   c64*    i32   f32*   c64*    i32    i32    i32    i32    i32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
  bf16   bf16   bf16   bf16    c64   bf16   bf16    c64   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f32    c64    c64
   f16    f16    f16    f16    c64    f16    f16    c64    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f32    c64    c64
   f32    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    c64    c64
   f64    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    c64    c64
   c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
  c128    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
""",
    (False, "result_type"): """
          pyB    pyI    pyF    pyC     wI     wF     wC     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyB     b1    i32    f32    c64    i32    f32    c64     b1     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   pyI    i32    i32    f32    c64    i32    f32    c64    i32     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   pyF    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32   bf16    f16    f32    f32    c64    c64
   pyC    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
    wI    i32    i32    f32    c64    i32    f32    c64    i32     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
    wF    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32   bf16    f16    f32    f32    c64    c64
    wC    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
    b1     b1    i32    f32    c64    i32    f32    c64     b1     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
    u8     u8     u8    f32    c64     u8    f32    c64     u8     u8    u16    u32    u32    i16    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   u16    u16    u16    f32    c64    u16    f32    c64    u16    u16    u16    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   u32    u32    u32    f32    c64    u32    f32    c64    u32    u32    u32    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   u64    u32    u32    f32    c64    u32    f32    c64    u32    u32    u32    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
    i8     i8     i8    f32    c64     i8    f32    c64     i8    i16    i32    i32    i32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   i16    i16    i16    f32    c64    i16    f32    c64    i16    i16    i32    i32    i32    i16    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   i32    i32    i32    f32    c64    i32    f32    c64    i32    i32    i32    i32    i32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   i64    i32    i32    f32    c64    i32    f32    c64    i32    i32    i32    i32    i32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
  bf16   bf16   bf16   bf16    c64   bf16   bf16    c64   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f32    c64    c64
   f16    f16    f16    f16    c64    f16    f16    c64    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f32    c64    c64
   f32    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    c64    c64
   f64    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    c64    c64
   c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
  c128    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
""",
    (False, "result_type_weak"): """
          pyB    pyI    pyF    pyC     wI     wF     wC     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyB     b1   i32*   f32*   c64*   i32*   f32*   c64*     b1     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   pyI   i32*   i32*   f32*   c64*   i32*   f32*   c64*   i32*     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   pyF   f32*   f32*   f32*   c64*   f32*   f32*   c64*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   bf16    f16    f32    f32    c64    c64
   pyC   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*    c64    c64    c64    c64    c64    c64
    wI   i32*   i32*   f32*   c64*   i32*   f32*   c64*   i32*     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
    wF   f32*   f32*   f32*   c64*   f32*   f32*   c64*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   f32*   bf16    f16    f32    f32    c64    c64
    wC   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*   c64*    c64    c64    c64    c64    c64    c64
    b1     b1   i32*   f32*   c64*   i32*   f32*   c64*     b1     u8    u16    u32    u32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
    u8     u8     u8   f32*   c64*     u8   f32*   c64*     u8     u8    u16    u32    u32    i16    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   u16    u16    u16   f32*   c64*    u16   f32*   c64*    u16    u16    u16    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   u32    u32    u32   f32*   c64*    u32   f32*   c64*    u32    u32    u32    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   u64    u32    u32   f32*   c64*    u32   f32*   c64*    u32    u32    u32    u32    u32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
    i8     i8     i8   f32*   c64*     i8   f32*   c64*     i8    i16    i32    i32    i32     i8    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   i16    i16    i16   f32*   c64*    i16   f32*   c64*    i16    i16    i32    i32    i32    i16    i16    i32    i32   bf16    f16    f32    f32    c64    c64
   i32    i32    i32   f32*   c64*    i32   f32*   c64*    i32    i32    i32    i32    i32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
   i64    i32    i32   f32*   c64*    i32   f32*   c64*    i32    i32    i32    i32    i32    i32    i32    i32    i32   bf16    f16    f32    f32    c64    c64
  bf16   bf16   bf16   bf16    c64   bf16   bf16    c64   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f32    c64    c64
   f16    f16    f16    f16    c64    f16    f16    c64    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f32    c64    c64
   f32    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    c64    c64
   f64    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    c64    c64
   c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
  c128    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64
""",
    (False, "unary"): """
   pyB : jnp.asarray -> b1    jnp.negative -> n/a
   pyI : jnp.asarray -> i32*    jnp.negative -> i32*
   pyF : jnp.asarray -> f32*    jnp.negative -> f32*
   pyC : jnp.asarray -> c64*    jnp.negative -> c64*
   wI  : jnp.asarray -> i32*    jnp.negative -> i32*
   wF  : jnp.asarray -> f32*    jnp.negative -> f32*
   wC  : jnp.asarray -> c64*    jnp.negative -> c64*
""",
    (False, "misc"): """
   jnp.int32(1) + 1.5                                                     -> float32 weak_type=True   value=Array(2.5, dtype=float32, weak_type=True)
   jnp.int8(1) + 1000                                                     -> int8 weak_type=False   value=Array(-23, dtype=int8)
   jnp.uint8(1) + (-1)                                                    -> uint8 weak_type=False   value=Array(0, dtype=uint8)
   jnp.uint8(1) + 1.0                                                     -> float32 weak_type=True   value=Array(2., dtype=float32, weak_type=True)
   jnp.bfloat16(1) + 1.0                                                  -> bfloat16 weak_type=False   value=Array(2, dtype=bfloat16)
   jnp.float16(1) + jnp.asarray(1.0)                                      -> float16 weak_type=False   value=Array(2., dtype=float16)
   jnp.int8(1) * jnp.asarray(2)                                           -> int8 weak_type=False   value=Array(2, dtype=int8)
   jnp.bool_(True) + True                                                 -> bool weak_type=False   value=Array(True, dtype=bool)
   jnp.bool_(True) + 1                                                    -> int32 weak_type=True   value=Array(2, dtype=int32, weak_type=True)
   jnp.array([True]) + jnp.array([True])                                  -> bool weak_type=False   value=Array([ True], dtype=bool)
   jnp.array([True]) * 2.0                                                -> float32 weak_type=True   value=Array([2.], dtype=float32, weak_type=True)
   jnp.uint32(1) + jnp.int32(1)                                           -> int32 weak_type=False   value=Array(2, dtype=int32)
   jnp.uint64(1) + jnp.int64(1)                                           -> int32 weak_type=False   value=Array(2, dtype=int32)
   jnp.uint64(1) + jnp.int8(1)                                            -> int32 weak_type=False   value=Array(2, dtype=int32)
   jnp.int64(1) + jnp.float16(1)                                          -> float16 weak_type=False   value=Array(2., dtype=float16)
   jnp.float32(1) + jnp.complex64(1)                                      -> complex64 weak_type=False   value=Array(2.+0.j, dtype=complex64)
   jnp.float64(1) + jnp.complex64(1)                                      -> complex64 weak_type=False   value=Array(2.+0.j, dtype=complex64)
   jnp.asarray(1) + jnp.asarray(1.0)                                      -> float32 weak_type=True   value=Array(2., dtype=float32, weak_type=True)
   jnp.asarray(1.0) + jnp.asarray(1j)                                     -> complex64 weak_type=True   value=Array(1.+1.j, dtype=complex64, weak_type=True)
   jnp.asarray(1) + True                                                  -> int32 weak_type=True   value=Array(2, dtype=int32, weak_type=True)
   jnp.asarray(1.0) + jnp.int8(1)                                         -> float32 weak_type=True   value=Array(2., dtype=float32, weak_type=True)
   jnp.asarray(1) + jnp.uint8(1)                                          -> uint8 weak_type=False   value=Array(2, dtype=uint8)
   jnp.asarray(1j) + jnp.float16(1)                                       -> complex64 weak_type=False   value=Array(1.+1.j, dtype=complex64)
   jnp.asarray(1j) + jnp.bfloat16(1)                                      -> complex64 weak_type=False   value=Array(1.+1.j, dtype=complex64)
   jnp.asarray(1j) + jnp.int8(1)                                          -> complex64 weak_type=True   value=Array(1.+1.j, dtype=complex64, weak_type=True)
   np.float64(1.0) + jnp.float32(1)                                       -> float32 weak_type=False   value=Array(2., dtype=float32)
   jnp.float32(1) + np.float64(1.0)                                       -> float32 weak_type=False   value=Array(2., dtype=float32)
   np.int64(1) + jnp.int8(1)                                              -> int32 weak_type=False   value=Array(2, dtype=int32)
   np.array([1.0]) + jnp.float16(1)                                       -> float32 weak_type=False   value=Array([2.], dtype=float32)
   jnp.float16(1) + np.float32(1)                                         -> float32 weak_type=False   value=Array(2., dtype=float32)
   jnp.promote_types(int, float)                                          -> dtype('float64')
   jnp.promote_types(int, jnp.int8)                                       -> dtype('int8')
   jnp.promote_types(float, jnp.float16)                                  -> dtype('float16')
   jnp.promote_types(bool, int)                                           -> dtype('int64')
   jnp.result_type(1, 1.0)                                                -> dtype('float32')
   jnp.result_type(1)                                                     -> dtype('int32')
   jnp.result_type(1.0)                                                   -> dtype('float32')
   jnp.result_type(1j)                                                    -> dtype('complex64')
   jnp.result_type(True)                                                  -> dtype('bool')
   jnp.result_type(jnp.int8, 1)                                           -> dtype('int8')
   jnp.result_type(jnp.int8, 1.0)                                         -> dtype('float32')
   jnp.result_type(jnp.bfloat16, 1.0)                                     -> dtype(bfloat16)
   jnp.result_type(jnp.uint8, -1)                                         -> dtype('uint8')
   jnp.result_type('float64')                                             -> dtype('float32')
   jnp.result_type(np.float64)                                            -> dtype('float32')
   jnp.result_type(float)                                                 -> dtype('float32')
   jnp.result_type(int)                                                   -> dtype('int32')
   jnp.result_type(jnp.int32, jnp.uint32)                                 -> dtype('int32')
   jnp.result_type(jnp.int64, jnp.uint64)                                 -> dtype('int32')
   jnp.dtype(float)                                                       -> dtype('float64')
   jnp.dtype(int)                                                         -> dtype('int64')
   jnp.dtype(complex)                                                     -> dtype('complex128')
   jnp.dtype('float64')                                                   -> dtype('float64')
   jax.dtypes.canonicalize_dtype(jnp.float64)                             -> dtype('float32')
   jax.dtypes.canonicalize_dtype(jnp.int64)                               -> dtype('int32')
   jax.dtypes.canonicalize_dtype(jnp.uint64)                              -> dtype('uint32')
   jax.dtypes.canonicalize_dtype(jnp.complex128)                          -> dtype('complex64')
   jax.dtypes.canonicalize_dtype(int)                                     -> dtype('int32')
   jax.dtypes.canonicalize_dtype(float)                                   -> dtype('float32')
   jnp.float_                                                             -> <class 'jax.numpy.float64'>
   jnp.int_                                                               -> <class 'jax.numpy.int64'>
   jnp.uint                                                               -> <class 'jax.numpy.uint64'>
   jnp.complex_                                                           -> <class 'jax.numpy.complex128'>
   jnp.issubdtype(jnp.bfloat16, jnp.floating)                             -> True
   jnp.issubdtype(jnp.int8, jnp.integer)                                  -> True
   jnp.issubdtype(jnp.bool_, jnp.integer)                                 -> False
   jnp.isdtype(jnp.float32, 'real floating')                              -> True
""",
    (False, "constructors"): """
   jnp.zeros(3)                                                                -> float32    weak_type=False  shape=(3,)
   jnp.ones(3)                                                                 -> float32    weak_type=False  shape=(3,)
   jnp.empty(3)                                                                -> float32    weak_type=False  shape=(3,)
   jnp.zeros(3, int)                                                           -> int32      weak_type=False  shape=(3,)
   jnp.zeros(3, float)                                                         -> float32    weak_type=False  shape=(3,)
   jnp.full(3, 1)                                                              -> int32      weak_type=True   shape=(3,)
   jnp.full(3, 1.0)                                                            -> float32    weak_type=True   shape=(3,)
   jnp.full(3, True)                                                           -> bool       weak_type=False  shape=(3,)
   jnp.full((), 1.0)                                                           -> float32    weak_type=True   shape=()
   jnp.zeros_like(jnp.asarray(1.0))                                            -> float32    weak_type=True   shape=()
   jnp.ones_like(jnp.asarray(1))                                               -> int32      weak_type=True   shape=()
   jnp.full_like(jnp.arange(3), 1.5)                                           -> int32      weak_type=False  shape=(3,)
   jnp.arange(5)                                                               -> int32      weak_type=False  shape=(5,)
   jnp.arange(5.0)                                                             -> float32    weak_type=False  shape=(5,)
   jnp.arange(0, 1, 0.25)                                                      -> float32    weak_type=False  shape=(4,)
   jnp.arange(np.int8(5))                                                      -> int8       weak_type=False  shape=(5,)
   jnp.array([1, 2])                                                           -> int32      weak_type=False  shape=(2,)
   jnp.array([1., 2.])                                                         -> float32    weak_type=False  shape=(2,)
   jnp.array([1, 2.])                                                          -> float32    weak_type=False  shape=(2,)
   jnp.array([1j])                                                             -> complex64  weak_type=False  shape=(1,)
   jnp.array([True, 2])                                                        -> int32      weak_type=False  shape=(2,)
   jnp.array(np.array([1.0, 2.0]))                                             -> float32    weak_type=False  shape=(2,)
   jnp.array(np.array([1, 2]))                                                 -> int32      weak_type=False  shape=(2,)
   jnp.array(np.array([1, 2], np.uint64))                                      -> uint32     weak_type=False  shape=(2,)
   jnp.array(np.float64(1.0))                                                  -> float32    weak_type=False  shape=()
   jnp.array(np.float32(1.0))                                                  -> float32    weak_type=False  shape=()
   jnp.asarray(np.float64(1.0))                                                -> float32    weak_type=False  shape=()
   jnp.array(True)                                                             -> bool       weak_type=False  shape=()
   jnp.array(1)                                                                -> int32      weak_type=True   shape=()
   jnp.array(1.0)                                                              -> float32    weak_type=True   shape=()
   jnp.array(1j)                                                               -> complex64  weak_type=True   shape=()
   jnp.array(1, dtype=jnp.int8)                                                -> int8       weak_type=False  shape=()
   jnp.array([1, 2], dtype=float)                                              -> float32    weak_type=False  shape=(2,)
   jnp.asarray([1.0], dtype=jnp.bfloat16)                                      -> bfloat16   weak_type=False  shape=(1,)
   jnp.array(jnp.asarray(1.0))                                                 -> float32    weak_type=True   shape=()
   jnp.asarray(jnp.asarray(1.0))                                               -> float32    weak_type=True   shape=()
   jnp.linspace(0, 1, 5)                                                       -> float32    weak_type=False  shape=(5,)
   jnp.linspace(0, 10, 5, dtype=int)                                           -> int32      weak_type=False  shape=(5,)
   jnp.logspace(0, 1, 3)                                                       -> float32    weak_type=False  shape=(3,)
   jnp.eye(3)                                                                  -> float32    weak_type=False  shape=(3, 3)
   jnp.identity(2, int)                                                        -> int32      weak_type=False  shape=(2, 2)
   jnp.tri(3)                                                                  -> float32    weak_type=False  shape=(3, 3)
   jnp.true_divide(jnp.arange(3), jnp.arange(1, 4))                            -> float32    weak_type=False  shape=(3,)
   jnp.true_divide(jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8))               -> float32    weak_type=False  shape=(3,)
   jnp.arange(3) / 2                                                           -> float32    weak_type=False  shape=(3,)
   jnp.ones(3, jnp.uint8) / jnp.ones(3, jnp.uint8)                             -> float32    weak_type=False  shape=(3,)
   jnp.ones(3, bool) / jnp.ones(3, bool)                                       -> float32    weak_type=False  shape=(3,)
   jnp.floor_divide(jnp.arange(3), jnp.arange(1, 4))                           -> int32      weak_type=False  shape=(3,)
   jnp.arange(3) // 2                                                          -> int32      weak_type=False  shape=(3,)
   jnp.arange(3) // 2.0                                                        -> float32    weak_type=True   shape=(3,)
   jnp.remainder(jnp.arange(3), 2)                                             -> int32      weak_type=False  shape=(3,)
   jnp.ones(3, bool) // jnp.ones(3, bool)                                      -> int32      weak_type=False  shape=(3,)
   jnp.sqrt(jnp.arange(3))                                                     -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(jnp.ones(3, jnp.int8))                                             -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(jnp.ones(3, jnp.uint8))                                            -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(jnp.ones(3, bool))                                                 -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(2)                                                                 -> float32    weak_type=True   shape=()
   jnp.sqrt(2.0)                                                               -> float32    weak_type=True   shape=()
   jnp.sqrt(jnp.asarray(2))                                                    -> float32    weak_type=True   shape=()
   jnp.exp(jnp.arange(3))                                                      -> float32    weak_type=False  shape=(3,)
   jnp.sin(jnp.ones(3, jnp.float16))                                           -> float16    weak_type=False  shape=(3,)
   jnp.sin(1)                                                                  -> float32    weak_type=True   shape=()
   jnp.round(jnp.arange(3))                                                    -> int32      weak_type=False  shape=(3,)
   jnp.round(jnp.ones(3, jnp.int8))                                            -> int8       weak_type=False  shape=(3,)
   jnp.round(jnp.ones(3))                                                      -> float32    weak_type=False  shape=(3,)
   jnp.round(1.5)                                                              -> float32    weak_type=True   shape=()
   jnp.floor(jnp.arange(3))                                                    -> int32      weak_type=False  shape=(3,)
   jnp.ceil(jnp.ones(3, jnp.int8))                                             -> int8       weak_type=False  shape=(3,)
   jnp.trunc(jnp.arange(3))                                                    -> int32      weak_type=False  shape=(3,)
   jnp.rint(jnp.arange(3))                                                     -> float32    weak_type=False  shape=(3,)
   jnp.abs(jnp.ones(3, jnp.complex64))                                         -> float32    weak_type=False  shape=(3,)
   jnp.abs(jnp.ones(3, jnp.int8))                                              -> int8       weak_type=False  shape=(3,)
   jnp.abs(jnp.ones(3, bool))                                                  -> bool       weak_type=False  shape=(3,)
   jnp.abs(jnp.asarray(-1.0))                                                  -> float32    weak_type=True   shape=()
   jnp.abs(-1)                                                                 -> int32      weak_type=True   shape=()
   jnp.sign(jnp.ones(3, jnp.uint8))                                            -> uint8      weak_type=False  shape=(3,)
   jnp.sign(jnp.ones(3, jnp.uint32))                                           -> uint32     weak_type=False  shape=(3,)
   jnp.sign(jnp.ones(3, bool))                                                 -> !! TypeError: sign does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating.
   jnp.sign(jnp.ones(3, jnp.complex64))                                        -> complex64  weak_type=False  shape=(3,)
   jnp.real(jnp.ones(3, jnp.complex64))                                        -> float32    weak_type=False  shape=(3,)
   jnp.imag(jnp.ones(3))                                                       -> float32    weak_type=False  shape=(3,)
   jnp.angle(jnp.ones(3, jnp.int32))                                           -> float32    weak_type=False  shape=(3,)
   jnp.conj(jnp.ones(3, jnp.int32))                                            -> int32      weak_type=False  shape=(3,)
   jnp.power(jnp.arange(3), 2)                                                 -> int32      weak_type=False  shape=(3,)
   jnp.power(jnp.arange(3), 2.0)                                               -> float32    weak_type=True   shape=(3,)
   jnp.power(2, jnp.arange(3))                                                 -> int32      weak_type=False  shape=(3,)
   jnp.arange(3) ** 2                                                          -> int32      weak_type=False  shape=(3,)
   jnp.arange(3) ** 0.5                                                        -> float32    weak_type=True   shape=(3,)
   jnp.ones(3, jnp.float16) ** 2                                               -> float16    weak_type=False  shape=(3,)
   jnp.square(jnp.ones(3, bool))                                               -> int32      weak_type=False  shape=(3,)
   jnp.negative(jnp.ones(3, jnp.uint8))                                        -> uint8      weak_type=False  shape=(3,)
   jnp.isnan(jnp.arange(3))                                                    -> bool       weak_type=False  shape=(3,)
   jnp.maximum(jnp.arange(3), 1.5)                                             -> float32    weak_type=True   shape=(3,)
   jnp.logical_and(jnp.ones(3), jnp.ones(3))                                   -> bool       weak_type=False  shape=(3,)
   lax.iota(int, 3)                                                            -> int32      weak_type=False  shape=(3,)
   lax.convert_element_type(1.0, jnp.float32)                                  -> float32    weak_type=False  shape=()
   lax.convert_element_type(1, float)                                          -> float32    weak_type=False  shape=()
   lax.add(1.0, 2.0)                                                           -> float32    weak_type=True   shape=()
   lax.add(jnp.float32(1), 2.0)                                                -> float32    weak_type=False  shape=()
   lax.mul(2, 3)                                                               -> int32      weak_type=True   shape=()
""",
    (True, "promote_types"): """
               b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
        b1     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
        u8     u8     u8    u16    u32    u64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
       u16    u16    u16    u16    u32    u64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
       u32    u32    u32    u32    u32    u64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
       u64    u64    u64    u64    u64    u64    f64    f64    f64    f64   bf16    f16    f32    f64    c64   c128
        i8     i8    i16    i32    i64    f64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
       i16    i16    i16    i32    i64    f64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
       i32    i32    i32    i32    i64    f64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
       i64    i64    i64    i64    i64    f64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
      bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f64    c64   c128
       f16    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f64    c64   c128
       f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f64    c64   c128
       f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64   c128   c128
       c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64   c128    c64   c128
      c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128
""",
    (True, "add"): """
          pyB    pyI    pyF    pyC     wI     wF     wC     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyB     b1   i64*   f64*  c128*   i64*   f64*  c128*     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyI   i64*   i64*   f64*  c128*   i64*   f64*  c128*   i64*     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyF   f64*   f64*   f64*  c128*   f64*   f64*  c128*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   bf16    f16    f32    f64    c64   c128
   pyC  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*    c64    c64    c64   c128    c64   c128
    wI   i64*   i64*   f64*  c128*   i64*   f64*  c128*   i64*     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
    wF   f64*   f64*   f64*  c128*   f64*   f64*  c128*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   bf16    f16    f32    f64    c64   c128
    wC  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*    c64    c64    c64   c128    c64   c128
    b1     b1   i64*   f64*  c128*   i64*   f64*  c128*     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
    u8     u8     u8   f64*  c128*     u8   f64*  c128*     u8     u8    u16    u32    u64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   u16    u16    u16   f64*  c128*    u16   f64*  c128*    u16    u16    u16    u32    u64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
   u32    u32    u32   f64*  c128*    u32   f64*  c128*    u32    u32    u32    u32    u64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
   u64    u64    u64   f64*  c128*    u64   f64*  c128*    u64    u64    u64    u64    u64   f64*   f64*   f64*   f64*   bf16    f16    f32    f64    c64   c128
    i8     i8     i8   f64*  c128*     i8   f64*  c128*     i8    i16    i32    i64   f64*     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   i16    i16    i16   f64*  c128*    i16   f64*  c128*    i16    i16    i32    i64   f64*    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   i32    i32    i32   f64*  c128*    i32   f64*  c128*    i32    i32    i32    i64   f64*    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
   i64    i64    i64   f64*  c128*    i64   f64*  c128*    i64    i64    i64    i64   f64*    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
  bf16   bf16   bf16   bf16    c64   bf16   bf16    c64   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f64    c64   c128
   f16    f16    f16    f16    c64    f16    f16    c64    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f64    c64   c128
   f32    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f64    c64   c128
   f64    f64    f64    f64   c128    f64    f64   c128    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64   c128   c128
   c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64   c128    c64   c128
  c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128
""",
    (True, "result_type"): """
          pyB    pyI    pyF    pyC     wI     wF     wC     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyB     b1    i64    f64   c128    i64    f64   c128     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyI    i64    i64    f64   c128    i64    f64   c128    i64     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyF    f64    f64    f64   c128    f64    f64   c128    f64    f64    f64    f64    f64    f64    f64    f64    f64   bf16    f16    f32    f64    c64   c128
   pyC   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128    c64    c64    c64   c128    c64   c128
    wI    i64    i64    f64   c128    i64    f64   c128    i64     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
    wF    f64    f64    f64   c128    f64    f64   c128    f64    f64    f64    f64    f64    f64    f64    f64    f64   bf16    f16    f32    f64    c64   c128
    wC   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128    c64    c64    c64   c128    c64   c128
    b1     b1    i64    f64   c128    i64    f64   c128     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
    u8     u8     u8    f64   c128     u8    f64   c128     u8     u8    u16    u32    u64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   u16    u16    u16    f64   c128    u16    f64   c128    u16    u16    u16    u32    u64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
   u32    u32    u32    f64   c128    u32    f64   c128    u32    u32    u32    u32    u64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
   u64    u64    u64    f64   c128    u64    f64   c128    u64    u64    u64    u64    u64    f64    f64    f64    f64   bf16    f16    f32    f64    c64   c128
    i8     i8     i8    f64   c128     i8    f64   c128     i8    i16    i32    i64    f64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   i16    i16    i16    f64   c128    i16    f64   c128    i16    i16    i32    i64    f64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   i32    i32    i32    f64   c128    i32    f64   c128    i32    i32    i32    i64    f64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
   i64    i64    i64    f64   c128    i64    f64   c128    i64    i64    i64    i64    f64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
  bf16   bf16   bf16   bf16    c64   bf16   bf16    c64   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f64    c64   c128
   f16    f16    f16    f16    c64    f16    f16    c64    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f64    c64   c128
   f32    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f64    c64   c128
   f64    f64    f64    f64   c128    f64    f64   c128    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64   c128   c128
   c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64   c128    c64   c128
  c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128
""",
    (True, "result_type_weak"): """
          pyB    pyI    pyF    pyC     wI     wF     wC     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyB     b1   i64*   f64*  c128*   i64*   f64*  c128*     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyI   i64*   i64*   f64*  c128*   i64*   f64*  c128*   i64*     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   pyF   f64*   f64*   f64*  c128*   f64*   f64*  c128*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   bf16    f16    f32    f64    c64   c128
   pyC  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*    c64    c64    c64   c128    c64   c128
    wI   i64*   i64*   f64*  c128*   i64*   f64*  c128*   i64*     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
    wF   f64*   f64*   f64*  c128*   f64*   f64*  c128*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   f64*   bf16    f16    f32    f64    c64   c128
    wC  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*  c128*    c64    c64    c64   c128    c64   c128
    b1     b1   i64*   f64*  c128*   i64*   f64*  c128*     b1     u8    u16    u32    u64     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
    u8     u8     u8   f64*  c128*     u8   f64*  c128*     u8     u8    u16    u32    u64    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   u16    u16    u16   f64*  c128*    u16   f64*  c128*    u16    u16    u16    u32    u64    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
   u32    u32    u32   f64*  c128*    u32   f64*  c128*    u32    u32    u32    u32    u64    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
   u64    u64    u64   f64*  c128*    u64   f64*  c128*    u64    u64    u64    u64    u64   f64*   f64*   f64*   f64*   bf16    f16    f32    f64    c64   c128
    i8     i8     i8   f64*  c128*     i8   f64*  c128*     i8    i16    i32    i64   f64*     i8    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   i16    i16    i16   f64*  c128*    i16   f64*  c128*    i16    i16    i32    i64   f64*    i16    i16    i32    i64   bf16    f16    f32    f64    c64   c128
   i32    i32    i32   f64*  c128*    i32   f64*  c128*    i32    i32    i32    i64   f64*    i32    i32    i32    i64   bf16    f16    f32    f64    c64   c128
   i64    i64    i64   f64*  c128*    i64   f64*  c128*    i64    i64    i64    i64   f64*    i64    i64    i64    i64   bf16    f16    f32    f64    c64   c128
  bf16   bf16   bf16   bf16    c64   bf16   bf16    c64   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16   bf16    f32    f32    f64    c64   c128
   f16    f16    f16    f16    c64    f16    f16    c64    f16    f16    f16    f16    f16    f16    f16    f16    f16    f32    f16    f32    f64    c64   c128
   f32    f32    f32    f32    c64    f32    f32    c64    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f32    f64    c64   c128
   f64    f64    f64    f64   c128    f64    f64   c128    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64    f64   c128   c128
   c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64    c64   c128    c64   c128
  c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128
""",
    (True, "unary"): """
   pyB : jnp.asarray -> b1    jnp.negative -> n/a
   pyI : jnp.asarray -> i64*    jnp.negative -> i64*
   pyF : jnp.asarray -> f64*    jnp.negative -> f64*
   pyC : jnp.asarray -> c128*    jnp.negative -> c128*
   wI  : jnp.asarray -> i64*    jnp.negative -> i64*
   wF  : jnp.asarray -> f64*    jnp.negative -> f64*
   wC  : jnp.asarray -> c128*    jnp.negative -> c128*
""",
    (True, "misc"): """
   jnp.int32(1) + 1.5                                                     -> float64 weak_type=True   value=Array(2.5, dtype=float64, weak_type=True)
   jnp.int8(1) + 1000                                                     -> int8 weak_type=False   value=Array(-23, dtype=int8)
   jnp.uint8(1) + (-1)                                                    -> uint8 weak_type=False   value=Array(0, dtype=uint8)
   jnp.uint8(1) + 1.0                                                     -> float64 weak_type=True   value=Array(2., dtype=float64, weak_type=True)
   jnp.bfloat16(1) + 1.0                                                  -> bfloat16 weak_type=False   value=Array(2, dtype=bfloat16)
   jnp.float16(1) + jnp.asarray(1.0)                                      -> float16 weak_type=False   value=Array(2., dtype=float16)
   jnp.int8(1) * jnp.asarray(2)                                           -> int8 weak_type=False   value=Array(2, dtype=int8)
   jnp.bool_(True) + True                                                 -> bool weak_type=False   value=Array(True, dtype=bool)
   jnp.bool_(True) + 1                                                    -> int64 weak_type=True   value=Array(2, dtype=int64, weak_type=True)
   jnp.array([True]) + jnp.array([True])                                  -> bool weak_type=False   value=Array([ True], dtype=bool)
   jnp.array([True]) * 2.0                                                -> float64 weak_type=True   value=Array([2.], dtype=float64, weak_type=True)
   jnp.uint32(1) + jnp.int32(1)                                           -> int64 weak_type=False   value=Array(2, dtype=int64)
   jnp.uint64(1) + jnp.int64(1)                                           -> float64 weak_type=True   value=Array(2., dtype=float64, weak_type=True)
   jnp.uint64(1) + jnp.int8(1)                                            -> float64 weak_type=True   value=Array(2., dtype=float64, weak_type=True)
   jnp.int64(1) + jnp.float16(1)                                          -> float16 weak_type=False   value=Array(2., dtype=float16)
   jnp.float32(1) + jnp.complex64(1)                                      -> complex64 weak_type=False   value=Array(2.+0.j, dtype=complex64)
   jnp.float64(1) + jnp.complex64(1)                                      -> complex128 weak_type=False   value=Array(2.+0.j, dtype=complex128)
   jnp.asarray(1) + jnp.asarray(1.0)                                      -> float64 weak_type=True   value=Array(2., dtype=float64, weak_type=True)
   jnp.asarray(1.0) + jnp.asarray(1j)                                     -> complex128 weak_type=True   value=Array(1.+1.j, dtype=complex128, weak_type=True)
   jnp.asarray(1) + True                                                  -> int64 weak_type=True   value=Array(2, dtype=int64, weak_type=True)
   jnp.asarray(1.0) + jnp.int8(1)                                         -> float64 weak_type=True   value=Array(2., dtype=float64, weak_type=True)
   jnp.asarray(1) + jnp.uint8(1)                                          -> uint8 weak_type=False   value=Array(2, dtype=uint8)
   jnp.asarray(1j) + jnp.float16(1)                                       -> complex64 weak_type=False   value=Array(1.+1.j, dtype=complex64)
   jnp.asarray(1j) + jnp.bfloat16(1)                                      -> complex64 weak_type=False   value=Array(1.+1.j, dtype=complex64)
   jnp.asarray(1j) + jnp.int8(1)                                          -> complex128 weak_type=True   value=Array(1.+1.j, dtype=complex128, weak_type=True)
   np.float64(1.0) + jnp.float32(1)                                       -> float64 weak_type=False   value=Array(2., dtype=float64)
   jnp.float32(1) + np.float64(1.0)                                       -> float64 weak_type=False   value=Array(2., dtype=float64)
   np.int64(1) + jnp.int8(1)                                              -> int64 weak_type=False   value=Array(2, dtype=int64)
   np.array([1.0]) + jnp.float16(1)                                       -> float64 weak_type=False   value=Array([2.], dtype=float64)
   jnp.float16(1) + np.float32(1)                                         -> float32 weak_type=False   value=Array(2., dtype=float32)
   jnp.promote_types(int, float)                                          -> dtype('float64')
   jnp.promote_types(int, jnp.int8)                                       -> dtype('int8')
   jnp.promote_types(float, jnp.float16)                                  -> dtype('float16')
   jnp.promote_types(bool, int)                                           -> dtype('int64')
   jnp.result_type(1, 1.0)                                                -> dtype('float64')
   jnp.result_type(1)                                                     -> dtype('int64')
   jnp.result_type(1.0)                                                   -> dtype('float64')
   jnp.result_type(1j)                                                    -> dtype('complex128')
   jnp.result_type(True)                                                  -> dtype('bool')
   jnp.result_type(jnp.int8, 1)                                           -> dtype('int8')
   jnp.result_type(jnp.int8, 1.0)                                         -> dtype('float64')
   jnp.result_type(jnp.bfloat16, 1.0)                                     -> dtype(bfloat16)
   jnp.result_type(jnp.uint8, -1)                                         -> dtype('uint8')
   jnp.result_type('float64')                                             -> dtype('float64')
   jnp.result_type(np.float64)                                            -> dtype('float64')
   jnp.result_type(float)                                                 -> dtype('float64')
   jnp.result_type(int)                                                   -> dtype('int64')
   jnp.result_type(jnp.int32, jnp.uint32)                                 -> dtype('int64')
   jnp.result_type(jnp.int64, jnp.uint64)                                 -> dtype('float64')
   jnp.dtype(float)                                                       -> dtype('float64')
   jnp.dtype(int)                                                         -> dtype('int64')
   jnp.dtype(complex)                                                     -> dtype('complex128')
   jnp.dtype('float64')                                                   -> dtype('float64')
   jax.dtypes.canonicalize_dtype(jnp.float64)                             -> dtype('float64')
   jax.dtypes.canonicalize_dtype(jnp.int64)                               -> dtype('int64')
   jax.dtypes.canonicalize_dtype(jnp.uint64)                              -> dtype('uint64')
   jax.dtypes.canonicalize_dtype(jnp.complex128)                          -> dtype('complex128')
   jax.dtypes.canonicalize_dtype(int)                                     -> dtype('int64')
   jax.dtypes.canonicalize_dtype(float)                                   -> dtype('float64')
   jnp.float_                                                             -> <class 'jax.numpy.float64'>
   jnp.int_                                                               -> <class 'jax.numpy.int64'>
   jnp.uint                                                               -> <class 'jax.numpy.uint64'>
   jnp.complex_                                                           -> <class 'jax.numpy.complex128'>
   jnp.issubdtype(jnp.bfloat16, jnp.floating)                             -> True
   jnp.issubdtype(jnp.int8, jnp.integer)                                  -> True
   jnp.issubdtype(jnp.bool_, jnp.integer)                                 -> False
   jnp.isdtype(jnp.float32, 'real floating')                              -> True
""",
    (True, "constructors"): """
   jnp.zeros(3)                                                                -> float64    weak_type=False  shape=(3,)
   jnp.ones(3)                                                                 -> float64    weak_type=False  shape=(3,)
   jnp.empty(3)                                                                -> float64    weak_type=False  shape=(3,)
   jnp.zeros(3, int)                                                           -> int64      weak_type=False  shape=(3,)
   jnp.zeros(3, float)                                                         -> float64    weak_type=False  shape=(3,)
   jnp.full(3, 1)                                                              -> int64      weak_type=True   shape=(3,)
   jnp.full(3, 1.0)                                                            -> float64    weak_type=True   shape=(3,)
   jnp.full(3, True)                                                           -> bool       weak_type=False  shape=(3,)
   jnp.full((), 1.0)                                                           -> float64    weak_type=True   shape=()
   jnp.zeros_like(jnp.asarray(1.0))                                            -> float64    weak_type=True   shape=()
   jnp.ones_like(jnp.asarray(1))                                               -> int64      weak_type=True   shape=()
   jnp.full_like(jnp.arange(3), 1.5)                                           -> int64      weak_type=False  shape=(3,)
   jnp.arange(5)                                                               -> int64      weak_type=False  shape=(5,)
   jnp.arange(5.0)                                                             -> float64    weak_type=False  shape=(5,)
   jnp.arange(0, 1, 0.25)                                                      -> float64    weak_type=False  shape=(4,)
   jnp.arange(np.int8(5))                                                      -> int8       weak_type=False  shape=(5,)
   jnp.array([1, 2])                                                           -> int64      weak_type=False  shape=(2,)
   jnp.array([1., 2.])                                                         -> float64    weak_type=False  shape=(2,)
   jnp.array([1, 2.])                                                          -> float64    weak_type=False  shape=(2,)
   jnp.array([1j])                                                             -> complex128 weak_type=False  shape=(1,)
   jnp.array([True, 2])                                                        -> int64      weak_type=False  shape=(2,)
   jnp.array(np.array([1.0, 2.0]))                                             -> float64    weak_type=False  shape=(2,)
   jnp.array(np.array([1, 2]))                                                 -> int64      weak_type=False  shape=(2,)
   jnp.array(np.array([1, 2], np.uint64))                                      -> uint64     weak_type=False  shape=(2,)
   jnp.array(np.float64(1.0))                                                  -> float64    weak_type=False  shape=()
   jnp.array(np.float32(1.0))                                                  -> float32    weak_type=False  shape=()
   jnp.asarray(np.float64(1.0))                                                -> float64    weak_type=False  shape=()
   jnp.array(True)                                                             -> bool       weak_type=False  shape=()
   jnp.array(1)                                                                -> int64      weak_type=True   shape=()
   jnp.array(1.0)                                                              -> float64    weak_type=True   shape=()
   jnp.array(1j)                                                               -> complex128 weak_type=True   shape=()
   jnp.array(1, dtype=jnp.int8)                                                -> int8       weak_type=False  shape=()
   jnp.array([1, 2], dtype=float)                                              -> float64    weak_type=False  shape=(2,)
   jnp.asarray([1.0], dtype=jnp.bfloat16)                                      -> bfloat16   weak_type=False  shape=(1,)
   jnp.array(jnp.asarray(1.0))                                                 -> float64    weak_type=True   shape=()
   jnp.asarray(jnp.asarray(1.0))                                               -> float64    weak_type=True   shape=()
   jnp.linspace(0, 1, 5)                                                       -> float64    weak_type=False  shape=(5,)
   jnp.linspace(0, 10, 5, dtype=int)                                           -> int64      weak_type=False  shape=(5,)
   jnp.logspace(0, 1, 3)                                                       -> float64    weak_type=False  shape=(3,)
   jnp.eye(3)                                                                  -> float64    weak_type=False  shape=(3, 3)
   jnp.identity(2, int)                                                        -> int64      weak_type=False  shape=(2, 2)
   jnp.tri(3)                                                                  -> float32    weak_type=False  shape=(3, 3)
   jnp.true_divide(jnp.arange(3), jnp.arange(1, 4))                            -> float64    weak_type=False  shape=(3,)
   jnp.true_divide(jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8))               -> float32    weak_type=False  shape=(3,)
   jnp.arange(3) / 2                                                           -> float64    weak_type=False  shape=(3,)
   jnp.ones(3, jnp.uint8) / jnp.ones(3, jnp.uint8)                             -> float32    weak_type=False  shape=(3,)
   jnp.ones(3, bool) / jnp.ones(3, bool)                                       -> float32    weak_type=False  shape=(3,)
   jnp.floor_divide(jnp.arange(3), jnp.arange(1, 4))                           -> int64      weak_type=False  shape=(3,)
   jnp.arange(3) // 2                                                          -> int64      weak_type=False  shape=(3,)
   jnp.arange(3) // 2.0                                                        -> float64    weak_type=True   shape=(3,)
   jnp.remainder(jnp.arange(3), 2)                                             -> int64      weak_type=False  shape=(3,)
   jnp.ones(3, bool) // jnp.ones(3, bool)                                      -> int32      weak_type=False  shape=(3,)
   jnp.sqrt(jnp.arange(3))                                                     -> float64    weak_type=False  shape=(3,)
   jnp.sqrt(jnp.ones(3, jnp.int8))                                             -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(jnp.ones(3, jnp.uint8))                                            -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(jnp.ones(3, bool))                                                 -> float32    weak_type=False  shape=(3,)
   jnp.sqrt(2)                                                                 -> float64    weak_type=True   shape=()
   jnp.sqrt(2.0)                                                               -> float64    weak_type=True   shape=()
   jnp.sqrt(jnp.asarray(2))                                                    -> float64    weak_type=True   shape=()
   jnp.exp(jnp.arange(3))                                                      -> float64    weak_type=False  shape=(3,)
   jnp.sin(jnp.ones(3, jnp.float16))                                           -> float16    weak_type=False  shape=(3,)
   jnp.sin(1)                                                                  -> float64    weak_type=True   shape=()
   jnp.round(jnp.arange(3))                                                    -> int64      weak_type=False  shape=(3,)
   jnp.round(jnp.ones(3, jnp.int8))                                            -> int8       weak_type=False  shape=(3,)
   jnp.round(jnp.ones(3))                                                      -> float64    weak_type=False  shape=(3,)
   jnp.round(1.5)                                                              -> float64    weak_type=True   shape=()
   jnp.floor(jnp.arange(3))                                                    -> int64      weak_type=False  shape=(3,)
   jnp.ceil(jnp.ones(3, jnp.int8))                                             -> int8       weak_type=False  shape=(3,)
   jnp.trunc(jnp.arange(3))                                                    -> int64      weak_type=False  shape=(3,)
   jnp.rint(jnp.arange(3))                                                     -> float64    weak_type=False  shape=(3,)
   jnp.abs(jnp.ones(3, jnp.complex64))                                         -> float32    weak_type=False  shape=(3,)
   jnp.abs(jnp.ones(3, jnp.int8))                                              -> int8       weak_type=False  shape=(3,)
   jnp.abs(jnp.ones(3, bool))                                                  -> bool       weak_type=False  shape=(3,)
   jnp.abs(jnp.asarray(-1.0))                                                  -> float64    weak_type=True   shape=()
   jnp.abs(-1)                                                                 -> int64      weak_type=True   shape=()
   jnp.sign(jnp.ones(3, jnp.uint8))                                            -> uint8      weak_type=False  shape=(3,)
   jnp.sign(jnp.ones(3, jnp.uint32))                                           -> uint32     weak_type=False  shape=(3,)
   jnp.sign(jnp.ones(3, bool))                                                 -> !! TypeError: sign does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating.
   jnp.sign(jnp.ones(3, jnp.complex64))                                        -> complex64  weak_type=False  shape=(3,)
   jnp.real(jnp.ones(3, jnp.complex64))                                        -> float32    weak_type=False  shape=(3,)
   jnp.imag(jnp.ones(3))                                                       -> float64    weak_type=False  shape=(3,)
   jnp.angle(jnp.ones(3, jnp.int32))                                           -> float64    weak_type=False  shape=(3,)
   jnp.conj(jnp.ones(3, jnp.int32))                                            -> int32      weak_type=False  shape=(3,)
   jnp.power(jnp.arange(3), 2)                                                 -> int64      weak_type=False  shape=(3,)
   jnp.power(jnp.arange(3), 2.0)                                               -> float64    weak_type=True   shape=(3,)
   jnp.power(2, jnp.arange(3))                                                 -> int64      weak_type=False  shape=(3,)
   jnp.arange(3) ** 2                                                          -> int64      weak_type=False  shape=(3,)
   jnp.arange(3) ** 0.5                                                        -> float64    weak_type=True   shape=(3,)
   jnp.ones(3, jnp.float16) ** 2                                               -> float16    weak_type=False  shape=(3,)
   jnp.square(jnp.ones(3, bool))                                               -> int32      weak_type=False  shape=(3,)
   jnp.negative(jnp.ones(3, jnp.uint8))                                        -> uint8      weak_type=False  shape=(3,)
   jnp.isnan(jnp.arange(3))                                                    -> bool       weak_type=False  shape=(3,)
   jnp.maximum(jnp.arange(3), 1.5)                                             -> float64    weak_type=True   shape=(3,)
   jnp.logical_and(jnp.ones(3), jnp.ones(3))                                   -> bool       weak_type=False  shape=(3,)
   lax.iota(int, 3)                                                            -> int64      weak_type=False  shape=(3,)
   lax.convert_element_type(1.0, jnp.float32)                                  -> float32    weak_type=False  shape=()
   lax.convert_element_type(1, float)                                          -> float64    weak_type=False  shape=()
   lax.add(1.0, 2.0)                                                           -> float64    weak_type=True   shape=()
   lax.add(jnp.float32(1), 2.0)                                                -> !! TypeError: lax.add requires arguments to have the same dtypes, got float32, float64. (Tip: jnp.add is a similar function that does automatic type promotion on inputs).
   lax.mul(2, 3)                                                               -> int64      weak_type=True   shape=()
""",
}


SHORT = {"b1": "bool", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
         "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "bf16": "bfloat16",
         "f16": "float16", "f32": "float32", "f64": "float64", "c64": "complex64",
         "c128": "complex128"}


def _dtype(short: str) -> np.dtype:
    return dtype_by_name(SHORT[short])




def _parse_table(text: str) -> tuple[list[str], dict[tuple[str, str], str]]:
    rows = [line.split() for line in text.strip("\n").split("\n")]
    cols = rows[0]
    table = {}
    for row in rows[1:]:
        for col, cell in zip(cols, row[1:], strict=True):
            table[row[0], col] = cell
    return cols, table


def _operand(kind: str) -> Any:
    """The operands of the tables: Python scalars, weak 0-d arrays and strong arrays."""
    python = {"pyB": True, "pyI": 1, "pyF": 1.0, "pyC": 1j}
    if kind in python:
        return python[kind]
    weak = {"wI": 1, "wF": 1.0, "wC": 1j}
    if kind in weak:
        return jnp.asarray(weak[kind])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jnp.zeros(2, dtype=_dtype(kind))


def _describe(x: Any) -> str:
    short = {np.dtype(v) if v != "bfloat16" else np.dtype(ml_dtypes.bfloat16): k
             for k, v in SHORT.items()}
    return short[np.dtype(x.dtype)] + ("*" if x.weak_type else "")


def _cases(kind: str) -> list[Any]:
    cases = []
    for x64 in (False, True):
        cols, table = _parse_table(TABLES[x64, kind])
        for (row, col), expected in table.items():
            cases.append(pytest.param(x64, row, col, expected, id=f"x64={x64}-{row}-{col}"))
    return cases


@pytest.mark.parametrize("x64,row,col,expected", _cases("promote_types"))
def test_promote_types(x64: bool, row: str, col: str, expected: str) -> None:
    with x64_mode(x64):
        assert jnp.promote_types(_dtype(row), _dtype(col)) == _dtype(expected)


@pytest.mark.parametrize("x64,row,col,expected", _cases("add"))
def test_add_dtype_and_weak_type(x64: bool, row: str, col: str, expected: str) -> None:
    with x64_mode(x64):
        assert _describe(jnp.add(_operand(row), _operand(col))) == expected


_PYTHON_SCALARS = {"pyB", "pyI", "pyF", "pyC"}


@pytest.mark.parametrize("x64,row,col,expected", [
    case for case in _cases("add")
    if not {case.values[1], case.values[2]} <= _PYTHON_SCALARS])  # else plain Python arithmetic
def test_operator_matches_add(x64: bool, row: str, col: str, expected: str) -> None:
    """`x + y` promotes as jnp.add whenever one operand is an array."""
    with x64_mode(x64):
        assert _describe(_operand(row) + _operand(col)) == expected


@pytest.mark.parametrize("x64,row,col,expected", _cases("result_type"))
def test_result_type(x64: bool, row: str, col: str, expected: str) -> None:
    with x64_mode(x64):
        assert jnp.result_type(_operand(row), _operand(col)) == _dtype(expected)


@pytest.mark.parametrize("x64,row,col,expected", _cases("result_type_weak"))
def test_result_type_weak_flag(x64: bool, row: str, col: str, expected: str) -> None:
    with x64_mode(x64):
        dtype, weak = justjax.dtypes.result_type(_operand(row), _operand(col),
                                                 return_weak_type_flag=True)
        assert _dtype(expected.rstrip("*")) == dtype
        assert weak == expected.endswith("*")


def _unary_cases() -> list[Any]:
    cases = []
    for x64 in (False, True):
        for line in TABLES[x64, "unary"].strip("\n").split("\n"):
            m = re.match(r"\s*(\w+)\s*: jnp.asarray -> (\S+)\s+jnp.negative -> (\S+)", line)
            cases.append(pytest.param(x64, *m.groups(), id=f"x64={x64}-{m.group(1)}"))
    return cases


@pytest.mark.parametrize("x64,kind,asarray_type,negative_type", _unary_cases())
def test_unary_weak_types(x64: bool, kind: str, asarray_type: str, negative_type: str) -> None:
    with x64_mode(x64):
        assert _describe(jnp.asarray(_operand(kind))) == asarray_type
        if negative_type == "n/a":
            with pytest.raises(TypeError):
                jnp.negative(_operand(kind))
        else:
            assert _describe(jnp.negative(_operand(kind))) == negative_type


ENV = {"jnp": jnp, "np": np, "lax": lax, "jax": justjax, "float": float, "int": int,
       "bool": bool, "complex": complex}


def _eval(expression: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(expression, dict(ENV))  # noqa: S307 -- expressions from the table above


def _misc_cases() -> list[Any]:
    cases = []
    for x64 in (False, True):
        for line in TABLES[x64, "misc"].strip("\n").split("\n"):
            expression, result = (part.strip() for part in line.split("->", 1))
            cases.append(pytest.param(x64, expression, result, id=f"x64={x64}-{expression}"))
    return cases


@pytest.mark.parametrize("x64,expression,result", _misc_cases())
def test_misc_promotion(x64: bool, expression: str, result: str) -> None:
    """Each line of JAX's 'Misc promotion checks': the dtype, weak type and Array repr."""
    with x64_mode(x64):
        value = _eval(expression)
        if m := re.fullmatch(r"(\w+) weak_type=(\w+)\s+value=(.*)", result):
            dtype, weak, text = m.groups()
            assert np.dtype(value.dtype) == np.dtype(dtype_by_name(dtype))
            assert value.weak_type == (weak == "True")
            assert repr(value) == text
        elif result.startswith("<class "):
            assert f"<class 'jax.numpy.{value.__name__}'>" == result
        else:
            assert repr(value) == result


def _constructor_cases() -> list[Any]:
    cases = []
    for x64 in (False, True):
        for line in TABLES[x64, "constructors"].strip("\n").split("\n"):
            expression, result = (part.strip() for part in line.split("->", 1))
            cases.append(pytest.param(x64, expression, result, id=f"x64={x64}-{expression}"))
    return cases


@pytest.mark.parametrize("x64,expression,result", _constructor_cases())
def test_constructor_and_function_types(x64: bool, expression: str, result: str) -> None:
    """Result dtype, weak type and shape of constructors and elementwise functions."""
    with x64_mode(x64):
        if result.startswith("!!"):
            error = result.split()[1].rstrip(":")
            with pytest.raises(getattr(__builtins__, error, Exception)
                               if not isinstance(__builtins__, dict)
                               else __builtins__.get(error, Exception)):
                _eval(expression)
            return
        dtype, weak, shape = re.fullmatch(r"(\w+)\s+weak_type=(\w+)\s+shape=(.*)",
                                          result).groups()
        value = _eval(expression)
        assert np.dtype(value.dtype) == dtype_by_name(dtype)
        assert value.weak_type == (weak == "True")
        assert str(tuple(value.shape)) == shape


def test_comparisons_of_weak_operands_are_weak() -> None:
    assert jnp.equal(jnp.arange(3), 2.5).weak_type
    assert jnp.isnan(1.0).weak_type and jnp.less(1, 2).weak_type
    assert not jnp.greater(jnp.arange(3), 1).weak_type


def test_python_bool_alone_is_strong() -> None:
    assert not jnp.logical_not(True).weak_type
    assert not jnp.positive(True).weak_type

