"""Shared evaluation helpers with XLA CPU's semantics: what lax's eager rules, the compiler's
passes (constant folding, algebraic simplification) and both backends must agree on.

- `conversions`: `convert_values` (StableHLO `convert`) and the float32 detour of narrow floats.
- `monoids`: the identities of the reductions' monoids and the detection of a monoid region.
- `windows`: facts about windows (`cumulative_axis`: the windows of a cumulative reduction).
- `shapes`: shape arithmetic of gathers, dots, convolutions and reductions.
- `polynomials`: XLA's polynomial approximations (`erf_inv`), evaluated as XLA CPU does.

This layer sits below lax, the passes and the backends, and imports only `core` and `hlo.ir`.
"""
