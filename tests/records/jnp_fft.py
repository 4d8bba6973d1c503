"""Op records for `jnp.fft`: the library transforms (sizes, axes, norms) against NumPy, through
the harness's checks (jit, gradients in float64, vmap). Complex inputs are built from real
arguments so that the gradient checks reach them."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax import lax
from justjax.numpy import fft as jnp_fft
from tests.harness import C64, F32, OpRecord

_TOL = {C64: 1e-4, F32: 1e-4}


def _c64(*_: np.dtype) -> np.dtype:
    return C64


def _f32(*_: np.dtype) -> np.dtype:
    return F32


def _record(name: str, kwargs: dict[str, Any], shapes: list, complex_input: bool,
            real_output: bool) -> OpRecord:
    """`jnp.fft.<name>(input, **kwargs)` against `numpy.fft.<name>`, the input `re + i im`
    (two real arguments) when `complex_input`."""
    ours: Callable[..., Any] = getattr(jnp_fft, name)
    theirs: Callable[..., Any] = getattr(np.fft, name)
    if complex_input:
        def fun(re: Any, im: Any) -> Any:
            return ours(lax.complex(re, im), **kwargs)

        def reference(re: np.ndarray, im: np.ndarray) -> np.ndarray:
            return theirs(re.astype(np.float64) + 1j * im.astype(np.float64), **kwargs)
        shapes = [[s, s] for s in shapes]
    else:
        def fun(x: Any) -> Any:
            return ours(x, **kwargs)

        def reference(x: np.ndarray) -> np.ndarray:
            return theirs(x.astype(np.float64), **kwargs)
        shapes = [[s] for s in shapes]
    options = "_".join(f"{k}{v}" for k, v in kwargs.items()).replace(" ", "")
    return OpRecord(f"jnp_fft_{name}_{options}", fun, reference, shapes, [F32],
                    expected_dtype=_f32 if real_output else _c64, tol=_TOL)


RECORDS = [
    _record("fft", {}, [(8,), (3, 7)], True, False),
    _record("fft", {"n": 10, "axis": 0, "norm": "ortho"}, [(7, 3)], True, False),
    _record("ifft", {"n": 5, "norm": "forward"}, [(2, 7)], True, False),
    _record("rfft", {"n": 9}, [(8,), (2, 6)], False, False),
    _record("rfft", {"axis": 0, "norm": "ortho"}, [(7, 2)], False, False),
    _record("irfft", {}, [(5,), (3, 4)], True, True),
    _record("irfft", {"n": 7, "norm": "ortho"}, [(5,)], True, True),
    _record("fft2", {"axes": (0, 2)}, [(3, 2, 4)], True, False),
    _record("rfftn", {}, [(3, 4, 5)], False, False),
    _record("irfftn", {"s": (3, 6), "axes": (0, 1)}, [(4, 4, 2)], True, True),
    _record("fftn", {}, [(2, 2, 3, 2)], True, False),
    _record("hfft", {"n": 7}, [(5,)], True, True),
    _record("ihfft", {"norm": "ortho"}, [(6,), (2, 7)], False, False),
]
