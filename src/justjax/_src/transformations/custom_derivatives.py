"""`custom_jvp` and `custom_vjp`: functions whose derivatives the user defines.

Calling one binds a primitive (`custom_jvp_call`, `custom_vjp_call`) through the current
trace's `process_custom_jvp_call(primitive, fun, jvp, args, *, symbolic_zeros)` or
`process_custom_vjp_call(primitive, fun, fwd, bwd, args, *, symbolic_zeros)`, handing it
Python callables on flat lists of leaves:

- `fun(*args) -> outs`: the function itself; evaluation simply calls it.
- `jvp(primals, tangents) -> (primal_outs, tangent_outs)`: the user's rule; JVPTrace calls it
  instead of differentiating `fun`. Tangents may be `ad.Zero` when `symbolic_zeros` is set.
- `fwd(primals, which_linear) -> (residuals, primal_outs)` and `bwd(residuals, cts) -> cts`
  (one per primal input; `ad.Zero` for none): JVPTrace calls `fwd` and stages `custom_lin`,
  which transposes by calling `bwd`.
- DynamicJaxprTrace stages one equation: `fun` traced to `call_jaxpr` (values it closes over
  become the leading `num_consts` operands) with the rules kept in the params, so that
  `eval_jaxpr` re-binding the equation (`Primitive.bind(*args, **params)`) rebuilds the
  callables and a staged call keeps its rule when its jaxpr is differentiated later.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core import pretty as pp
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import (ClosedJaxpr, JaxprEqn, PrettyContext, _pp_param_value,
                                     eval_jaxpr, pp_eqn_rules, pp_vars)
from justjax._src.interpreters import ad, lowering, staging
from justjax._src.interpreters import linear_util as lu
from justjax._src.lax.structural import stop_gradient_p
from justjax._src.pytrees.treedef import keystr

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_jvp", "custom_vjp",
           "custom_vjp_primal_tree_values"]


# ---------------------------------------------------------------------------------------------
# What user rules see in place of a zero tangent or cotangent.

class SymbolicZero:
    """A zero tangent (or cotangent) passed to rules defined with `symbolic_zeros=True`:
    only its type is known. Attributes (`shape`, `dtype`, ...) are those of its `aval`."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return "SymbolicZero"

    def __getattr__(self, name: str) -> Any:
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(value: Any) -> SymbolicZero:
        return SymbolicZero(ad.tangent_aval(core.get_aval(value)))


@dataclasses.dataclass
class CustomVJPPrimal:
    """A primal argument of a custom_vjp `fwd` rule defined with `symbolic_zeros=True`:
    its `value`, and whether it is `perturbed` (differentiated)."""

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The values of a pytree of `CustomVJPPrimal`s (as `fwd` gets with `symbolic_zeros`)."""
    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_util.tree_map(value, tree)


def _to_user_zero(t: Any) -> Any:
    return SymbolicZero(t.aval) if type(t) is ad.Zero else t


def _aval_of(x: Any) -> ShapedArray:
    if type(x) in (SymbolicZero, ad.Zero):
        return x.aval
    if ad.is_float0(x):
        return ShapedArray(np.shape(x), dtypes.float0)
    return core.get_aval(x)


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


# ---------------------------------------------------------------------------------------------
# Flat callables: what the trace protocol passes around.

class FlatFun:
    """A user function or rule working on flat lists of leaves.

    `name` is what jaxprs print for it (`jvp=f_jvp`); `debug_info` (made when first asked
    for, since only staging needs it) names the function and its arguments in errors."""

    __slots__ = ("_call", "name", "_debug", "_debug_thunk")

    def __init__(self, call: Callable, name: str,
                 debug_thunk: Callable[[], staging.DebugInfo | None] | None = None) -> None:
        self._call = call
        self.name = name
        self._debug = None
        self._debug_thunk = debug_thunk

    def __call__(self, *args: Any) -> Any:
        return self._call(*args)

    @property
    def debug_info(self) -> staging.DebugInfo | None:
        if self._debug is None and self._debug_thunk is not None:
            self._debug = self._debug_thunk()
        return self._debug

    def __repr__(self) -> str:
        return self.name


def _src_info(fun: Callable) -> str:
    """`name at file:line`, as jaxpr debug info and error messages name a function."""
    name = staging.fun_name(fun)
    target = fun.func if isinstance(fun, functools.partial) else fun
    try:
        target = inspect.unwrap(target)
        return f"{name} at {inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]}"
    except (TypeError, OSError):
        return name


def _debug_info(traced_for: str, fun: Callable, args: tuple, static: Sequence[int]
                ) -> staging.DebugInfo:
    """Names the function and each flattened dynamic argument (`x`, `d['a']`)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for position, arg in enumerate(args):
        if position in static:
            continue
        top = params[position] if position < len(params) else f"args[{position}]"
        names.extend(top + keystr(path)
                     for path, _ in tree_util.tree_flatten_with_path(arg)[0])
    return staging.DebugInfo(traced_for, _src_info(fun), tuple(names))


