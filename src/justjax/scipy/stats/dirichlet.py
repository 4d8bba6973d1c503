"""`justjax.scipy.stats.dirichlet`: the Dirichlet distribution. Re-exports only."""
from justjax._src.scipy.stats.dirichlet import (
    logpdf as logpdf,
    pdf as pdf,
)
