"""`justjax.scipy.stats`: probability distributions. Re-exports only."""
from justjax.scipy.stats import norm as norm