class _ArgResolver:
    """Turns a call's arguments into positional ones, defaults filled in, as JAX passes them
    to the rules. The signature is read once per decorated function."""

    __slots__ = ("kind", "name", "signature", "simple_arity")

    def __init__(self, kind: str, fun: Callable, name: str) -> None:
        self.kind = kind
        self.name = name
        # functools.partial objects have an opaque signature in JAX.
        target = (lambda *a, **k: None) if isinstance(fun, functools.partial) else fun
        self.signature = inspect.signature(target)
        kinds = [p.kind for p in self.signature.parameters.values()]
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        # Calls with exactly these positional arguments need no binding at all.
        self.simple_arity = len(kinds) if all(k in positional for k in kinds) else -1

    def __call__(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and len(args) == self.simple_arity:
            return args
        try:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            passed = [k for k in bound.kwargs if k in kwargs]
            if passed:
                raise TypeError("The following keyword arguments could not be resolved to "
                                f"positions: {', '.join(passed)}")
        except TypeError as e:
            raise TypeError(f"The input arguments to the {self.kind}-decorated function "
                            f"{self.name} could not be resolved to positional-only arguments. "
                            f"Binding failed with the error:\n{e}") from e
        return bound.args


def _nondiff_positions(fun: Callable, nondiff_argnums: Sequence[int],
                       nondiff_argnames: Sequence[str]) -> tuple[int, ...]:
    positions = set(nondiff_argnums)
    if nondiff_argnames:
        params = list(inspect.signature(fun).parameters)
        positions.update(params.index(name) for name in nondiff_argnames if name in params)
    return tuple(sorted(positions))


def _with_static_args(fun: Callable, static: dict[int, Any], nargs: int) -> Callable:
    """`fun` taking only its dynamic arguments, the static ones (by position) filled in."""
    if not static:
        return fun

    def dynamic_fun(*dyn_args: Any) -> Any:
        it = iter(dyn_args)
        return fun(*[static[i] if i in static else next(it) for i in range(nargs)])

    return dynamic_fun


class _CallStore:
    """What one call learns from running its function or rules: output and residual trees."""

    __slots__ = ("fun_out", "rule_out", "res_tree")

    def __init__(self) -> None:
        self.fun_out: tuple[tree_util.PyTreeDef, list[ShapedArray]] | None = None
        self.rule_out: tuple[tree_util.PyTreeDef, list[ShapedArray]] | None = None
        self.res_tree: tree_util.PyTreeDef | None = None

    def out_tree(self) -> tree_util.PyTreeDef:
        return (self.fun_out or self.rule_out)[0]


def _flat_fun(fun: Callable, in_tree: tree_util.PyTreeDef, store: _CallStore, name: str,
              debug_thunk: Callable) -> FlatFun:
    def flat(*leaves: Any) -> list[Any]:
        out = fun(*tree_util.tree_unflatten(in_tree, leaves))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        store.fun_out = (out_tree, [_aval_of(x) for x in out_leaves])
        return out_leaves
    return FlatFun(flat, name, debug_thunk)


def _type_tree(tree: tree_util.PyTreeDef, avals: Sequence[ShapedArray]) -> str:
    shown = tree_util.tree_unflatten(tree, [a.str_short(short_dtypes=False) for a in avals])
    return str(shown).replace("'", "")


# ---------------------------------------------------------------------------------------------
# custom_jvp.

class custom_jvp:
    """A function with a custom JVP rule, used by forward and reverse mode instead of
    differentiating its implementation (`jax.custom_jvp`).

    Decorate the function, then define the rule with `defjvp`::

        @custom_jvp
        def f(x, y):
            return jnp.sin(x) * y

        @f.defjvp
        def f_jvp(primals, tangents):
            x, y = primals
            x_dot, y_dot = tangents
            return f(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot

    Args:
      fun: the function.
      nondiff_argnums: positions of arguments that are not differentiated (e.g. functions);
        the rule gets them first: `jvp(*nondiff_args, primals, tangents)`.
      nondiff_argnames: the same, by parameter name.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False
        self._resolver: _ArgResolver | None = None

    def __getattr__(self, name: str) -> Any:
        # As JAX: `def*` attributes of a wrapped custom function are reachable.
        fun = self.__dict__.get("fun")
        if fun is not None and name.startswith("def"):
            return getattr(fun, name)
        raise AttributeError(name)

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Sets the rule `jvp(primals, tangents) -> (primal_out, tangent_out)`.

        Args:
          jvp: the rule; `primals` and `tangents` are tuples with one entry per argument,
            the outputs pytrees of the function's output structure.
          symbolic_zeros: pass `SymbolicZero`s for tangents of undifferentiated inputs
            (otherwise they are arrays of zeros).
        Returns:
          `jvp`, so that `defjvp` can be used as a decorator.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument: `rule(tangent, primal_out, *primals)` gives that argument's
        contribution to the output tangent (None: the output does not depend on it)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            primal_out = self(*primals)
            zeros = tree_util.tree_map(ad.Zero.from_primal_value, primal_out)
            contributions = [rule(t, primal_out, *primals) if rule else zeros
                             for t, rule in zip(tangents, jvps)]
            tangent_out = tree_util.tree_map(_sum_tangents, primal_out, *contributions)
            return primal_out, tangent_out

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        primal_name = staging.fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {primal_name} using "
                                 "defjvp.")
        if self._resolver is None:
            self._resolver = _ArgResolver("custom_jvp", self.fun, primal_name)
        args = self._resolver(args, kwargs)
        rule_name = staging.fun_name(self.jvp)
        if self.nondiff_argnums:
            # Undifferentiated arguments are closed over by the function; stopping their
            # gradient keeps them out of any derivative, as JAX does.
            args = tuple(_stop_gradient(x) if i in self.nondiff_argnums else x
                         for i, x in enumerate(args))
            static = {i: args[i] for i in self.nondiff_argnums}
            dyn_args = tuple(x for i, x in enumerate(args) if i not in static)
            fun = _with_static_args(self.fun, static, len(args))
            static_args = list(static.values())
            user_jvp = self.jvp
            jvp = lambda primals, tangents: user_jvp(*static_args, primals, tangents)  # noqa: E731
        else:
            dyn_args, fun, jvp = args, self.fun, self.jvp
        args_flat, in_tree = tree_util.tree_flatten(dyn_args)
        store = _CallStore()
        user_fun = self.fun
        flat_fun = _flat_fun(fun, in_tree, store, primal_name,
                             lambda: _debug_info("custom_jvp fun", user_fun, args,
                                                 self.nondiff_argnums))
        flat_jvp = FlatFun(functools.partial(_call_jvp_rule, jvp, in_tree, store, primal_name,
                                             rule_name), rule_name)
        outs = custom_jvp_call_p.bind_with_trace(core.current_trace(), flat_fun, flat_jvp,
                                                 args_flat, symbolic_zeros=self.symbolic_zeros)
        return tree_util.tree_unflatten(store.out_tree(), outs)


def _stop_gradient(x: Any) -> Any:
    return tree_util.tree_map(
        lambda leaf: stop_gradient_p.bind(leaf) if isinstance(leaf, core.Tracer) else leaf, x)


def _sum_tangents(_: Any, first: Any, *rest: Any) -> Any:
    total = first
    for t in rest:
        total = ad.add_tangents(total, t)
    return total


def _call_jvp_rule(jvp: Callable, in_tree: tree_util.PyTreeDef, store: _CallStore,
                   primal_name: str, rule_name: str, primals: Sequence[Any],
                   tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Runs the user's rule on flat lists and checks what it returns, as JAX does."""
    py_primals = tree_util.tree_unflatten(in_tree, list(primals))
    py_tangents = tree_util.tree_unflatten(in_tree, [_to_user_zero(t) for t in tangents])
    pair = jvp(py_primals, py_tangents)
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise TypeError(f"Custom JVP rule {rule_name} for function {primal_name} must produce "
                        "a pair (list or tuple of length two) representing primal and tangent "
                        f"outputs, but got {pair}.")
    primals_out, out_tree = tree_util.tree_flatten(pair[0])
    tangents_out, tangent_tree = tree_util.tree_flatten(pair[1])
    if out_tree != tangent_tree:
        raise TypeError(f"Custom JVP rule {rule_name} for function {primal_name} must produce "
                        "primal and tangent outputs with equal container (pytree) structures, "
                        f"but got {out_tree} and {tangent_tree} respectively.")
    primal_avals = [_aval_of(x) for x in primals_out]
    if store.fun_out is not None:
        _check_rule_primals_match_fun(store.fun_out, out_tree, primal_avals, primal_name,
                                      rule_name)
    _check_tangent_types(primal_avals, [_aval_of(t) for t in tangents_out])
    store.rule_out = (out_tree, primal_avals)
    return primals_out, [_to_internal_zero(t, p) for t, p in zip(tangents_out, primal_avals)]


def _to_internal_zero(t: Any, primal_aval: ShapedArray) -> Any:
    if type(t) is SymbolicZero:
        return ad.Zero(t.aval)
    if ad.is_float0(t):
        return ad.Zero(ad.tangent_aval(primal_aval))
    return t


def _check_rule_primals_match_fun(fun_out: tuple, out_tree: tree_util.PyTreeDef,
                                  avals: list[ShapedArray], primal_name: str,
                                  rule_name: str) -> None:
    fun_tree, fun_avals = fun_out
    prefix = (f"Custom JVP rule {rule_name} for function {primal_name} must produce a pair "
              "(list or tuple of length two) where the first element represents the primal "
              "output (equal in value to the output of the custom_jvp-decorated function "
              f"{primal_name}, ")
    if fun_tree != out_tree:
        raise TypeError(
            prefix + "and in particular of the same container/pytree structure), but instead "
            "the JVP rule output's first element had container/pytree structure:\n"
            f"    {_type_tree(out_tree, avals)}\n"
            f"while the custom_jvp-decorated function {primal_name} had output "
            f"container/pytree structure:\n    {_type_tree(fun_tree, fun_avals)}.")
    if not all(map(_types_match, avals, fun_avals)):
        raise TypeError(
            prefix + "and in particular with leaves of the same shape/dtype), but instead the "
            "JVP rule output's first element had shapes/dtypes of:\n"
            f"    {_type_tree(out_tree, avals)}\n"
            f"while the custom_jvp-decorated function {primal_name} had output shapes/dtypes "
            f"of:\n    {_type_tree(fun_tree, fun_avals)}")


def _check_tangent_types(primal_avals: list[ShapedArray], tangent_avals: list[ShapedArray]
                         ) -> None:
    primals = [a.strip_weak_type() for a in primal_avals]
    expected = [ad.tangent_aval(a) for a in primals]
    got = [a.strip_weak_type() for a in tangent_avals]
    if all(map(_types_match, expected, got)):
        return
    if len(expected) == 1:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        "corresponding shapes and dtypes. Expected "
                        f"{expected[0].str_short(short_dtypes=False)} (tangent type of "
                        f"{primals[0].str_short(short_dtypes=False)}) but got "
                        f"{got[0].str_short(short_dtypes=False)}.")
    disagreements = "\n".join(
        f"  primal {p.str_short(short_dtypes=False)} with tangent "
        f"{t.str_short(short_dtypes=False)}, expecting tangent {e}"
        for p, e, t in zip(primals, expected, got) if e != t)
    raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                    f"corresponding shapes and dtypes, but got:\n{disagreements}")


