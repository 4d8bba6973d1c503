"""`jax.stages`: the ahead-of-time stages of a jitted function (re-exports only)."""
from justjax._src.compilation.jit import PjitFunction as Wrapped
from justjax._src.compilation.stages import Compiled as Compiled
from justjax._src.compilation.stages import Lowered as Lowered
from justjax._src.compilation.stages import Traced as Traced
from justjax._src.compilation.stages import ArgInfo as ArgInfo
from justjax._src.compilation.stages import CompilerOptions as CompilerOptions
