"""`justjax.scipy.stats.beta`: the beta distribution. Re-exports only."""
from justjax._src.scipy.stats.beta import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf,
)
