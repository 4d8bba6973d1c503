"""Several processes running one program (`jax.distributed`), joined by MPI."""
from justjax._src.runtime.processes import initialize as initialize
from justjax._src.runtime.processes import is_initialized as is_initialized
from justjax._src.runtime.processes import shutdown as shutdown
