"""`justjax.scipy.stats.expon`: the exponential distribution. Re-exports only."""
from justjax._src.scipy.stats.expon import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf,
)
