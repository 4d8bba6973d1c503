"""`justjax.scipy.interpolate`: interpolation on a regular grid. Re-exports only."""
from justjax._src.scipy.interpolate import RegularGridInterpolator as RegularGridInterpolator
