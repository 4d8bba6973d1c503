"""`jax.experimental.ode`: adaptive ODE integration (re-exports only)."""
from justjax._src.ode import fit_4th_order_polynomial as fit_4th_order_polynomial
from justjax._src.ode import initial_step_size as initial_step_size
from justjax._src.ode import interp_fit_dopri as interp_fit_dopri
from justjax._src.ode import mean_error_ratio as mean_error_ratio
from justjax._src.ode import odeint as odeint
from justjax._src.ode import optimal_step_size as optimal_step_size
from justjax._src.ode import runge_kutta_step as runge_kutta_step
