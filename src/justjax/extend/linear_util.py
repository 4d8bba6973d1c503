"""`jax.extend.linear_util`: functions with transformations stacked on them (re-exports)."""
from justjax._src.interpreters.linear_util import EqualStore as EqualStore
from justjax._src.interpreters.linear_util import Store as Store
from justjax._src.interpreters.linear_util import StoreException as StoreException
from justjax._src.interpreters.linear_util import WrappedFun as WrappedFun
from justjax._src.interpreters.linear_util import cache as cache
from justjax._src.interpreters.linear_util import merge_linear_aux as merge_linear_aux
from justjax._src.interpreters.linear_util import transformation as transformation
from justjax._src.interpreters.linear_util import transformation2 as transformation2
from justjax._src.interpreters.linear_util import transformation_with_aux as transformation_with_aux
from justjax._src.interpreters.linear_util import transformation_with_aux2 as transformation_with_aux2
from justjax._src.interpreters.linear_util import wrap_init as wrap_init
