"""The vectorizable math library: scalar float32/float64 math functions emitted as LLVM IR,
branch-free and without libm calls, so that loops calling them vectorize.

`scalar` holds the conventions, the scalar emitter, the exp/log/hyperbolic functions and the
registry (`names`, `arity`, `define`); `trig`, `erf`, `power` and `gamma` hold the other
functions, `rare` the rare paths taken by few arguments, `special` the CHLO special functions
built on them, `fitting`/`coeffs` the fitted polynomial coefficients, and `link` how compiled
code reaches a function (defined inline or linked by symbol). `harness` and `accuracy`
compile and measure the functions (tests, tools/mathlib_accuracy.py).
"""
