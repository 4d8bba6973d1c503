"""`justjax.scipy.stats.cauchy`: the Cauchy distribution. Re-exports only."""
from justjax._src.scipy.stats.cauchy import (
    cdf as cdf,
    isf as isf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf,
)
