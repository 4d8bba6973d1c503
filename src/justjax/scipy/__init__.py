"""`justjax.scipy`."""
from justjax.scipy import special as special
from justjax.scipy import stats as stats
from justjax.scipy import fft as fft
from justjax.scipy import signal as signal
from justjax.scipy import linalg as linalg
from justjax.scipy import sparse as sparse
from justjax.scipy import cluster as cluster
from justjax.scipy import integrate as integrate
from justjax.scipy import interpolate as interpolate
from justjax.scipy import ndimage as ndimage