# ---------------------------------------------------------------------------------------------
# custom_vjp.

class custom_vjp:
    """A function with a custom VJP rule, used by reverse mode instead of differentiating
    its implementation (`jax.custom_vjp`); forward mode (jvp) is not supported.

    Define the rule with `defvjp(fwd, bwd)`: `fwd` takes the function's arguments and returns
    `(output, residuals)`; `bwd(residuals, output_cotangent)` returns a tuple with one
    cotangent per argument (None for a zero cotangent)::

        @custom_vjp
        def f(x, y):
            return jnp.sin(x) * y

        def f_fwd(x, y):
            return f(x, y), (jnp.cos(x), jnp.sin(x), y)

        def f_bwd(res, g):
            cos_x, sin_x, y = res
            return (cos_x * g * y, sin_x * g)

        f.defvjp(f_fwd, f_bwd)

    Args:
      fun: the function.
      nondiff_argnums: positions of arguments that are not differentiated (they must not be
        traced values); `bwd` gets them first: `bwd(*nondiff_args, residuals, g)`.
      nondiff_argnames: the same, by parameter name.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False
        self.optimize_remat = False
        self._resolver: _ArgResolver | None = None

    def __getattr__(self, name: str) -> Any:
        fun = self.__dict__.get("fun")
        if fun is not None and name.startswith("def"):
            return getattr(fun, name)
        raise AttributeError(name)

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Sets the forward and backward rules.

        Args:
          fwd: `fwd(*args) -> (output, residuals)`.
          bwd: `bwd(residuals, output_cotangent) -> tuple of input cotangents`.
          symbolic_zeros: `fwd` gets each argument leaf as a `CustomVJPPrimal(value,
            perturbed)` and `bwd` gets `SymbolicZero`s for zero output cotangents.
          optimize_remat: JAX's experimental rematerialization optimization; accepted, and
            without effect on the results.
        """
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros")
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        primal_name = staging.fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {primal_name} using "
                                 "defvjp.")
        if self._resolver is None:
            self._resolver = _ArgResolver("custom_vjp", self.fun, primal_name)
        args = self._resolver(args, kwargs)
        fwd_name, bwd_name = staging.fun_name(self.fwd), staging.fun_name(self.bwd)
        if self.nondiff_argnums:
            for i in self.nondiff_argnums:
                _check_for_tracers(args[i])
            static = {i: args[i] for i in self.nondiff_argnums}
            dyn_args = tuple(x for i, x in enumerate(args) if i not in static)
            fun = _with_static_args(self.fun, static, len(args))
            fwd = _with_static_args(self.fwd, static, len(args))
            static_args = list(static.values())
            user_bwd = self.bwd
            bwd = lambda res, cts: user_bwd(*static_args, res, cts)  # noqa: E731
        else:
            dyn_args, fun, fwd, bwd = args, self.fun, self.fwd, self.bwd
        args_flat, in_tree = tree_util.tree_flatten(dyn_args)
        in_avals = [core.get_aval(x) for x in args_flat]
        store = _CallStore()
        user_fun = self.fun
        flat_fun = _flat_fun(fun, in_tree, store, primal_name,
                             lambda: _debug_info("custom_vjp fun", user_fun, args,
                                                 self.nondiff_argnums))
        flat_fwd = FlatFun(functools.partial(_call_fwd_rule, fwd, in_tree, store, primal_name,
                                             fwd_name, self.symbolic_zeros), fwd_name)
        flat_bwd = FlatFun(functools.partial(_call_bwd_rule, bwd, in_tree, in_avals, store,
                                             self.symbolic_zeros), bwd_name)
        outs = custom_vjp_call_p.bind_with_trace(core.current_trace(), flat_fun, flat_fwd,
                                                 flat_bwd, args_flat,
                                                 symbolic_zeros=self.symbolic_zeros)
        return tree_util.tree_unflatten(store.out_tree(), outs)


