"""`core/shape_poly.py`: symbolic dimensions — printing, arithmetic, decisions, parsing,
scopes. Expected texts and messages were read off real JAX 0.10.2's `jax.export`."""
from __future__ import annotations

import re

import numpy as np
import pytest

import justjax as jax
from justjax import export
from justjax._src.core import shape_poly
from justjax._src.core.shape_poly import InconclusiveDimensionOperation, max_dim, min_dim

a, b, c = export.symbolic_shape("a, b, c")


@pytest.mark.parametrize("expr,text", [
    (lambda: a * b + a + 3 * c - 1, "a*b + 3*c + a - 1"),
    (lambda: b * a, "a*b"),
    (lambda: 2 * a * b, "2*a*b"),
    (lambda: -2 * a, "- 2*a"),
    (lambda: (a + 1) * (b - 1), "a*b + b - a - 1"),
    (lambda: c + b + a, "c + b + a"),
    (lambda: a * a * b, "a^2*b"),
    (lambda: b ** 2, "b^2"),
    (lambda: (a + b) // 2, "floordiv(b + a, 2)"),
    (lambda: (2 * a) // 2, "a"),
    (lambda: (2 * a + 1) // 2, "a"),
    (lambda: a % 2 + a, "mod(a, 2) + a"),
    (lambda: max_dim(a, b), "max(a, b)"),
    (lambda: min_dim(a, 4) + 1, "min(a, 4) + 1"),
    (lambda: a // b, "floordiv(a, b)"),
    (lambda: (a * b) // b, "a"),
    (lambda: 3 * (a // 2), "3*floordiv(a, 2)"),
    (lambda: 3 - b, "- b + 3"),
])
def test_printing_as_jax(expr, text: str) -> None:
    assert str(expr()) == text


def test_constant_results_are_ints() -> None:
    assert a - a == 0 and type(a - a) is int
    assert (2 * a + 1) % 2 == 1 and type((2 * a + 1) % 2) is int
    assert max_dim(3, 4) == 4 and min_dim(a, 1) == 1


@pytest.mark.parametrize("expr,value", [
    (lambda: a == 4, False), (lambda: a != 4, True), (lambda: a >= 1, True),
    (lambda: a > 0, True), (lambda: a == a, True), (lambda: a + 1 > a, True),
    (lambda: 2 * a >= a, True), (lambda: a % 2 == 0, False), (lambda: a == 4.0, False),
    (lambda: max_dim(a, 4) >= a, True), (lambda: a >= min_dim(a, 4), True),
    (lambda: a // 2 <= a, True), (lambda: a % 3 < 3, True), (lambda: (a + 1) // 2 >= 1, True),
])
def test_decided_comparisons(expr, value: bool) -> None:
    assert expr() is value


@pytest.mark.parametrize("expr,text", [
    (lambda: a >= 2, "'a' >= '2'"), (lambda: a < 5, "'a' < '5'"),
    (lambda: a * b >= a, "'a*b' >= 'a'"),
])
def test_inconclusive_comparisons(expr, text: str) -> None:
    with pytest.raises(InconclusiveDimensionOperation,
                       match=re.escape(f"Symbolic dimension comparison {text} is "
                                       "inconclusive.\nThis error arises for comparison "
                                       "operations with shapes")):
        expr()


def test_int_of_a_symbol_is_inconclusive() -> None:
    with pytest.raises(InconclusiveDimensionOperation,
                       match="Symbolic dimension 'a' used in a context that requires a "
                             "constant"):
        int(a)
    assert not hasattr(a, "__index__")  # as JAX's _DimExpr
    assert hash(a) == hash(export.symbolic_shape("a", scope=a.scope)[0])
    assert jax.errors.InconclusiveDimensionOperation is InconclusiveDimensionOperation


def test_constraints_decide_more() -> None:
    d, e = export.symbolic_shape("d, e", constraints=("d >= 4", "e <= d", "d <= 10"))
    assert d >= 4 and d < 11 and e >= 1 and d >= e
    with pytest.raises(InconclusiveDimensionOperation) as info:
        d >= 5
    assert "Using symbolic scope" in str(info.value) and "  d >= 4" in str(info.value)


def test_scopes_do_not_mix() -> None:
    d, = export.symbolic_shape("d", constraints=("d >= 2",))
    with pytest.raises(ValueError, match="Invalid mixing of symbolic scopes for linear "
                                         "combination."):
        a + d
    assert not (a == d)


def test_evaluate() -> None:
    assert (2 * a + 1).evaluate({"a": 3}) == 7
    assert max_dim(a, b).evaluate({"a": 3, "b": 5}) == 5
    assert (a // 2 + a % 2).evaluate({"a": 7}) == 4
    assert ((a - 9) // 4).evaluate({"a": 3}) == -2  # floor division, as dimensions divide


def test_symbolic_shape_specs() -> None:
    assert str(export.symbolic_shape("b, 4")) == "(b, 4)"
    assert str(export.symbolic_shape("(b, 2*b+1, c)")) == "(b, 2*b + 1, c)"
    assert str(export.symbolic_shape(
        "a, b, floordiv(a, 2), mod(b, 3), max(a, b), min(a, 2), a^2, 2*a-1")) == \
        "(a, b, floordiv(a, 2), mod(b, 3), max(a, b), min(a, 2), a^2, 2*a - 1)"
    assert export.symbolic_shape("_, b", like=(3, None))[0] == 3
    assert len(export.symbolic_shape("b, ...", like=(3, 4, 5))) == 3
    assert export.is_symbolic_dim(a) and not export.is_symbolic_dim(3)


@pytest.mark.parametrize("spec,message", [
    ("a, b+", "syntax error in symbolic shape 'a, b+' in dimension 1: expecting one of "
              "{NAME, MINUS, NUMBER} but found ENDMARKER. Parsed 'a, ', remaining 'b+'."),
    ("a, 1.5", "syntax error in symbolic shape 'a, 1.5' in dimension 1: expecting integer, "
               "found 1.5. Parsed 'a, ', remaining '1.5'."),
])
def test_syntax_errors_as_jax(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        export.symbolic_shape(spec)
    assert str(info.value) == message


def test_bad_constraint() -> None:
    with pytest.raises(ValueError, match="Constraint parsing error: must contain one of '==' "
                                         "or '>=' or '<='"):
        export.symbolic_shape("a", constraints=("a > 2",))


def test_symbolic_args_specs() -> None:
    specs = export.symbolic_args_specs((np.ones((3, 4)), np.ones(5)), ("b, 4", "c"))
    assert repr(specs) == ("(ShapeDtypeStruct(shape=(b, 4), dtype=float64), "
                           "ShapeDtypeStruct(shape=(c,), dtype=float64))")
    assert specs[0].shape[0].scope is specs[1].shape[0].scope
    assert str(export.symbolic_args_specs(np.ones((3, 4)), "_, b").shape) == "(3, b)"


def test_jaxprs_print_symbolic_shapes() -> None:
    """`make_jaxpr` with symbolic shapes prints JAX's jaxprs."""
    x = jax.ShapeDtypeStruct((a, 4), np.float32)
    assert str(jax.make_jaxpr(lambda x: x * 2)(x)) == \
        "{ lambda ; a:f32[a,4]. let b:f32[a,4] = mul a 2.0:f32[] in (b,) }"
    mean = jax.make_jaxpr(lambda x: jax.numpy.mean(x, axis=0))(x)
    assert "dim_as_value[dim=a]" in str(mean)
    joined = jax.make_jaxpr(lambda x: jax.numpy.concatenate([x, x]).reshape(
        (2 * x.shape[0] * 4,)))(x)
    assert str(joined) == (
        "{ lambda ; a:f32[a,4]. let\n    b:f32[2*a,4] = concatenate[dimension=0] a a\n"
        "    c:f32[8*a] = reshape[dimensions=None new_sizes=(8*a,) sharding=None] b\n"
        "  in (c,) }")


def test_dimension_expressions_in_scope_constraints_module_api() -> None:
    scope = export.SymbolicScope(("a >= 2",))
    x, = export.symbolic_shape("x", scope=scope)
    assert x.scope is scope
    assert "with constraints:\n  a >= 2" in str(scope)
    assert shape_poly.all_dim_vars([(x, 3), (2 * x,)]) == ["x"]
