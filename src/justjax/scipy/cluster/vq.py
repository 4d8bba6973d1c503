"""`justjax.scipy.cluster.vq`: vector quantization. Re-exports only."""
from justjax._src.scipy.cluster.vq import vq as vq
