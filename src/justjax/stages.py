"""`jax.stages`: the ahead-of-time stages of a jitted function (re-exports only)."""
from justjax._src.jit import PjitFunction as Wrapped
from justjax._src.stages import Compiled as Compiled
from justjax._src.stages import Lowered as Lowered
from justjax._src.stages import Traced as Traced
from justjax._src.stages import ArgInfo as ArgInfo
from justjax._src.stages import CompilerOptions as CompilerOptions
