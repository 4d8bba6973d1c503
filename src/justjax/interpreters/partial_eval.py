"""`jax.interpreters.partial_eval`: partial evaluation and jaxpr rule tables (re-exports)."""
from justjax._src.interpreters.partial_eval import PartialVal as PartialVal
from justjax._src.interpreters.partial_eval import dce_jaxpr as dce_jaxpr
from justjax._src.interpreters.partial_eval import dce_rules as dce_rules
from justjax._src.interpreters.partial_eval import (
    partial_eval_jaxpr_custom_rules as partial_eval_jaxpr_custom_rules)
from justjax._src.interpreters.partial_eval import trace_to_jaxpr_dynamic as trace_to_jaxpr_dynamic
from justjax._src.interpreters.partial_eval import trace_to_jaxpr_nounits as trace_to_jaxpr_nounits
from justjax._src.interpreters.staging import DynamicJaxprTracer as DynamicJaxprTracer
