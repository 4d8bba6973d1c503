"""`justjax.scipy.ndimage`: interpolation at coordinates. Re-exports only."""
from justjax._src.scipy.ndimage import map_coordinates as map_coordinates
