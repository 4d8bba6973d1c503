"""Shared and large nested jaxprs print first, as `let name = { lambda ... } in`, as in JAX.

JAX's printer lifts a nested jaxpr out of the equation params when the same jaxpr object is
held more than once (or sits in a jaxpr that is itself visited more than once) and when it has
more than ten equations; params then name it. Which jaxprs are one object is decided by the
tracing caches (a checkpointed body, a scatter's update jaxpr, a reduce computation) and by
the context they trace in: a transpose rule traces its own jaxprs. The golden programs in
`golden/shared_jaxprs.txt` were printed by real JAX 0.10.2; the hand-built jaxprs below pin
the naming rules (`name` params, suffixes, variables skipping the lifted names), with the
texts JAX's printer gives for the same structures.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.core import core
from justjax._src.core import jaxpr as jaxpr_module
from justjax._src.core.avals import ShapedArray
from justjax._src.lax import elementwise

GOLDEN_PATH = pathlib.Path(__file__).parent / "golden" / "shared_jaxprs.txt"


def _parse_golden(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The prelude and the (title, source, jaxpr text) programs of the golden file."""
    sections = re.split(r"^#### ", text, flags=re.MULTILINE)[1:]
    prelude = ""
    programs = []
    for section in sections:
        head, body = section.split("\n", 1)
        if head == "prelude":
            prelude = body
            continue
        title = head.removeprefix("program: ")
        source, jaxpr_text = body.split("---- jaxpr\n")
        programs.append((title, source, jaxpr_text.removesuffix("\n")))
    return prelude, programs


PRELUDE, PROGRAMS = _parse_golden(GOLDEN_PATH.read_text())


def _run(jax_module, source: str) -> str:
    namespace = {"jax": jax_module, "jnp": jax_module.numpy, "lax": jax_module.lax, "np": np}
    exec(PRELUDE, namespace)
    exec(source, namespace)
    return str(jax_module.make_jaxpr(namespace["fun"])(*namespace["args"]))


def test_golden_file_has_programs_that_lift_jaxprs() -> None:
    lifting = [title for title, _, text in PROGRAMS if text.startswith("let ")]
    assert len(PROGRAMS) >= 30 and len(lifting) >= 25


