"""Small helpers shared by the API layers."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def wraps(wrapped: Any) -> Callable[[_F], _F]:
    """`functools.wraps` that tolerates what it wraps: transformed callables are often
    objects (an equinox Module, a partial) whose `__name__` or `__doc__` is missing or not a
    string, and JAX's transformations accept those, so the copy is best effort."""
    def decorate(wrapper: _F) -> _F:
        for attr in functools.WRAPPER_ASSIGNMENTS:
            try:
                setattr(wrapper, attr, getattr(wrapped, attr))
            except (AttributeError, TypeError):
                pass
        try:
            wrapper.__dict__.update(getattr(wrapped, "__dict__", {}))
        except (AttributeError, TypeError):
            pass
        wrapper.__wrapped__ = wrapped  # type: ignore[attr-defined]
        return wrapper

    return decorate


def lazy_submodules(package: str, names: list[str]
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """A package's `__getattr__`, `__dir__` and `__all__` for subpackages imported when first
    used (as JAX's `lazy_loader.attach`): `jax.scipy.stats` is there without `import
    jax.scipy.stats`, and `import jax` does not pay for it.

    Args:
      package: the package's `__name__`.
      names: its submodules imported on first access.
    Returns:
      `(__getattr__, __dir__, __all__)` for the package's namespace.
    """
    import importlib
    import sys

    def __getattr__(name: str) -> Any:
        if name in names:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__, list(names)
