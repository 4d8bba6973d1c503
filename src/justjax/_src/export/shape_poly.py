"""Shape polymorphism for export (filled in below)."""
from __future__ import annotations

from typing import Any, Sequence


class SymbolicScope:
    def __init__(self, constraints: Sequence[str] = ()) -> None:
        self.constraints = tuple(constraints)


def scope_constraints(avals: Sequence[Any]) -> tuple[str, ...]:
    return ()


def parse_dim(text: str, scope: SymbolicScope) -> Any:
    raise NotImplementedError
