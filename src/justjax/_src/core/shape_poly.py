"""Symbolic dimensions: shapes like `(b, 4)` whose sizes are expressions of dimension variables.

A `DimExpr` is a polynomial with integer coefficients over *factors*: dimension variables
(`b`) and the operations JAX allows (`floordiv(e, k)`, `mod(e, k)`, `max(e1, e2)`,
`min(e1, e2)`). Arithmetic with ints and other expressions gives normalized expressions (an
expression that is constant is a plain `int`); `//` and `%` simplify when exact
(`(2*b) // 2 == b`, `(2*b + 1) % 2 == 1`). Comparisons are decided from bounds: every
variable is >= 1 unless its `SymbolicScope` constrains it further, and a comparison that
does not hold (or fail) for every value raises `InconclusiveDimensionOperation`, as in JAX.
Equality is syntactic after normalization (`b == 4` is False). An expression used where a
value is needed (`b * 2.0`, `jnp.asarray(b)`) becomes the `dim_as_value` primitive, which
the lax layer registers in `dim_as_value_hook`.

Expressions print as JAX prints them: `2*b + 1`, `a^2*b`, `- b + 3`, `floordiv(b, 2)`.
"""
from __future__ import annotations

import math
import operator
import re
import traceback
from typing import Any, Callable, Iterable, Sequence

__all__ = ["DimExpr", "SymbolicScope", "InconclusiveDimensionOperation", "symbolic_shape",
           "is_symbolic_dim", "max_dim", "min_dim", "parse_dim"]

_INCONCLUSIVE_HELP = (
    "\nThis error arises for comparison operations with shapes that\n"
    "are non-constant, and the result of the operation cannot be represented as\n"
    "a boolean value for all values of the symbolic dimensions involved.\n\n"
    "Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
    "#comparison-of-symbolic-dimensions-is-partially-supported\nfor more details.\n")

# Set by the lax layer: turns an expression into a traced int32 scalar (`dim_as_value`).
dim_as_value_hook: Callable[[DimExpr], Any] | None = None


class InconclusiveDimensionOperation(Exception):
    """A comparison or conversion of symbolic dimensions whose outcome depends on the values
    of the dimension variables (`jax.export` / `jax.core` name it so)."""


# ---------------------------------------------------------------------------------------------
# Scopes.

class SymbolicScope:
    """The dimension variables that may be combined and the constraints on them
    (`jax.export.SymbolicScope`).

    Args:
      constraints_str: constraints such as `"b >= 2"`, `"a <= b"`, `"c == 2*b"`.
    """

    def __init__(self, constraints_str: Sequence[str] = ()) -> None:
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        frame = traceback.extract_stack(limit=3)[0]
        self._location = f"{frame.filename}:{frame.lineno} ({frame.name})"
        self._constraints_str = tuple(constraints_str)
        # Expressions known to be >= 0 (each constraint `l >= r` gives `l - r`).
        self._nonneg: list[Any] = []
        # Variable bounds from constraints comparing a variable with a constant.
        self._bounds: dict[str, tuple[float, float]] = {}
        self._checks: list[tuple[str, Any, str]] = []
        for text in self._constraints_str:
            self._add_constraint(text)

    def _add_constraint(self, text: str) -> None:
        for op in (">=", "<=", "=="):
            if op in text:
                left, right = text.split(op, 1)
                break
        else:
            raise ValueError("Constraint parsing error: must contain one of '==' or '>=' or "
                             "'<='")
        lhs = _parse_expr(left, self, f"constraint {text!r}")
        rhs = _parse_expr(right, self, f"constraint {text!r}")
        # What a call checks: (the constraint's text, lhs - rhs, ">=" or "==").
        self._checks.append((text.strip(), lhs - rhs, ">=" if op == "<=" else op))
        if op == "<=":
            self._checks[-1] = (text.strip(), rhs - lhs, ">=")
        if op in (">=", "=="):
            self._add_nonneg(lhs - rhs)
        if op in ("<=", "=="):
            self._add_nonneg(rhs - lhs)

    def _add_nonneg(self, expr: Any) -> None:
        if isinstance(expr, int):
            if expr < 0:
                raise ValueError(f"Unsatisfiable constraint in scope {self}")
            return
        self._nonneg.append(expr)
        # `c*v + k >= 0` with one variable bounds the variable.
        terms = dict(expr._terms)
        const = terms.pop((), 0)
        if len(terms) == 1:
            (mono, coeff), = terms.items()
            if len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], str):
                name = mono[0][0]
                lo, hi = self._bounds.get(name, (1, math.inf))
                if coeff > 0:
                    lo = max(lo, math.ceil(-const / coeff))
                else:
                    hi = min(hi, math.floor(const / -coeff))
                self._bounds[name] = (lo, hi)

    def var_bounds(self, name: str) -> tuple[float, float]:
        return self._bounds.get(name, (1, math.inf))

    def __str__(self) -> str:
        text = f"{id(self)} created at {self._location}"
        if self._constraints_str:
            text += " with constraints:\n" + "\n".join(f"  {c}" for c in self._constraints_str)
        return text

    __repr__ = __str__

    def _check_same_scope(self, other: DimExpr, when: str) -> None:
        if other.scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\nExpected  scope {self}\n"
                f"and found for '{other}' (unknown) scope {other.scope}\n"
                "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints.")


