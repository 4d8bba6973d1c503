"""`justjax.sharding`: how arrays are laid out over devices (`jax.sharding`). Re-exports only."""
from justjax._src.lax.sharding_constraint import (
    auto_axes as auto_axes,
    explicit_axes as explicit_axes,
    reshard as reshard,
)
from justjax._src.runtime.mesh import (
    AbstractDevice as AbstractDevice,
    AbstractMesh as AbstractMesh,
    AxisType as AxisType,
    Mesh as Mesh,
    get_abstract_mesh as get_abstract_mesh,
    get_mesh as get_mesh,
    set_mesh as set_mesh,
    use_abstract_mesh as use_abstract_mesh,
)
from justjax._src.runtime.partition_spec import PartitionSpec as PartitionSpec
from justjax._src.runtime.sharding import (
    NamedSharding as NamedSharding,
    Sharding as Sharding,
    SingleDeviceSharding as SingleDeviceSharding,
    make_single_device_sharding as make_single_device_sharding,
)
