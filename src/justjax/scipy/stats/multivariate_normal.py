"""`justjax.scipy.stats.multivariate_normal`: the multivariate normal distribution. Re-exports only."""
from justjax._src.scipy.stats.multivariate_normal import (
    logpdf as logpdf,
    pdf as pdf,
)
