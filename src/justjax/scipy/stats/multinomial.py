"""`justjax.scipy.stats.multinomial`: the multinomial distribution. Re-exports only."""
from justjax._src.scipy.stats.multinomial import (
    logpmf as logpmf,
    pmf as pmf,
)
