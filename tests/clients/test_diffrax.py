"""diffrax's documented usage (`programs/diffrax_programs.py`) on justjax gives real JAX's
numbers (`records/diffrax.json`)."""
from tests.clients.harness import Tolerance, client_tests

# An adaptive controller's error estimates are a few float32 ulps of the state for these
# problems (checked: with jax_enable_x64 both give the same steps to 1e-8), so the last bits
# of a reassociated sum move the chosen step sizes, and what depends on them, by ~1e-5.
_STEP_SIZES = Tolerance(rtol=1e-4, atol=1e-5, why="adaptive step sizes chosen from error "
                        "estimates at float32 noise level; float reassociation moves them")

# The number of steps: XLA CPU computes the (7,) . (7, 2) dot that combines Tsit5's stages
# with column 0 as multiplies then adds and column 1 as fused multiply-adds (its LLVM
# vectorizer's choice; JAX_FACTS.md "CPU numerics"); justjax fuses both, as XLA does for
# every other small dot. The controller's float32-noise decisions then reject one step fewer
# (20 steps against 22); the saved solution agrees to 1.2e-5.
_STEP_COUNTS = Tolerance(rtol=1e-4, atol=1e-5, counts=2, why="step acceptance at float32 "
                         "noise level: XLA's dot of Tsit5's stages rounds one column "
                         "differently, which changes how many steps the controller takes")

client_run, test_program, test_record = client_tests("diffrax", looser={
    "tsit5_saveat_pid": _STEP_COUNTS,
    "pid_controller_coefficients": _STEP_SIZES,
    "vmap_initial_conditions": _STEP_SIZES,
})
