"""`jax.experimental.layout`: array memory layouts (re-exports only)."""
from justjax._src.layout import Format as Format
from justjax._src.layout import Layout as Layout
