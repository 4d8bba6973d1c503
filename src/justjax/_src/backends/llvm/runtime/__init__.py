"""Compiling LLVM IR for the host and running it.

`host` is the host CPU's target machine and LLVM's optimization pipeline; `object_cache`
compiles IR to object code through the persistent compilation cache; `executable` runs a
whole program (`LLVMExecutable`, the device's executor thread); `elementwise_executable` runs
a single elementwise op through a kernel compiled once for every shape; `parallel_for` splits
a loop across the CPU's cores; `tiers` compiles a hot program's fully optimized version in the
background.
"""
