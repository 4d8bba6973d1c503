"""`justjax.scipy`: its subpackages are imported when first used, as JAX's are."""
from justjax._src.util import lazy_submodules as _lazy_submodules

__getattr__, __dir__, __all__ = _lazy_submodules(__name__, [
    "cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal", "sparse",
    "special", "stats"])
