"""`justjax.scipy.stats.truncnorm`: the truncated normal distribution. Re-exports only."""
from justjax._src.scipy.stats.truncnorm import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf,
)