def _check_for_tracers(x: Any) -> None:
    if any(isinstance(leaf, core.Tracer) for leaf in tree_util.tree_leaves(x)):
        raise errors.UnexpectedTracerError(
            "Found a JAX Tracer object passed as an argument to a custom_vjp function in a "
            "position indicated by nondiff_argnums as non-differentiable. Tracers cannot be "
            "passed as non-differentiable arguments to custom_vjp functions; instead, "
            "nondiff_argnums should only be used for arguments that can't be or contain JAX "
            "tracers, e.g. function-valued arguments. In particular, array-valued arguments "
            "should typically not be indicated as nondiff_argnums.\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError")


def _call_fwd_rule(fwd: Callable, in_tree: tree_util.PyTreeDef, store: _CallStore,
                   primal_name: str, fwd_name: str, symbolic_zeros: bool,
                   primals: Sequence[Any], which_linear: Sequence[bool]
                   ) -> tuple[list[Any], list[Any]]:
    """Runs the user's fwd on flat lists: `(residual leaves, output leaves)`."""
    if symbolic_zeros:
        primals = [CustomVJPPrimal(x, bool(lin)) for x, lin in zip(primals, which_linear)]
    pair = fwd(*tree_util.tree_unflatten(in_tree, list(primals)))
    intro = (f"Custom VJP fwd rule {fwd_name} for function {primal_name} must produce a pair "
             "(list or tuple of length two) where the first element represents the primal "
             "output (equal to ")
    middle = (f"custom_vjp-decorated function {primal_name}) and the second element represents "
              "residuals (i.e. values stored from the forward pass for use on the backward "
              "pass), but ")
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise TypeError(intro + "those of the " + middle +
                        f"instead of a pair the fwd rule {fwd_name} produced {pair}.")
    outs, out_tree = tree_util.tree_flatten(pair[0])
    residuals, res_tree = tree_util.tree_flatten(pair[1])
    avals = [_aval_of(x) for x in outs]
    if store.fun_out is not None:
        fun_tree, fun_avals = store.fun_out
        if fun_tree != out_tree:
            raise TypeError(
                intro + "the output of the " + middle + "instead the fwd rule output's first "
                f"element had container/pytree structure:\n    {_type_tree(out_tree, avals)}\n"
                f"while the custom_vjp-decorated function {primal_name} had output "
                f"container/pytree structure:\n    {_type_tree(fun_tree, fun_avals)}.")
        if not all(map(_types_match, avals, fun_avals)):
            raise TypeError(
                intro + "the output of the " + middle + "instead the fwd rule output's first "
                f"element had shapes/dtypes of:\n    {_type_tree(out_tree, avals)}\n"
                f"while the custom_vjp-decorated function {primal_name} had output "
                f"shapes/dtypes of:\n    {_type_tree(fun_tree, fun_avals)}")
    store.rule_out = (out_tree, avals)
    store.res_tree = res_tree
    return residuals, outs


