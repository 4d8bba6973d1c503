"""The ``jax.tree`` namespace: short names for the ``tree_util`` functions."""

from justjax._src.pytrees.tree_util import tree_all as all
from justjax._src.pytrees.tree_errors import tree_broadcast as broadcast
from justjax._src.pytrees.tree_util import tree_flatten as flatten
from justjax._src.pytrees.tree_util import tree_flatten_with_path as flatten_with_path
from justjax._src.pytrees.tree_util import tree_leaves as leaves
from justjax._src.pytrees.tree_util import tree_leaves_with_path as leaves_with_path
from justjax._src.pytrees.tree_util import tree_map as map
from justjax._src.pytrees.tree_util import tree_map_with_path as map_with_path
from justjax._src.pytrees.tree_util import tree_reduce as reduce
from justjax._src.pytrees.tree_util import tree_reduce_associative as reduce_associative
from justjax._src.pytrees.tree_util import static as static
from justjax._src.pytrees.tree_util import tree_structure as structure
from justjax._src.pytrees.tree_util import tree_transpose as transpose
from justjax._src.pytrees.tree_util import tree_unflatten as unflatten

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves",
           "leaves_with_path", "map", "map_with_path", "reduce",
           "reduce_associative", "static", "structure", "transpose", "unflatten"]
