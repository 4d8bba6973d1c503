"""NumPyro as its documentation uses it (num.pyro.ai: the README's eight schools, the
"Getting started" regression, the SVI tutorial, `Predictive`, effect handlers and the
distributions API).

Each public function is one program for `tests/clients/run_programs.py`: written for JAX, it
returns a small dict of results. Run with real JAX they give
`tests/clients/records/numpyro.json`; under `python -m justjax run` they must give the same.
Every program starts from a fixed PRNG key.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import numpyro
import numpyro.diagnostics
import numpyro.distributions as dist
from numpyro import handlers
from numpyro.infer import MCMC, NUTS, SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.infer.reparam import TransformReparam

# The README's eight schools data.
J = 8
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def _eight_schools(J, sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0, 5))
    tau = numpyro.sample("tau", dist.HalfCauchy(5))
    with numpyro.plate("J", J):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


def _eight_schools_noncentered(J, sigma, y=None):
    """The README's reparameterized model: theta through an affine transform of a
    standard normal (`TransformReparam`)."""
    mu = numpyro.sample("mu", dist.Normal(0, 5))
    tau = numpyro.sample("tau", dist.HalfCauchy(5))
    with numpyro.plate("J", J):
        with handlers.reparam(config={"theta": TransformReparam()}):
            theta = numpyro.sample("theta", dist.TransformedDistribution(
                dist.Normal(0.0, 1.0), dist.transforms.AffineTransform(mu, tau)))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


def _regression(x, y=None):
    a = numpyro.sample("a", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.Exponential(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(a + b * x, sigma), obs=y)


def _regression_data() -> tuple[jax.Array, jax.Array]:
    kx, ke = jax.random.split(jax.random.PRNGKey(3))
    x = jax.random.normal(kx, (20,))
    y = 1.5 - 0.7 * x + 0.3 * jax.random.normal(ke, (20,))
    return x, y


def distributions_sample_log_prob() -> dict:
    """Distributions' `sample` (fixed keys) and `log_prob`, batch and event shapes."""
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    normal = dist.Normal(jnp.array([0.0, 1.0]), jnp.array([1.0, 2.0]))
    half_cauchy = dist.HalfCauchy(5.0)
    exponential = dist.Exponential(2.0)
    bernoulli = dist.Bernoulli(logits=jnp.array([-1.0, 0.5]))
    categorical = dist.Categorical(probs=jnp.array([0.2, 0.5, 0.3]))
    poisson = dist.Poisson(3.0)
    lognormal = dist.LogNormal(0.0, 0.5)
    mvn = dist.MultivariateNormal(jnp.zeros(2), jnp.array([[2.0, 0.5], [0.5, 1.0]]))
    xs = normal.sample(keys[0], (3,))
    return {
        "normal": xs, "normal_log_prob": normal.log_prob(xs),
        "normal_shapes": [list(normal.batch_shape), list(normal.event_shape)],
        "half_cauchy": half_cauchy.sample(keys[1], (4,)),
        "half_cauchy_log_prob": half_cauchy.log_prob(jnp.array([0.5, 3.0])),
        "exponential": exponential.sample(keys[2], (3,)),
        "bernoulli": bernoulli.sample(keys[3], (4,)),
        "bernoulli_log_prob": bernoulli.log_prob(jnp.array([1.0, 0.0])),
        "categorical": categorical.sample(keys[4], (6,)),
        "categorical_log_prob": categorical.log_prob(jnp.array([0, 1, 2])),
        "poisson_log_prob": poisson.log_prob(jnp.array([0.0, 2.0, 5.0])),
        "lognormal": lognormal.sample(keys[5], (3,)),
        "lognormal_mean_var": [float(lognormal.mean), float(lognormal.variance)],
        "mvn": mvn.sample(keys[6], (2,)),
        "mvn_log_prob": mvn.log_prob(jnp.array([[0.5, -0.5], [1.0, 1.0]])),
        "mvn_event_shape": list(mvn.event_shape),
        "independent_log_prob": dist.Normal(jnp.zeros(3), 1.0).to_event(1).log_prob(
            jnp.array([0.1, 0.2, -0.3])),
        "support_check": bool(dist.constraints.positive.check(jnp.array(2.0))),
    }