def _call_bwd_rule(bwd: Callable, in_tree: tree_util.PyTreeDef, in_avals: list[ShapedArray],
                   store: _CallStore, symbolic_zeros: bool, residuals: Sequence[Any],
                   cts: Sequence[Any]) -> list[Any]:
    """Runs the user's bwd on flat lists: one cotangent per input leaf (`ad.Zero` for None)."""
    py_res = tree_util.tree_unflatten(store.res_tree, list(residuals))
    if symbolic_zeros:
        cts = [_to_user_zero(ct) for ct in cts]
    py_cts_in = bwd(py_res, tree_util.tree_unflatten(store.out_tree(), list(cts)))
    if isinstance(py_cts_in, list) and len(py_cts_in) == len(tree_util.treedef_children(in_tree)):
        py_cts_in = tuple(py_cts_in)
    # Each None stands for zeros of a whole argument subtree.
    zero = object()
    dummy = tree_util.tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    flat_cts: list[Any] = []

    def collect(ct: Any, subtree: Any) -> None:
        count = len(tree_util.tree_leaves(subtree))
        flat_cts.extend([zero if ct is None else ct] * count)

    try:
        if not isinstance(py_cts_in, tuple):
            raise ValueError
        tree_util.tree_map(collect, py_cts_in, dummy, is_leaf=lambda x: x is None)
    except ValueError:
        bwd_tree = tree_util.tree_structure(py_cts_in)
        raise TypeError("Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function, and in "
                        "particular must produce a tuple of length equal to the number of "
                        "arguments to the primal function, but got bwd output structure "
                        f"{bwd_tree} for primal input structure {in_tree}.") from None
    paths = [path for path, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    return [_bwd_output_leaf(path, aval, ct, zero)
            for path, aval, ct in zip(paths, in_avals, flat_cts)]


def _bwd_output_leaf(path: tuple, aval: ShapedArray, ct: Any, zero: object) -> Any:
    ct_aval = ad.tangent_aval(aval)
    if ct is zero or ct_aval.dtype == dtypes.float0:
        return ad.Zero(ct_aval)
    if type(ct) is SymbolicZero:
        if not _types_match(ct_aval, ct.aval):
            raise ValueError(
                "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not "
                f"match the corresponding input tangent shape/dtype: at output{keystr(path)} "
                f"the SymbolicZero had shape/dtype {ct.aval.str_short(short_dtypes=False)} "
                "while the corresponding input had shape/dtype "
                f"{aval.str_short(short_dtypes=False)}. Consider just returning a None here "
                "instead of a SymbolicZero object.")
        return ad.Zero(ct.aval)
    got = _aval_of(ct)
    # As JAX, a cotangent of another dtype is let through for inexact inputs.
    if got.shape != ct_aval.shape or (got.dtype != ct_aval.dtype
                                      and not dtypes.is_inexact(ct_aval.dtype)):
        mismatches = []
        if got.dtype != ct_aval.dtype:
            mismatches.append("the dtypes do not match")
        if got.shape != ct_aval.shape:
            mismatches.append("the shapes do not match")
        extra = ", so " + ", and ".join(mismatches) if mismatches else ""
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args tuple "
            f"of the primal function, but at output{keystr(path)} the bwd rule produced an "
            f"output of type {got.str_short(short_dtypes=False)} corresponding to an input of "
            f"type {aval.str_short(short_dtypes=False)}{extra}")
    return ct


