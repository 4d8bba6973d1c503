"""`justjax.scipy.sparse.linalg`: iterative linear solvers. Re-exports only."""
from justjax._src.scipy.sparse.linalg import (
    bicgstab as bicgstab,
    cg as cg,
    gmres as gmres,
)
