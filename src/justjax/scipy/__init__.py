"""`justjax.scipy`."""
from justjax.scipy import special as special
from justjax.scipy import stats as stats
from justjax.scipy import cluster as cluster
from justjax.scipy import integrate as integrate
from justjax.scipy import interpolate as interpolate
from justjax.scipy import ndimage as ndimage
