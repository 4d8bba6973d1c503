"""Jaxprs: variables, literals, equations, (closed) jaxprs, evaluation, type checking, printing."""
from __future__ import annotations

import collections
import functools
import itertools
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from justjax._src import source_info_util
from justjax._src.compilation import caches
from justjax._src.config import config
from justjax._src.core import pretty as pp
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive, abstract_eval_rules

_var_ids = itertools.count()


class Var:
    """A variable of a jaxpr. Identity is object identity; names are given when printing."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var(id={self.id}):{self.aval.str_short()}"


class DropVar(Var):
    """An equation output nothing reads; prints as `_`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class Literal:
    """A scalar constant written inline in a jaxpr: `2.0:f32[]`."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray) -> None:
        self.val = val
        self.aval = aval

    def value_str(self) -> str:
        if np.shape(self.val):
            return "[...]"
        return str(np.asarray(self.val).item())

    def __repr__(self) -> str:
        return f"Literal({self.value_str()})"


Atom = Var | Literal


@dataclass(eq=False)
class JaxprEqn:
    """`outvars = primitive[params] invars`."""

    invars: list[Atom]
    outvars: list[Var]
    primitive: Primitive
    params: dict[str, Any]
    effects: frozenset = frozenset()
    source_info: Any = None

    def replace(self, **changes: Any) -> JaxprEqn:
        fields_ = dict(invars=self.invars, outvars=self.outvars, primitive=self.primitive,
                       params=self.params, effects=self.effects, source_info=self.source_info)
        fields_.update(changes)
        return JaxprEqn(**fields_)

    def __str__(self) -> str:
        return _pp_eqn(self, PrettyContext()).format()

    def __repr__(self) -> str:
        return str(self)


@dataclass(eq=False)
class Jaxpr:
    """A typed, first-order program: `{ lambda constvars ; invars. let eqns in (outvars) }`."""

    constvars: list[Var]
    invars: list[Var]
    outvars: list[Atom]
    eqns: list[JaxprEqn]
    effects: frozenset = frozenset()
    debug_info: Any = None

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def replace(self, **changes: Any) -> Jaxpr:
        fields_ = dict(constvars=self.constvars, invars=self.invars, outvars=self.outvars,
                       eqns=self.eqns, effects=self.effects, debug_info=self.debug_info)
        fields_.update(changes)
        return Jaxpr(**fields_)

    def pretty_print(self, width: int = 80) -> str:
        return pp_toplevel_jaxpr(self).format(width)

    def __str__(self) -> str:
        return self.pretty_print()

    __repr__ = __str__


@dataclass(eq=False)
class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    jaxpr: Jaxpr
    consts: list[Any] = field(default_factory=list)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    @property
    def literals(self) -> list[Any]:
        return self.consts

    @property
    def effects(self) -> frozenset:
        return self.jaxpr.effects

    def map_jaxpr(self, f: Callable[[Jaxpr], Jaxpr]) -> ClosedJaxpr:
        return ClosedJaxpr(f(self.jaxpr), self.consts)

    def pretty_print(self, width: int = 80) -> str:
        return self.jaxpr.pretty_print(width)

    def __str__(self) -> str:
        return self.pretty_print()

    __repr__ = __str__


# ---------------------------------------------------------------------------------------------
# The equation context. JAX evaluates and transposes the equations of an existing jaxpr inside
# each equation's own context, and that context is part of the key of JAX's tracing caches
# (the update jaxpr of a scatter, the computation of a reduce): a jaxpr a transpose rule traces
# is therefore a different object from the one user code traced, while all jaxprs traced
# inside equation contexts are one object again. Printing shows this, since a jaxpr used
# twice is lifted out as `let jaxpr = ... in`.

class _EquationDepth(threading.local):
    depth = 0


_equation = _EquationDepth()


class equation_context:
    """Marks the evaluation or transposition of an existing jaxpr's equations (per thread)."""

    def __enter__(self) -> None:
        _equation.depth += 1

    def __exit__(self, *exc: Any) -> None:
        _equation.depth -= 1


def in_equation_context() -> bool:
    """Whether code runs inside `equation_context` (part of tracing caches' keys)."""
    return _equation.depth > 0


