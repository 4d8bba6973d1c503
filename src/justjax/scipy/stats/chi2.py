"""`justjax.scipy.stats.chi2`: the chi-squared distribution. Re-exports only."""
from justjax._src.scipy.stats.chi2 import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    sf as sf,
)
