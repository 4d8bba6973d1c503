"""Checkify's error values: the exceptions a check can raise and the functional `Error`.

An `Error` holds, per *error effect* (an exception class and the shapes of its run-time
payload), whether such an error happened (`_pred`), the code of the first one (`_code`:
codes are handed out in tracing order, so the smallest code of the errors that happened is
the first in program order) and its payload (`_payload`, e.g. a failed check's format
arguments). `_metadata` maps each code to the static half of its exception (a treedef), so
`Error.get_exception` can rebuild the exception from code and payload. An `Error` is a pytree
whose leaves are the predicates, codes and payloads: it crosses `jit`, `vmap` and loops like
any value. After `vmap` its leaves have a batch axis and `get` reports every failing index.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import sys
from typing import Any, Iterator, Sequence, TypeVar, Union

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.lax import elementwise
from justjax._src.lax import selection as lax_selection
from justjax._src.runtime.array import Array
from justjax._src.compilation.stages import ShapeDtypeStruct

Bool = Union[bool, Array]
Int = Union[int, Array]
Payload = list[Any]
Out = TypeVar("Out")
# JAX spells the category type this way: an error set is a frozenset of exception classes.
ErrorCategory = type["JaxException"]


class JaxRuntimeError(ValueError):
    """Raised by `Error.throw`, `check_error` and an unfunctionalized failing `check`."""


# ---------------------------------------------------------------------------------------------
# Where a check was made: the user's frames, outside justjax.

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TracebackInfo:
    """The user frames (file, line, function) active where a check was traced, innermost
    last. Compared by identity, so exceptions holding it can live in treedefs."""

    __slots__ = ("frames",)

    def __init__(self, frames: tuple[tuple[str, int, str], ...]) -> None:
        self.frames = frames

    def format(self) -> str:
        """The frames as a traceback prints them."""
        return "".join(f'  File "{file}", line {line}, in {name}\n'
                       for file, line, name in self.frames)

    def __repr__(self) -> str:
        where = f"{self.frames[-1][0]}:{self.frames[-1][1]}" if self.frames else "unknown"
        return f"<TracebackInfo at {where}>"


def get_traceback() -> TracebackInfo:
    """The current user frames (those of files outside justjax)."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        # Frozen modules (runpy's, importlib's) are Python's own machinery.
        if not code.co_filename.startswith((_PACKAGE_DIR, "<frozen ")):
            frames.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return TracebackInfo(tuple(reversed(frames)))


# ---------------------------------------------------------------------------------------------
# The exceptions.

class JaxException(Exception):
    """Python exception which can contain an error message with JAX run-time info.

    Each subclass is a pytree: its run-time payload (arrays) are the leaves, the rest (message,
    primitive name, shapes, traceback info) is static node data.
    """

    def __init__(self, traceback_info: TracebackInfo) -> None:
        self.traceback_info = traceback_info

    def __init_subclass__(cls) -> None:
        tree_util.register_pytree_node_class(cls)

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [], self.traceback_info

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Sequence[Any]) -> JaxException:
        return cls(metadata)

    def get_effect_type(self) -> ErrorEffect:
        """The error effect this exception belongs to."""
        raise NotImplementedError


def _shape_dtype(x: Any) -> ShapeDtypeStruct:
    aval = core.get_aval(x)
    return ShapeDtypeStruct(aval.shape, aval.dtype)


def _shape_dtypes_key(effect: ErrorEffect) -> tuple:
    # dtypes do not order; their names do.
    return tuple((sd.shape, str(sd.dtype)) for sd in effect.shape_dtypes)


@functools.total_ordering
@dataclasses.dataclass(eq=True, frozen=True, slots=True)
class ErrorEffect:
    """A kind of error an `Error` tracks: the exception class and its payload's shapes."""

    error_type: type[JaxException]
    shape_dtypes: tuple[ShapeDtypeStruct, ...]

    def __lt__(self, other: ErrorEffect) -> bool:
        return ((str(self.error_type), _shape_dtypes_key(self))
                < (str(other.error_type), _shape_dtypes_key(other)))


class DivisionByZeroError(JaxException):
    """An integer or floating-point division by zero (`div_checks`)."""

    def __str__(self) -> str:
        return "division by zero"

    def get_effect_type(self) -> ErrorEffect:
        return ErrorEffect(DivisionByZeroError, ())


class NaNError(JaxException):
    """A primitive produced a NaN (`nan_checks`); `prim` is its name."""

    def __init__(self, traceback_info: TracebackInfo, primitive_name: str) -> None:
        super().__init__(traceback_info)
        self.prim = primitive_name

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [], (self.traceback_info, self.prim)

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Sequence[Any]) -> NaNError:
        return cls(*metadata)

    def get_effect_type(self) -> ErrorEffect:
        return ErrorEffect(NaNError, ())

    def __str__(self) -> str:
        return f"nan generated by primitive: {self.prim}."