def distributions_gamma_family() -> dict:
    """Distributions sampled through `jax.random.gamma` (Gamma, Beta, Dirichlet,
    StudentT) and their log densities (`gammaln`, `betaln`, `xlogy`)."""
    keys = jax.random.split(jax.random.PRNGKey(1), 4)
    gamma = dist.Gamma(2.0, 3.0)
    beta = dist.Beta(2.0, 5.0)
    dirichlet = dist.Dirichlet(jnp.array([1.0, 2.0, 3.0]))
    student = dist.StudentT(4.0, 0.0, 1.0)
    return {
        "gamma": gamma.sample(keys[0], (3,)),
        "gamma_log_prob": gamma.log_prob(jnp.array([0.5, 1.0])),
        "beta": beta.sample(keys[1], (3,)),
        "beta_log_prob": beta.log_prob(jnp.array([0.1, 0.5])),
        "dirichlet": dirichlet.sample(keys[2], (2,)),
        "dirichlet_log_prob": dirichlet.log_prob(jnp.array([0.2, 0.3, 0.5])),
        "student_t": student.sample(keys[3], (3,)),
        "student_t_log_prob": student.log_prob(jnp.array([0.0, 2.0])),
    }


def effect_handlers() -> dict:
    """`handlers.seed`, `trace`, `condition`, `substitute`; `log_density` of a model."""
    x, y = _regression_data()
    seeded = handlers.seed(_regression, rng_seed=0)
    tr = handlers.trace(seeded).get_trace(x, y)
    conditioned = handlers.condition(seeded, data={"a": 1.0})
    tr_cond = handlers.trace(conditioned).get_trace(x, y)
    params = {"a": jnp.array(1.0), "b": jnp.array(-0.5), "sigma": jnp.array(0.4)}
    log_joint, _ = numpyro.infer.util.log_density(_regression, (x,), {"y": y}, params)
    substituted = handlers.trace(handlers.substitute(seeded, data=params)).get_trace(x, y)
    return {
        "sites": list(tr.keys()), "a": tr["a"]["value"], "b": tr["b"]["value"],
        "sigma": tr["sigma"]["value"], "obs_is_observed": tr["y"]["is_observed"],
        "conditioned_a": tr_cond["a"]["value"], "log_joint": log_joint,
        "substituted_b": substituted["b"]["value"],
    }


def nuts_eight_schools() -> dict:
    """The README's example: NUTS on the eight schools model, reparameterized as the README
    does next (the centered model's divergent transitions make its chain chaotic), with a
    short warmup and few samples, in 64-bit (`jax.enable_x64`). The chain amplifies
    last-bit differences (an exp or log not rounded as XLA's, a reassociated sum): in
    float32 they reach 1e-4 within a few samples; in 64-bit they start at 1e-13 and grow
    about tenfold every two or three warmup iterations (step-size adaptation), so the
    chain stays within 1e-6 over these iterations."""
    with jax.enable_x64(True):
        mcmc = MCMC(NUTS(_eight_schools_noncentered), num_warmup=10, num_samples=25,
                    progress_bar=False)
        mcmc.run(jax.random.PRNGKey(0), J, SIGMA, y=Y,
                 extra_fields=("potential_energy", "num_steps", "diverging"))
        samples = mcmc.get_samples()
        extra = mcmc.get_extra_fields()
        return {"mu_first": samples["mu"][:10], "tau_first": samples["tau"][:10],
                "theta_first": samples["theta"][:3],
                "theta_base_first": samples["theta_base"][:3],
                "theta_shape": list(samples["theta"].shape),
                "mu_mean": jnp.mean(samples["mu"]), "tau_mean": jnp.mean(samples["tau"]),
                "num_steps": extra["num_steps"], "diverging": extra["diverging"],
                "potential_energy_first": extra["potential_energy"][:10],
                "dtype": str(samples["mu"].dtype)}


