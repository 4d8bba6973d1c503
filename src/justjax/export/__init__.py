"""`jax.export`: export a jitted function to StableHLO, serialize it, call it later."""
from justjax._src.export._export import DisabledSafetyCheck as DisabledSafetyCheck
from justjax._src.export._export import Exported as Exported
from justjax._src.export._export import default_export_platform as default_export_platform
from justjax._src.export._export import deserialize as deserialize
from justjax._src.export._export import export as export
from justjax._src.export._export import (
    maximum_supported_calling_convention_version as maximum_supported_calling_convention_version)
from justjax._src.export._export import (
    minimum_supported_calling_convention_version as minimum_supported_calling_convention_version)
from justjax._src.export._export import (
    register_namedtuple_serialization as register_namedtuple_serialization)
from justjax._src.export._export import (
    register_pytree_node_serialization as register_pytree_node_serialization)
from justjax._src.export.symbolic_specs import SymbolicScope as SymbolicScope
from justjax._src.export.symbolic_specs import is_symbolic_dim as is_symbolic_dim
from justjax._src.export.symbolic_specs import symbolic_args_specs as symbolic_args_specs
from justjax._src.export.symbolic_specs import symbolic_shape as symbolic_shape