class OOBError(JaxException):
    """An out-of-bounds index (`index_checks`). The payload is an int32[3] array: the first
    offending index, its axis and that axis' size."""

    def __init__(self, traceback_info: TracebackInfo, primitive_name: str,
                 operand_shape: tuple[int, ...], payload: Any) -> None:
        super().__init__(traceback_info)
        self.prim = primitive_name
        self.operand_shape = operand_shape
        self._payload = payload

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [self._payload], (self.traceback_info, self.prim, self.operand_shape)

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Sequence[Any]) -> OOBError:
        return cls(*metadata, payload=payload[0])

    def __str__(self) -> str:
        return (f"out-of-bounds indexing for array of shape {self.operand_shape}: "
                f"index {self._payload[0]} is out of bounds for axis {self._payload[1]} "
                f"with size {self._payload[2]}. ")

    def get_effect_type(self) -> ErrorEffect:
        return ErrorEffect(OOBError, (ShapeDtypeStruct((3,), np.int32),))


class FailedCheckError(JaxException):
    """A `check` whose predicate was False (`user_checks`); its format arguments are the
    payload."""

    def __init__(self, traceback_info: TracebackInfo, fmt_string: str, *a: Any,
                 **k: Any) -> None:
        super().__init__(traceback_info)
        self.fmt_string = fmt_string
        self.args = a
        self.kwargs = k

    def tree_flatten(self) -> tuple[Any, Any]:
        return (self.args, self.kwargs), (self.traceback_info, self.fmt_string)

    @classmethod
    def tree_unflatten(cls, metadata: Any, payload: Any) -> FailedCheckError:
        args, kwargs = payload
        return cls(*metadata, *args, **kwargs)

    def __str__(self) -> str:
        return self.fmt_string.format(*self.args, **self.kwargs) + " (`check` failed)"

    def get_effect_type(self) -> ErrorEffect:
        leaves = tree_util.tree_leaves((self.args, self.kwargs))
        return ErrorEffect(FailedCheckError, tuple(_shape_dtype(x) for x in leaves))


@dataclasses.dataclass
class BatchedError(JaxException):
    """The errors of a batched `Error`: the exception at each failing batch index."""

    error_mapping: dict[tuple[int, ...], JaxException]

    def __post_init__(self) -> None:
        traceback_info = list(self.error_mapping.values())[0].traceback_info
        super().__init__(traceback_info)

    def __str__(self) -> str:
        return "\n".join(f"at mapped index {', '.join(map(str, idx))}: {e}"
                         for idx, e in self.error_mapping.items())


# The error sets `checkify(..., errors=...)` takes.
user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


# ---------------------------------------------------------------------------------------------
# The error value.

