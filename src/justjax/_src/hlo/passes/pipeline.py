"""Pass infrastructure, as XLA's pass pipeline: each pass is an object with a `name` and
`run(module) -> bool` (whether it changed the module, in place); a `Pipeline` runs passes in
order with the verifier between them (config `justjax_verify_passes`, always on in tests),
can write the IR after each pass to a folder (`justjax_dump_ir_to`) and skips passes named in
`justjax_disable_passes`; `FixedPoint` reruns passes until none changes anything.
"""
from __future__ import annotations

import abc
import pathlib
import re
import time
from typing import Callable, Iterable, Sequence

from justjax._src.config import config
from justjax._src.hlo import ir, verifier


class Pass(abc.ABC):
    """A transformation of a module in place. Subclasses set `name` and define `run`."""

    name: str = "pass"

    @abc.abstractmethod
    def run(self, module: ir.Module) -> bool:
        """Transforms `module`; returns whether anything changed."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class FixedPoint(Pass):
    """Runs `passes` in order again and again until a round changes nothing (at most
    `max_iters` rounds)."""

    def __init__(self, passes: Pass | Sequence[Pass], max_iters: int = 10,
                 name: str | None = None) -> None:
        self.passes = [passes] if isinstance(passes, Pass) else list(passes)
        self.max_iters = max_iters
        self.name = name or "fixed-point(" + ",".join(p.name for p in self.passes) + ")"

    def run(self, module: ir.Module,
            on_pass: Callable[[str, ir.Module, bool, float], None] | None = None) -> bool:
        """Runs the rounds; `on_pass`, if given, hears of every inner pass run as
        `<name> (round k)`."""
        changed = False
        for round_index in range(1, self.max_iters + 1):
            round_changed = False
            for p in self.passes:
                start = time.perf_counter()
                did = p.run(module)
                if on_pass is not None:
                    on_pass(f"{p.name} (round {round_index})", module, did,
                            time.perf_counter() - start)
                round_changed |= did
            changed |= round_changed
            if not round_changed:
                break
        return changed


class PassError(Exception):
    """A pass left an invalid module: names the pass and the verifier's finding."""


class Pipeline:
    """An ordered list of passes with verification, dumping and disabling.

    Args:
      passes: the passes, in order.
      verify: verify after every pass (default: config `justjax_verify_passes`).
      dump_to: a folder for the IR after each pass (default: config `justjax_dump_ir_to`);
        files are `<module>.<index>.<pass>.mlir`, the input first as `.000.input.mlir`.
      disabled: names of passes to skip (default: config `justjax_disable_passes`).
      on_pass: called after each pass run as `on_pass(name, module, changed, seconds)`
        (the pipeline explorer, `justjax.explain`, records the IR there); a `FixedPoint`'s
        inner passes are reported each time they run, as `<fixed point>: <pass> (round k)`.
    """

    def __init__(self, passes: Sequence[Pass], *, verify: bool | None = None,
                 dump_to: str | None = None, disabled: Iterable[str] | None = None,
                 on_pass: Callable[[str, ir.Module, bool, float], None] | None = None
                 ) -> None:
        self.passes = list(passes)
        self.on_pass = on_pass
        self.verify = config.read("justjax_verify_passes") if verify is None else verify
        self.dump_to = config.read("justjax_dump_ir_to") if dump_to is None else dump_to
        if disabled is None:
            disabled = [n.strip() for n in config.read("justjax_disable_passes").split(",")]
        self.disabled = {n for n in disabled if n}
        self.changes: list[tuple[str, bool]] = []
        self.seconds: list[tuple[str, float]] = []

    def run(self, module: ir.Module) -> bool:
        """Runs every enabled pass on `module` in place; returns whether any changed it.
        `self.changes` records (pass name, changed) and `self.seconds` (pass name, time
        taken) for each pass run."""
        self.changes = []
        self.seconds = []
        self._dump(module, 0, "input")
        changed = False
        for index, p in enumerate(self.passes, start=1):
            if p.name in self.disabled:
                continue
            start = time.perf_counter()
            if isinstance(p, FixedPoint) and self.on_pass is not None:
                # Its inner passes are reported one by one, named after it.
                outer = p.name
                did = p.run(module, lambda name, *rest: self.on_pass(f"{outer}: {name}", *rest))
            else:
                did = p.run(module)
            seconds = time.perf_counter() - start
            self.seconds.append((p.name, seconds))
            self.changes.append((p.name, did))
            changed |= did
            if self.verify:
                try:
                    verifier.verify(module)
                except verifier.VerificationError as err:
                    raise PassError(f"after pass {p.name}: {err}") from err
            self._dump(module, index, p.name)
            if self.on_pass is not None and not isinstance(p, FixedPoint):
                self.on_pass(p.name, module, did, seconds)
        return changed

    def _dump(self, module: ir.Module, index: int, name: str) -> None:
        if not self.dump_to:
            return
        folder = pathlib.Path(self.dump_to)
        folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        (folder / f"{module.name}.{index:03d}.{safe}.mlir").write_text(str(module))
