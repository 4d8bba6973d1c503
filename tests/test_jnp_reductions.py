"""Behaviour of jax.numpy's reductions, sorting and searching against real JAX 0.10.2.

Every expected value here was read off real JAX (the tests themselves never import it):
- GOLDEN: jaxprs as JAX prints them under `jax.disable_jit()` (identical to the plain output
  for functions JAX jits with `inline=True`: sum, prod, max, min, all, any, mean, average,
  argmax, argmin), traced under `justjax.disable_jit()` too. JIT_GOLDEN holds JAX's plain
  output for jnp.var and jnp.sort, nested `jit` equations included.
- DTYPES_X32 / DTYPES_X64: result dtypes for each input dtype.
- VALUES: results of edge cases (empty axes, NaNs, overflow, ties, masks).
- ERRORS: exception classes and messages.
"""
from __future__ import annotations

import math
import re
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import errors
from justjax._src.core.jaxpr import eval_jaxpr
from justjax._src.numpy import reductions as reductions_module
from justjax._src.numpy import sorting as sorting_module

_DTYPE_NAMES = {"bool": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
                "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
                "u64": np.uint64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
                "f32": np.float32, "f64": np.float64, "c64": np.complex64}


def _make_arg(spec: str) -> Any:
    """'f32[2,3]' -> zeros of that type; 'float' -> a Python float (a weak scalar)."""
    if spec == "float":
        return 1.0
    match = re.fullmatch(r"(\w+)\[([\d,]*)\]", spec)
    assert match, spec
    shape = tuple(int(d) for d in match.group(2).split(",") if d)
    return justjax.device_put(np.zeros(shape, _DTYPE_NAMES[match.group(1)]))


def _jaxpr_text(src: str, specs: str) -> str:
    fun = eval(f"lambda {src}", {"jnp": jnp, "np": np})
    return str(justjax.make_jaxpr(fun)(*[_make_arg(s) for s in specs.split()]))


