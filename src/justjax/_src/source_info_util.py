"""Where user code is: the innermost frame outside justjax and the files libraries register
as their own (`jax.extend.source_info_util.register_exclusion`), for messages that point at
the user's line."""
from __future__ import annotations

import os
import sys
from types import FrameType

# justjax's own source folder, then the paths libraries register.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_exclude_paths: list[str] = [PACKAGE_DIR]


def register_exclusion(path: str) -> None:
    """Frames of files under `path` are not user frames."""
    _exclude_paths.append(path)


def is_user_file(filename: str) -> bool:
    return not any(filename.startswith(path) for path in _exclude_paths)


def user_frame(depth: int = 1) -> FrameType | None:
    """The innermost frame, starting `depth` frames above the caller, of a user file."""
    frame: FrameType | None = sys._getframe(depth + 1)
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame
