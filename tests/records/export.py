"""Op records for `call_exported` (`jax.export`'s `Exported.call`), so the generic record
checks run it: against NumPy, traced and jitted against eager, reverse-mode gradients to
second order (through the exported VJPs; forward mode is JAX's custom_vjp TypeError), and
vmap against a loop. The function is exported once per dtype and rank with symbolic
dimensions, so one Exported serves every shape of a record; it is serialized with two
orders of VJPs and deserialized, as another process would.

`dim_as_value` (a symbolic dimension used as a value) exists only while tracing for
symbolic shapes: tests/test_export.py runs it inside exported programs."""
from __future__ import annotations

import functools

import numpy as np

import justjax
import justjax.numpy as jnp
from justjax import export
from tests.harness import F32, OpRecord, rand_default


def _tanh_sum(x, y):
    return jnp.tanh(x) * y + jnp.sin(y)


def _np_tanh_sum(x, y):
    return np.tanh(x) * y + np.sin(y)


@functools.lru_cache(maxsize=None)
def _exported(dtype: np.dtype, rank: int) -> export.Exported:
    dims = ", ".join(f"d{i}" for i in range(rank))
    shape = export.symbolic_shape(dims) if rank else ()
    spec = justjax.ShapeDtypeStruct(shape, dtype)
    exp = export.export(justjax.jit(_tanh_sum))(spec, spec)
    return export.deserialize(exp.serialize(vjp_order=2))


def _call(x, y):
    return _exported(np.dtype(x.dtype), x.ndim).call(x, y)


RECORDS = [
    OpRecord("export.call_exported", _call, _np_tanh_sum,
             shapes=[[(), ()], [(3,), (3,)], [(2, 3), (2, 3)]], dtypes=[F32],
             make_args=rand_default, grad_modes=("rev",)),
]