# ---------------------------------------------------------------------------------------------
# Expressions. A factor is a variable name (str) or an operation ("floordiv" | "mod" | "max"
# | "min", operands); a monomial is a sorted tuple of (factor, power); an expression is a
# sorted tuple of (monomial, coefficient), the constant's monomial being ().

def _factor_key(factor: Any) -> tuple:
    if isinstance(factor, str):
        return (0, factor)
    return (1, factor[0], tuple(_expr_key(a) for a in factor[1]))


def _expr_key(e: Any) -> tuple:
    if isinstance(e, int):
        return ((((), e),),)
    return tuple((tuple((_factor_key(f), p) for f, p in mono), c) for mono, c in e._terms)


def _mono_key(mono: tuple) -> tuple:
    return (sum(p for _, p in mono), tuple(sorted(((_factor_key(f), p) for f, p in mono),
                                                  reverse=True)))


def _make(terms: dict[tuple, int], scope: SymbolicScope) -> Any:
    """The normalized expression of `terms` (an int when constant)."""
    kept = {m: c for m, c in terms.items() if c != 0}
    if not kept:
        return 0
    if list(kept) == [()]:
        return kept[()]
    ordered = tuple(sorted(kept.items(), key=lambda mc: _mono_key(mc[0]), reverse=True))
    return DimExpr(ordered, scope)


def _var(name: str, scope: SymbolicScope) -> DimExpr:
    return DimExpr(((((name, 1),), 1),), scope)


def _factor_expr(factor: Any, scope: SymbolicScope) -> DimExpr:
    return DimExpr(((((factor, 1),), 1),), scope)


def _mul_mono(a: tuple, b: tuple) -> tuple:
    powers: dict[Any, int] = {}
    for f, p in (*a, *b):
        powers[f] = powers.get(f, 0) + p
    return tuple(sorted(powers.items(), key=lambda fp: _factor_key(fp[0])))


def _terms_of(e: Any) -> dict[tuple, int]:
    return {(): e} if isinstance(e, int) else dict(e._terms)


def _is_dim(x: Any) -> bool:
    return isinstance(x, (int, DimExpr)) and not isinstance(x, bool)


def _as_int(x: Any) -> Any:
    """Python ints (NumPy integers become ints); anything else unchanged."""
    if isinstance(x, int) or isinstance(x, DimExpr):
        return x
    try:
        return operator.index(x)
    except TypeError:
        return x


