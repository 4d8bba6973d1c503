"""`jax.test_util`: derivative checks against finite differences."""
from justjax._src.test_util import check_close as check_close
from justjax._src.test_util import check_grads as check_grads
from justjax._src.test_util import check_jvp as check_jvp
from justjax._src.test_util import check_vjp as check_vjp
