"""`justjax.scipy.integrate`: numerical integration. Re-exports only."""
from justjax._src.scipy.integrate import trapezoid as trapezoid
