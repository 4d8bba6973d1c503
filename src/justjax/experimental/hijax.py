"""`jax.experimental.hijax`: the names of JAX's high-level types (re-exports only; see
`justjax._src.hijax`: justjax does not trace hijax values)."""
from justjax._src.core.avals import AbstractValue as AbstractValue
from justjax._src.core.avals import ShapedArray as ShapedArray
from justjax._src.hijax import AvalMutableQDD as AvalMutableQDD
from justjax._src.hijax import AvalQDD as AvalQDD
from justjax._src.hijax import HiPrimitive as HiPrimitive
from justjax._src.hijax import HiPspec as HiPspec
from justjax._src.hijax import HiType as HiType
from justjax._src.hijax import MutableHiType as MutableHiType
from justjax._src.hijax import VJPHiPrimitive as VJPHiPrimitive
from justjax._src.hijax import aval_method as aval_method
from justjax._src.hijax import aval_property as aval_property
from justjax._src.hijax import control_flow_allowed_effects as control_flow_allowed_effects
from justjax._src.hijax import register_hitype as register_hitype
from justjax._src.interpreters.ad import Zero as Zero
from justjax._src.interpreters.ad import instantiate_zeros as instantiate_zeros
from justjax._src.interpreters.ad import is_undefined_primal as is_undefined_primal
from justjax._src.state import AbstractRef as AbstractRef
from justjax._src.state import TransformedRef as TransformedRef