# ---------------------------------------------------------------------------------------------
# The primitives.

class CustomJVPCallPrimitive(core.Primitive):
    """`custom_jvp_call`: a call of a function with a custom JVP rule."""

    def __init__(self, name: str) -> None:
        super().__init__(name, multiple_results=True)

    def bind_with_trace(self, trace: core.Trace, fun: Callable, jvp: Callable,
                        args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Hands the call to `trace` (made current while it runs)."""
        with core.set_current_trace(trace):
            return trace.process_custom_jvp_call(self, fun, jvp, list(args),
                                                 symbolic_zeros=symbolic_zeros)

    def bind(self, *args: Any, symbolic_zeros: bool, call_jaxpr: ClosedJaxpr | None = None,
             jvp_jaxpr_fun: Callable | None = None, num_consts: int = 0,
             subfuns: Sequence[Any] | None = None) -> list[Any]:
        """Re-binds a staged equation: `fun` evaluates `call_jaxpr`, the rule ignores the
        closed-over leading operands. Libraries re-bind with the params `get_bind_params`
        gives instead: the function and rule as `WrappedFun`s in `subfuns`."""
        if subfuns is not None:
            fun, jvp = (FlatFun(f.call_wrapped, f.__name__) for f in subfuns)
        else:
            fun, jvp = _call_and_rule(call_jaxpr, jvp_jaxpr_fun, num_consts)
        return self.bind_with_trace(core.current_trace(), fun, jvp, args,
                                    symbolic_zeros=symbolic_zeros)

    def get_bind_params(self, params: dict) -> dict:
        """As JAX >= 0.9.2: the function and its rule as `WrappedFun`s under `subfuns`."""
        fun, jvp = _call_and_rule(params["call_jaxpr"], params["jvp_jaxpr_fun"],
                                  params["num_consts"])
        return {"subfuns": [lu.wrap_init(fun), lu.wrap_init(jvp)],
                "symbolic_zeros": params["symbolic_zeros"]}


def _call_and_rule(call_jaxpr: ClosedJaxpr, jvp_jaxpr_fun: Callable, num_consts: int
                   ) -> tuple[FlatFun, FlatFun]:
    jvp = FlatFun(functools.partial(_lifted_jvp, num_consts, jvp_jaxpr_fun),
                  _name_of(jvp_jaxpr_fun))
    return _jaxpr_fun(call_jaxpr), jvp


class CustomVJPCallPrimitive(core.Primitive):
    """`custom_vjp_call`: a call of a function with a custom VJP rule."""

    def __init__(self, name: str) -> None:
        super().__init__(name, multiple_results=True)

    def bind_with_trace(self, trace: core.Trace, fun: Callable, fwd: Callable, bwd: Callable,
                        args: Sequence[Any], *, symbolic_zeros: bool) -> list[Any]:
        """Hands the call to `trace` (made current while it runs)."""
        with core.set_current_trace(trace):
            return trace.process_custom_vjp_call(self, fun, fwd, bwd, list(args),
                                                 symbolic_zeros=symbolic_zeros)

    def bind(self, *args: Any, call_jaxpr: ClosedJaxpr, fwd_jaxpr_thunk: Callable,
             num_consts: int, bwd: Callable, symbolic_zeros: bool) -> list[Any]:
        """Re-binds a staged equation: the rules see only the operands after the
        closed-over leading ones, whose cotangents are zero."""
        fun = _jaxpr_fun(call_jaxpr)
        const_avals = call_jaxpr.in_avals[:num_consts]
        fwd = FlatFun(functools.partial(_lifted_fwd, num_consts, fwd_jaxpr_thunk),
                      _name_of(fwd_jaxpr_thunk))
        lifted_bwd = FlatFun(functools.partial(_lifted_bwd, const_avals, bwd), _name_of(bwd))
        return self.bind_with_trace(core.current_trace(), fun, fwd, lifted_bwd, args,
                                    symbolic_zeros=symbolic_zeros)


custom_jvp_call_p = CustomJVPCallPrimitive("custom_jvp_call")
custom_vjp_call_p = CustomVJPCallPrimitive("custom_vjp_call")


def _custom_call_lowering(ctx: lowering.LoweringRuleContext, *args: Any,
                          call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    """The function's own jaxpr, inline: lowering ignores the derivative rules (JAX's)."""
    return lowering.lower_closed_jaxpr_inline(ctx, call_jaxpr, args)


lowering.register_lowering(custom_jvp_call_p, _custom_call_lowering)
lowering.register_lowering(custom_vjp_call_p, _custom_call_lowering)


def _name_of(fun: Callable) -> str:
    return getattr(fun, "name", None) or staging.fun_name(fun)


def _jaxpr_fun(closed: ClosedJaxpr) -> FlatFun:
    debug = closed.jaxpr.debug_info
    name = debug.func_name if debug is not None else "<unnamed function>"
    return FlatFun(lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args), name,
                   lambda: debug)


def _lifted_jvp(num_consts: int, jvp: Callable, primals: Sequence[Any],
                tangents: Sequence[Any]) -> Any:
    # The rule was defined for the explicit arguments only: closed-over values have none.
    return jvp(list(primals[num_consts:]), list(tangents[num_consts:]))


class CustomVJPException(Exception):
    """Differentiation of a custom_vjp function with respect to a value it closes over."""

    def __init__(self) -> None:
        super().__init__(
            "Detected differentiation of a custom_vjp function with respect to a closed-over "
            "value. That isn't supported because the custom VJP rule only specifies how to "
            "differentiate the custom_vjp function with respect to explicit input parameters. "
            "Try passing the closed-over value into the custom_vjp function as an argument, "
            "and adapting the custom_vjp fwd and bwd rules.")


def _lifted_fwd(num_consts: int, fwd: Callable, primals: Sequence[Any],
                which_linear: Sequence[bool]) -> Any:
    if any(which_linear[:num_consts]):
        raise CustomVJPException()
    return fwd(list(primals[num_consts:]), list(which_linear[num_consts:]))


def _lifted_bwd(const_avals: Sequence[ShapedArray], bwd: Callable, residuals: Sequence[Any],
                cts: Sequence[Any]) -> list[Any]:
    return [ad.Zero(ad.tangent_aval(a)) for a in const_avals] + list(bwd(residuals, cts))


def _call_abstract_eval(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **_: Any
                        ) -> list[ShapedArray]:
    return list(call_jaxpr.out_avals)


core.abstract_eval_rules[custom_jvp_call_p] = _call_abstract_eval
core.abstract_eval_rules[custom_vjp_call_p] = _call_abstract_eval


def _call_impl(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


# `bind` never reaches these (it goes through the trace's process_custom_* methods); they
# let generic machinery that runs an equation by its impl evaluate the function.
core.impl_rules[custom_jvp_call_p] = _call_impl
core.impl_rules[custom_vjp_call_p] = _call_impl


def _custom_jvp_call_transpose(cts: Sequence[Any], *args: Any, call_jaxpr: ClosedJaxpr,
                               **_: Any) -> list[Any]:
    # Linear in some operands (a rule applied it to tangents): transpose the function body.
    return ad.backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, args, cts)


ad.primitive_transposes[custom_jvp_call_p] = _custom_jvp_call_transpose


def _pp_ordered(eqn: JaxprEqn, context: PrettyContext, items: list[tuple[str, Any]]) -> pp.Doc:
    """Prints an equation with its params in the given order (JAX puts `name` first)."""
    # Outputs are named before the variables of the nested jaxpr, as JAX names them.
    lhs = pp_vars(eqn.outvars, context, print_shapes=True)
    pairs = [pp.text(f"{key}=") + _pp_param_value(value, context) for key, value in items]
    params = pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), pairs)])),
        pp.brk(""), pp.text("]")]))
    return pp.concat([lhs, pp.text(" = "), pp.text(eqn.primitive.name), params,
                      pp.text(" ") + pp_vars(eqn.invars, context)])


def _call_name(call_jaxpr: ClosedJaxpr) -> str:
    debug = call_jaxpr.jaxpr.debug_info
    return debug.func_name if debug is not None else "<unnamed function>"


def _pp_custom_jvp_call(eqn: JaxprEqn, context: PrettyContext) -> pp.Doc:
    params = dict(eqn.params)
    if not params["num_consts"]:
        params.pop("num_consts")
    params["jvp"] = _name_of(params.pop("jvp_jaxpr_fun"))
    items = [("name", _call_name(params["call_jaxpr"]))] + sorted(params.items())
    return _pp_ordered(eqn, context, items)


def _pp_custom_vjp_call(eqn: JaxprEqn, context: PrettyContext) -> pp.Doc:
    params = dict(eqn.params)
    if not params["num_consts"]:
        params.pop("num_consts")
    params["fwd"] = _name_of(params.pop("fwd_jaxpr_thunk"))
    params["bwd"] = _name_of(params.pop("bwd"))
    items = [("name", _call_name(params["call_jaxpr"]))] + sorted(params.items())
    return _pp_ordered(eqn, context, items)


pp_eqn_rules[custom_jvp_call_p] = _pp_custom_jvp_call
pp_eqn_rules[custom_vjp_call_p] = _pp_custom_vjp_call