class Metadata(dict):
    """Code -> exception treedef. Hashable, so an `Error`'s treedef can key jit's cache; it
    is never mutated after construction."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))


@dataclasses.dataclass(frozen=True, slots=True)
class Error:
    """The errors a checkified function found (see the module docstring)."""

    _pred: dict[ErrorEffect, Bool]
    _code: dict[ErrorEffect, Int]
    _metadata: dict[Int, Any]
    _payload: dict[ErrorEffect, Payload]

    def get(self) -> str | None:
        """Returns error message if error happened, None if no error happened."""
        exc = self.get_exception()
        if exc is not None:
            return str(exc)
        return None

    def get_exception(self) -> JaxException | None:
        """Returns Python exception if error happened, None if no error happened."""
        if any(np.shape(v) for v in self._pred.values()):
            return self._get_batched_exception()
        first = self._first_error(lambda x: x)
        if first is None:
            return None
        code, effect = first
        return tree_util.tree_unflatten(self._metadata[code], self._payload[effect])

    def throw(self) -> None:
        """Raises `JaxRuntimeError` if an error happened (as `check_error`)."""
        # The check primitive is defined on top of this module.
        from justjax._src.transformations.checkify.check import check_error_value
        check_error_value(self)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    # -- internal helpers ------------------------------------------------------------------
    def _first_error(self, at: Any) -> tuple[int, ErrorEffect] | None:
        """(code, effect) of the error with the smallest code that happened, reading each
        predicate and code through `at` (an index into batched values)."""
        best: tuple[int, ErrorEffect] | None = None
        for effect, code in self._code.items():
            if bool(at(self._pred[effect])):
                code = int(at(code))
                if best is None or code < best[0]:
                    best = (code, effect)
        return best

    def _get_batched_exception(self) -> BatchedError | None:
        shape = np.broadcast_shapes(*[np.shape(v) for v in self._pred.values()])
        error_mapping = {}
        for idx in np.ndindex(*shape):
            first = self._first_error(lambda x, i=idx: np.broadcast_to(np.asarray(x), shape)[i])
            if first is None:
                continue
            code, effect = first
            payload = tree_util.tree_map(lambda x, i=idx: x[i], self._payload[effect])
            error_mapping[idx] = tree_util.tree_unflatten(self._metadata[code], payload)
        if error_mapping:
            return BatchedError(error_mapping)
        return None

    def _update(self, effect_type: ErrorEffect, pred: Any, code: Any, metadata: dict,
                payload: Payload) -> Error:
        return Error({**self._pred, effect_type: pred}, {**self._code, effect_type: code},
                     Metadata({**self._metadata, **metadata}),
                     {**self._payload, effect_type: payload})

    def _add_placeholder_effects(self, effects: Iterator[ErrorEffect] | set) -> Error:
        """This error with every effect of `effects` it lacks, as one that never happened
        (code -1, payload of ones): loops and branches carry errors of one structure."""
        pred, code, payload = dict(self._pred), dict(self._code), dict(self._payload)
        for effect in effects:
            if effect not in pred:
                pred[effect] = np.bool_(False)
                code[effect] = np.int32(-1)
                payload[effect] = [np.ones(sd.shape, sd.dtype) for sd in effect.shape_dtypes]
        return Error(pred, code, self._metadata, payload)

    def _replace(self, **changes: Any) -> Error:
        return dataclasses.replace(self, **changes)

    # -- pytree ----------------------------------------------------------------------------
    def tree_flatten(self) -> tuple[tuple, Metadata]:
        return (self._pred, self._code, self._payload), Metadata(self._metadata)

    @classmethod
    def tree_unflatten(cls, metadata: Any, data: Sequence[Any]) -> Error:
        pred, code, payload = data
        return cls(pred, code, metadata, payload)


tree_util.register_pytree_node_class(Error)

# They print as JAX's do (`jax._src.checkify.FailedCheckError`): the package re-exports them.
for _cls in (JaxRuntimeError, JaxException, ErrorEffect, DivisionByZeroError, NaNError, OOBError,
             FailedCheckError, BatchedError, Error):
    _cls.__module__ = "justjax._src.transformations.checkify"

init_error = Error({}, {}, Metadata(), {})  # value used as initial (empty) error.
_codes = itertools.count(1)  # globally unique codes, in tracing order


def next_code() -> int:
    """A fresh error code."""
    return next(_codes)


def assert_func(error: Error, pred: Any, new_error: JaxException) -> Error:
    """`error` with `new_error` added, to happen where `pred` is True (unless an error of
    the same effect happened already)."""
    code = next_code()
    effect_type = new_error.get_effect_type()
    new_payload, new_metadata = tree_util.tree_flatten(new_error)
    return update_error(error, pred, np.int32(code), {code: new_metadata}, new_payload,
                        effect_type)


def update_error(error: Error, pred: Any, code: Any, metadata: dict, payload: Payload,
                 effect_type: ErrorEffect) -> Error:
    """`error` recording (`pred`, `code`, `payload`) for `effect_type`; where an error of
    that effect happened already it is kept (the first one wins)."""
    happened = error._pred.get(effect_type)
    if happened is None:
        return error._update(effect_type, pred, code, metadata, list(payload))
    out_pred = elementwise.bitwise_or(happened, pred)
    out_code = lax_selection.select_n(happened, code, error._code[effect_type])
    out_payload = [lax_selection.select_n(happened, new, old)
                   for new, old in zip(payload, error._payload[effect_type], strict=True)]
    return error._update(effect_type, out_pred, out_code, metadata, out_payload)


# ---------------------------------------------------------------------------------------------
# Flat views: the leaves of the errors with given effects, in a fixed order.

def sorted_effects(error: Error) -> tuple[ErrorEffect, ...]:
    """The effects of `error` in pytree order."""
    return tuple(sorted(error._pred))


def effect_avals(effects: Sequence[ErrorEffect]) -> list[Any]:
    """The avals of the leaves of an error with `effects` (see `error_leaves`)."""
    avals = [ShapedArray((), np.dtype(np.bool_)) for _ in effects]
    avals += [ShapedArray((), np.dtype(np.int32)) for _ in effects]
    for effect in effects:
        avals += [ShapedArray(sd.shape, sd.dtype) for sd in effect.shape_dtypes]
    return avals


def error_leaves(error: Error, effects: Sequence[ErrorEffect]) -> list[Any]:
    """Predicates, then codes, then payloads of `error`'s `effects` (its pytree order when
    `effects` are all of them, sorted)."""
    leaves = [error._pred[e] for e in effects] + [error._code[e] for e in effects]
    for effect in effects:
        leaves += list(error._payload[effect])
    return leaves


def error_from_leaves(effects: Sequence[ErrorEffect], leaves: Sequence[Any],
                      metadata: dict) -> Error:
    """The inverse of `error_leaves`."""
    n = len(effects)
    pred = dict(zip(effects, leaves[:n], strict=True))
    code = dict(zip(effects, leaves[n:2 * n], strict=True))
    payload, rest = {}, list(leaves[2 * n:])
    for effect in effects:
        size = len(effect.shape_dtypes)
        payload[effect], rest = rest[:size], rest[size:]
    return Error(pred, code, Metadata(metadata), payload)
