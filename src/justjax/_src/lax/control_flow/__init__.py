"""Structured control flow: `cond`/`switch`, `while_loop`, `scan` as primitives holding closed
jaxprs, and `fori_loop`, `map`, `associative_scan` written on top of them.

Importing the package registers every rule: `scan_ad` adds reverse mode to `scan_p`.
"""
from justjax._src.lax.control_flow import scan_ad as scan_ad  # noqa: F401 -- registers rules
from justjax._src.lax.control_flow.conditionals import cond_p as cond_p
from justjax._src.lax.control_flow.conditionals import empty2_p as empty2_p
from justjax._src.lax.control_flow.scan import scan_p as scan_p
from justjax._src.lax.control_flow.while_loop import while_p as while_p
from justjax._src.lax.control_flow.solves import linear_solve_p as linear_solve_p
