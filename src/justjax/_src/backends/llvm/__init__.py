"""LLVM backend pieces (llvmlite): a vectorizable elementwise math library and a small JIT harness.

The rest of the native backend (elemental emitter, runtime) is added later; see issue #9.
"""
