"""`jax.interpreters.batching`: vmap's rule tables and helpers (re-exports only).

`fancy_primitive_batchers[p] = rule(axis_data, args, dims, **params)` is the table itself;
`primitive_batchers[p] = rule(args, dims, **params)` and
`axis_primitive_batchers[p] = rule(axis_size, axis_name, trace_type, args, dims, **params)`
store their rules in it adapted, as in JAX 0.10.2.
"""
from justjax._src.interpreters.batching import AxisData as AxisData
from justjax._src.interpreters.batching import axis_rule_table as axis_primitive_batchers
from justjax._src.interpreters.batching import bdim_at_front as bdim_at_front
from justjax._src.interpreters.batching import broadcast as broadcast
from justjax._src.interpreters.batching import defbroadcasting as defbroadcasting
from justjax._src.interpreters.batching import defreducer as defreducer
from justjax._src.interpreters.batching import defvectorized as defvectorized
from justjax._src.interpreters.batching import not_mapped as not_mapped
from justjax._src.interpreters.batching import primitive_batchers as fancy_primitive_batchers
from justjax._src.interpreters.batching import short_rule_table as primitive_batchers
