"""`justjax.scipy`."""
from justjax.scipy import special as special
from justjax.scipy import stats as stats
from justjax.scipy import linalg as linalg
from justjax.scipy import sparse as sparse
from justjax.scipy import fft as fft
from justjax.scipy import signal as signal
