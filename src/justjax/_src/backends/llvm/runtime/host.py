"""The host CPU as LLVM sees it: its name, features and vector width, target machines for it,
the levels programs are compiled at, and LLVM's O3 pipeline (loop and SLP vectorization) that
every optimized program and math function goes through.
"""
from __future__ import annotations

import functools

import llvmlite.binding as llvm


@functools.lru_cache(maxsize=1)
def host_cpu() -> tuple[str, str]:
    """The host CPU's name and features (LLVM's spelling), asked once per process."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@functools.lru_cache(maxsize=1)
def vector_bits() -> int:
    """The width of the vectors generated loops use: 512 bits with AVX-512 (twice the
    multiply-adds of 256-bit vectors per cycle: a 512x512 vector-matrix product took 6.9 us,
    11.7 with 256 bits, 7.5 through BLAS), 256 with AVX, else 128."""
    features = host_cpu()[1].split(",")
    if "+avx512f" in features:
        return 512
    return 256 if "+avx" in features else 128


# The levels a program is compiled at (`opt_level` throughout the backend), each a choice of
# LLVM's IR pipeline and of its code generator's level:
QUICK = 0  # no IR pipeline; the fast code generator (FastISel, fast register allocation)
# The O3 IR pipeline, which vectorizes loops calling the linked math library; the fast code
# generator, since such loops spend their time in the math functions: on the seed chain's
# gradient the code generator took 7 ms instead of 15, for the same run time (50 ms).
LINKED = 1
FULL = 3  # the O3 IR pipeline and code generator


def runs_ir_pipeline(opt_level: int) -> bool:
    """Whether programs compiled at `opt_level` go through LLVM's O3 IR pipeline."""
    return opt_level != QUICK


def codegen_level(opt_level: int) -> int:
    """LLVM's code generator level for programs compiled at `opt_level`."""
    return 3 if opt_level == FULL else 0


@functools.lru_cache(maxsize=1)
def host_target_machine() -> llvm.TargetMachine:
    """Returns a target machine for the host CPU name and features at O3."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=host_cpu()[0], features=host_cpu()[1],
        opt=3, jit=True)


def new_target_machine(opt_level: int = FULL) -> llvm.TargetMachine:
    """A fresh target machine for the host CPU generating code for programs compiled at
    `opt_level` (an execution engine takes ownership of the machine it is given, so each
    engine needs its own)."""
    host_target_machine()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=host_cpu()[0], features=host_cpu()[1],
        opt=codegen_level(opt_level), jit=True)


def optimize(module: llvm.ModuleRef) -> None:
    """Runs LLVM's O3 pipeline (with loop and SLP vectorization) on `module` in place."""
    tm = host_target_machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(module, pb)
