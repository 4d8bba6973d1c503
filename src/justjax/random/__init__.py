"""`justjax.random`: JAX's PRNG (threefry2x32), keys and distributions. Re-exports only."""
from justjax._src.random.keys import (
    PRNGKey as PRNGKey,
    bits as bits,
    clone as clone,
    fold_in as fold_in,
    key as key,
    key_data as key_data,
    key_dtype as key_dtype,
    key_impl as key_impl,
    split as split,
    wrap_key_data as wrap_key_data,
)
from justjax._src.random.distributions import (
    normal as normal,
    uniform as uniform,
)
from justjax._src.random.gamma import (
    ball as ball,
    beta as beta,
    chisquare as chisquare,
    dirichlet as dirichlet,
    f as f,
    gamma as gamma,
    generalized_normal as generalized_normal,
    loggamma as loggamma,
    random_gamma_p as random_gamma_p,
    t as t,
)
from justjax._src.random.samplers import (
    bernoulli as bernoulli,
    categorical as categorical,
    choice as choice,
    geometric as geometric,
    gumbel as gumbel,
    permutation as permutation,
    rademacher as rademacher,
    randint as randint,
)
from justjax._src.random.continuous import (
    cauchy as cauchy,
    double_sided_maxwell as double_sided_maxwell,
    exponential as exponential,
    laplace as laplace,
    logistic as logistic,
    lognormal as lognormal,
    maxwell as maxwell,
    pareto as pareto,
    rayleigh as rayleigh,
    triangular as triangular,
    truncated_normal as truncated_normal,
    wald as wald,
    weibull_min as weibull_min,
)
from justjax._src.random.counts import (
    binomial as binomial,
    multinomial as multinomial,
    poisson as poisson,
)
from justjax._src.random.multivariate import (
    multivariate_normal as multivariate_normal,
    orthogonal as orthogonal,
)
