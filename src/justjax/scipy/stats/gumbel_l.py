"""`justjax.scipy.stats.gumbel_l`: the left-skewed Gumbel distribution. Re-exports only."""
from justjax._src.scipy.stats.gumbel_l import (
    cdf as cdf,
    logcdf as logcdf,
    logpdf as logpdf,
    logsf as logsf,
    pdf as pdf,
    ppf as ppf,
    sf as sf,
)
