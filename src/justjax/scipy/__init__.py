"""`justjax.scipy`."""
from justjax.scipy import special as special
