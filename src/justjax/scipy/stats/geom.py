"""`justjax.scipy.stats.geom`: the geometric distribution. Re-exports only."""
from justjax._src.scipy.stats.geom import (
    logpmf as logpmf,
    pmf as pmf,
)
