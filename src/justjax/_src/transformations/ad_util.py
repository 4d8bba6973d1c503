"""JAX's `ad_util` names: what the autodiff machinery and the lax primitives share.

JAX keeps `stop_gradient_p`, the tangent sum `add_jaxvals_p` and the symbolic `Zero` in
`jax._src.ad_util`; lineax imports `stop_gradient_p` from there (to give it a transpose
rule). justjax defines them beside their rules: this module gathers them under JAX's name.
"""
from justjax._src.interpreters.ad import Zero as Zero
from justjax._src.interpreters.ad import add_jaxvals as add_jaxvals
from justjax._src.interpreters.ad import add_jaxvals_p as add_jaxvals_p
from justjax._src.interpreters.ad import instantiate_zeros as instantiate
from justjax._src.interpreters.ad import zeros_like_aval as zeros_like_aval
from justjax._src.lax.structural import stop_gradient_p as stop_gradient_p

__all__ = ["Zero", "add_jaxvals", "add_jaxvals_p", "instantiate", "stop_gradient_p",
           "zeros_like_aval"]