GOLDEN = [
    ("sum", "x: jnp.sum(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
  in (b,) }"""),
    ("sum_axis0", "x: jnp.sum(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) }"""),
    ("sum_axis_neg", "x: jnp.sum(x, axis=-1)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a
  in (b,) }"""),
    ("sum_axis_tuple", "x: jnp.sum(x, axis=(0, 2))", "f32[2,3,4]", """
{ lambda ; a:f32[2,3,4]. let
    b:f32[3] = reduce_sum[axes=(0, 2) out_sharding=None] a
  in (b,) }"""),
    ("sum_keepdims", "x: jnp.sum(x, axis=1, keepdims=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a
    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
  in (c,) }"""),
    ("sum_keepdims_all", "x: jnp.sum(x, keepdims=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:f32[1,1] = broadcast_in_dim b
  in (c,) }"""),
    ("sum_dtype_i32", "x: jnp.sum(x, dtype=jnp.int32)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
  in (c,) }"""),
    ("sum_dtype_f16", "x: jnp.sum(x, dtype=jnp.float16)", "f32[3]", """
{ lambda ; a:f32[3]. let
    b:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] a
    c:f16[] = reduce_sum[axes=(0,) out_sharding=None] b
  in (c,) }"""),
    ("sum_bool", "x: jnp.sum(x)", "bool[3]", """
{ lambda ; a:bool[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = reduce_sum[axes=(0,) out_sharding=None] b
  in (c,) }"""),
    ("sum_bool_dtype_bool", "x: jnp.sum(x, dtype=bool)", "bool[3]", """
{ lambda ; a:bool[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:bool[3] = convert_element_type[new_dtype=bool weak_type=False] b
    d:bool[] = reduce_or[axes=(0,)] c
  in (d,) }"""),
    ("sum_i8", "x: jnp.sum(x)", "i8[3]", """
{ lambda ; a:i8[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = reduce_sum[axes=(0,) out_sharding=None] b
  in (c,) }"""),
    ("sum_i8_nopromote", "x: jnp.sum(x, promote_integers=False)", "i8[3]", """
{ lambda ; a:i8[3]. let
    b:i8[] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) }"""),
    ("sum_u8", "x: jnp.sum(x)", "u8[3]", """
{ lambda ; a:u8[3]. let
    b:u32[3] = convert_element_type[new_dtype=uint32 weak_type=False] a
    c:u32[] = reduce_sum[axes=(0,) out_sharding=None] b
  in (c,) }"""),
    ("sum_f16", "x: jnp.sum(x)", "f16[3]", """
{ lambda ; a:f16[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f16[] = convert_element_type[new_dtype=float16 weak_type=False] c
  in (d,) }"""),
    ("sum_bf16", "x: jnp.sum(x, axis=0)", "bf16[2,3]", """
{ lambda ; a:bf16[2,3]. let
    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[3] = reduce_sum[axes=(0,) out_sharding=None] b
    d:bf16[3] = convert_element_type[new_dtype=bfloat16 weak_type=False] c
  in (d,) }"""),
    ("sum_c64", "x: jnp.sum(x)", "c64[3]", """
{ lambda ; a:c64[3]. let
    b:c64[] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) }"""),
    ("sum_weak_scalar", "x: jnp.sum(x)", "float", """
{ lambda ; a:f32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = reduce_sum[axes=() out_sharding=None] b
  in (c,) }"""),
    ("sum_where", "x, m: jnp.sum(x, where=m)", "f32[2,3] bool[2,3]", """
{ lambda ; a:f32[2,3] b:bool[2,3]. let
    c:f32[2,3] = broadcast_in_dim 0.0:f32[]
    d:f32[2,3] = select_n b c a
    e:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
  in (e,) }"""),
    ("sum_where_bcast", "x, m: jnp.sum(x, axis=0, where=m)", "f32[2,3] bool[3]", """
{ lambda ; a:f32[2,3] b:bool[3]. let
    c:bool[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    d:f32[2,3] = broadcast_in_dim 0.0:f32[]
    e:f32[2,3] = select_n c d a
    f:f32[3] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }"""),
    ("sum_initial", "x: jnp.sum(x, initial=2.0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:f32[] = add 2.0:f32[] b
  in (c,) }"""),
    ("sum_initial_where_i32", "x, m: jnp.sum(x, axis=1, initial=3, where=m)", "i32[2,3] bool[2,3]", """
{ lambda ; a:i32[2,3] b:bool[2,3]. let
    c:i32[2,3] = broadcast_in_dim 0:i32[]
    d:i32[2,3] = select_n b c a
    e:i32[2] = reduce_sum[axes=(1,) out_sharding=None] d
    f:i32[2] = add 3:i32[] e
  in (f,) }"""),
    ("prod", "x: jnp.prod(x, axis=1)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let b:f32[2] = reduce_prod[axes=(1,)] a in (b,) }"""),
    ("prod_bool", "x: jnp.prod(x)", "bool[2,3]", """
{ lambda ; a:bool[2,3]. let
    b:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = reduce_prod[axes=(0, 1)] b
  in (c,) }"""),
    ("prod_i8_where", "x, m: jnp.prod(x, where=m)", "i8[2,3] bool[2,3]", """
{ lambda ; a:i8[2,3] b:bool[2,3]. let
    c:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[2,3] = broadcast_in_dim 1:i32[]
    e:i32[2,3] = select_n b d c
    f:i32[] = reduce_prod[axes=(0, 1)] e
  in (f,) }"""),
    ("max", "x: jnp.max(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let b:f32[] = reduce_max[axes=(0, 1)] a in (b,) }"""),
    ("max_axis_keepdims", "x: jnp.max(x, axis=-1, keepdims=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_max[axes=(1,)] a
    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
  in (c,) }"""),
    ("max_initial", "x: jnp.max(x, initial=2.0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_max[axes=(0, 1)] a
    c:f32[] = max 2.0:f32[] b
  in (c,) }"""),
    ("max_where_initial", "x, m: jnp.max(x, axis=0, where=m, initial=0.0)", "f32[2,3] bool[2,3]", """
{ lambda ; a:f32[2,3] b:bool[2,3]. let
    c:f32[2,3] = broadcast_in_dim -inf:f32[]
    d:f32[2,3] = select_n b c a
    e:f32[3] = reduce_max[axes=(0,)] d
    f:f32[3] = max 0.0:f32[] e
  in (f,) }"""),
    ("max_i8_where", "x, m: jnp.max(x, where=m, initial=-3)", "i8[2,3] bool[2,3]", """
{ lambda ; a:i8[2,3] b:bool[2,3]. let
    c:i8[2,3] = broadcast_in_dim -128:i8[]
    d:i8[2,3] = select_n b c a
    e:i8[] = reduce_max[axes=(0, 1)] d
    f:i8[] = max -3:i8[] e
  in (f,) }"""),
    ("max_bool", "x: jnp.max(x, axis=0)", "bool[2,3]", """
{ lambda ; a:bool[2,3]. let b:bool[3] = reduce_max[axes=(0,)] a in (b,) }"""),
    ("max_f16", "x: jnp.max(x)", "f16[3]", """
{ lambda ; a:f16[3]. let b:f16[] = reduce_max[axes=(0,)] a in (b,) }"""),
    ("min_u8_where", "x, m: jnp.min(x, where=m, initial=7)", "u8[2,3] bool[2,3]", """
{ lambda ; a:u8[2,3] b:bool[2,3]. let
    c:u8[2,3] = broadcast_in_dim 255:u8[]
    d:u8[2,3] = select_n b c a
    e:u8[] = reduce_min[axes=(0, 1)] d
    f:u8[] = min 7:u8[] e
  in (f,) }"""),
    ("amin", "x: jnp.amin(x, axis=(0, 1))", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let b:f32[] = reduce_min[axes=(0, 1)] a in (b,) }"""),
    ("amax", "x: jnp.amax(x, axis=1)", "i32[2,3]", """
{ lambda ; a:i32[2,3]. let b:i32[2] = reduce_max[axes=(1,)] a in (b,) }"""),
    ("all_f32", "x: jnp.all(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = convert_element_type[new_dtype=bool weak_type=False] a
    c:bool[3] = reduce_and[axes=(0,)] b
  in (c,) }"""),
    ("all_bool_where", "x, m: jnp.all(x, where=m)", "bool[2,3] bool[2,3]", """
{ lambda ; a:bool[2,3] b:bool[2,3]. let
    c:bool[2,3] = broadcast_in_dim True:bool[]
    d:bool[2,3] = select_n b c a
    e:bool[] = reduce_and[axes=(0, 1)] d
  in (e,) }"""),
    ("any_c64", "x: jnp.any(x)", "c64[3]", """
{ lambda ; a:c64[3]. let
    b:f32[3] = real a
    c:bool[3] = convert_element_type[new_dtype=bool weak_type=False] b
    d:bool[] = reduce_or[axes=(0,)] c
  in (d,) }"""),
    ("any_i32_keepdims", "x: jnp.any(x, axis=1, keepdims=True)", "i32[2,3]", """
{ lambda ; a:i32[2,3]. let
    b:bool[2,3] = convert_element_type[new_dtype=bool weak_type=False] a
    c:bool[2] = reduce_or[axes=(1,)] b
    d:bool[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
  in (d,) }"""),
    ("mean", "x: jnp.mean(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:f32[] = div b 6.0:f32[]
  in (c,) }"""),
    ("mean_axis", "x: jnp.mean(x, axis=(0, -1), keepdims=True)", "f32[2,3,4]", """
{ lambda ; a:f32[2,3,4]. let
    b:f32[3] = reduce_sum[axes=(0, 2) out_sharding=None] a
    c:f32[1,3,1] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    d:f32[1,3,1] = div c 8.0:f32[]
  in (d,) }"""),
    ("mean_i32", "x: jnp.mean(x, axis=0)", "i32[2,3]", """
{ lambda ; a:i32[2,3]. let
    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[3] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = div c 2.0:f32[]
  in (d,) }"""),
    ("mean_bool", "x: jnp.mean(x)", "bool[3]", """
{ lambda ; a:bool[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[] = div d 3.0:f32[]
  in (e,) }"""),
    ("mean_f16", "x: jnp.mean(x)", "f16[2,3]", """
{ lambda ; a:f16[2,3]. let
    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    d:f32[] = div c 6.0:f32[]
    e:f16[] = convert_element_type[new_dtype=float16 weak_type=False] d
  in (e,) }"""),
    ("mean_bf16_dtype", "x: jnp.mean(x, dtype=jnp.bfloat16)", "bf16[2,3]", """
{ lambda ; a:bf16[2,3]. let
    b:bf16[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:bf16[] = div b 6.0:bf16[]
  in (c,) }"""),
    ("mean_dtype_f16", "x: jnp.mean(x, axis=1, dtype=jnp.float16)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f16[2,3] = convert_element_type[new_dtype=float16 weak_type=False] a
    c:f16[2] = reduce_sum[axes=(1,) out_sharding=None] b
    d:f16[2] = div c 3.0:f16[]
  in (d,) }"""),
    ("mean_where", "x, m: jnp.mean(x, axis=1, where=m)", "f32[2,3] bool[2,3]", """
{ lambda ; a:f32[2,3] b:bool[2,3]. let
    c:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] c
    e:f32[2] = reduce_sum[axes=(1,) out_sharding=None] d
    f:f32[2,3] = broadcast_in_dim 0.0:f32[]
    g:f32[2,3] = select_n b f a
    h:f32[2] = reduce_sum[axes=(1,) out_sharding=None] g
    i:f32[2] = div h e
  in (i,) }"""),
    ("mean_c64", "x: jnp.mean(x)", "c64[3]", """
{ lambda ; a:c64[3]. let
    b:c64[] = reduce_sum[axes=(0,) out_sharding=None] a
    c:c64[] = div b (3+0j):c64[]
  in (c,) }"""),
    ("var_mean", "x, mu: jnp.var(x, axis=1, mean=mu)", "f32[2,3] f32[2,1]", """
{ lambda ; a:f32[2,3] b:f32[2,1]. let
    c:f32[2,3] = sub a b
    d:f32[2,3] = square c
    e:f32[] = sub 3.0:f32[] 0.0:f32[]
    f:f32[2] = reduce_sum[axes=(1,) out_sharding=None] d
    g:f32[2] = div f e
    h:bool[] = gt e 0.0:f32[]
    i:f32[2] = broadcast_in_dim nan:f32[]
    j:f32[2] = select_n h i g
  in (j,) }"""),
    ("var_c64", "x: jnp.var(x)", "c64[3]", """
{ lambda ; a:c64[3]. let
    b:c64[] = reduce_sum[axes=(0,) out_sharding=None] a
    c:c64[1] = broadcast_in_dim b
    d:c64[1] = div c (3+0j):c64[]
    e:c64[3] = sub a d
    f:c64[3] = conj[input_dtype=complex64] e
    g:c64[3] = mul e f
    h:f32[3] = real g
    i:f32[] = sub 3.0:f32[] 0.0:f32[]
    j:f32[] = reduce_sum[axes=(0,) out_sharding=None] h
    k:f32[] = div j i
    l:bool[] = gt i 0.0:f32[]
    m:f32[] = select_n l nan:f32[] k
  in (m,) }"""),
    ("average", "x: jnp.average(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:f32[] = div b 6.0:f32[]
  in (c,) }"""),
    ("average_i32_axis", "x: jnp.average(x, axis=1)", "i32[2,3]", """
{ lambda ; a:i32[2,3]. let
    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[2] = reduce_sum[axes=(1,) out_sharding=None] b
    d:f32[2] = div c 3.0:f32[]
  in (d,) }"""),
    ("average_weights", "x, w: jnp.average(x, weights=w)", "f32[2,3] f32[2,3]", """
{ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    d:f32[2,3] = mul a b
    e:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    f:f32[] = div e c
  in (f,) }"""),
    ("average_weights_1d", "x, w: jnp.average(x, axis=1, weights=w)", "f32[2,3] f32[3]", """
{ lambda ; a:f32[2,3] b:f32[3]. let
    c:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] b
    d:f32[1] = reduce_sum[axes=(1,) out_sharding=None] c
    e:f32[2,3] = mul a c
    f:f32[2] = reduce_sum[axes=(1,) out_sharding=None] e
    g:f32[2] = div f d
  in (g,) }"""),
    ("average_returned", "x: jnp.average(x, axis=0, returned=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a
    c:f32[3] = div b 2.0:f32[]
    d:f32[3] = broadcast_in_dim 2.0:f32[]
  in (c, d) }"""),
    ("ptp", "x: jnp.ptp(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[3] = reduce_max[axes=(0,)] a
    c:f32[3] = reduce_min[axes=(0,)] a
    d:f32[3] = sub b c
  in (d,) }"""),
    ("count_nonzero", "x: jnp.count_nonzero(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a 0.0:f32[]
    c:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
  in (d,) }"""),
    ("count_nonzero_bool_axis", "x: jnp.count_nonzero(x, axis=1, keepdims=True)", "bool[2,3]", """
{ lambda ; a:bool[2,3]. let
    b:bool[2,3] = ne a False:bool[]
    c:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:i32[2] = reduce_sum[axes=(1,) out_sharding=None] c
    e:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d
  in (e,) }"""),
    ("argmax", "x: jnp.argmax(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:i32[] = argmax[axes=(0,) index_dtype=int32] a
  in (b,) }"""),
    ("argmax_axis", "x: jnp.argmax(x, axis=1)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a
  in (b,) }"""),
    ("argmax_neg_axis_keepdims", "x: jnp.argmax(x, axis=-2, keepdims=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:i32[3] = argmax[axes=(0,) index_dtype=int32] a
    c:i32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
  in (c,) }"""),
    ("argmax_flat_keepdims", "x: jnp.argmax(x, keepdims=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    c:i32[] = argmax[axes=(0,) index_dtype=int32] b
    d:i32[1,1] = broadcast_in_dim c
  in (d,) }"""),
    ("argmin", "x: jnp.argmin(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    c:i32[] = argmin[axes=(0,) index_dtype=int32] b
  in (c,) }"""),
    ("argmin_bool", "x: jnp.argmin(x, axis=0)", "bool[2,3]", """
{ lambda ; a:bool[2,3]. let
    b:i32[3] = argmin[axes=(0,) index_dtype=int32] a
  in (b,) }"""),
    ("nanargmax", "x: jnp.nanargmax(x, axis=1)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim -inf:f32[]
    d:f32[2,3] = select_n b a c
    e:i32[2] = argmax[axes=(1,) index_dtype=int32] d
    f:bool[2] = reduce_and[axes=(1,)] b
    g:i32[2] = broadcast_in_dim -1:i32[]
    h:i32[2] = select_n f e g
  in (h,) }"""),
    ("nanargmin_flat", "x: jnp.nanargmin(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim inf:f32[]
    d:f32[2,3] = select_n b a c
    e:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] d
    f:i32[] = argmin[axes=(0,) index_dtype=int32] e
    g:bool[] = reduce_and[axes=(0, 1)] b
    h:i32[] = select_n g f -1:i32[]
  in (h,) }"""),
    ("nanargmax_i32", "x: jnp.nanargmax(x)", "i32[3]", """
{ lambda ; a:i32[3]. let
    b:i32[] = argmax[axes=(0,) index_dtype=int32] a
  in (b,) }"""),
    ("nansum", "x: jnp.nansum(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim 0.0:f32[]
    d:f32[2,3] = select_n b a c
    e:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
  in (e,) }"""),
    ("nansum_i8", "x: jnp.nansum(x)", "i8[3]", """
{ lambda ; a:i8[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[] = reduce_sum[axes=(0,) out_sharding=None] b
  in (c,) }"""),
    ("nansum_f16_axis", "x: jnp.nansum(x, axis=0)", "f16[2,3]", """
{ lambda ; a:f16[2,3]. let
    b:bool[2,3] = ne a a
    c:f16[2,3] = broadcast_in_dim 0.0:f16[]
    d:f16[2,3] = select_n b a c
    e:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] d
    f:f32[3] = reduce_sum[axes=(0,) out_sharding=None] e
    g:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] f
  in (g,) }"""),
    ("nanprod", "x: jnp.nanprod(x, axis=1, keepdims=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3] = select_n b a c
    e:f32[2] = reduce_prod[axes=(1,)] d
    f:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
  in (f,) }"""),
    ("nanmax", "x: jnp.nanmax(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim -inf:f32[]
    d:f32[2,3] = select_n b a c
    e:f32[3] = reduce_max[axes=(0,)] d
    f:bool[2,3] = ne a a
    g:bool[3] = reduce_and[axes=(0,)] f
    h:f32[3] = broadcast_in_dim nan:f32[]
    i:f32[3] = select_n g e h
  in (i,) }"""),
    ("nanmin_initial", "x: jnp.nanmin(x, initial=1.0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim inf:f32[]
    d:f32[2,3] = select_n b a c
    e:f32[] = reduce_min[axes=(0, 1)] d
    f:f32[] = min 1.0:f32[] e
  in (f,) }"""),
    ("nanmin_where", "x, m: jnp.nanmin(x, axis=1, where=m, initial=5.0)", "f32[2,3] bool[2,3]", """
{ lambda ; a:f32[2,3] b:bool[2,3]. let
    c:bool[2,3] = ne a a
    d:f32[2,3] = broadcast_in_dim inf:f32[]
    e:f32[2,3] = select_n c a d
    f:f32[2,3] = broadcast_in_dim inf:f32[]
    g:f32[2,3] = select_n b f e
    h:f32[2] = reduce_min[axes=(1,)] g
    i:f32[2] = min 5.0:f32[] h
  in (i,) }"""),
    ("nanmean_i32", "x: jnp.nanmean(x)", "i32[3]", """
{ lambda ; a:i32[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[] = div c 3.0:f32[]
  in (d,) }"""),
    ("nanvar", "x: jnp.nanvar(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:bool[5] = ne a a
    c:bool[5] = not b
    d:i32[5] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    g:f32[1] = broadcast_in_dim f
    h:bool[5] = ne a a
    i:f32[5] = broadcast_in_dim 0.0:f32[]
    j:f32[5] = select_n h a i
    k:f32[] = reduce_sum[axes=(0,) out_sharding=None] j
    l:f32[1] = broadcast_in_dim k
    m:f32[1] = div l g
    n:bool[5] = ne a a
    o:f32[5] = sub a m
    p:f32[5] = broadcast_in_dim 0.0:f32[]
    q:f32[5] = select_n n o p
    r:f32[5] = square q
    s:bool[5] = ne a a
    t:bool[5] = not s
    u:i32[5] = convert_element_type[new_dtype=int32 weak_type=False] t
    v:i32[] = reduce_sum[axes=(0,) out_sharding=None] u
    w:i32[] = sub v 0:i32[]
    x:bool[] = le w 0:i32[]
    y:f32[] = reduce_sum[axes=(0,) out_sharding=None] r
    z:f32[] = select_n x y nan:f32[]
    ba:i32[] = select_n x w 1:i32[]
    bb:f32[] = convert_element_type[new_dtype=float32 weak_type=False] ba
    bc:f32[] = div z bb
  in (bc,) }"""),
    ("cumsum", "x: jnp.cumsum(x)", "f32[5]", """
{ lambda ; a:f32[5]. let b:f32[5] = cumsum[axis=0 reverse=False] a in (b,) }"""),
    ("cumsum_flat", "x: jnp.cumsum(x)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    c:f32[6] = cumsum[axis=0 reverse=False] b
  in (c,) }"""),
    ("cumsum_axis", "x: jnp.cumsum(x, axis=-1)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let b:f32[2,3] = cumsum[axis=1 reverse=False] a in (b,) }"""),
    ("cumsum_bool", "x: jnp.cumsum(x)", "bool[3]", """
{ lambda ; a:bool[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[3] = cumsum[axis=0 reverse=False] b
  in (c,) }"""),
    ("cumsum_i8", "x: jnp.cumsum(x)", "i8[3]", """
{ lambda ; a:i8[3]. let b:i8[3] = cumsum[axis=0 reverse=False] a in (b,) }"""),
    ("cumsum_dtype", "x: jnp.cumsum(x, axis=0, dtype=jnp.float32)", "i32[2,3]", """
{ lambda ; a:i32[2,3]. let
    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[2,3] = cumsum[axis=0 reverse=False] b
  in (c,) }"""),
    ("cumsum_dtype_bool", "x: jnp.cumsum(x, dtype=bool)", "f32[3]", """
{ lambda ; a:f32[3]. let
    b:bool[3] = ne a 0.0:f32[]
    c:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:i32[3] = cumsum[axis=0 reverse=False] c
    e:bool[3] = convert_element_type[new_dtype=bool weak_type=False] d
  in (e,) }"""),
    ("cumprod", "x: jnp.cumprod(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = cumprod[axis=0 reverse=False] a
  in (b,) }"""),
    ("cumprod_u8", "x: jnp.cumprod(x)", "u8[3]", """
{ lambda ; a:u8[3]. let b:u8[3] = cumprod[axis=0 reverse=False] a in (b,) }"""),
    ("nancumsum", "x: jnp.nancumsum(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:bool[5] = ne a a
    c:f32[5] = broadcast_in_dim 0.0:f32[]
    d:f32[5] = select_n b a c
    e:f32[5] = cumsum[axis=0 reverse=False] d
  in (e,) }"""),
    ("nancumprod", "x: jnp.nancumprod(x, axis=1)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:bool[2,3] = ne a a
    c:f32[2,3] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3] = select_n b a c
    e:f32[2,3] = cumprod[axis=1 reverse=False] d
  in (e,) }"""),
    ("nancumsum_i32", "x: jnp.nancumsum(x)", "i32[3]", """
{ lambda ; a:i32[3]. let
    b:bool[3] = ne a a
    c:i32[3] = broadcast_in_dim 0:i32[]
    d:i32[3] = select_n b a c
    e:i32[3] = cumsum[axis=0 reverse=False] d
  in (e,) }"""),
    ("cumulative_sum", "x: jnp.cumulative_sum(x)", "f32[5]", """
{ lambda ; a:f32[5]. let b:f32[5] = cumsum[axis=0 reverse=False] a in (b,) }"""),
    ("cumulative_sum_i8", "x: jnp.cumulative_sum(x, axis=1, include_initial=True)", "i8[2,3]", """
{ lambda ; a:i8[2,3]. let
    b:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[2,3] = cumsum[axis=1 reverse=False] b
    d:i32[2,1] = broadcast_in_dim 0:i32[]
    e:i32[2,4] = concatenate[dimension=1] d c
  in (e,) }"""),
    ("cumulative_prod", "x: jnp.cumulative_prod(x, axis=0, include_initial=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = cumprod[axis=0 reverse=False] a
    c:f32[1,3] = broadcast_in_dim 1.0:f32[]
    d:f32[3,3] = concatenate[dimension=0] c b
  in (d,) }"""),
    ("cumulative_prod_bool", "x: jnp.cumulative_prod(x)", "bool[3]", """
{ lambda ; a:bool[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[3] = cumprod[axis=0 reverse=False] b
  in (c,) }"""),
    ("median", "x: jnp.median(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:bool[5] = ne a a
    c:bool[] = reduce_or[axes=(0,)] b
    d:bool[1] = broadcast_in_dim c
    e:bool[5] = broadcast_in_dim[broadcast_dimensions=(0,)] d
    f:f32[5] = broadcast_in_dim nan:f32[]
    g:f32[5] = select_n e a f
    h:f32[5] = sort[dimension=0 is_stable=True num_keys=1] g
    i:f32[] = sub 5.0:f32[] 1.0:f32[]
    j:f32[] = mul 0.5:f32[] i
    k:f32[] = floor j
    l:f32[] = ceil j
    m:f32[] = sub j k
    _:f32[] = sub 1.0:f32[] m
    n:f32[] = sub 5.0:f32[] 1.0:f32[]
    o:f32[] = clamp 0.0:f32[] k n
    p:f32[] = sub 5.0:f32[] 1.0:f32[]
    q:f32[] = clamp 0.0:f32[] l p
    r:i32[] = convert_element_type[new_dtype=int32 weak_type=False] o
    s:i32[] = convert_element_type[new_dtype=int32 weak_type=False] q
    t:i32[1] = broadcast_in_dim r
    u:f32[] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1,)
      unique_indices=False
    ] h t
    v:i32[1] = broadcast_in_dim s
    w:f32[] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1,)
      unique_indices=False
    ] h v
    x:f32[] = add u w
    y:f32[] = mul x 0.5:f32[]
  in (y,) }"""),
    ("sort", "x: jnp.sort(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a
  in (b,) }"""),
    ("sort_axis0", "x: jnp.sort(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sort[dimension=0 is_stable=True num_keys=1] a
  in (b,) }"""),
    ("sort_axis_none", "x: jnp.sort(x, axis=None)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    c:f32[6] = sort[dimension=0 is_stable=True num_keys=1] b
  in (c,) }"""),
    ("sort_unstable", "x: jnp.sort(x, stable=False)", "i32[2,3]", """
{ lambda ; a:i32[2,3]. let
    b:i32[2,3] = sort[dimension=1 is_stable=False num_keys=1] a
  in (b,) }"""),
    ("sort_descending", "x: jnp.sort(x, descending=True)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a
    c:f32[5] = rev[dimensions=(0,)] b
  in (c,) }"""),
    ("sort_descending_axis0", "x: jnp.sort(x, axis=0, descending=True)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sort[dimension=0 is_stable=True num_keys=1] a
    c:f32[2,3] = rev[dimensions=(0,)] b
  in (c,) }"""),
    ("argsort", "x: jnp.argsort(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
    _:f32[5] c:i32[5] = sort[dimension=0 is_stable=True num_keys=1] a b
  in (c,) }"""),
    ("argsort_axis0", "x: jnp.argsort(x, axis=0)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:i32[2,3] = iota[dimension=0 dtype=int32 shape=(2, 3) sharding=None] 
    _:f32[2,3] c:i32[2,3] = sort[dimension=0 is_stable=True num_keys=1] a b
  in (c,) }"""),
    ("argsort_none", "x: jnp.argsort(x, axis=None)", "f32[2,3]", """
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    c:i32[6] = iota[dimension=0 dtype=int32 shape=(6,) sharding=None] 
    _:f32[6] d:i32[6] = sort[dimension=0 is_stable=True num_keys=1] b c
  in (d,) }"""),
    ("argsort_unstable", "x: jnp.argsort(x, stable=False)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
    _:f32[5] c:i32[5] = sort[dimension=0 is_stable=False num_keys=1] a b
  in (c,) }"""),
    ("argsort_descending", "x: jnp.argsort(x, descending=True)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
    c:f32[5] = rev[dimensions=(0,)] a
    d:i32[5] = rev[dimensions=(0,)] b
    _:f32[5] e:i32[5] = sort[dimension=0 is_stable=True num_keys=1] c d
    f:i32[5] = rev[dimensions=(0,)] e
  in (f,) }"""),
    ("argsort_descending_unstable", "x: jnp.argsort(x, descending=True, stable=False)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
    _:f32[5] c:i32[5] = sort[dimension=0 is_stable=False num_keys=1] a b
    d:i32[5] = rev[dimensions=(0,)] c
  in (d,) }"""),
    ("argsort_dtype", "x: jnp.argsort(x, dtype=jnp.int8)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:i8[5] = iota[dimension=0 dtype=int8 shape=(5,) sharding=None] 
    _:f32[5] c:i8[5] = sort[dimension=0 is_stable=True num_keys=1] a b
  in (c,) }"""),
    ("lexsort", "x, y: jnp.lexsort((x, y))", "f32[5] i32[5]", """
{ lambda ; a:f32[5] b:i32[5]. let
    c:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
    _:i32[5] _:f32[5] d:i32[5] = sort[dimension=0 is_stable=True num_keys=2] b a
      c
  in (d,) }"""),
    ("lexsort_axis0", "x, y, z: jnp.lexsort((x, y, z), axis=0)", "f32[2,3] f32[2,3] f32[2,3]", """
{ lambda ; a:f32[2,3] b:f32[2,3] c:f32[2,3]. let
    d:i32[2,3] = iota[dimension=0 dtype=int32 shape=(2, 3) sharding=None] 
    _:f32[2,3] _:f32[2,3] _:f32[2,3] e:i32[2,3] = sort[
      dimension=0
      is_stable=True
      num_keys=3
    ] c b a d
  in (e,) }"""),
    ("sort_complex", "x: jnp.sort_complex(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a
    c:c64[5] = convert_element_type[new_dtype=complex64 weak_type=False] b
  in (c,) }"""),
    ("sort_complex_c64", "x: jnp.sort_complex(x)", "c64[2,3]", """
{ lambda ; a:c64[2,3]. let
    b:c64[2,3] = sort[dimension=1 is_stable=True num_keys=1] a
  in (b,) }"""),
    ("partition", "x: jnp.partition(x, 2)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:f32[5] = neg a
    c:f32[3] _:i32[3] = top_k[axis=0 k=3] b
    d:f32[3] = neg c
    e:f32[2] _:i32[2] = top_k[axis=0 k=2] a
    f:f32[5] = concatenate[dimension=0] d e
  in (f,) }"""),
    ("partition_axis0", "x: jnp.partition(x, 1, axis=0)", "f32[3,2]", """
{ lambda ; a:f32[3,2]. let
    b:f32[2,3] = transpose[permutation=(1, 0)] a
    c:f32[2,3] = neg b
    d:f32[2,2] _:i32[2,2] = top_k[axis=1 k=2] c
    e:f32[2,2] = neg d
    f:f32[2,1] _:i32[2,1] = top_k[axis=1 k=1] b
    g:f32[2,3] = concatenate[dimension=1] e f
    h:f32[3,2] = transpose[permutation=(1, 0)] g
  in (h,) }"""),
    ("partition_u8", "x: jnp.partition(x, -2)", "u8[5]", """
{ lambda ; a:u8[5]. let
    b:u8[5] = add a 1:u8[]
    c:u8[5] = neg b
    d:u8[4] _:i32[4] = top_k[axis=0 k=4] c
    e:u8[4] = neg d
    f:u8[4] = sub e 1:u8[]
    g:u8[1] _:i32[1] = top_k[axis=0 k=1] a
    h:u8[5] = concatenate[dimension=0] f g
  in (h,) }"""),
    ("searchsorted_sort", "a, v: jnp.searchsorted(a, v, method='sort')", "f32[5] f32[2]", """
{ lambda ; a:f32[5] b:f32[2]. let
    c:f32[7] = concatenate[dimension=0] b a
    d:i32[7] = iota[dimension=0 dtype=int32 shape=(7,) sharding=None] 
    e:i32[7] = broadcast_in_dim 0:i32[]
    _:f32[7] f:i32[7] = sort[dimension=0 is_stable=True num_keys=1] c d
    g:bool[7] = lt f 0:i32[]
    h:i32[7] = add f 7:i32[]
    i:i32[7] = select_n g f h
    j:i32[7,1] = broadcast_in_dim[broadcast_dimensions=(0,)] i
    k:i32[7] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] e j d
    l:i32[2] = slice[limit_indices=(2,) start_indices=(0,) strides=None] k
    m:i32[2] = iota[dimension=0 dtype=int32 shape=(2,) sharding=None] 
    n:i32[2] = broadcast_in_dim 0:i32[]
    _:f32[2] o:i32[2] = sort[dimension=0 is_stable=True num_keys=1] b m
    p:bool[2] = lt o 0:i32[]
    q:i32[2] = add o 2:i32[]
    r:i32[2] = select_n p o q
    s:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] r
    t:i32[2] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] n s m
    u:i32[2] = sub l t
  in (u,) }"""),
]


