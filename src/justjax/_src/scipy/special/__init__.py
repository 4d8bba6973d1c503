"""`jax.scipy.special`, one module per family of functions; this package gathers them."""
from justjax._src.scipy.special.bessel import bessel_jn as bessel_jn
from justjax._src.scipy.special.bessel import i0 as i0
from justjax._src.scipy.special.bessel import i0e as i0e
from justjax._src.scipy.special.bessel import i1 as i1
from justjax._src.scipy.special.bessel import i1e as i1e
from justjax._src.scipy.special.error_function import dawsn as dawsn
from justjax._src.scipy.special.error_function import erf as erf
from justjax._src.scipy.special.error_function import erfc as erfc
from justjax._src.scipy.special.error_function import erfcx as erfcx
from justjax._src.scipy.special.error_function import erfinv as erfinv
from justjax._src.scipy.special.error_function import fresnel as fresnel
from justjax._src.scipy.special.error_function import wofz as wofz
from justjax._src.scipy.special.expint import exp1 as exp1
from justjax._src.scipy.special.expint import expi as expi
from justjax._src.scipy.special.expint import expn as expn
from justjax._src.scipy.special.expint import sici as sici
from justjax._src.scipy.special.expint import spence as spence
from justjax._src.scipy.special.gamma import bernoulli as bernoulli
from justjax._src.scipy.special.gamma import beta as beta
from justjax._src.scipy.special.gamma import betainc as betainc
from justjax._src.scipy.special.gamma import betaln as betaln
from justjax._src.scipy.special.gamma import comb as comb
from justjax._src.scipy.special.gamma import digamma as digamma
from justjax._src.scipy.special.gamma import factorial as factorial
from justjax._src.scipy.special.gamma import gamma as gamma
from justjax._src.scipy.special.gamma import gammainc as gammainc
from justjax._src.scipy.special.gamma import gammaincc as gammaincc
from justjax._src.scipy.special.gamma import gammaln as gammaln
from justjax._src.scipy.special.gamma import gammasgn as gammasgn
from justjax._src.scipy.special.gamma import loggamma as loggamma
from justjax._src.scipy.special.gamma import multigammaln as multigammaln
from justjax._src.scipy.special.gamma import poch as poch
from justjax._src.scipy.special.gamma import polygamma as polygamma
from justjax._src.scipy.special.gamma import zeta as zeta
from justjax._src.scipy.special.hypergeometric import hyp1f1 as hyp1f1
from justjax._src.scipy.special.hypergeometric import hyp2f1 as hyp2f1
from justjax._src.scipy.special.hypergeometric import owens_t as owens_t
from justjax._src.scipy.special.information import boxcox as boxcox
from justjax._src.scipy.special.information import boxcox1p as boxcox1p
from justjax._src.scipy.special.information import entr as entr
from justjax._src.scipy.special.information import expit as expit
from justjax._src.scipy.special.information import kl_div as kl_div
from justjax._src.scipy.special.information import log_softmax as log_softmax
from justjax._src.scipy.special.information import logit as logit
from justjax._src.scipy.special.information import logsumexp as logsumexp
from justjax._src.scipy.special.information import rel_entr as rel_entr
from justjax._src.scipy.special.information import softmax as softmax
from justjax._src.scipy.special.information import xlog1py as xlog1py
from justjax._src.scipy.special.information import xlogy as xlogy
from justjax._src.scipy.special.legendre import sph_harm_y as sph_harm_y
from justjax._src.scipy.special.normal import log_ndtr as log_ndtr
from justjax._src.scipy.special.normal import ndtr as ndtr
from justjax._src.scipy.special.normal import ndtri as ndtri
# Private helpers other library modules use (scipy.stats).
from justjax._src.scipy.special.normal import _ndtr as _ndtr  # noqa: F401
from justjax._src.scipy.special.normal import _ndtri as _ndtri  # noqa: F401

__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
           "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi",
           "expit", "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr",
           "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "owens_t", "poch", "polygamma", "rel_entr", "sici", "softmax", "spence",
           "sph_harm_y", "wofz", "xlog1py", "xlogy", "zeta"]
