"""`justjax.scipy.stats.laplace`: the Laplace distribution. Re-exports only."""
from justjax._src.scipy.stats.laplace import (
    cdf as cdf,
    logpdf as logpdf,
    pdf as pdf,
)