@pytest.mark.parametrize("name,src,specs,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_jaxpr(name: str, src: str, specs: str, expected: str) -> None:
    with justjax.disable_jit():
        text = _jaxpr_text(src, specs)
    assert text == expected.strip("\n")


# JAX's own printing of jnp.var / jnp.sort, nested `jit` equations included.
JIT_GOLDEN = [
    ("var", "x: jnp.var(x)", "f32[5]", """
let _var = { lambda ; a:f32[5] b:i32[]. let
    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] a
    d:f32[1] = broadcast_in_dim c
    e:f32[1] = div d 5.0:f32[]
    f:f32[5] = sub a e
    g:f32[5] = square f
    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    i:f32[] = sub 5.0:f32[] h
    j:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    k:f32[] = div j i
    l:bool[] = gt i 0.0:f32[]
    m:f32[] = jit[
      name=_where
      jaxpr={ lambda ; l:bool[] k:f32[] n:f32[]. let
          o:f32[] = convert_element_type[new_dtype=float32 weak_type=False] n
          m:f32[] = select_n l o k
        in (m,) }
    ] l k nan:f32[]
  in (m,) } in
{ lambda ; p:f32[5]. let q:f32[] = jit[name=_var jaxpr=_var] p 0:i32[] in (q,) }"""),
    ("sort", "x: jnp.sort(x)", "f32[5]", """
{ lambda ; a:f32[5]. let
    b:f32[5] = jit[
      name=sort
      jaxpr={ lambda ; a:f32[5]. let
          b:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a
        in (b,) }
    ] a
  in (b,) }"""),
]


@pytest.mark.parametrize("name,src,specs,expected", JIT_GOLDEN, ids=[g[0] for g in JIT_GOLDEN])
def test_jit_golden_jaxpr(name: str, src: str, specs: str, expected: str) -> None:
    assert _jaxpr_text(src, specs) == expected.strip("\n")


# ---------------------------------------------------------------------------------------------
# Result dtypes (a trailing '*' marks a weakly typed result; 'E' an error; '-' not tried).

DTYPE_COLUMNS_X32 = ['bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float16', 'bfloat16', 'float32', 'complex64', 'pyfloat', 'pyint', 'pybool']

DTYPES_X32 = {
    "sum": "i32 i32 u32 i32 u32 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "prod": "i32 i32 u32 i32 u32 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "max": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 bool",
    "min": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 bool",
    "mean": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 c64 f32 f32 f32",
    "var": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 f32 f32 f32 f32",
    "std": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 f32 f32 f32 f32",
    "cumsum": "i32 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "cumprod": "i32 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "argmax": "i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 E i32 i32 i32",
    "argsort": "i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 E E E",
    "sort": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 E E E",
    "median": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 E f32 f32 f32",
    "nansum": "i32 i32 u32 i32 u32 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "nanprod": "i32 i32 u32 i32 u32 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "nanmean": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 c64 f32 f32 f32",
    "nanvar": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 f32 f32 f32 f32",
    "nanmax": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 bool",
    "average": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 c64 f32 f32 f32",
    "ptp": "E i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 E",
    "count_nonzero": "i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32",
    "all": "bool bool bool bool bool bool bool bool bool bool bool bool bool bool",
    "any": "bool bool bool bool bool bool bool bool bool bool bool bool bool bool",
    "cumulative_sum": "i32 i32 u32 i32 u32 i32 u32 f16 bf16 f32 c64 - - -",
    "cumulative_prod": "i32 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 - - -",
    "nancumsum": "i32 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 f32 i32 i32",
    "quantile": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 E f32 f32 f32",
    "percentile": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 E f32 f32 f32",
}

DTYPE_COLUMNS_X64 = ['bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float16', 'bfloat16', 'float32', 'complex64', 'int64', 'uint64', 'float64', 'pyfloat', 'pyint', 'pybool']

DTYPES_X64 = {
    "sum": "i64 i64 u64 i64 u64 i64 u64 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "prod": "i64 i64 u64 i64 u64 i64 u64 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "max": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 bool",
    "min": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 bool",
    "mean": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 c64 f64 f64 f64 f64 f64 f32",
    "var": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 f32 f64 f64 f64 f64 f64 f32",
    "std": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 f32 f64 f64 f64 f64 f64 f32",
    "cumsum": "i64 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "cumprod": "i64 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "argmax": "i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 E i64 i64 i64 i64 i64 i64",
    "argsort": "i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 E E E",
    "sort": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 E E E",
    "median": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 E f64 f64 f64 f64 f64 f32",
    "nansum": "i64 i64 u64 i64 u64 i64 u64 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "nanprod": "i64 i64 u64 i64 u64 i64 u64 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "nanmean": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 c64 f64 f64 f64 f64 f64 f32",
    "nanvar": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 f32 f64 f64 f64 f64 f64 f32",
    "nanmax": "bool i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 bool",
    "average": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 c64 f64 f64 f64 f64 f64 f32",
    "ptp": "E i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 E",
    "count_nonzero": "i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64",
    "all": "bool bool bool bool bool bool bool bool bool bool bool bool bool bool bool bool bool",
    "any": "bool bool bool bool bool bool bool bool bool bool bool bool bool bool bool bool bool",
    "cumulative_sum": "i64 i64 u64 i64 u64 i64 u64 f16 bf16 f32 c64 i64 u64 f64 - - -",
    "cumulative_prod": "i64 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 - - -",
    "nancumsum": "i64 i8 u8 i16 u16 i32 u32 f16 bf16 f32 c64 i64 u64 f64 f64 i64 i64",
    "quantile": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 E f64 f64 f64 f64 f64 f32",
    "percentile": "f32 f32 f32 f32 f32 f32 f32 f16 bf16 f32 E f64 f64 f64 f64 f64 f32",
}

_SCALARS = {"pyfloat": 1.5, "pyint": 2, "pybool": True}
_SHORT = {np.dtype(v): k for k, v in _DTYPE_NAMES.items()}


def _dtype_cell(name: str, column: str) -> str:
    x = _SCALARS[column] if column in _SCALARS else jnp.ones(3, _DTYPE_NAMES_LONG[column])
    fun = getattr(jnp, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fun(x, 0.5) if name in ("quantile", "percentile") else fun(x)
    except (TypeError, ValueError):
        return "E"
    return _SHORT[np.dtype(result.dtype)] + ("*" if result.weak_type else "")


_DTYPE_NAMES_LONG = {"bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
                     "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
                     "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
                     "float32": np.float32, "complex64": np.complex64, "int64": np.int64,
                     "uint64": np.uint64, "float64": np.float64}


def _dtype_row(name: str, columns: list[str], expected: str) -> None:
    got = [_dtype_cell(name, c) if want != "-" else "-"
           for c, want in zip(columns, expected.split(), strict=True)]
    assert " ".join(got) == expected, dict(zip(columns, got, strict=True))


@pytest.mark.parametrize("name", list(DTYPES_X32))
def test_result_dtypes(name: str) -> None:
    _dtype_row(name, DTYPE_COLUMNS_X32, DTYPES_X32[name])


# JAX maps integers to float32 (int64 to float64) in float-valued functions even with x64 on;
@pytest.mark.parametrize("name", list(DTYPES_X64))
def test_result_dtypes_x64(name: str) -> None:
    justjax.config.update("jax_enable_x64", True)
    try:
        _dtype_row(name, DTYPE_COLUMNS_X64, DTYPES_X64[name])
    finally:
        justjax.config.update("jax_enable_x64", False)


# ---------------------------------------------------------------------------------------------
# Values of edge cases: (expression, [(dtype, shape, repr of the value list)] per output).

VALUES = [
    ('jnp.sum(jnp.zeros((0, 3)), axis=0)',
     [("float32", (3,), "[0.0, 0.0, 0.0]")]),
    ('jnp.prod(jnp.zeros((0,), jnp.int8))',
     [("int32", (), "1")]),
    ('jnp.max(jnp.zeros((0, 2)), axis=0, initial=-2.0)',
     [("float32", (2,), "[-2.0, -2.0]")]),
    ('jnp.min(jnp.zeros((2, 0), jnp.int32), axis=1, initial=5)',
     [("int32", (2,), "[5, 5]")]),
    ('jnp.max(jnp.array([1.0, jnp.nan, 3.0]))',
     [("float32", (), "nan")]),
    ('jnp.min(jnp.array([[1.0, jnp.nan], [2.0, 0.5]]), axis=1)',
     [("float32", (2,), "[nan, 0.5]")]),
    ('jnp.nanmax(jnp.array([[jnp.nan, jnp.nan], [2.0, jnp.nan]]), axis=1)',
     [("float32", (2,), "[nan, 2.0]")]),
    ('jnp.nanmin(jnp.array([jnp.nan, jnp.nan]), initial=3.0)',
     [("float32", (), "3.0")]),
    ('jnp.nansum(jnp.array([jnp.nan, jnp.nan]))',
     [("float32", (), "0.0")]),
    ('jnp.nanmean(jnp.array([[jnp.nan, jnp.nan], [1.0, jnp.nan]]), axis=1)',
     [("float32", (2,), "[nan, 1.0]")]),
    ('jnp.nanvar(jnp.array([1.0, jnp.nan, 3.0]), ddof=1)',
     [("float32", (), "2.0")]),
    ('jnp.nanvar(jnp.array([1.0, jnp.nan]), ddof=1)',
     [("float32", (), "nan")]),
    ('jnp.nanargmax(jnp.array([[jnp.nan, jnp.nan], [1.0, jnp.nan]]), axis=1)',
     [("int32", (2,), "[-1, 0]")]),
    ('jnp.argmax(jnp.array([1.0, jnp.nan, 3.0, jnp.nan]))',
     [("int32", (), "1")]),
    ('jnp.argmin(jnp.array([2, 1, 1, 3]))',
     [("int32", (), "1")]),
    ('jnp.sum(jnp.full(4, 2**30, jnp.int32))',
     [("int32", (), "0")]),
    ('jnp.sum(jnp.full(300, 1, jnp.uint8))',
     [("uint32", (), "300")]),
    ('jnp.sum(jnp.full(300, 1, jnp.uint8), promote_integers=False)',
     [("uint8", (), "44")]),
    ('jnp.sum(jnp.ones(1000, jnp.bfloat16))',
     [("bfloat16", (), "1000.0")]),
    ('jnp.sum(jnp.ones(1000, jnp.bfloat16), dtype=jnp.bfloat16)',
     [("bfloat16", (), "1000.0")]),
    ('jnp.mean(jnp.ones(3000, jnp.float16) * 3)',
     [("float16", (), "3.0")]),
    ('jnp.cumsum(jnp.full(3, 100, jnp.int8))',
     [("int8", (3,), "[100, -56, 44]")]),
    ('jnp.cumsum(jnp.array([True, True, False]))',
     [("int32", (3,), "[1, 2, 2]")]),
    ('jnp.cumprod(jnp.array([2, 3, 4], jnp.uint8), dtype=jnp.float32)',
     [("float32", (3,), "[2.0, 6.0, 24.0]")]),
    ('jnp.cumsum(jnp.array([0.0, 2.0, 0.0]), dtype=bool)',
     [("bool", (3,), "[False, True, True]")]),
    ('jnp.cumulative_sum(jnp.array([True, True]), include_initial=True)',
     [("int32", (3,), "[0, 1, 2]")]),
    ('jnp.var(jnp.array([1.0, 2.0]), ddof=2)',
     [("float32", (), "nan")]),
    ('jnp.var(jnp.array([1+1j, 2-1j, 0j], jnp.complex64))',
     [("float32", (), "1.3333333730697632")]),
    ('jnp.std(jnp.arange(4), correction=0.5)',
     [("float32", (), "1.1952285766601562")]),
    ('jnp.var(jnp.arange(6.).reshape(2, 3), axis=1, where=jnp.array([[True, False, True], [False, False, False]]))',
     [("float32", (2,), "[1.0, nan]")]),
    ('jnp.mean(jnp.arange(6.).reshape(2, 3), axis=1, where=jnp.array([[True, False, True], [False, False, False]]))',
     [("float32", (2,), "[1.0, nan]")]),
    ('jnp.average(jnp.arange(6.).reshape(2, 3), axis=1, weights=jnp.array([1., 2., 3.]), returned=True)',
     [("float32", (2,), "[1.3333333730697632, 4.333333492279053]"), ("float32", (2,), "[6.0, 6.0]")]),
    ('jnp.average(jnp.arange(4), returned=True)',
     [("float32", (), "1.5"), ("float32", (), "4.0")]),
    ('jnp.all(jnp.array([], bool))',
     [("bool", (), "True")]),
    ('jnp.any(jnp.array([0j, 1j]))',
     [("bool", (), "False")]),
    ('jnp.sum(jnp.arange(6).reshape(2, 3), axis=1, initial=10, where=jnp.array([True, False, True]))',
     [("int32", (2,), "[12, 18]")]),
    ('jnp.max(jnp.arange(6.).reshape(2, 3), axis=0, initial=4.0, where=jnp.array([[True, False, True], [False, False, False]]))',
     [("float32", (3,), "[4.0, 4.0, 4.0]")]),
    ('jnp.ptp(jnp.array([[3, 1, 7], [2, 2, 2]], jnp.uint8), axis=1)',
     [("uint8", (2,), "[6, 0]")]),
    ('jnp.count_nonzero(jnp.array([[0.0, -0.0, 1.0], [jnp.nan, 0, 2]]), axis=0)',
     [("int32", (3,), "[1, 0, 2]")]),
    ('jnp.sort(jnp.array([3.0, -0.0, jnp.nan, 0.0, -jnp.inf, 1.0]))',
     [("float32", (6,), "[-inf, -0.0, 0.0, 1.0, 3.0, nan]")]),
    ('jnp.argsort(jnp.array([2, 1, 2, 1, 0]), descending=True)',
     [("int32", (5,), "[0, 2, 1, 3, 4]")]),
    ('jnp.argsort(jnp.array([1.0, jnp.nan, 0.0, jnp.nan]))',
     [("int32", (4,), "[2, 0, 1, 3]")]),
    ('jnp.sort(jnp.array([3, 1, 2]), descending=True)',
     [("int32", (3,), "[3, 2, 1]")]),
    ('jnp.lexsort((jnp.array([1, 0, 1, 0]), jnp.array([0, 0, 1, 1])))',
     [("int32", (4,), "[1, 0, 3, 2]")]),
    ('jnp.lexsort((jnp.array(3.0),))',
     [("int32", (), "0")]),
    ('jnp.partition(jnp.array([5, 1, 4, 2, 3, 0, 9]), 2)',
     [("int32", (7,), "[0, 1, 2, 9, 5, 4, 3]")]),
    ('jnp.argpartition(jnp.array([5, 1, 4, 2, 3, 0, 9]), -3)',
     [("int32", (7,), "[5, 1, 3, 4, 2, 0, 6]")]),
    ('jnp.partition(jnp.array([0, 255, 3, 0, 7], jnp.uint8), 1)',
     [("uint8", (5,), "[0, 0, 255, 7, 3]")]),
    ('jnp.searchsorted(jnp.array([1.0, 2.0, 2.0, jnp.nan]), jnp.array([2.0, jnp.nan, -0.0, 5.0]))',
     [("int32", (4,), "[1, 3, 0, 3]")]),
    ("jnp.searchsorted(jnp.array([1.0, 2.0, 2.0, jnp.nan]), jnp.array([2.0, jnp.nan, -0.0, 5.0]), side='right')",
     [("int32", (4,), "[3, 4, 0, 3]")]),
    ('jnp.searchsorted(jnp.array([1, 3, 5]), 4.5)',
     [("int32", (), "2")]),
    ('jnp.searchsorted(jnp.array([], jnp.float32), jnp.array([1.0, 2.0]))',
     [("int32", (2,), "[0, 0]")]),
    ('jnp.digitize(jnp.array([0.5, 1.0, 2.5, 9.0]), jnp.array([3.0, 2.0, 1.0]))',
     [("int32", (4,), "[3, 2, 1, 0]")]),
    ('jnp.digitize(jnp.array([0.5, 1.0, 2.5]), jnp.array([], jnp.float32))',
     [("int32", (3,), "[0, 0, 0]")]),
    ('jnp.digitize(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0]), right=True)',
     [("int32", (2,), "[0, 1]")]),
    ('jnp.sort_complex(jnp.array([1 + 2j, 1 - 1j, 0 + 5j]))',
     [("complex64", (3,), "[5j, (1-1j), (1+2j)]")]),
    ('jnp.sort_complex(jnp.array([3, 1, 2], jnp.int8))',
     [("complex64", (3,), "[(1+0j), (2+0j), (3+0j)]")]),
    ('jnp.median(jnp.array([[1.0, jnp.nan, 3.0], [4.0, 5.0, 6.0]]), axis=1)',
     [("float32", (2,), "[nan, 5.0]")]),
    ('jnp.nanmedian(jnp.array([[1.0, jnp.nan, 3.0], [jnp.nan, jnp.nan, jnp.nan]]), axis=1)',
     [("float32", (2,), "[2.0, nan]")]),
    ("jnp.quantile(jnp.arange(10.0), jnp.array([0.0, 0.25, 0.5, 1.0]), method='nearest')",
     [("float32", (4,), "[0.0, 2.0, 4.0, 9.0]")]),
    ('jnp.quantile(jnp.arange(5), 0.5)',
     [("float32", (), "2.0")]),
    ('jnp.percentile(jnp.arange(8.0).reshape(2, 4), 50, axis=(0, 1), keepdims=True)',
     [("float32", (1, 1), "[[3.5]]")]),
    ("jnp.quantile(jnp.array([1.0, 2.0, 3.0, 4.0]), 0.5, method='inverted_cdf', weights=jnp.array([1.0, 0.0, 0.0, 1.0]))",
     [("float32", (), "1.0")]),
    ("jnp.quantile(jnp.array([1.0, 2.0, 3.0]), 0.5, method='inverted_cdf', weights=jnp.array([1.0, -1.0, 1.0]))",
     [("float32", (), "nan")]),
    ("jnp.nanquantile(jnp.array([jnp.nan, 2.0, 1.0, jnp.nan]), 0.5, method='lower')",
     [("float32", (), "1.0")]),
    ('jnp.median(jnp.array([1, 2, 3, 4], jnp.float16))',
     [("float16", (), "2.5")]),
    ('jnp.nanpercentile(jnp.array([[1.0, jnp.nan], [3.0, 4.0]]), jnp.array([0.0, 100.0]), axis=0)',
     [("float32", (2, 2), "[[1.0, 4.0], [3.0, 4.0]]")]),
    ('jnp.sum(jnp.float32(2.5))',
     [("float32", (), "2.5")]),
    ('jnp.cumsum(jnp.float32(2.5))',
     [("float32", (1,), "[2.5]")]),
    ('jnp.argmax(jnp.float32(2.5))',
     [("int32", (), "0")]),
    ('jnp.unique(jnp.array([3.0, 1.0, jnp.nan, 1.0, 2.0, jnp.nan, 3.0]))',
     [("float32", (4,), "[1.0, 2.0, 3.0, nan]")]),
    ('jnp.unique(jnp.array([3.0, 1.0, jnp.nan, 1.0, 2.0, jnp.nan, 3.0]), return_index=True, return_inverse=True, return_counts=True)',
     [("float32", (4,), "[1.0, 2.0, 3.0, nan]"), ("int32", (4,), "[1, 4, 0, 2]"), ("int32", (7,), "[2, 0, 3, 0, 1, 3, 2]"), ("int32", (4,), "[2, 1, 2, 2]")]),
    ('jnp.unique(jnp.array([3.0, 1.0, jnp.nan, 1.0, 2.0, jnp.nan, 3.0]), size=6, fill_value=-1.0)',
     [("float32", (6,), "[1.0, 2.0, 3.0, nan, -1.0, -1.0]")]),
    ('jnp.unique(jnp.array([3, 1, 3, 2]), size=2, return_counts=True)',
     [("int32", (2,), "[1, 2]"), ("int32", (2,), "[1, 1]")]),
    ('jnp.unique(jnp.array([[1, 2], [0, 5], [1, 2]]), axis=0, return_counts=True, return_inverse=True)',
     [("int32", (2, 2), "[[0, 5], [1, 2]]"), ("int32", (3,), "[1, 0, 1]"), ("int32", (2,), "[1, 2]")]),
    ('jnp.unique(jnp.array([[1, 2, 1], [3, 4, 3]]), axis=1, return_index=True)',
     [("int32", (2, 2), "[[1, 2], [3, 4]]"), ("int32", (2,), "[0, 1]")]),
    ('jnp.unique(jnp.array([[2, 1], [1, 2]]), return_inverse=True)',
     [("int32", (2,), "[1, 2]"), ("int32", (2, 2), "[[1, 0], [0, 1]]")]),
    ('jnp.unique(jnp.zeros((0,), jnp.float32), return_counts=True)',
     [("float32", (0,), "[]"), ("int32", (0,), "[]")]),
    ('jnp.unique(jnp.zeros((0,), jnp.int32), size=2, fill_value=7)',
     [("int32", (2,), "[7, 7]")]),
    ('jnp.unique(jnp.array([1 + 1j, jnp.nan, 1 + 1j, complex(0, jnp.nan)]))',
     [("complex64", (2,), "[(1+1j), (nan+0j)]")]),
    ('jnp.unique_values(jnp.array([jnp.nan, 1.0, jnp.nan]))',
     [("float32", (3,), "[1.0, nan, nan]")]),
    ('tuple(jnp.unique_all(jnp.array([2, 1, 2])))',
     [("int32", (2,), "[1, 2]"), ("int32", (2,), "[1, 0]"), ("int32", (3,), "[1, 0, 1]"), ("int32", (2,), "[1, 2]")]),
    ('tuple(jnp.unique_counts(jnp.array([2, 1, 2])))',
     [("int32", (2,), "[1, 2]"), ("int32", (2,), "[1, 2]")]),
    ('tuple(jnp.unique_inverse(jnp.array([[2, 1], [2, 2]])))',
     [("int32", (2,), "[1, 2]"), ("int32", (2, 2), "[[1, 0], [1, 1]]")]),
]


def _as_expected(dtype: str, value: str) -> np.ndarray:
    parsed = eval(value, {"__builtins__": {}, "nan": math.nan, "inf": math.inf})
    return np.array(parsed, dtype=np.complex128 if dtype.startswith("complex")
                    else np.float64 if dtype not in ("bool",) else bool)


def _needs_concrete(expr: str) -> bool:
    """jnp.unique without `size` needs a concrete input, so it cannot be traced."""
    return "unique" in expr and "size=" not in expr


VALUE_CASES = [pytest.param(expr, expected, traced, id=f"{'traced' if traced else 'eager'}-{expr}")
               for expr, expected in VALUES for traced in (False, True)
               if not (traced and _needs_concrete(expr))]


@pytest.mark.parametrize("expr,expected,traced", VALUE_CASES)
def test_values(expr: str, expected: list, traced: bool) -> None:
    fun = lambda: eval(expr, {"jnp": jnp})  # noqa: E731
    if traced:
        closed = justjax.make_jaxpr(fun)()
        result = eval_jaxpr(closed.jaxpr, closed.consts)
        result = result if len(result) > 1 else result[0]
    else:
        result = fun()
    results = result if isinstance(result, tuple | list) else (result,)
    assert len(results) == len(expected)
    for got, (dtype, shape, value) in zip(results, expected, strict=True):
        got = jnp.asarray(got)
        assert str(got.dtype) == dtype and got.shape == shape and not got.weak_type, got
        want = _as_expected(dtype, value)
        wide = np.asarray(got).astype(want.dtype)
        np.testing.assert_allclose(wide, want, rtol=1e-6, equal_nan=True)
        if dtype.startswith("float"):  # the sign of zero matters too (sort's -0.0 vs 0.0)
            numbers = ~np.isnan(want)
            np.testing.assert_array_equal(np.signbit(wide[numbers]), np.signbit(want[numbers]))


# ---------------------------------------------------------------------------------------------
# Errors: (expression with x = zeros((2, 3)), exception class or None for a warning, message).

ERRORS = [
    ('jnp.sum(x, axis=5)', ValueError, 'axis 5 is out of bounds for array of dimension 2'),
    ('jnp.sum(x, axis=(0, 0))', ValueError, "duplicate value in 'axis': (0, 0)"),
    ('jnp.mean(x, axis=(1, -1))', ValueError, "duplicate value in 'axis': (1, -1)"),
    ('jnp.sum(x, axis=1.5)', TypeError, "'float' object is not iterable"),
    ('jnp.sum(x, out=x)', NotImplementedError, "The 'out' argument to jnp.sum is not supported."),
    ('jnp.mean(x, out=x)', NotImplementedError, "The 'out' argument to jnp.mean is not supported."),
    ('jnp.var(x, out=x)', NotImplementedError, "The 'out' argument to jnp.var is not supported."),
    ('jnp.argmax(x, out=x)', NotImplementedError, "The 'out' argument to jnp.argmax is not supported."),
    ('jnp.cumsum(x, out=x)', NotImplementedError, "The 'out' argument to jnp.cumsum is not supported"),
    ('jnp.max(jnp.zeros((0, 3)))', ValueError, 'zero-size array to reduction operation max which has no identity'),
    ('jnp.min(jnp.zeros((0, 3)), axis=0)', ValueError, 'zero-size array to reduction operation min which has no identity'),
    ('jnp.max(x, where=x > 0)', ValueError, "reduction operation max does not have an identity, so to use a where mask one has to specify 'initial'"),
    ('jnp.argmax(jnp.zeros((0, 3)))', ValueError, 'attempt to get argmax of an empty sequence'),
    ('jnp.argmin(jnp.zeros((3, 0)), axis=1)', ValueError, 'attempt to get argmin of an empty sequence'),
    ('jnp.sum(x, where=x)', ValueError, "jnp.sum: where must be None or a boolean array; got where.dtype=dtype('float32')."),
    ('jnp.sum(x, initial=jnp.zeros(2))', ValueError, 'initial value must be a scalar. Got array of shape (2,)'),
    ('jnp.var(x, ddof=1, correction=1)', ValueError, "ddof and correction can't be provided simultaneously."),
    ('jnp.std(x, ddof=1, correction=1)', ValueError, "ddof and correction can't be provided simultaneously."),
    ('jnp.std(x, dtype=jnp.int32)', ValueError, 'dtype argument to jnp.std must be inexact; got int32'),
    ('jnp.var(jnp.zeros(3, jnp.complex64), dtype=jnp.float32)', ValueError, 'jax.numpy.var does not yet support real dtype parameters when computing the variance of an array of complex values. The semantics of numpy.var seem unclear in this case. Please comment on https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you.'),
    ('jnp.sum([1, 2])', TypeError, "sum requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    ('jnp.sort([3, 1])', TypeError, "sort requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    ("jnp.sum(x, dtype='foo')", TypeError, "data type 'foo' not understood"),
    ("jnp.sort(x, kind='quicksort')", TypeError, "'kind' argument to sort is not supported. Use stable=True or stable=False to specify sort stability."),
    ("jnp.argsort(x, order='a')", TypeError, "'order' argument to argsort is not supported."),
    ('jnp.sort(x, axis=3)', ValueError, 'axis 3 is out of bounds for array of dimension 2'),
    ('jnp.argsort(x, axis=-3)', ValueError, 'axis -3 is out of bounds for array of dimension 2'),
    ('jnp.cumsum(x, axis=3)', ValueError, 'axis 3 is out of bounds for array of dimension 2'),
    ("jnp.quantile(x, 0.5, method='foo')", ValueError, "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'"),
    ('jnp.quantile(x, jnp.zeros((2, 2)))', ValueError, 'q must be have rank <= 1, got shape (2, 2)'),
    ('jnp.quantile(x + 0j, 0.5)', ValueError, 'quantile does not support complex input, as the operation is poorly defined.'),
    ('jnp.quantile(x, 0.5, overwrite_input=True)', ValueError, 'jax.numpy.quantile does not support overwrite_input=True or out != None'),
    ('jnp.quantile(x, 0.5, axis=(1, 1))', ValueError, 'repeated axis'),
    ('jnp.quantile(x, 0.5, weights=jnp.ones((2, 3)))', NotImplementedError, "linear doesn't support weights. Only method 'inverted_cdf' supports weights."),
    ("jnp.quantile(x, 0.5, method='inverted_cdf', weights=jnp.ones(3))", ValueError, "Weights shape must match 'a' shape when axis is None."),
    ("jnp.quantile(x, 0.5, axis=1, method='inverted_cdf', weights=jnp.ones(2))", ValueError, 'Weights shape (2,) must match reduction axes (3,)'),
    ("jnp.quantile(x, 0.5, method='inverted_cdf', weights=jnp.ones(2) + 0j)", ValueError, 'Weights cannot be complex types.'),
    ('jnp.median(x, out=x)', ValueError, 'jax.numpy.quantile does not support overwrite_input=True or out != None'),
    ('jnp.searchsorted(x, 1.0)', ValueError, 'a should be 1-dimensional'),
    ("jnp.searchsorted(jnp.zeros(3), 1.0, side='middle')", ValueError, "invalid argument side='middle', expected 'left' or 'right'"),
    ("jnp.searchsorted(jnp.zeros(3), 1.0, method='bisect')", ValueError, "invalid argument method='bisect', expected one of ['compare_all', 'scan', 'scan_unrolled', 'sort']"),
    ('jnp.cumulative_sum(x)', ValueError, 'The input array has rank 2, however axis was not set to an explicit value. The axis argument is only optional for one-dimensional arrays.'),
    ('jnp.cumulative_sum(jnp.float32(1))', ValueError, 'The input must be non-scalar to take a cumulative sum, however a scalar value or scalar array was given.'),
    ('jnp.cumulative_prod(jnp.float32(1))', ValueError, 'The input must be non-scalar to take a cumulative product, however a scalar value or scalar array was given.'),
    ('jnp.average(x, weights=jnp.ones(5))', ValueError, 'Axis must be specified when shapes of a and weights differ.'),
    ('jnp.average(x, axis=1, weights=jnp.ones(5))', ValueError, 'Shape of weights must be consistent with shape of a along specified axis.'),
    ('jnp.lexsort(())', TypeError, 'need sequence of keys with len > 0 in lexsort'),
    ('jnp.lexsort((jnp.zeros(3), jnp.zeros(4)))', ValueError, 'all keys need to be the same shape'),
    ('jnp.partition(x, 5)', ValueError, 'axis 5 is out of bounds for array of dimension 3'),
    ('jnp.partition(x + 0j, 1)', NotImplementedError, 'jnp.partition for complex dtype is not implemented.'),
    ('jnp.argpartition(x + 0j, 1)', NotImplementedError, 'jnp.argpartition for complex dtype is not implemented.'),
    ('jnp.nanargmax(x, out=x)', NotImplementedError, "The 'out' argument to jnp.nanargmax is not supported."),
    ('jnp.all(x, where=x)', ValueError, "jnp.all: where must be None or a boolean array; got where.dtype=dtype('float32')."),
    ('jnp.sum(x, dtype=jnp.float64)', None, 'Explicitly requested dtype float64 requested in sum is not available, and will be truncated to dtype float32. To enable more dtypes, set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.'),
]


@pytest.mark.parametrize("expr,error,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(expr: str, error: type | None, message: str) -> None:
    x = jnp.zeros((2, 3))
    scope = {"jnp": jnp, "x": x}
    if error is None:
        with pytest.warns(UserWarning, match=re.escape(message)):
            eval(expr, scope)
        return
    with pytest.raises(error, match=re.escape(message)):
        eval(expr, scope)


def test_digitize_needs_1d_bins() -> None:
    with pytest.raises(ValueError, match="digitize: bins must be a 1-dimensional array"):
        jnp.digitize(jnp.zeros(3), jnp.zeros((2, 3)))


def test_argmax_axis_out_of_range_is_index_error() -> None:
    # JAX reads a.shape[axis] before canonicalizing the axis.
    with pytest.raises(IndexError):
        jnp.argmin(jnp.zeros((2, 3)), axis=2)


def test_traced_axis_is_a_concretization_error() -> None:
    x = jnp.ones((2, 3))
    with pytest.raises(errors.ConcretizationTypeError):
        justjax.make_jaxpr(lambda x, a: jnp.sum(x, axis=a))(x, 1)
    # jnp.cumsum is jitted with a static `axis` (as in JAX): a traced one cannot be hashed.
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        justjax.make_jaxpr(lambda x, a: jnp.cumsum(x, axis=a))(x, 1)


def test_errors_raised_while_tracing_too() -> None:
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        justjax.make_jaxpr(jnp.max)(jnp.zeros((0, 3)))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        justjax.make_jaxpr(lambda x: jnp.var(x, axis=(0, -2)))(jnp.zeros((2, 3)))


# ---------------------------------------------------------------------------------------------
# Array methods route to these functions, eagerly and under tracing.

METHOD_CASES = [
    ("sum", (), {"axis": 0}), ("prod", (), {"axis": 1, "keepdims": True}),
    ("max", (), {}), ("min", (1,), {}), ("mean", (), {"axis": (0, 1)}),
    ("var", (), {"ddof": 1}),
    ("std", (0,), {}), ("ptp", (), {"axis": 1}),
    ("all", (), {}), ("any", (0,), {}), ("argmax", (), {"axis": 1}), ("argmin", (), {}),
    ("cumsum", (1,), {}), ("cumprod", (), {}), ("sort", (), {"axis": 0}),
    ("argsort", (), {"descending": True}), ("argpartition", (1,), {}),
]


@pytest.mark.parametrize("method,args,kwargs", METHOD_CASES,
                         ids=[m[0] if isinstance(m, tuple) else None for m in METHOD_CASES])
def test_methods(method: str, args: tuple, kwargs: dict) -> None:
    x = jnp.asarray(np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]], np.float32))
    want = getattr(jnp, method)(x, *args, **kwargs)
    np.testing.assert_array_equal(getattr(x, method)(*args, **kwargs), want)
    closed = justjax.make_jaxpr(lambda y: getattr(y, method)(*args, **kwargs))(x)
    np.testing.assert_array_equal(eval_jaxpr(closed.jaxpr, closed.consts, x)[0], want)


def test_searchsorted_method() -> None:
    a = jnp.asarray(np.array([1.0, 2.0, 4.0], np.float32))
    np.testing.assert_array_equal(a.searchsorted(jnp.asarray(np.float32(3.0))), 2)


def test_public_names() -> None:
    for module in (reductions_module, sorting_module):
        for name in module.__all__:
            assert getattr(jnp, name) is getattr(module, name), name
            assert getattr(module, name).__doc__, name


def test_sum_accumulates_low_precision_in_float32() -> None:
    # 4096 float16 ones summed in float16 would stop at 2048.
    x = jnp.ones(4096, jnp.float16)
    assert float(jnp.sum(x)) == 4096.0
    assert float(jnp.mean(x * 3)) == 3.0


def test_argsort_stable_and_descending_keep_tie_order() -> None:
    x = jnp.asarray(np.array([1, 0, 1, 0, 1], np.int32))
    np.testing.assert_array_equal(jnp.argsort(x), [1, 3, 0, 2, 4])
    np.testing.assert_array_equal(jnp.argsort(x, descending=True), [0, 2, 4, 1, 3])


def test_searchsorted_methods_agree() -> None:
    rng = np.random.default_rng(0)
    a = np.sort(rng.integers(0, 20, 33)).astype(np.float32)
    a[-3:] = np.nan
    v = np.concatenate([rng.integers(-2, 22, 40).astype(np.float32), [np.nan, -0.0]])
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side)
        for method in ("scan", "scan_unrolled", "compare_all", "sort"):
            got = jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), side=side, method=method)
            np.testing.assert_array_equal(got, want, err_msg=f"{method} {side}")
