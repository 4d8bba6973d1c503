"""`justjax.scipy.stats.vonmises`: the von Mises distribution. Re-exports only."""
from justjax._src.scipy.stats.vonmises import (
    logpdf as logpdf,
    pdf as pdf,
)
