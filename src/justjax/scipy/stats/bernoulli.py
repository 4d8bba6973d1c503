"""`justjax.scipy.stats.bernoulli`: the Bernoulli distribution. Re-exports only."""
from justjax._src.scipy.stats.bernoulli import (
    cdf as cdf,
    logpmf as logpmf,
    pmf as pmf,
    ppf as ppf,
)
