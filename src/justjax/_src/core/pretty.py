"""A small Wadler-style pretty printer (text, concat, break, nest, group).

Jaxprs print through it so that long equations wrap exactly where JAX's printer wraps them: a
group is laid out flat when the group itself fits in the remaining width, otherwise its
breaks become newlines at the group's indentation.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Sequence


class Doc:
    """A document; combine with `+`, `concat`, `nest`, `group`, `brk` and `text`."""

    def __add__(self, other: Doc) -> Doc:
        return Concat((self, other))

    def format(self, width: int = 80) -> str:
        return _format(self, width)

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True, eq=False)
class Text(Doc):
    text: str


@dataclass(frozen=True, eq=False)
class Concat(Doc):
    children: tuple[Doc, ...]


@dataclass(frozen=True, eq=False)
class Break(Doc):
    text: str


@dataclass(frozen=True, eq=False)
class Nest(Doc):
    indent: int
    child: Doc


@dataclass(frozen=True, eq=False)
class Group(Doc):
    child: Doc


NIL = Concat(())


def text(s: str) -> Doc:
    return Text(s)


def brk(s: str = " ") -> Doc:
    return Break(s)


def concat(docs: Iterable[Doc]) -> Doc:
    return Concat(tuple(docs))


def nest(indent: int, doc: Doc) -> Doc:
    return Nest(indent, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def join(separator: Doc, docs: Sequence[Doc]) -> Doc:
    parts: list[Doc] = []
    for position, doc in enumerate(docs):
        if position:
            parts.append(separator)
        parts.append(doc)
    return Concat(tuple(parts))


class _Mode(enum.Enum):
    FLAT = 0
    BREAK = 1


def _fits(doc: Doc, width: int) -> bool:
    """Whether `doc` laid out flat takes at most `width` columns."""
    agenda = [doc]
    while agenda and width >= 0:
        item = agenda.pop()
        if isinstance(item, Text):
            width -= len(item.text)
        elif isinstance(item, Break):
            width -= len(item.text)
        elif isinstance(item, Concat):
            agenda.extend(reversed(item.children))
        elif isinstance(item, (Nest, Group)):
            agenda.append(item.child)
    return width >= 0


def _format(doc: Doc, width: int) -> str:
    out: list[str] = []
    column = 0
    agenda: list[tuple[int, _Mode, Doc]] = [(0, _Mode.BREAK, doc)]
    while agenda:
        indent, mode, item = agenda.pop()
        if isinstance(item, Text):
            out.append(item.text)
            column += len(item.text)
        elif isinstance(item, Concat):
            agenda.extend((indent, mode, child) for child in reversed(item.children))
        elif isinstance(item, Break):
            if mode is _Mode.BREAK:
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(item.text)
                column += len(item.text)
        elif isinstance(item, Nest):
            agenda.append((indent + item.indent, mode, item.child))
        elif isinstance(item, Group):
            # Only the group itself has to fit, not the rest of the line (as JAX's printer).
            flat = mode is _Mode.FLAT or _fits(item.child, width - column)
            agenda.append((indent, _Mode.FLAT if flat else _Mode.BREAK, item.child))
    return "".join(out)
