"""`justjax.scipy.stats.gamma`: the gamma distribution. Re-exports only."""
from justjax._src.scipy.stats.gamma import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf,
)
