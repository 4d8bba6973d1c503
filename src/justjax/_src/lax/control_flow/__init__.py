"""Structured control flow: `cond`/`switch`, `while_loop`, `scan` as primitives holding closed
jaxprs, and `fori_loop`, `map`, `associative_scan` written on top of them.

Each primitive is declared with all its rules in its own module (`conditionals`, `while_loop`,
`scan`, `solves`); this package imports none of them, so no submodule depends on it.
"""
