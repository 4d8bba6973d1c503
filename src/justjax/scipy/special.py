"""`justjax.scipy.special`. Re-exports only."""
from justjax._src.scipy.special import (
    digamma as digamma,
    entr as entr,
    erf as erf,
    erfc as erfc,
    erfinv as erfinv,
    expit as expit,
    gammaln as gammaln,
    logit as logit,
    logsumexp as logsumexp,
    ndtr as ndtr,
    xlog1py as xlog1py,
    xlogy as xlogy,
)
