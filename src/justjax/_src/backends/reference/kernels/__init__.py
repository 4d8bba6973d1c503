"""Kernel builders of the reference backend, one module per group of StableHLO ops."""
from justjax._src.backends.reference.kernels import elementwise  # noqa: F401
from justjax._src.backends.reference.kernels import structural  # noqa: F401
from justjax._src.backends.reference.kernels import reductions  # noqa: F401
from justjax._src.backends.reference.kernels import callbacks  # noqa: F401
from justjax._src.backends.reference.kernels import control_flow  # noqa: F401
from justjax._src.backends.reference.kernels import linalg  # noqa: F401
from justjax._src.backends.reference.kernels import fusion  # noqa: F401
from justjax._src.backends.reference.kernels import collectives  # noqa: F401
from justjax._src.backends.reference.kernels import fft  # noqa: F401
