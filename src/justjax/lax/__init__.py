"""`justjax.lax`: the primitives and their thin wrappers. Re-exports only."""
# TEMPORARY star imports while the modules grow; replaced by explicit re-exports.
from justjax._src.lax.elementwise import *  # noqa: F401,F403
from justjax._src.lax.structural import *  # noqa: F401,F403
from justjax._src.lax.joining import *  # noqa: F401,F403
from justjax._src.lax.slicing import *  # noqa: F401,F403
from justjax._src.lax.reductions import *  # noqa: F401,F403
from justjax._src.lax.sorting import *  # noqa: F401,F403
from justjax._src.lax.dot import *  # noqa: F401,F403
from justjax._src.lax.convolution import *  # noqa: F401,F403
from justjax._src.lax.windowed import *  # noqa: F401,F403
