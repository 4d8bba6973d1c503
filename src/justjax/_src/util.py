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