class DimExpr:
    """A symbolic dimension (JAX's `_DimExpr`); see the module docstring."""

    __slots__ = ("_terms", "_scope", "_hash")

    def __init__(self, terms: tuple, scope: SymbolicScope) -> None:
        self._terms = terms
        self._scope = scope
        self._hash = hash(_expr_key(self))

    @property
    def scope(self) -> SymbolicScope:
        return self._scope

    # -- arithmetic --------------------------------------------------------------------------

    def _coerce(self, other: Any) -> Any:
        other = _as_int(other)
        if isinstance(other, DimExpr):
            self._scope._check_same_scope(other, "for linear combination")
        return other

    def _add(self, other: Any, sign: int) -> Any:
        terms = _terms_of(self)
        for mono, c in _terms_of(other).items():
            terms[mono] = terms.get(mono, 0) + sign * c
        return _make(terms, self._scope)

    def __add__(self, other: Any) -> Any:
        other = self._coerce(other)
        if not _is_dim(other):
            return self._as_value() + other
        return self._add(other, 1)

    def __radd__(self, other: Any) -> Any:
        other = self._coerce(other)
        if not _is_dim(other):
            return other + self._as_value()
        return self._add(other, 1)

    def __sub__(self, other: Any) -> Any:
        other = self._coerce(other)
        if not _is_dim(other):
            return self._as_value() - other
        return self._add(other, -1)

    def __rsub__(self, other: Any) -> Any:
        other = self._coerce(other)
        if not _is_dim(other):
            return other - self._as_value()
        return (-self)._add(other, 1)

    def __neg__(self) -> Any:
        return _make({m: -c for m, c in self._terms}, self._scope)

    def __pos__(self) -> DimExpr:
        return self

    def __mul__(self, other: Any) -> Any:
        other = self._coerce(other)
        if not _is_dim(other):
            return self._as_value() * other
        terms: dict[tuple, int] = {}
        for m1, c1 in self._terms:
            for m2, c2 in _terms_of(other).items():
                mono = _mul_mono(m1, m2)
                terms[mono] = terms.get(mono, 0) + c1 * c2
        return _make(terms, self._scope)

    def __rmul__(self, other: Any) -> Any:
        other = self._coerce(other)
        if not _is_dim(other):
            return other * self._as_value()
        return self * other

    def __pow__(self, power: Any) -> Any:
        power = _as_int(power)
        if not isinstance(power, int) or power < 0:
            return self._as_value() ** power
        result: Any = 1
        for _ in range(power):
            result = self * result
        return result

    def __floordiv__(self, divisor: Any) -> Any:
        divisor = self._coerce(divisor)
        if not _is_dim(divisor):
            return self._as_value() // divisor
        return _divmod(self, divisor, self._scope)[0]

    def __rfloordiv__(self, dividend: Any) -> Any:
        dividend = self._coerce(dividend)
        if not _is_dim(dividend):
            return dividend // self._as_value()
        return _divmod(dividend, self, self._scope)[0]

    def __mod__(self, divisor: Any) -> Any:
        divisor = self._coerce(divisor)
        if not _is_dim(divisor):
            return self._as_value() % divisor
        return _divmod(self, divisor, self._scope)[1]

    def __rmod__(self, dividend: Any) -> Any:
        dividend = self._coerce(dividend)
        if not _is_dim(dividend):
            return dividend % self._as_value()
        return _divmod(dividend, self, self._scope)[1]

    def __divmod__(self, divisor: Any) -> Any:
        return self // divisor, self % divisor

    def __truediv__(self, other: Any) -> Any:
        return self._as_value() / other

    def __rtruediv__(self, other: Any) -> Any:
        return other / self._as_value()

    # -- comparisons ---------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        other = _as_int(other)
        if isinstance(other, float) and other.is_integer():
            other = int(other)
        if not _is_dim(other):
            return False
        if isinstance(other, DimExpr) and other._scope is not self._scope:
            return False
        return _expr_key(self) == _expr_key(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    def __ge__(self, other: Any) -> bool:
        return _compare(self, self._coerce(other), ">=")

    def __gt__(self, other: Any) -> bool:
        return _compare(self, self._coerce(other), ">")

    def __le__(self, other: Any) -> bool:
        return _compare(self, self._coerce(other), "<=")

    def __lt__(self, other: Any) -> bool:
        return _compare(self, self._coerce(other), "<")

    def __bool__(self) -> bool:
        return True

    def __int__(self) -> int:
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant"
            + _INCONCLUSIVE_HELP)

    def __float__(self) -> float:
        return float(int(self))

    # -- values --------------------------------------------------------------------------------

    def _as_value(self) -> Any:
        if dim_as_value_hook is None:
            raise InconclusiveDimensionOperation(
                f"Symbolic dimension '{self}' used in a context that requires a constant"
                + _INCONCLUSIVE_HELP)
        return dim_as_value_hook(self)

    def __jax_array__(self) -> Any:
        return self._as_value()

    def dimension_as_value(self) -> Any:
        return self._as_value()

    def evaluate(self, env: dict[str, Any], ops: Any = None) -> Any:
        """The value of the expression with the variables of `env` (ints, or values of an
        algebra `ops` with add, mul, floordiv, mod, max, min, const)."""
        return _evaluate(self, env, ops or _INT_OPS)

    def variables(self) -> set[str]:
        """The dimension variables the expression mentions."""
        found: set[str] = set()
        for mono, _ in self._terms:
            for factor, _ in mono:
                if isinstance(factor, str):
                    found.add(factor)
                else:
                    for arg in factor[1]:
                        if isinstance(arg, DimExpr):
                            found |= arg.variables()
        return found

    # -- printing ------------------------------------------------------------------------------

    def __str__(self) -> str:
        parts = []
        for mono, coeff in self._terms:
            body = "*".join(_factor_str(f) + (f"^{p}" if p != 1 else "") for f, p in mono)
            magnitude = abs(coeff)
            if not body:
                text = str(magnitude)
            elif magnitude == 1:
                text = body
            else:
                text = f"{magnitude}*{body}"
            if coeff < 0:
                parts.append(("- " if not parts else "- ") + text)
            else:
                parts.append(("+ " if parts else "") + text)
        return " ".join(parts)

    __repr__ = __str__


