"""`justjax.scipy.stats.logistic`: the logistic distribution. Re-exports only."""
from justjax._src.scipy.stats.logistic import (
    cdf as cdf,
    isf as isf,
    logpdf as logpdf,
    pdf as pdf,
    ppf as ppf,
    sf as sf,
)
