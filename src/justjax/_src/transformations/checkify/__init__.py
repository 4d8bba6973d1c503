"""`checkify`: functionalized run-time checks (JAX's `jax._src.checkify`).

- `error`: the exceptions, the `Error` value and the error sets;
- `check`: the `check` primitive, `check`, `debug_check`, `check_error`;
- `transform`: the `CheckifyTrace` and `checkify` itself, with the rule table;
- `automatic`: the NaN, division-by-zero and out-of-bounds checks;
- `control_flow`: the rules of `jit`, `cond`, `scan`, `while` and `remat2`.

This module is what `jax._src.checkify` stands for (flax imports it for `Out`,
`JaxException`, `user_checks`, `checkify`, `Error`).
"""
from justjax._src.transformations.checkify.error import (
    BatchedError as BatchedError,
    DivisionByZeroError as DivisionByZeroError,
    Error as Error,
    ErrorCategory as ErrorCategory,
    ErrorEffect as ErrorEffect,
    FailedCheckError as FailedCheckError,
    JaxException as JaxException,
    JaxRuntimeError as JaxRuntimeError,
    NaNError as NaNError,
    OOBError as OOBError,
    Out as Out,
    all_checks as all_checks,
    assert_func as assert_func,
    automatic_checks as automatic_checks,
    div_checks as div_checks,
    float_checks as float_checks,
    get_traceback as get_traceback,
    index_checks as index_checks,
    init_error as init_error,
    nan_checks as nan_checks,
    update_error as update_error,
    user_checks as user_checks,
)
from justjax._src.transformations.checkify.check import (
    check as check,
    check_error as check_error,
    check_p as check_p,
    debug_check as debug_check,
)
from justjax._src.transformations.checkify.transform import (
    CheckifyTrace as CheckifyTrace,
    checkify as checkify,
    checkify_jaxpr as checkify_jaxpr,
    error_checks as error_checks,
)
from justjax._src.transformations.checkify import automatic as automatic  # noqa: F401 -- registers rules
from justjax._src.transformations.checkify import control_flow as control_flow  # noqa: F401 -- registers rules
from justjax._src.transformations.checkify.automatic import nan_primitives as nan_primitives