def _factor_str(factor: Any) -> str:
    if isinstance(factor, str):
        return factor
    kind, args = factor
    # A negative constant prints as a one-term expression would: `- 3`, as JAX prints it.
    shown = [f"- {-a}" if isinstance(a, int) and a < 0 else str(a) for a in args]
    return f"{kind}({', '.join(shown)})"


# ---------------------------------------------------------------------------------------------
# Division, max/min.

def _divmod(dividend: Any, divisor: Any, scope: SymbolicScope) -> tuple[Any, Any]:
    """(quotient, remainder) with floor semantics, simplified when exact."""
    if isinstance(divisor, int):
        if divisor == 0:
            raise InconclusiveDimensionOperation(f"Division by zero: {dividend} // 0")
        terms = _terms_of(dividend)
        const = terms.pop((), 0)
        if all(c % divisor == 0 for c in terms.values()):
            # dividend = divisor * q + const: floordiv distributes over the exact part.
            q = _make({m: c // divisor for m, c in terms.items()}, scope)
            return q + const // divisor, const % divisor
    elif isinstance(dividend, DimExpr) or isinstance(dividend, int):
        quotient = _exact_quotient(dividend, divisor, scope)
        if quotient is not None:
            return quotient, 0
    q = _factor_expr(("floordiv", (dividend, divisor)), scope)
    r = _factor_expr(("mod", (dividend, divisor)), scope)
    return q, r


def _exact_quotient(dividend: Any, divisor: DimExpr, scope: SymbolicScope) -> Any:
    """`dividend / divisor` when the divisor is one monomial dividing every term."""
    if len(divisor._terms) != 1:
        return None
    (dmono, dcoeff), = divisor._terms
    out: dict[tuple, int] = {}
    for mono, coeff in _terms_of(dividend).items():
        powers = dict(mono)
        for f, p in dmono:
            if powers.get(f, 0) < p:
                return None
            powers[f] -= p
        if coeff % dcoeff:
            return None
        rest = tuple(sorted(((f, p) for f, p in powers.items() if p),
                            key=lambda fp: _factor_key(fp[0])))
        out[rest] = out.get(rest, 0) + coeff // dcoeff
    return _make(out, scope)


def _minmax(kind: str, a: Any, b: Any) -> Any:
    a, b = _as_int(a), _as_int(b)
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b) if kind == "max" else min(a, b)
    scope = a.scope if isinstance(a, DimExpr) else b.scope
    if _lower_bound(a - b) >= 0:
        a_ge_b = True
    elif _lower_bound(b - a) >= 0:
        a_ge_b = False
    else:
        return _factor_expr((kind, (a, b)), scope)
    return (a if a_ge_b else b) if kind == "max" else (b if a_ge_b else a)


def max_dim(d1: Any, d2: Any) -> Any:
    """The larger of two dimensions (`jax.core.max_dim`); `max(d1, d2)` if undecided."""
    return _minmax("max", d1, d2)


def min_dim(d1: Any, d2: Any) -> Any:
    """The smaller of two dimensions (`jax.core.min_dim`)."""
    return _minmax("min", d1, d2)


# ---------------------------------------------------------------------------------------------
# Deciding comparisons by bounds.

def _mul_interval(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    products = []
    for x in a:
        for y in b:
            if (x == 0 and math.isinf(y)) or (y == 0 and math.isinf(x)):
                products.append(0)
            else:
                products.append(x * y)
    return min(products), max(products)


def _factor_bounds(factor: Any, scope: SymbolicScope) -> tuple[float, float]:
    if isinstance(factor, str):
        return scope.var_bounds(factor)
    kind, (a, b) = factor
    la, ha = bounds(a, scope)
    lb, hb = bounds(b, scope)
    if kind == "max":
        return max(la, lb), max(ha, hb)
    if kind == "min":
        return min(la, lb), min(ha, hb)
    if lb <= 0:
        return -math.inf, math.inf
    if kind == "mod":
        return 0, (hb - 1 if ha > hb - 1 or la < 0 else ha) if not math.isinf(hb) else \
            (ha if la >= 0 else math.inf)
    low = math.floor(la / hb) if not math.isinf(hb) and not math.isinf(la) else \
        (0 if la >= 0 else -math.inf)
    high = math.floor(ha / lb) if not math.isinf(ha) else math.inf
    return low, high


def bounds(e: Any, scope: SymbolicScope | None = None) -> tuple[float, float]:
    """Lower and upper bounds of `e` over all values of its variables."""
    if isinstance(e, int):
        return e, e
    scope = scope or e.scope
    lo = hi = 0.0
    for mono, coeff in e._terms:
        interval: tuple[float, float] = (1, 1)
        for factor, power in mono:
            fb = _factor_bounds(factor, scope)
            for _ in range(power):
                interval = _mul_interval(interval, fb)
        lo_t, hi_t = _mul_interval(interval, (coeff, coeff))
        lo += lo_t
        hi += hi_t
    return lo, hi


def _lower_bound(e: Any) -> float:
    """A lower bound of `e`, sharpened for max/min factors (max(x, y) >= x and >= y) and by
    the scope's constraints (`e = d + (e - d)` for each known `d >= 0`)."""
    if isinstance(e, int):
        return e
    best = bounds(e)[0]
    for mono, coeff in e._terms:
        if len(mono) == 1 and mono[0][1] == 1 and not isinstance(mono[0][0], str):
            kind, (a, b) = mono[0][0]
            if (kind == "max" and coeff > 0) or (kind == "min" and coeff < 0):
                rest = e - coeff * _factor_expr(mono[0][0], e.scope)
                # c*max(x, y) >= c*x and >= c*y when c > 0; c*min(x, y) too when c < 0.
                best = max(best, _plain_lb(rest + coeff * a), _plain_lb(rest + coeff * b))
        if len(mono) == 1 and mono[0][1] == 1 and not isinstance(mono[0][0], str):
            kind, (x, k) = mono[0][0]
            if kind == "mod" and coeff < 0 and bounds(k, e.scope)[0] > 0:
                # mod(x, k) <= k - 1 for a positive k.
                rest = e - coeff * _factor_expr(mono[0][0], e.scope)
                best = max(best, _plain_lb(rest + coeff * (k - 1)))
            if kind == "floordiv" and coeff < 0 and isinstance(k, int) and k > 0:
                # k*floordiv(x, k) = x - mod(x, k): bound k*e with the floordiv replaced.
                rest = e - coeff * _factor_expr(mono[0][0], e.scope)
                scaled = k * rest + coeff * x - coeff * _factor_expr(("mod", (x, k)), e.scope)
                best = max(best, _plain_lb(scaled) / k)
    for known in e.scope._nonneg:
        best = max(best, _plain_lb(e - known))
    return best


def _plain_lb(e: Any) -> float:
    return e if isinstance(e, int) else bounds(e)[0]


def _decide_nonneg(diff: Any) -> bool | None:
    """True if `diff >= 0` for all values, False if `diff < 0` for all, else None."""
    if _lower_bound(diff) >= 0:
        return True
    if _lower_bound(-diff - 1) >= 0:
        return False
    return None


def _compare(a: Any, b: Any, op: str) -> bool:
    """`a <op> b` (op one of >=, >, <=, <) for all values of the variables; raises
    InconclusiveDimensionOperation when it depends on them."""
    a, b = _as_int(a), _as_int(b)
    if not (_is_dim(a) and _is_dim(b)):
        return NotImplemented
    diff = {">=": lambda: a - b, ">": lambda: a - b - 1, "<=": lambda: b - a,
            "<": lambda: b - a - 1}[op]()
    decided = _decide_nonneg(diff)
    if decided is not None:
        return decided
    scope = next(x.scope for x in (a, b) if isinstance(x, DimExpr))
    message = f"Symbolic dimension comparison '{a}' {op} '{b}' is inconclusive."
    if scope._constraints_str:
        message += f"\nUsing symbolic scope {scope}"
    raise InconclusiveDimensionOperation(message + _INCONCLUSIVE_HELP)


# ---------------------------------------------------------------------------------------------
# Evaluation.

class _IntOps:
    """Integer arithmetic for `DimExpr.evaluate` (floor division, as dimensions divide)."""

    add = staticmethod(operator.add)
    mul = staticmethod(operator.mul)
    floordiv = staticmethod(operator.floordiv)
    mod = staticmethod(operator.mod)
    max = staticmethod(max)
    min = staticmethod(min)

    @staticmethod
    def const(value: int) -> int:
        return value


_INT_OPS = _IntOps()


def _evaluate(e: Any, env: dict[str, Any], ops: Any) -> Any:
    if isinstance(e, int):
        return ops.const(e)
    total = None
    for mono, coeff in e._terms:
        term = None if mono else ops.const(coeff)
        for factor, power in mono:
            if isinstance(factor, str):
                if factor not in env:
                    raise KeyError(f"no value for dimension variable '{factor}'")
                value = env[factor]
            else:
                kind, (a, b) = factor
                value = getattr(ops, kind)(_evaluate(a, env, ops), _evaluate(b, env, ops))
            for _ in range(power):
                term = value if term is None else ops.mul(term, value)
        if mono and coeff != 1:
            term = ops.mul(term, ops.const(coeff))
        total = term if total is None else ops.add(total, term)
    return total


# ---------------------------------------------------------------------------------------------
# Parsing `"b, 2*b + 1, floordiv(c, 2)"`.

_TOKEN = re.compile(r"\s*(?:(?P<number>\d+(?:\.\d*)?)|(?P<name>[A-Za-z_][\w]*)|"
                    r"(?P<op>//|\*\*|[-+*%(),^.]|\.\.\.))")


class _ExprParser:
    def __init__(self, text: str, scope: SymbolicScope, context: str) -> None:
        self.text = text
        self.scope = scope
        self.context = context
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            found = _TOKEN.match(text, pos)
            if found is None:
                self.fail(f"unexpected character {text[pos]!r}", pos)
            kind = found.lastgroup
            self.tokens.append((kind, found.group(kind), found.start(kind)))
            pos = found.end()
        self.i = 0

    def fail(self, message: str, pos: int | None = None) -> None:
        if pos is None:
            pos = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text)
        raise ValueError(f"syntax error in symbolic {self.context}: {message}. "
                         f"Parsed '{self.text[:pos]}', remaining '{self.text[pos:]}'.")

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[1] == value:
            self.i += 1
            return True
        return False

    def expr(self) -> Any:
        negate = self.take("-")
        value = self.term()
        if negate:
            value = -value
        while True:
            if self.take("+"):
                value = value + self.term()
            elif self.take("-"):
                value = value - self.term()
            else:
                return value

    def term(self) -> Any:
        value = self.power()
        while True:
            if self.take("*"):
                value = value * self.power()
            elif self.take("//"):
                value = value // self.power()
            elif self.take("%"):
                value = value % self.power()
            else:
                return value

    def power(self) -> Any:
        value = self.atom()
        if self.take("^") or self.take("**"):
            tok = self.peek()
            if tok is None or tok[0] != "number":
                self.fail("expecting integer exponent")
            self.i += 1
            value = value ** int(tok[1])
        return value

    def atom(self) -> Any:
        tok = self.peek()
        if tok is None:
            self.fail("expecting one of {NAME, MINUS, NUMBER} but found ENDMARKER")
        kind, value, pos = tok
        if kind == "number":
            if not value.isdigit():
                self.fail(f"expecting integer, found {value}", pos)
            self.i += 1
            return int(value)
        if kind == "name":
            self.i += 1
            if value in ("floordiv", "mod", "max", "min") and self.take("("):
                a = self.expr()
                if not self.take(","):
                    self.fail("expecting ','")
                b = self.expr()
                if not self.take(")"):
                    self.fail("expecting ')'")
                if value == "floordiv":
                    return _divmod(a, b, self.scope)[0]
                if value == "mod":
                    return _divmod(a, b, self.scope)[1]
                return _minmax(value, a, b)
            return _var(value, self.scope)
        if self.take("("):
            inner = self.expr()
            if not self.take(")"):
                self.fail("expecting ')'")
            return inner
        self.fail(f"expecting one of {{NAME, MINUS, NUMBER}} but found {value}", pos)


def _parse_expr(text: str, scope: SymbolicScope, context: str) -> Any:
    parser = _ExprParser(text, scope, context)
    value = parser.expr()
    if parser.peek() is not None:
        parser.fail(f"unexpected {parser.peek()[1]!r}")
    return value


def parse_dim(text: str, scope: SymbolicScope) -> Any:
    """One dimension from its text (`"2*b + 1"`) in `scope`."""
    return _parse_expr(text, scope, f"dimension {text!r}")


def _split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None,
                   like: Sequence[int | None] | None = None) -> tuple[Any, ...]:
    """The shape a polymorphic shape spec describes (`jax.export.symbolic_shape`).

    Args:
      shape_spec: `"b, 4"`, `"(b, 2*b + 1)"`; `_` takes the dimension of `like`, and a
        trailing `...` the rest of `like`'s dimensions.
      constraints: constraints of a new scope (`"b >= 2"`); not with `scope`.
      scope: the `SymbolicScope` of the variables (a new one by default).
      like: a concrete shape for `_` and `...`.

    Returns:
      A tuple of ints and `DimExpr`s.
    """
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    text = "..." if shape_spec is None else shape_spec.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts = _split_top_level(text) if text else []
    if parts and parts[-1] == "":
        parts.pop()
    dims: list[Any] = []
    for i, part in enumerate(parts):
        context = f"shape '{shape_spec}' in dimension {i}"
        if part == "...":
            if i != len(parts) - 1:
                raise ValueError(f"syntax error in symbolic {context}: ... may appear only "
                                 "at the end")
            if like is None:
                raise ValueError(f"syntax error in symbolic {context}: ... requires `like`")
            dims.extend(like[len(dims):])
            continue
        if part == "_":
            if like is None or i >= len(like) or like[i] is None:
                raise ValueError(f"syntax error in symbolic {context}: _ requires a known "
                                 "dimension in `like`")
            dims.append(like[i])
            continue
        try:
            dims.append(_parse_expr(part, scope, context))
        except ValueError as e:
            prefix = ", ".join(parts[:i]) + (", " if i else "")
            message = str(e).split(". Parsed")[0]
            raise ValueError(f"{message}. Parsed '{prefix}', remaining '{part}'.") from None
    if like is not None and len(dims) != len(like):
        raise ValueError(f"syntax error in symbolic shape '{shape_spec}': rank mismatch "
                         f"with {tuple(like)}")
    return tuple(dims)


def is_symbolic_dim(d: Any) -> bool:
    """Whether `d` is a symbolic dimension (`jax.export.is_symbolic_dim`)."""
    return isinstance(d, DimExpr)


def canonicalize_shape(shape: Iterable[Any]) -> tuple[Any, ...]:
    """A shape as a tuple of ints and symbolic dimensions (NumPy integers become ints)."""
    return tuple(d if type(d) is int or isinstance(d, DimExpr) else int(d) for d in shape)


def exceeds(d: Any, bound: int) -> bool:
    """`d > bound` for a known dimension; a symbolic one is taken to fit (JAX indexes
    symbolic dimensions with int32)."""
    return not isinstance(d, DimExpr) and d > bound


def is_constant_shape(shape: Iterable[Any]) -> bool:
    return not any(isinstance(d, DimExpr) for d in shape)


def all_dim_vars(shapes: Iterable[Sequence[Any]]) -> list[str]:
    """The dimension variables of `shapes`, sorted by name."""
    found: set[str] = set()
    for shape in shapes:
        for d in shape:
            if isinstance(d, DimExpr):
                found |= d.variables()
    return sorted(found)
