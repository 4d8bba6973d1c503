"""Per-platform code: `lax.platform_dependent` and its `platform_index_p`.

`platform_index_p` stands for "which of these platform groups is the one being compiled
for": it lowers to an i32 constant (justjax compiles for `cpu` only), or fails to lower
when neither `cpu` nor a default is among them, with JAX's error. `platform_dependent`
binds it and switches on it; eagerly the index is concrete and the chosen branch runs
directly, as in JAX.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from justjax._src.compilation import dispatch
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, lowering
from justjax._src.lax.control_flow import conditionals

__all__ = ["platform_dependent"]

# The platform justjax compiles for.
_PLATFORM = "cpu"

platform_index_p = Primitive("platform_index")


def _abstract_eval(*, platforms: tuple[tuple[str, ...] | None, ...]) -> ShapedArray:
    return ShapedArray((), np.dtype(np.int32))


platform_index_p.def_abstract_eval(_abstract_eval)
dispatch.def_backend_impl(platform_index_p)
ad.defjvp_zero(platform_index_p)


def _chosen(platforms: tuple[tuple[str, ...] | None, ...]) -> int | None:
    """The index of the group naming `cpu`, else of the default (None), else None."""
    for i, group in enumerate(platforms):
        if group is not None and _PLATFORM in group:
            return i
    return next((i for i, group in enumerate(platforms) if group is None), None)


def _lowering(ctx: lowering.LoweringRuleContext, *,
              platforms: tuple[tuple[str, ...] | None, ...]) -> ir.Value:
    index = _chosen(platforms)
    if index is None:
        named = tuple(group for group in platforms if group is not None)
        raise NotImplementedError(
            f"MLIR translation rule for primitive 'platform_index(platforms={named})' not "
            f"found for platform {_PLATFORM}")
    return lowering.constant(ctx.builder, np.int32(index))


lowering.register_lowering(platform_index_p, _lowering)


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """`per_platform[p](*args)` for the platform `p` compiled for, else `default(*args)`
    (`lax.platform_dependent`). Branches given for several platforms are joined.

    Args:
      *args: the branches' arguments.
      default: the branch for platforms not named (optional).
      **per_platform: one branch per platform name (`cpu`, `cuda`, `rocm`, `tpu`).
    Returns:
      The chosen branch's result (a `cond` on `platform_index` when traced).
    Raises:
      TypeError: a branch that is not callable. ValueError: `gpu` as a platform name.
      NotImplementedError: when lowered, no branch for `cpu` and no default.
    """
    groups: list[tuple[list[str], Callable[..., Any]]] = []
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, other in groups:
            if other == branch:
                names.append(name)
                break
        else:
            groups.append(([name], branch))
    platforms: tuple[tuple[str, ...] | None, ...] = tuple(tuple(n) for n, _ in groups)
    branches = [b for _, b in groups]
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        branches.append(default)
        platforms = platforms + (None,)
    index = platform_index_p.bind(platforms=platforms)
    if core.is_concrete(index):
        return branches[int(index)](*args)
    # A cond on the index itself (no clamp, even for one branch), so that lowering always
    # meets platform_index and fails as JAX's when no branch is for cpu.
    names = ["branch 0", *[f"branch{i}" for i in range(1, len(branches))]]
    return conditionals._bind_cond(index, branches, names, args, "platform_dependent")