def tracing_cache(fun: Callable[..., Any], maxsize: int = 512) -> Callable[..., Any]:
    """Memoizes a function tracing a jaxpr, as JAX's caches do: keyed on its arguments, the
    config that changes tracing and whether it runs in an equation context. Calls with
    unhashable arguments are traced afresh."""
    cached = functools.lru_cache(maxsize)(lambda _context, *args: fun(*args))
    caches.register_cache(cached.cache_clear)

    @functools.wraps(fun)
    def wrapper(*args: Any) -> Any:
        context = (in_equation_context(), config.trace_context())
        try:
            hash(args)
        except TypeError:
            return fun(*args)
        return cached(context, *args)

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return wrapper


# ---------------------------------------------------------------------------------------------
# Evaluation.

def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Runs `jaxpr` by binding each equation again, so it re-traces under any current transform
    (in an equation context, as JAX does)."""
    env: dict[Var, Any] = {}

    def read(atom: Atom) -> Any:
        return atom.val if isinstance(atom, Literal) else env[atom]

    def write(var: Var, value: Any) -> None:
        if not isinstance(var, DropVar):
            env[var] = value

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        write(var, value)
    for var, value in zip(jaxpr.invars, args, strict=True):
        write(var, value)
    with equation_context():
        for eqn in jaxpr.eqns:
            with source_info_util.user_context(eqn.source_info):
                outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for var, value in zip(eqn.outvars, outs, strict=True):
                write(var, value)
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ---------------------------------------------------------------------------------------------
# Building jaxprs by hand (what libraries rewriting jaxprs use).

def gensym(suffix: str = "") -> Callable[[ShapedArray], Var]:
    """A maker of fresh variables: `gensym()(aval)`."""
    return Var


def new_jaxpr_eqn(invars: Sequence[Atom], outvars: Sequence[Var], primitive: Primitive,
                  params: dict[str, Any], effects: frozenset = frozenset(),
                  source_info: Any = None, ctx: Any = None) -> JaxprEqn:
    """An equation `outvars = primitive[params] invars`."""
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params), frozenset(effects),
                    source_info)


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs held by `jaxpr`'s equations' params (one level down)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


# ---------------------------------------------------------------------------------------------
# Type checking.

class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed (a bug in a transformation, never in user code)."""


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    # Weak types may differ between a binder and a use, as in JAX's typecompat.
    return a.shape == b.shape and a.dtype == b.dtype


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Checks that every variable is bound once before use and every equation's types agree."""
    defined: set[Var] = set()

    def bind_var(var: Var, where: str) -> None:
        if isinstance(var, DropVar):
            return
        if var in defined:
            raise JaxprTypeError(f"variable {var!r} bound twice ({where})")
        defined.add(var)

    def read(atom: Atom, where: str) -> ShapedArray:
        if isinstance(atom, Literal):
            return atom.aval
        if atom not in defined:
            raise JaxprTypeError(f"variable {atom!r} used before it is bound ({where})")
        return atom.aval

    for var in jaxpr.constvars:
        bind_var(var, "constvar")
    for var in jaxpr.invars:
        bind_var(var, "invar")
    for eqn in jaxpr.eqns:
        where = f"in equation {eqn}"
        in_avals = [read(atom, where) for atom in eqn.invars]
        if eqn.primitive in abstract_eval_rules:
            outs = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            if len(outs) != len(eqn.outvars):
                raise JaxprTypeError(f"{len(outs)} results for {len(eqn.outvars)} outvars {where}")
            for var, aval in zip(eqn.outvars, outs, strict=True):
                if not _types_match(var.aval, aval):
                    raise JaxprTypeError(f"outvar type {var.aval.str_short()} differs from "
                                         f"inferred {aval.str_short()} {where}")
        for var in eqn.outvars:
            bind_var(var, where)
    for atom in jaxpr.outvars:
        read(atom, "jaxpr outvars")


# ---------------------------------------------------------------------------------------------
# Printing, as JAX prints jaxprs.