@pytest.mark.parametrize("title,source,expected", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_jaxpr_matches_jax(title: str, source: str, expected: str) -> None:
    assert _run(jax, source) == expected


@pytest.mark.needs_jax
@pytest.mark.parametrize("title,source,expected", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_golden_is_what_real_jax_prints(title: str, source: str, expected: str) -> None:
    real_jax = pytest.importorskip("jax")
    assert _run(real_jax, source) == expected


# ---------------------------------------------------------------------------------------------
# Hand-built jaxprs: a `call` primitive holding jaxprs in its params, some with a `name` param
# as JAX's jit equations have.

class _Kit:
    """Builds jaxprs with justjax's core; `_JaxKit` builds the same with JAX's."""

    def __init__(self) -> None:
        self.aval = ShapedArray((), np.dtype(np.float32))
        self.sin = elementwise.sin_p
        self.call = core.Primitive("call")

    def var(self, aval):
        return jaxpr_module.Var(aval)

    def eqn(self, invars, outvars, primitive, params):
        return jaxpr_module.JaxprEqn(invars, outvars, primitive, params)

    def jaxpr(self, invars, outvars, eqns):
        return jaxpr_module.Jaxpr([], invars, outvars, eqns)

    def closed(self, jaxpr):
        return jaxpr_module.ClosedJaxpr(jaxpr, [])


class _JaxKit(_Kit):
    def __init__(self, real_core, real_lax) -> None:
        self.core = real_core
        self.aval = real_core.ShapedArray((), np.dtype(np.float32))
        self.sin = real_lax.sin_p
        self.call = real_core.Primitive("call")

    def var(self, aval):
        return self.core.Var(aval)

    def eqn(self, invars, outvars, primitive, params):
        return self.core.new_jaxpr_eqn(invars, outvars, primitive, params, self.core.no_effects)

    def jaxpr(self, invars, outvars, eqns):
        return self.core.Jaxpr([], invars, outvars, eqns)

    def closed(self, jaxpr):
        return self.core.ClosedJaxpr(jaxpr, [])


def _hand_built(kit, name: str):
    def body(n: int = 1):
        x = y = kit.var(kit.aval)
        eqns = []
        for _ in range(n):
            z = kit.var(kit.aval)
            eqns.append(kit.eqn([y], [z], kit.sin, {}))
            y = z
        return kit.jaxpr([x], [y], eqns)

    def calls(*param_dicts):
        x = y = kit.var(kit.aval)
        eqns = []
        for params in param_dicts:
            z = kit.var(kit.aval)
            eqns.append(kit.eqn([y], [z], kit.call, params))
            y = z
        return kit.jaxpr([x], [y], eqns)

    a, b, c, d = body(), body(2), body(), body()
    if name == "lambda":
        return calls(dict(name="<lambda>", jaxpr=a), dict(name="<lambda>", jaxpr=a))
    if name == "suffixes":
        once = [dict(name="f", jaxpr=a), dict(name="f", jaxpr=b), dict(jaxpr=c),
                dict(name="jaxpr", jaxpr=d)]
        return calls(*once, *once)
    if name == "variables_skip_lifted_names":
        return calls(dict(name="b", jaxpr=a), dict(name="b", jaxpr=a),
                     dict(name="c", jaxpr=c), dict(name="c", jaxpr=c))
    if name == "first_name_wins":
        return calls(dict(jaxpr=a), dict(name="g", jaxpr=a),
                     dict(name="h", jaxpr=c), dict(name="k", jaxpr=c))
    if name == "nested_in_a_lifted_jaxpr":
        outer = calls(dict(jaxpr=a), dict(jaxpr=body()))
        return calls(dict(jaxpr=outer), dict(jaxpr=outer))
    if name == "tuples":
        return calls(dict(branches=(a, kit.closed(a), b), other=(1, 2)))
    if name == "name_collision":
        once = [dict(jaxpr=a), dict(name="jaxpr1", jaxpr=c), dict(jaxpr=d)]
        return calls(*once, *once)
    if name == "more_than_ten_equations":
        return calls(dict(jaxpr=body(11)), dict(jaxpr=body(10)))
    raise KeyError(name)


HAND_BUILT = {
    "lambda": """\
let lambda = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = call[jaxpr=lambda name=<lambda>] c
    e:f32[] = call[jaxpr=lambda name=<lambda>] d
  in (e,) }""",
    "suffixes": """\
let f = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
let f1 = { lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) } in
let jaxpr = { lambda ; g:f32[]. let h:f32[] = sin g in (h,) } in
let jaxpr1 = { lambda ; i:f32[]. let j:f32[] = sin i in (j,) } in
{ lambda ; k:f32[]. let
    l:f32[] = call[jaxpr=f name=f] k
    m:f32[] = call[jaxpr=f1 name=f] l
    n:f32[] = call[jaxpr=jaxpr] m
    o:f32[] = call[jaxpr=jaxpr1 name=jaxpr] n
    p:f32[] = call[jaxpr=f name=f] o
    q:f32[] = call[jaxpr=f1 name=f] p
    r:f32[] = call[jaxpr=jaxpr] q
    s:f32[] = call[jaxpr=jaxpr1 name=jaxpr] r
  in (s,) }""",
    "variables_skip_lifted_names": """\
let b = { lambda ; a:f32[]. let d:f32[] = sin a in (d,) } in
let c = { lambda ; e:f32[]. let f:f32[] = sin e in (f,) } in
{ lambda ; g:f32[]. let
    h:f32[] = call[jaxpr=b name=b] g
    i:f32[] = call[jaxpr=b name=b] h
    j:f32[] = call[jaxpr=c name=c] i
    k:f32[] = call[jaxpr=c name=c] j
  in (k,) }""",
    "first_name_wins": """\
let g = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
let h = { lambda ; c:f32[]. let d:f32[] = sin c in (d,) } in
{ lambda ; e:f32[]. let
    f:f32[] = call[jaxpr=g] e
    i:f32[] = call[jaxpr=g name=g] f
    j:f32[] = call[jaxpr=h name=h] i
    k:f32[] = call[jaxpr=h name=k] j
  in (k,) }""",
    # The outer jaxpr is visited twice, so is everything in it: the jaxprs it holds once are
    # lifted too, after it (breadth-first order), and it refers to them by name.
    "nested_in_a_lifted_jaxpr": """\
let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = call[jaxpr=jaxpr1] a
    c:f32[] = call[jaxpr=jaxpr2] b
  in (c,) } in
let jaxpr1 = { lambda ; d:f32[]. let e:f32[] = sin d in (e,) } in
let jaxpr2 = { lambda ; f:f32[]. let g:f32[] = sin f in (g,) } in
{ lambda ; h:f32[]. let
    i:f32[] = call[jaxpr=jaxpr] h
    j:f32[] = call[jaxpr=jaxpr] i
  in (j,) }""",
    "tuples": """\
let jaxpr = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = call[
      branches=(
        jaxpr
        jaxpr
        { lambda ; e:f32[]. let f:f32[] = sin e; g:f32[] = sin f in (g,) }
      )
      other=(1, 2)
    ] c
  in (d,) }""",
    # JAX's suffixes can repeat a name another jaxpr was given (here `jaxpr1`).
    "name_collision": """\
let jaxpr = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
let jaxpr1 = { lambda ; c:f32[]. let d:f32[] = sin c in (d,) } in
let jaxpr1 = { lambda ; e:f32[]. let f:f32[] = sin e in (f,) } in
{ lambda ; g:f32[]. let
    h:f32[] = call[jaxpr=jaxpr] g
    i:f32[] = call[jaxpr=jaxpr1 name=jaxpr1] h
    j:f32[] = call[jaxpr=jaxpr1] i
    k:f32[] = call[jaxpr=jaxpr] j
    l:f32[] = call[jaxpr=jaxpr1 name=jaxpr1] k
    m:f32[] = call[jaxpr=jaxpr1] l
  in (m,) }""",
    "more_than_ten_equations": """\
let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
  in (l,) } in
{ lambda ; m:f32[]. let
    n:f32[] = call[jaxpr=jaxpr] m
    o:f32[] = call[
      jaxpr={ lambda ; p:f32[]. let
          q:f32[] = sin p
          r:f32[] = sin q
          s:f32[] = sin r
          t:f32[] = sin s
          u:f32[] = sin t
          v:f32[] = sin u
          w:f32[] = sin v
          x:f32[] = sin w
          y:f32[] = sin x
          z:f32[] = sin y
        in (z,) }
    ] n
  in (o,) }""",
}


@pytest.mark.parametrize("name", sorted(HAND_BUILT))
def test_hand_built_jaxpr_prints_as_in_jax(name: str) -> None:
    assert str(_hand_built(_Kit(), name)) == HAND_BUILT[name]


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(HAND_BUILT))
def test_hand_built_golden_is_what_real_jax_prints(name: str) -> None:
    pytest.importorskip("jax")
    from jax._src import core as real_core
    from jax._src.lax import lax as real_lax
    assert str(_hand_built(_JaxKit(real_core, real_lax), name)) == HAND_BUILT[name]


# ---------------------------------------------------------------------------------------------
# Which jaxprs are one object: the caches behind the printed sharing.

def _update_jaxprs(closed) -> list:
    return [e.params["update_jaxpr"] for e in closed.jaxpr.eqns
            if e.primitive.name.startswith("scatter")]


def test_transpose_rules_trace_their_own_update_jaxprs() -> None:
    closed = jax.make_jaxpr(jax.grad(
        lambda x: x.at[jnp.array([0, 0])].mul(2.).at[jnp.array([1])].mul(3.).sum()))(jnp.ones(3))
    forward_1, forward_2, transposed_1, transposed_2 = _update_jaxprs(closed)
    assert forward_1 is forward_2 and transposed_1 is transposed_2
    assert forward_1 is not transposed_1


def test_reduce_computation_is_cached_per_types() -> None:
    comp = lambda a, b: a + b * b  # noqa: E731
    closed = jax.make_jaxpr(lambda x, y: (lax.reduce(x, 0., comp, (0,)),
                                          lax.reduce(x, 0., comp, (0,)),
                                          lax.reduce(y, 0, comp, (0,))))(
        jnp.ones(3), jnp.ones(3, jnp.int32))
    first, second, ints = [e.params["jaxpr"] for e in closed.jaxpr.eqns
                           if e.primitive.name == "reduce"]
    assert first is second and first is not ints


def test_unhashable_scatter_apply_function_is_traced_afresh() -> None:
    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return jnp.sin(x)

    fun = Unhashable()
    closed = jax.make_jaxpr(lambda x: x.at[jnp.array([0])].apply(fun).at[
        jnp.array([1])].apply(fun))(jnp.ones(3))
    first, second = _update_jaxprs(closed)
    assert first is not second
    assert not str(closed).startswith("let ")


def test_equation_context_nests_and_unwinds_on_errors() -> None:
    assert not jaxpr_module.in_equation_context()
    with pytest.raises(ZeroDivisionError):
        with jaxpr_module.equation_context():
            with jaxpr_module.equation_context():
                assert jaxpr_module.in_equation_context()
            assert jaxpr_module.in_equation_context()
            1 / 0
    assert not jaxpr_module.in_equation_context()


def test_equations_print_alone_without_lifting() -> None:
    g = jax.checkpoint(jnp.sin)
    closed = jax.make_jaxpr(lambda x: g(g(x)))(1.)
    assert str(closed).startswith("let jaxpr = { lambda ; a:f32[]. let b:f32[] = sin a")
    # An equation printed on its own has no top level to lift to.
    assert "jaxpr={ lambda" in str(closed.jaxpr.eqns[0])
