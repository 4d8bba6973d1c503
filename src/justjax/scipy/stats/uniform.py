"""`justjax.scipy.stats.uniform`: the uniform distribution. Re-exports only."""
from justjax._src.scipy.stats.uniform import (
    cdf as cdf,
    logpdf as logpdf,
    pdf as pdf,
    ppf as ppf,
)
