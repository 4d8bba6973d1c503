"""Structured control flow: `cond`/`switch`, `while_loop`, `scan` as primitives holding closed
jaxprs, and `fori_loop`, `map`, `associative_scan` written on top of them."""
