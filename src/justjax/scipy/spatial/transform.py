"""`justjax.scipy.spatial.transform`: rotations in 3-D. Re-exports only."""
from justjax._src.scipy.spatial.transform import (
    Rotation as Rotation,
    Slerp as Slerp,
)
