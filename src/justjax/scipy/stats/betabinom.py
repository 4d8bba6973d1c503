"""`justjax.scipy.stats.betabinom`: the beta-binomial distribution. Re-exports only."""
from justjax._src.scipy.stats.betabinom import (
    logpmf as logpmf,
    pmf as pmf,
)
