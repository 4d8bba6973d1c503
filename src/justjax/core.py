"""`jax.core`: abstract values, traces and tracers, and jaxpr evaluation (re-exports only;
the names JAX deprecated warn, the ones it removed raise its AttributeError)."""
from justjax._src.core import core as _core
from justjax._src.core import dtypes as _dtypes
from justjax._src.core import jaxpr as _jaxpr
from justjax._src.interpreters import staging as _staging
from justjax._src.core.avals import AbstractValue as AbstractValue
from justjax._src.core.avals import ShapedArray as ShapedArray
from justjax._src.core.core import ParamDict as ParamDict
from justjax._src.core.core import Trace as Trace
from justjax._src.core.core import Tracer as Tracer
from justjax._src.core.core import Value as Value
from justjax._src.core.core import eval_context as eval_context
from justjax._src.core.core import max_dim as max_dim
from justjax._src.core.core import min_dim as min_dim
from justjax._src.core.jaxpr import Atom as Atom
from justjax._src.core.jaxpr import eval_jaxpr as eval_jaxpr
from justjax._src.deprecations import deprecation_getattr as _deprecation_getattr

_REMOVED = "jax.core.{0} was deprecated in JAX v0.8.2 and removed in JAX v0.10.0."
_MOVED = "jax.core.{0} is deprecated. Use jax.extend.core.{0}."
__getattr__ = _deprecation_getattr("jax.core", {
    "get_aval": ("jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX v0.10.0;"
                 " use jax.typeof instead.", None),
    **{name: (_REMOVED.format(name) + f" Use jax.extend.core.{name}.", None)
       for name in ("mapped_aval", "unmapped_aval", "set_current_trace",
                    "take_current_trace", "TraceTag", "call_impl", "subjaxprs",
                    "AbstractToken")},
    "traverse_jaxpr_params": (_REMOVED.format("traverse_jaxpr_params"), None),
    "DebugInfo": (_MOVED.format("DebugInfo"), _staging.DebugInfo),
    "DropVar": (_MOVED.format("DropVar"), _jaxpr.DropVar),
    "Effect": (_MOVED.format("Effect"), _core.Effect),
    "Effects": (_MOVED.format("Effects"), _core.Effects),
    "InconclusiveDimensionOperation": (
        "jax.core.InconclusiveDimensionOperation is deprecated. Use "
        "jax.errors.InconclusiveDimensionOperation.", _core.InconclusiveDimensionOperation),
    "JaxprTypeError": ("jax.core.JaxprTypeError is deprecated. Use jax.errors.JaxprTypeError.",
                       _jaxpr.JaxprTypeError),
    "check_jaxpr": (_MOVED.format("check_jaxpr"), _jaxpr.check_jaxpr),
    "concrete_or_error": (_MOVED.format("concrete_or_error"), _core.concrete_or_error),
    "find_top_trace": (_MOVED.format("find_top_trace"), _core.find_top_trace),
    "gensym": (_MOVED.format("gensym"), _jaxpr.gensym),
    "get_opaque_trace_state": (_MOVED.format("get_opaque_trace_state"),
                               _core.get_opaque_trace_state),
    "jaxprs_in_params": (_MOVED.format("jaxprs_in_params"), _jaxpr.jaxprs_in_params),
    "new_jaxpr_eqn": (_MOVED.format("new_jaxpr_eqn"), _jaxpr.new_jaxpr_eqn),
    "no_effects": (_MOVED.format("no_effects"), _core.no_effects),
    "primal_dtype_to_tangent_dtype": (_MOVED.format("primal_dtype_to_tangent_dtype"),
                                      _dtypes.primal_dtype_to_tangent_dtype),
    "valid_jaxtype": (_MOVED.format("valid_jaxtype"), _core.valid_jaxtype),
    "is_concrete": ("jax.core.is_concrete is deprecated.", _core.is_concrete),
    "pytype_aval_mappings": ("jax.core.pytype_aval_mappings is deprecated.",
                             _core.pytype_aval_mappings),
})
