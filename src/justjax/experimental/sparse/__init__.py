"""`jax.experimental.sparse` (re-exports): the BCOO sparse array."""
from justjax._src.sparse.bcoo import BCOO as BCOO
from justjax._src.sparse.bcoo import bcoo_fromdense as bcoo_fromdense
from justjax._src.sparse.bcoo import bcoo_todense as bcoo_todense
from justjax._src.sparse.bcoo import fromdense as fromdense
from justjax._src.sparse.bcoo import todense as todense
