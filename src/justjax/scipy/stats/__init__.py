"""`justjax.scipy.stats`: probability distributions, one module per distribution, and
statistics of samples. Re-exports only."""
from justjax.scipy.stats import bernoulli as bernoulli
from justjax.scipy.stats import beta as beta
from justjax.scipy.stats import betabinom as betabinom
from justjax.scipy.stats import binom as binom
from justjax.scipy.stats import cauchy as cauchy
from justjax.scipy.stats import chi2 as chi2
from justjax.scipy.stats import dirichlet as dirichlet
from justjax.scipy.stats import expon as expon
from justjax.scipy.stats import gamma as gamma
from justjax.scipy.stats import gennorm as gennorm
from justjax.scipy.stats import geom as geom
from justjax.scipy.stats import gumbel_l as gumbel_l
from justjax.scipy.stats import gumbel_r as gumbel_r
from justjax.scipy.stats import laplace as laplace
from justjax.scipy.stats import logistic as logistic
from justjax.scipy.stats import multinomial as multinomial
from justjax.scipy.stats import multivariate_normal as multivariate_normal
from justjax.scipy.stats import nbinom as nbinom
from justjax.scipy.stats import norm as norm
from justjax.scipy.stats import pareto as pareto
from justjax.scipy.stats import poisson as poisson
from justjax.scipy.stats import t as t
from justjax.scipy.stats import truncnorm as truncnorm
from justjax.scipy.stats import uniform as uniform
from justjax.scipy.stats import vonmises as vonmises
from justjax.scipy.stats import wrapcauchy as wrapcauchy
from justjax._src.scipy.stats.descriptive import (
    mode as mode,
    rankdata as rankdata,
    sem as sem,
)
from justjax._src.scipy.stats.kde import gaussian_kde as gaussian_kde
