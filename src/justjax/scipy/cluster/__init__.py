"""`justjax.scipy.cluster`: clustering. Re-exports only."""
from justjax.scipy.cluster import vq as vq
