"""The host CPU as LLVM sees it: its name and features, target machines for it, and LLVM's O3
pipeline (loop and SLP vectorization) that every compiled program and math function goes through.
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
def host_target_machine() -> llvm.TargetMachine:
    """Returns a target machine for the host CPU name and features at O3."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=host_cpu()[0], features=host_cpu()[1],
        opt=3, jit=True)


def new_target_machine(opt: int = 3) -> llvm.TargetMachine:
    """A fresh target machine for the host CPU at codegen level `opt` (an execution engine
    takes ownership of the machine it is given, so each engine needs its own)."""
    host_target_machine()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=host_cpu()[0], features=host_cpu()[1],
        opt=opt, jit=True)


def optimize(module: llvm.ModuleRef) -> None:
    """Runs LLVM's O3 pipeline (with loop and SLP vectorization) on `module` in place."""
    tm = host_target_machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(module, pb)
