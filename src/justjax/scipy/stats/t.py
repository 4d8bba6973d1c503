"""`justjax.scipy.stats.t`: Student's t distribution. Re-exports only."""
from justjax._src.scipy.stats.t import (
    logpdf as logpdf,
    pdf as pdf,
)
