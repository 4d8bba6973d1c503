"""`justjax.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution. Re-exports only."""
from justjax._src.scipy.stats.wrapcauchy import (
    logpdf as logpdf,
    pdf as pdf,
)
