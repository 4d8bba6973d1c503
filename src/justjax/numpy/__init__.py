"""`justjax.numpy`: NumPy's API on justjax arrays (`import justjax.numpy as jnp`).

Re-exports only; the implementations live in `justjax._src.numpy`.
"""
# TEMPORARY star imports while the modules grow; replaced by explicit re-exports.
from justjax._src.numpy.scalar_types import *  # noqa: F401,F403
from justjax._src.numpy.array_creation import *  # noqa: F401,F403
from justjax._src.numpy.ufuncs import *  # noqa: F401,F403
from justjax._src.numpy.reductions import *  # noqa: F401,F403
from justjax._src.numpy.sorting import *  # noqa: F401,F403
from justjax._src.numpy.shape_ops import *  # noqa: F401,F403
from justjax._src.numpy.dtype_ops import *  # noqa: F401,F403
from justjax._src.numpy.joining import *  # noqa: F401,F403
from justjax._src.numpy.rearranging import *  # noqa: F401,F403
from justjax._src.numpy.padding import *  # noqa: F401,F403
from justjax._src.numpy.selection import *  # noqa: F401,F403
from justjax._src.numpy.comparisons import *  # noqa: F401,F403
from justjax._src.numpy.diagonals import *  # noqa: F401,F403
from justjax._src.numpy.index_arithmetic import *  # noqa: F401,F403
from justjax._src.numpy.numeric import *  # noqa: F401,F403
from justjax._src.numpy.tensor import *  # noqa: F401,F403
from justjax._src.numpy.indexing import *  # noqa: F401,F403
from justjax._src.runtime.array import Array as ndarray
