"""`justjax.scipy.optimize`: unconstrained minimization. Re-exports only."""
from justjax._src.scipy.optimize.minimize import (
    OptimizeResults as OptimizeResults,
    minimize as minimize,
)
