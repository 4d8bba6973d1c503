"""Names a public module keeps for a while after JAX deprecated them, with JAX's warning, and
names JAX removed, with JAX's message in the AttributeError."""
from __future__ import annotations

import warnings
from typing import Any, Callable


def deprecation_getattr(module: str, deprecations: dict[str, tuple[str, Any]]
                        ) -> Callable[[str], Any]:
    """A module `__getattr__`: `deprecations[name] = (message, value)` warns with
    `message` and returns `value`; a value of None means the name is gone (AttributeError
    with `message`)."""
    def getattr_(name: str) -> Any:
        entry = deprecations.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        message, value = entry
        if value is None:
            raise AttributeError(message)
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value

    return getattr_
