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
    """A nested pipeline: runs `passes` in order again and again until a round changes
    nothing (at most `max_iters` rounds). Inside a `Pipeline` its inner passes are
    disabled, verified, dumped, timed and reported one by one like top-level ones."""

    def __init__(self, passes: Pass | Sequence[Pass], max_iters: int = 10,
                 name: str | None = None) -> None:
        self.passes = [passes] if isinstance(passes, Pass) else list(passes)
        self.max_iters = max_iters
        self.name = name or "fixed-point(" + ",".join(p.name for p in self.passes) + ")"

    def run(self, module: ir.Module) -> bool:
        """Runs the rounds on `module` alone (no verifying, dumping or disabling)."""
        return self.rounds(lambda p, round_index: p.run(module))

    def rounds(self, run_pass: Callable[[Pass, int], bool]) -> bool:
        """Runs the rounds, each inner pass `p` of round k as `run_pass(p, k)` (which returns
        whether it changed the module); returns whether any did."""
        changed = False
        for round_index in range(1, self.max_iters + 1):
            round_changed = False
            for p in self.passes:
                round_changed |= run_pass(p, round_index)
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
      verify: verify after every pass run that changed the module (default: config
        `justjax_verify_passes`).
      dump_to: a folder for the IR after each pass (default: config `justjax_dump_ir_to`);
        files are `<module>.<index>.<pass>.mlir`, the input first as `.000.input.mlir`.
      disabled: names of passes to skip (default: config `justjax_disable_passes`); a
        `FixedPoint`'s inner passes are disabled by their own names.
      on_pass: called after each pass run as `on_pass(name, module, changed, seconds)`
        (the pipeline explorer, `justjax.explain`, records the IR there).

    A `FixedPoint` is a nested pipeline: each run of an inner pass is verified, dumped,
    timed and reported like a top-level pass, named `<fixed point>: <pass> (round k)`
    (dumped as `<fixed point>.<pass>.round<k>`); the fixed point itself is recorded in
    `changes` and `seconds` after its inner runs, and neither dumped nor reported again.
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
        self._dumped = 0

    def run(self, module: ir.Module) -> bool:
        """Runs every enabled pass on `module` in place; returns whether any changed it.
        `self.changes` records (pass name, changed) and `self.seconds` (pass name, time
        taken) for each pass run, inner runs of a fixed point under their long names."""
        self.changes = []
        self.seconds = []
        self._dumped = 0
        self._dump(module, "input")
        changed = False
        for p in self.passes:
            changed |= self._run(p, module, p.name, p.name)
        return changed

    def _run(self, p: Pass, module: ir.Module, label: str, dump_name: str) -> bool:
        """Runs `p` (unless disabled) as the pipeline runs any pass: a fixed point's inner
        passes one by one, any other pass timed, verified, dumped and reported."""
        if p.name in self.disabled:
            return False
        start = time.perf_counter()
        if isinstance(p, FixedPoint):
            did = p.rounds(lambda inner, k: self._run(
                inner, module, f"{label}: {inner.name} (round {k})",
                f"{dump_name}.{inner.name}.round{k}"))
            self._record(label, did, time.perf_counter() - start)
            return did
        did = p.run(module)
        seconds = time.perf_counter() - start
        self._record(label, did, seconds)
        # A run that changed nothing leaves the module verified as it was.
        if self.verify and did:
            try:
                verifier.verify(module)
            except verifier.VerificationError as err:
                raise PassError(f"after pass {label}: {err}") from err
        self._dump(module, dump_name)
        if self.on_pass is not None:
            self.on_pass(label, module, did, seconds)
        return did

    def _record(self, label: str, changed: bool, seconds: float) -> None:
        self.changes.append((label, changed))
        self.seconds.append((label, seconds))

    def _dump(self, module: ir.Module, name: str) -> None:
        if not self.dump_to:
            return
        index = self._dumped
        self._dumped += 1
        folder = pathlib.Path(self.dump_to)
        folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        (folder / f"{module.name}.{index:03d}.{safe}.mlir").write_text(str(module))