def nuts_linear_regression() -> dict:
    """"Getting started": NUTS on a linear regression, posterior means near the truth (in
    64-bit, as `nuts_eight_schools`); `mcmc.print_summary`'s statistics."""
    with jax.enable_x64(True):
        x, y = _regression_data()
        mcmc = MCMC(NUTS(_regression), num_warmup=60, num_samples=60, progress_bar=False)
        mcmc.run(jax.random.PRNGKey(1), x, y=y)
        samples = mcmc.get_samples()
        summary = numpyro.diagnostics.summary(samples, group_by_chain=False)
        return {"a_first": samples["a"][:10], "b_first": samples["b"][:10],
                "means": [float(jnp.mean(samples[k])) for k in ("a", "b", "sigma")],
                "n_eff_a": summary["a"]["n_eff"], "r_hat_b": summary["b"]["r_hat"]}


def train_svi_autonormal() -> dict:
    """The SVI tutorial's loop: an `AutoNormal` guide fitted with `numpyro.optim.Adam`
    and `Trace_ELBO` to the regression; the loss falls."""
    x, y = _regression_data()
    guide = AutoNormal(_regression)
    svi = SVI(_regression, guide, numpyro.optim.Adam(step_size=0.05), loss=Trace_ELBO())
    result = svi.run(jax.random.PRNGKey(2), 300, x, y=y, progress_bar=False)
    losses = result.losses
    return {"losses": losses[::30], "final_loss": losses[-1],
            "a_loc": result.params["a_auto_loc"], "b_loc": result.params["b_auto_loc"],
            "median": {k: v for k, v in guide.median(result.params).items()}}


def svi_step_by_step() -> dict:
    """`svi.init` / `svi.update` / `svi.get_params` by hand, under `jax.jit`."""
    x, y = _regression_data()
    guide = AutoNormal(_regression, init_scale=0.1)
    svi = SVI(_regression, guide, numpyro.optim.Adam(step_size=0.01), loss=Trace_ELBO())
    state = svi.init(jax.random.PRNGKey(4), x, y=y)
    update = jax.jit(svi.update)
    losses = []
    for _ in range(10):
        state, loss = update(state, x, y=y)
        losses.append(loss)
    params = svi.get_params(state)
    return {"losses": jnp.stack(losses), "a_loc": params["a_auto_loc"],
            "sigma_scale": params["sigma_auto_scale"]}


def predictive() -> dict:
    """`Predictive`: prior predictive from the model, posterior predictive from given
    samples, and from a guide with its parameters."""
    x, y = _regression_data()
    prior = Predictive(_regression, num_samples=4)(jax.random.PRNGKey(5), x)
    posterior_samples = {"a": jnp.array([1.4, 1.5, 1.6]), "b": jnp.array([-0.6, -0.7, -0.8]),
                         "sigma": jnp.array([0.3, 0.3, 0.35])}
    post = Predictive(_regression, posterior_samples)(jax.random.PRNGKey(6), x)
    guide = AutoNormal(_regression)
    params = {"a_auto_loc": jnp.array(1.5), "a_auto_scale": jnp.array(0.1),
              "b_auto_loc": jnp.array(-0.7), "b_auto_scale": jnp.array(0.1),
              "sigma_auto_loc": jnp.array(-1.0), "sigma_auto_scale": jnp.array(0.1)}
    from_guide = Predictive(guide, params=params, num_samples=3)(jax.random.PRNGKey(7), x)
    return {"prior_y": prior["y"][:, :5], "prior_a": prior["a"],
            "posterior_y": post["y"][:, :5], "guide_a": from_guide["a"],
            "guide_sigma": from_guide["sigma"]}
