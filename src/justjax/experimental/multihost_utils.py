"""Moving data between the processes of a multi-process run (`jax.experimental.multihost_utils`)."""
from justjax._src.multihost_utils import assert_equal as assert_equal
from justjax._src.multihost_utils import broadcast_one_to_all as broadcast_one_to_all
from justjax._src.multihost_utils import (
    global_array_to_host_local_array as global_array_to_host_local_array)
from justjax._src.multihost_utils import (
    host_local_array_to_global_array as host_local_array_to_global_array)
from justjax._src.multihost_utils import process_allgather as process_allgather
from justjax._src.multihost_utils import sync_global_devices as sync_global_devices
