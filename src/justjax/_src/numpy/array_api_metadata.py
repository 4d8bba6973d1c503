"""The array API standard's metadata for `justjax.numpy`: its version, the namespace an array
belongs to (`x.__array_namespace__()`), and the inspection object
`jnp.__array_namespace_info__()` (capabilities, default device and dtypes, supported dtypes,
devices), answering as JAX 0.10.2 answers.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from justjax._src.config import config
from justjax._src.core import dtypes
from justjax._src.numpy.scalar_types import DTYPE_KINDS
from justjax._src.runtime import devices as devices_lib

__all__ = ["__array_api_version__", "__array_namespace_info__"]

__array_api_version__ = "2024.12"

# The array API's dtypes: the 64-bit ones only with x64 (JAX's default dtypes are 32-bit).
_ARRAY_API_32 = frozenset({"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
                           "float32", "complex64"})
_ARRAY_API_64 = frozenset({"int64", "uint64", "float64", "complex128"})


def __array_namespace__(self: Any, *, api_version: None | str = None) -> ModuleType:
    """The array API namespace of an array: `justjax.numpy`.

    Args:
      api_version: None or "2024.12" (the one version implemented).
    Returns:
      The `justjax.numpy` module.
    """
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"{api_version=!r} is not available; "
                         f"available versions are: {[__array_api_version__]}")
    # The public namespace sits above this layer: looked up, not imported at load time.
    return importlib.import_module("justjax.numpy")


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The array API's inspection object for `justjax.numpy`."""
    return ArrayNamespaceInfo()


class ArrayNamespaceInfo:
    """What the namespace supports (the array API's `__array_namespace_info__()`)."""

    _capabilities = {
        "boolean indexing": False,  # not within transformations
        "data-dependent shapes": False,  # not within transformations
        "max dimensions": 64,  # XLA's limit, kept for programs moving between the two
    }

    def _build_dtype_dict(self) -> dict[str, dict[str, Any]]:
        names = _ARRAY_API_32
        if config.read("jax_enable_x64"):
            names = names | _ARRAY_API_64
        return {category: {t.name: t for t in types if t.name in names}
                for category, types in DTYPE_KINDS.items()}

    def default_device(self) -> None:
        """None: arrays are created uncommitted, free to be placed where they are used."""
        return None

    def devices(self) -> list[Any]:
        """None (uncommitted) followed by every device."""
        return [None, *devices_lib.devices()]

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes (False: not under transformations),
        and the maximal rank."""
        return self._capabilities

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        """The default float, complex, integer and index dtypes (64-bit with x64).

        Args:
          device: ignored: the defaults are the same on every device.
        """
        del device
        return {
            "real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(),
            "indexing": dtypes.default_int_dtype(),
        }

    def dtypes(self, *, device: Any = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, Any]:
        """The array API dtypes supported, by name, of a kind or kinds.

        Args:
          device: ignored: every device supports the same dtypes.
          kind: None (all numeric types and bool), a kind ("integral", "real floating",
            ...) or a tuple of kinds.
        Returns:
          `{name: dtype}`.
        """
        del device
        data_types = self._build_dtype_dict()
        if kind is None:
            return data_types["numeric"] | data_types["bool"]
        if isinstance(kind, tuple):
            out: dict[str, Any] = {}
            for one in kind:
                out |= data_types[one]
            return out
        return data_types[kind]
