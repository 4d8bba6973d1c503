"""Kernel builders of the reference backend, one module per group of StableHLO ops."""
from justjax._src.backends.reference.kernels import elementwise  # noqa: F401
