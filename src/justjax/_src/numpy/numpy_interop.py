"""jax.numpy names that are NumPy's own or thin wrappers of NumPy on the host.

`save`, `savez`, `iterable`, `index_exp`, `s_`, `array_repr` and `array_str` are NumPy's
functions and objects themselves (as in JAX: NumPy converts an Array through `__array__`);
`load` gives back an Array (restoring bfloat16, which `.npy` files store as raw 2-byte
voids); the print options are NumPy's, which Array printing uses.
"""
from __future__ import annotations

import os
from typing import IO, Any

import numpy as np
from numpy import (  # re-exported unchanged, as jax.numpy does
    array_repr as array_repr,
    array_str as array_str,
    index_exp as index_exp,
    iterable as iterable,
    s_ as s_,
    save as save,
    savez as savez,
)
from numpy.exceptions import ComplexWarning as ComplexWarning

from justjax._src.core import dtypes
from justjax._src.numpy.array_creation import asarray
from justjax._src.runtime import dlpack

__all__ = ["ComplexWarning", "array_repr", "array_str", "from_dlpack", "frombuffer",
           "fromfile", "fromiter", "fromstring", "get_printoptions", "index_exp", "iterable",
           "load", "printoptions", "s_", "save", "savez", "set_printoptions"]


def load(file: IO[bytes] | str | os.PathLike[Any], *args: Any, **kwargs: Any) -> Any:
    """`jnp.load`: `numpy.load`, with a `.npy` array returned as an Array.

    Args:
      file: a path or a binary file object.
      *args, **kwargs: passed to `numpy.load`.

    Returns:
      An Array (canonical dtype; bfloat16 data saved by `jnp.save`/`np.save` comes back as
      bfloat16). An `.npz` file gives NumPy's `NpzFile`; an array JAX cannot hold (strings,
      other voids) stays a NumPy array.
    """
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == np.dtype("V2"):
        # NumPy writes bfloat16 as a 2-byte void.
        out = out.view(dtypes.bfloat16)
    try:
        return asarray(out)
    except TypeError:
        return out


def get_printoptions() -> dict[str, Any]:
    """`jnp.get_printoptions`: NumPy's print options (Arrays are printed by NumPy)."""
    return np.get_printoptions()


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """`jnp.printoptions`: NumPy's context manager for print options (Arrays are printed by
    NumPy, so the options apply to them)."""
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """`jnp.set_printoptions`: sets NumPy's print options (which Array printing uses)."""
    return np.set_printoptions(*args, **kwargs)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """An Array of the values in a bytes-like `buffer` (read by NumPy on the host).

    Args:
      buffer: the bytes.
      dtype: their type (canonicalized as JAX does: float64 becomes float32 without x64).
      count: how many values (-1: all).
      offset: the byte offset to start at.
    Returns:
      The Array.
    """
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """An Array of the numbers in a text `string` separated by `sep` (NumPy's parser).

    Args:
      string: the text.
      dtype: the values' type.
      count: how many values (-1: all).
      sep: the separator (required, as in JAX).
    Returns:
      The Array.
    """
    return asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


_IMPURE = ("jnp.{0}() is not implemented because it may be non-pure and thus unsafe for use "
           "with JIT and other JAX transformations. Consider using jnp.asarray(np.{0}(...)) "
           "instead, although care should be taken if np.{0} is used within a jax "
           "transformations because of its potential side-effect of consuming the {1} object; "
           "for more information see https://docs.jax.dev/en/latest/notebooks/"
           "Common_Gotchas_in_JAX.html#pure-functions")


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not available, as in JAX: reading a file is a side effect (`NotImplementedError` with
    JAX's message pointing at `jnp.asarray(np.fromfile(...))`)."""
    raise NotImplementedError(_IMPURE.format("fromfile", "file"))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Not available, as in JAX: consuming an iterator is a side effect (`NotImplementedError`
    with JAX's message pointing at `jnp.asarray(np.fromiter(...))`)."""
    raise NotImplementedError(_IMPURE.format("fromiter", "iterable"))

def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """`jnp.from_dlpack`: an Array of a DLPack producer's tensor (a NumPy array, a torch
    tensor, another Array ...), sharing its memory unless a copy is asked for or needed.

    Args:
      x: an object with `__dlpack__` and `__dlpack_device__`, on the CPU.
      device: the device (or single-device sharding) to commit the result to.
      copy: True: always copy; False: never (ValueError when needed); None: when needed.
    Returns:
      An Array.
    """
    return dlpack.from_dlpack(x, device=device, copy=copy)
