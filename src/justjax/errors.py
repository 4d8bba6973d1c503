"""JAX's error classes (`jax.errors`)."""
from justjax._src.errors import (
    ConcretizationTypeError as ConcretizationTypeError,
    JAXIndexError as JAXIndexError,
    JAXTypeError as JAXTypeError,
    JaxRuntimeError as JaxRuntimeError,
    KeyReuseError as KeyReuseError,
    NonConcreteBooleanIndexError as NonConcreteBooleanIndexError,
    TracerArrayConversionError as TracerArrayConversionError,
    TracerBoolConversionError as TracerBoolConversionError,
    TracerIntegerConversionError as TracerIntegerConversionError,
    UnexpectedTracerError as UnexpectedTracerError,
)
from justjax._src.core.shape_poly import (
    InconclusiveDimensionOperation as InconclusiveDimensionOperation)
