"""Traceback filtering, as JAX's `jax._src.traceback_util` (which equinox and flax import).

Libraries register the files whose frames a user should not see in a traceback
(`register_exclusion(__file__)`); `api_boundary` marks the functions through which an
exception leaves such library code: there, with `jax_traceback_filtering` on ("auto", the
default), the frames of excluded files are dropped from the traceback the user sees.
"""
from __future__ import annotations

import types
from typing import Any, Callable, TypeVar

from justjax._src import util
from justjax._src.config import config
from justjax._src.source_info_util import PACKAGE_DIR

_F = TypeVar("_F", bound=Callable[..., Any])

# Path prefixes whose frames are hidden: justjax's own source, then what libraries register.
_exclude_paths: list[str] = [PACKAGE_DIR]


def register_exclusion(path: str) -> None:
    """Hides the frames of files under `path` from filtered tracebacks."""
    _exclude_paths.append(path)


def include_frame(frame: types.FrameType) -> bool:
    """Whether a filtered traceback keeps `frame` (its file is under no excluded path)."""
    return not any(frame.f_code.co_filename.startswith(path) for path in _exclude_paths)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback `tb` without the frames `include_frame` rejects."""
    kept = []
    while tb is not None:
        if include_frame(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    filtered = None
    for entry in reversed(kept):
        filtered = types.TracebackType(filtered, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return filtered


def _filtering_on() -> bool:
    return config.read("jax_traceback_filtering") not in ("off", None)


def api_boundary(fun: _F) -> _F:
    """Marks `fun` as an API entry point: an exception leaving it has the frames of excluded
    files removed from its traceback (unless `jax_traceback_filtering` is "off")."""

    @util.wraps(fun)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except Exception as error:
            if not _filtering_on() or getattr(error, "_justjax_filtered", False):
                raise
            filtered = filter_traceback(error.__traceback__)
            try:
                error._justjax_filtered = True
            except AttributeError:
                pass
            if filtered is None:
                raise
            raise error.with_traceback(filtered)

    return boundary  # type: ignore[return-value]
