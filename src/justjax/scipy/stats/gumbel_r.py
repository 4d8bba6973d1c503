"""`justjax.scipy.stats.gumbel_r`: the right-skewed Gumbel distribution. Re-exports only."""
from justjax._src.scipy.stats.gumbel_r import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf,
)
