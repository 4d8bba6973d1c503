"""`jax.custom_derivatives`: functions with custom derivative rules (re-exports only)."""
from justjax._src.transformations.custom_derivatives import CustomVJPPrimal as CustomVJPPrimal
from justjax._src.transformations.custom_derivatives import SymbolicZero as SymbolicZero
from justjax._src.transformations.custom_derivatives import custom_jvp as custom_jvp
from justjax._src.transformations.custom_derivatives import custom_jvp_call_p as custom_jvp_call_p
from justjax._src.transformations.custom_derivatives import custom_vjp as custom_vjp
from justjax._src.transformations.custom_derivatives import custom_vjp_call_p as custom_vjp_call_p
from justjax._src.transformations.custom_derivatives import (
    custom_vjp_primal_tree_values as custom_vjp_primal_tree_values)