def encode_name(n: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba' (JAX's names have no 'aa')."""
    letters = ""
    while not letters or n:
        n, digit = divmod(n, 26)
        letters = chr(ord("a") + digit) + letters
    return letters


def unused_outputs(jaxpr: Jaxpr) -> set[Var]:
    """Equation outputs nothing reads: JAX prints them as `_` in the top-level jaxpr."""
    unused: set[Var] = set()
    used = {atom for atom in jaxpr.outvars if isinstance(atom, Var)}
    for eqn in reversed(jaxpr.eqns):
        unused.update(v for v in eqn.outvars if v not in used)
        used.update(atom for atom in eqn.invars if isinstance(atom, Var))
    return unused


class PrettyContext:
    """Names variables in order of first appearance, uniquely across nested jaxprs; the
    `unused` ones print as `_` and take no name. `shared_jaxprs` maps each jaxpr printed once
    up front (`let name = { lambda ... } in`) to its name; variables never take those names."""

    def __init__(self, unused: set[Var] = frozenset()) -> None:
        self.names: dict[Var, str] = {}
        self.shared_jaxprs: dict[Jaxpr, str] = {}
        self.unused = unused
        self._fresh = 0

    def name(self, var: Var) -> str:
        if isinstance(var, DropVar) or var in self.unused:
            return "_"
        name = self.names.get(var)
        if name is None:
            name = self.names[var] = self._fresh_name()
        return name

    def suggest_same_var_names(self, for_vars: Sequence[Atom], like_vars: Sequence[Atom]
                               ) -> None:
        """Names each not yet named variable of `for_vars` (an inner jaxpr's binders) like
        the variable of `like_vars` it stands for (the equation's), as JAX does for calls;
        a variable passed twice lends its name only once."""
        if len(for_vars) != len(like_vars):
            return
        used_like: set[Var] = set()
        for for_var, like_var in zip(for_vars, like_vars):
            if (isinstance(like_var, Var) and like_var not in used_like
                    and isinstance(for_var, Var) and for_var not in self.names):
                used_like.add(like_var)
                self.names[for_var] = self.name(like_var)

    def _fresh_name(self) -> str:
        # A lifted jaxpr named `b` (after a jit of a function `b`) leaves `b` out of the
        # variable names, as JAX does.
        while True:
            name = encode_name(self._fresh)
            self._fresh += 1
            if not self.shared_jaxprs or name not in self.shared_jaxprs.values():
                return name


def _pp_atom(atom: Atom, context: PrettyContext) -> str:
    if isinstance(atom, Literal):
        return f"{atom.value_str()}:{atom.aval.str_short()}"
    return context.name(atom)


def pp_vars(atoms: Sequence[Atom], context: PrettyContext, *, separator: str = "",
            print_shapes: bool = False) -> pp.Doc:
    docs = []
    for atom in atoms:
        name = _pp_atom(atom, context)
        if print_shapes and not isinstance(atom, Literal):
            name = f"{name}:{atom.aval.str_short()}"
        docs.append(pp.text(name))
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), docs)))


def _pp_param_value(value: Any, context: PrettyContext) -> pp.Doc:
    if type(value) is tuple and value and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in value):
        jaxprs = [j.jaxpr if isinstance(j, ClosedJaxpr) else j for j in value]
        return pp.group(pp.concat([
            pp.nest(2, pp.concat([pp.text("("), pp.brk(""),
                                  pp.join(pp.brk(), [pp_jaxpr(j, context) for j in jaxprs])])),
            pp.brk(""), pp.text(")")]))
    if isinstance(value, Jaxpr):
        return pp_jaxpr(value, context)
    if isinstance(value, ClosedJaxpr):
        return pp_jaxpr(value.jaxpr, context)
    if isinstance(value, np.dtype):
        return pp.text(value.name)
    if isinstance(value, frozenset):
        return pp.text(f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})")
    # Object addresses vary from run to run; JAX masks them so printed jaxprs are stable.
    return pp.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(value)))


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def pp_params(params: dict[str, Any], context: PrettyContext, sort: bool = True) -> pp.Doc:
    if not params:
        return pp.NIL
    keys = sorted(params) if sort else list(params)
    pairs = [pp.text(f"{key}=") + _pp_param_value(params[key], context) for key in keys]
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), pairs)])),
        pp.brk(""), pp.text("]")]))


pp_eqn_rules: dict[Primitive, Callable[[JaxprEqn, PrettyContext], pp.Doc]] = {}


def _pp_eqn(eqn: JaxprEqn, context: PrettyContext) -> pp.Doc:
    rule = pp_eqn_rules.get(eqn.primitive)
    if rule is not None:
        return rule(eqn, context)
    return pp_eqn_default(eqn, context, eqn.params)


def pp_eqn_default(eqn: JaxprEqn, context: PrettyContext, params: dict[str, Any],
                   sort_params: bool = True) -> pp.Doc:
    lhs = pp_vars(eqn.outvars, context, print_shapes=True)
    rhs = [pp.text(eqn.primitive.name), pp_params(params, context, sort_params),
           pp.text(" ") + pp_vars(eqn.invars, context)]
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = "), *rhs])
    return pp.concat(rhs)


def _pp_skeleton(jaxpr: Jaxpr, context: PrettyContext) -> pp.Doc:
    constvars = pp_vars(jaxpr.constvars, context, print_shapes=True)
    invars = pp_vars(jaxpr.invars, context, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [_pp_eqn(e, context) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, context, separator=","),
                         pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
        pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.text("in "), outvars])) + pp.text(" }"))


def pp_jaxpr(jaxpr: Jaxpr, context: PrettyContext) -> pp.Doc:
    """`jaxpr` as `{ lambda ... }`, or by its name where it was lifted to the top."""
    shared = context.shared_jaxprs.get(jaxpr)
    if shared is not None:
        return pp.text(shared)
    return _pp_skeleton(jaxpr, context)


# A nested jaxpr with more equations than this is lifted to the top even when used once.
_LIFT_ABOVE_EQNS = 10


def jaxprs_in_params(params: dict[str, Any]) -> list[Jaxpr]:
    """The jaxprs held by equation params, directly or in tuples (ClosedJaxprs unwrapped)."""
    found = []
    for value in params.values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Jaxpr):
                found.append(item)
            elif isinstance(item, ClosedJaxpr):
                found.append(item.jaxpr)
    return found


def _shared_jaxprs(top: Jaxpr) -> dict[Jaxpr, str]:
    """The nested jaxprs JAX's printer lifts to the top, in first-visit (breadth-first) order,
    with their names.

    A jaxpr is lifted when it is visited more than once (one object held by several params,
    or nested in a jaxpr that is itself visited repeatedly), and any nested jaxpr with more
    than `_LIFT_ABOVE_EQNS` equations. Lifted jaxprs are named after the `name` param of the
    equation first holding them (`<lambda>` as `lambda`), else `jaxpr`; repeated names get
    the count of earlier uses as a suffix (`jaxpr`, `jaxpr1`, `jaxpr2`).
    """
    counts: dict[Jaxpr, int] = {}
    names: dict[Jaxpr, str] = {}
    queue = collections.deque([top])
    while queue:
        jaxpr = queue.popleft()
        counts[jaxpr] = counts.get(jaxpr, 0) + 1
        if jaxpr is not top and len(jaxpr.eqns) > _LIFT_ABOVE_EQNS:
            counts[jaxpr] += 1
        for eqn in jaxpr.eqns:
            subjaxprs = jaxprs_in_params(eqn.params)
            queue.extend(subjaxprs)
            name = eqn.params.get("name")
            if name is not None:
                for sub in subjaxprs:
                    names.setdefault(sub, str(name).strip("<>"))
    name_counts: collections.Counter[str] = collections.Counter()
    shared: dict[Jaxpr, str] = {}
    for jaxpr, count in counts.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        uses = name_counts[name]
        name_counts[name] += 1
        if uses:
            name += str(uses)
            name_counts[name] += 1
        shared[jaxpr] = name
    return shared


def pp_toplevel_jaxpr(jaxpr: Jaxpr) -> pp.Doc:
    """`jaxpr` as JAX prints it: each lifted nested jaxpr first, as
    `let name = { lambda ... } in` on lines of its own, then `jaxpr` itself, whose params
    refer to the lifted ones by name. Unused outputs of `jaxpr`'s equations print as `_`."""
    context = PrettyContext(unused_outputs(jaxpr))
    context.shared_jaxprs.update(_shared_jaxprs(jaxpr))
    docs = [pp.concat([pp.text(f"let {name} = "), _pp_skeleton(shared, context),
                       pp.text(" in"), pp.brk()])
            for shared, name in context.shared_jaxprs.items()]
    docs.append(pp_jaxpr(jaxpr, context))
    return pp.concat(docs)
