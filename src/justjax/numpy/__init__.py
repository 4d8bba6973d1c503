"""`justjax.numpy`: NumPy's API on justjax arrays (`import justjax.numpy as jnp`).

Re-exports only; the implementations live in `justjax._src.numpy`.
"""
# TEMPORARY star imports while the modules grow; replaced by explicit re-exports.
from justjax._src.numpy.scalar_types import *  # noqa: F401,F403
from justjax._src.numpy.array_creation import *  # noqa: F401,F403
from justjax._src.numpy.ufuncs import *  # noqa: F401,F403
from justjax._src.numpy.reductions import *  # noqa: F401,F403
from justjax._src.numpy.sorting import *  # noqa: F401,F403
from justjax._src.numpy.lax_numpy import *  # noqa: F401,F403
from justjax._src.numpy.tensor import *  # noqa: F401,F403
from justjax._src.numpy.indexing import *  # noqa: F401,F403
from justjax._src.runtime.array import Array as ndarray
