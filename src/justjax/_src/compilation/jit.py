"""`justjax.jit`: trace once per input signature, compile once, call the executable.

A call flattens the dynamic arguments, looks up the cache by (pytree structure, avals with
weak types, static arguments, config that changes tracing) and, on a miss, traces the
function to a closed jaxpr. Called eagerly, the jaxpr's executable runs (compiled once per
jaxpr by `compiler.compile_jaxpr`); called under a transformation or while tracing, one `jit`
equation is bound, which the transformation handles with the primitive's rules.

Cached eager calls on Arrays take a fast path (JAX's C++ `PjitFunction` fast path, in
Python): the first call of a signature makes a runner of its executable
(`execution.fast_call`) that checks the Arrays' avals and devices, hands their buffers'
addresses to the backend's inline runner and wraps the results directly. The runners serve
one generation of the config (any `jax.config.update` or thread-local override sends calls
back through the general path, which remakes them under a plain config) and are dropped with
the traced signatures (`clear_cache`, `jax.clear_caches`). Donating functions do without.
"""
from __future__ import annotations

import functools
import inspect
import logging
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from justjax._src import errors, monitoring, source_info_util, util
from justjax._src.compilation import caches
from justjax._src.compilation import compiler
from justjax._src.compilation import stages
from justjax._src.compilation import spmd
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from justjax._src.compilation import execution
from justjax._src.interpreters import staging
from justjax._src.compilation.jit_primitive import jit_p
from justjax._src.runtime.array import Array
from justjax._src.pytrees.tree_errors import flatten_axes, keystr

# JAX's logger of cache-miss explanations (they come from its partial_eval module).
logger = logging.getLogger("jax._src.interpreters.partial_eval")


def _as_tuple(value: Any) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (int, str)):
        return (value,)
    return tuple(value)


def _infer_argnums_and_argnames(fun: Callable, argnums: tuple[int, ...],
                                argnames: tuple[str, ...], kind: str
                                ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Checks `argnums`/`argnames` (`kind` "static" or "donate") against `fun`'s signature
    and completes positions from names and names from positions, as JAX does, so
    `static_argnums=1` also covers the argument passed by keyword."""
    if not argnums and not argnames:
        return argnums, argnames  # nothing to complete (and `inspect` is slow at import)
    try:
        parameters = inspect.signature(fun).parameters
    except (TypeError, ValueError):
        return argnums, argnames
    _check_argnums(parameters, argnums, f"{kind}_argnums")
    _check_argnames(parameters, argnames, f"{kind}_argnames")
    positional = [name for name, p in parameters.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword_ok = {name for name, p in parameters.items()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names = set(argnames)
    nums = set(argnums)
    for i in argnums:
        if -len(positional) <= i < len(positional) and positional[i] in keyword_ok:
            names.add(positional[i])
    for name in argnames:
        if name in positional:
            nums.add(positional.index(name))
    return tuple(sorted(nums)), tuple(sorted(names, key=list(parameters).index)
                                      if all(n in parameters for n in names) else names)


def _check_argnums(parameters: Any, argnums: tuple[int, ...], what: str) -> None:
    """JAX's ValueError for positions the function cannot take (any, with `*args`)."""
    kinds = [p.kind for p in parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds or not argnums:
        return
    count = sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for k in kinds)
    if -min(argnums) > count or max(argnums) >= count:
        raise ValueError(f"Jitted function has {what}={argnums}, but only accepts {count} "
                         "positional arguments.")


def _check_argnames(parameters: Any, argnames: tuple[str, ...], what: str) -> None:
    """JAX's ValueError for names the function takes by position only or not at all (any,
    with `**kwargs`)."""
    if not argnames or any(p.kind is inspect.Parameter.VAR_KEYWORD
                           for p in parameters.values()):
        return
    positional_only = {n for n, p in parameters.items()
                       if p.kind is inspect.Parameter.POSITIONAL_ONLY}
    invalid = positional_only & set(argnames)
    if invalid:
        raise ValueError(f"Jitted function has invalid argnames {invalid} in {what}. These "
                         "are positional-only")
    invalid = set(argnames) - {n for n, p in parameters.items()
                               if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                             inspect.Parameter.KEYWORD_ONLY)}
    if invalid:
        raise ValueError(f"Jitted function has invalid argnames {invalid} in {what}. "
                         "Function does not take these args.")


def _hash_static(values: Sequence[Any]) -> None:
    for value in values:
        try:
            hash(value)
        except TypeError as e:
            raise ValueError(
                "Non-hashable static arguments are not supported. An error occurred while "
                f"trying to hash an object of type {type(value)}, {value}. The error was:\n"
                f"{type(e).__name__}: {e}\n") from None


@dataclass(frozen=True)
class _Options:
    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]
    donate_argnums: tuple[int, ...]
    donate_argnames: tuple[str, ...]
    keep_unused: bool
    inline: bool
    # jit's `in_shardings` and `out_shardings` as given (None: unspecified).
    in_shardings: Any = None
    out_shardings: Any = None


@dataclass
class _Entry:
    """One cached input signature: the traced jaxpr and what calls need to run it."""

    closed: ClosedJaxpr
    signature: stages.Signature
    compiled: execution.CompiledCall | None = None
    # `closed` with the tracers it closes over as leading invars, and those tracers.
    hoisted: tuple[ClosedJaxpr, list[Any]] | None = None
    # For a trace closing over tracers: the trace it was made under (the only one it serves);
    # None for every other trace.
    traced_under: Any = None

    def staged_call(self) -> tuple[ClosedJaxpr, list[Any]]:
        """The jaxpr a `jit` equation holds, and the values it closes over that become its
        leading operands: as in JAX, a tracer of an enclosing trace is an argument of the
        inner jaxpr, while concrete constants stay its constvars."""
        if self.hoisted is None:
            jaxpr, consts = self.closed.jaxpr, self.closed.consts
            traced = [i for i, c in enumerate(consts) if isinstance(c, core.Tracer)]
            if not traced:
                self.hoisted = (self.closed, [])
            else:
                kept = [i for i in range(len(consts)) if i not in set(traced)]
                inner = jaxpr.replace(constvars=[jaxpr.constvars[i] for i in kept],
                                      invars=[*(jaxpr.constvars[i] for i in traced),
                                              *jaxpr.invars])
                self.hoisted = (ClosedJaxpr(inner, [consts[i] for i in kept]),
                                [consts[i] for i in traced])
        return self.hoisted


class _Cache:
    """The traced signatures of one function, and the fast calls of all-Array signatures.

    The fast calls are valid for the config of generation `generation` (plain, no thread
    overrides: see `PjitFunction._fast_ready`). `fast` maps the avals of a call's positional
    Arrays to `execution.fast_call`'s runner (or `_no_fast_call`); `last` is the most recent
    one used, tried first. `fast_trees` maps (input pytree structure, static arguments) to
    the runners of the signatures seen with them, for calls on pytrees of Arrays, keyword
    arguments or static arguments."""

    def __init__(self) -> None:
        self.traced: dict[tuple, _Entry] = {}
        self.fast: dict[tuple, Callable[[tuple], Any]] = {}
        self.last: Callable[[tuple], Any] | None = None
        self.fast_trees: dict[tuple, list[Callable[[Sequence[Any]], Any]]] = {}
        self.generation = -1
        _all_caches.add(self)

    def clear(self) -> None:
        self.traced.clear()
        self.forget_fast_calls()

    def forget_fast_calls(self) -> None:
        self.fast.clear()
        self.last = None
        self.fast_trees.clear()
        self.generation = -1


# How many signatures of one pytree structure `_Cache.fast_trees` keeps runners for.
_FAST_TREE_SIGNATURES = 8


# Caches are shared by every `jit` of the same function with the same options, as in JAX:
# `jit(f)(x)` twice traces once.
_shared_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Every live cache, shared or not, for `jax.clear_caches`.
_all_caches: weakref.WeakSet[_Cache] = weakref.WeakSet()


@caches.register_cache
def _clear_jit_caches() -> None:
    for cache in list(_all_caches):
        cache.clear()


def _cache_for(fun: Callable, options: _Options) -> _Cache:
    try:
        per_fun = _shared_caches.setdefault(fun, {})
    except TypeError:  # not weak-referenceable: a cache of this wrapper's own
        return _Cache()
    cache = per_fun.get(options)
    if cache is None:
        cache = per_fun[options] = _Cache()
    return cache


def _array_avals(args: tuple) -> tuple[ShapedArray, ...] | None:
    """The avals of `args` if every one is an Array, else None."""
    avals = []
    for arg in args:
        if type(arg) is not Array:
            return None
        avals.append(arg.aval)
    return tuple(avals)


def _no_fast_call(args: tuple) -> Any:
    return execution.MISS


def _fast_call(entry: _Entry, avals: tuple[ShapedArray, ...]) -> Callable[[tuple], Any]:
    """The fast call of `entry`'s executable on a tuple of Arrays of `avals`, returning the
    output pytree (or MISS)."""
    out_tree = entry.signature.out_tree
    single = tree_util.treedef_is_strict_leaf(out_tree)
    run = execution.fast_call(entry.compiled, avals, single)
    if run is None:
        return _no_fast_call
    if single:
        return run

    def call(args: tuple) -> Any:
        outs = run(args)
        return outs if outs is execution.MISS else tree_util.tree_unflatten(out_tree, outs)

    return call


class PjitFunction:
    """A jitted function (`jax.jit(f)`): callable, with `trace`, `lower`, `eval_shape`.
    The class has the name of JAX's, which libraries look for (chex's `is_traceable`)."""

    def __init__(self, fun: Callable, options: _Options) -> None:
        # First: `wraps` copies `fun.__dict__`, which for a jitted `fun` holds its own
        # `_fun`, `_cache`, ... that must not replace ours.
        util.wraps(fun)(self)
        # What was copied from `fun.__dict__` must not shadow this class's own methods (a
        # pmapped function carries its own `lower`).
        for name in [n for n in vars(self) if hasattr(type(self), n) and not n.startswith("__")]:
            del self.__dict__[name]
        self._fun = fun
        self._options = options
        self._name = staging.fun_name(fun)
        self._cache = _cache_for(fun, options)
        self._simple = not (options.static_argnums or options.static_argnames
                            or options.donate_argnums or options.donate_argnames)
        self._positions_of: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    # -- binding as a method ---------------------------------------------------------------
    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<PjitFunction of {self._fun!r}>"

    @property
    def __signature__(self) -> inspect.Signature:
        """The wrapped function's signature (what `inspect.signature` reports, as for JAX's
        jitted functions, even with `follow_wrapped=False`)."""
        return inspect.signature(self._fun)

    # -- calls -----------------------------------------------------------------------------
    @errors.allocation_failures_as_xla
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        cache = self._cache
        # The fast paths, under the config the cache's fast calls were made for
        # (`_fast_ready`), called eagerly: positional Arrays of the signature called last,
        # or of another seen signature; else a pytree of Arrays of a seen signature.
        if (cache.generation == config._generation and not config._local_count
                and core.trace_state.trace is core.eval_trace):
            if not kwargs:
                fast = cache.last
                if fast is not None:
                    out = fast(args)
                    if out is not execution.MISS:
                        return out
                avals = _array_avals(args) if self._simple else None
                if avals is not None:  # the tree fast path has the same runners
                    fast = cache.fast.get(avals)
                    if fast is not None:
                        cache.last = fast
                        out = fast(args)
                        if out is not execution.MISS:
                            return out
                    return self._call(args, kwargs)
            leaves, key = self._tree_key(args, kwargs)
            for fast in cache.fast_trees.get(key, ()):
                out = fast(leaves)
                if out is not execution.MISS:
                    return out
        return self._call(args, kwargs)

    def _tree_key(self, args: tuple, kwargs: dict) -> tuple[list[Any], tuple]:
        """The dynamic leaves of a call, and its key in `_Cache.fast_trees`: the input
        pytree structure and the static arguments (with their types: 1, 1.0 and True
        trace apart)."""
        dyn_args, dyn_kwargs, static = self._split_static(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        return leaves, (in_tree, static, tuple(type(v) for _, v in static))

    def _fast_ready(self) -> bool:
        """Whether fast calls serve the config now (no thread overrides, no flag asking for
        more than a run) and this function (no donation); stamps the cache with the config's
        generation when they do, and empties it when that generation changed."""
        cache = self._cache
        options = self._options
        if (config._local_count or config.read("jax_disable_jit") or options.donate_argnums
                or options.donate_argnames or not execution.plain_config()
                or options.in_shardings is not None or options.out_shardings is not None):
            return False
        if cache.generation != config._generation:
            cache.forget_fast_calls()
            cache.generation = config._generation
        return True

    def _call(self, args: tuple, kwargs: dict) -> Any:
        """A call off the fast paths (which it prepares for the next calls when it can)."""
        if config.read("jax_disable_jit"):
            return self._fun(*args, **kwargs)
        eager = core.trace_state.trace is core.eval_trace
        entry, flat_args, key = self._entry_for(args, kwargs)
        if eager:
            for arg in flat_args:
                if isinstance(arg, core.Tracer):  # leaked from a transformation that ended
                    raise core.escaped_tracer_error(arg)
            if entry.compiled is None:
                sig = entry.signature
                entry.compiled = compiler.compile_jaxpr(entry.closed, sig.name,
                                                        sig.donated_invars, sig.keep_unused,
                                                        True, sig.in_shardings,
                                                        sig.out_shardings)
            if self._fast_ready():
                self._add_fast_calls(entry, args, kwargs, flat_args, key)
            outs = entry.compiled.call_flat(flat_args)
        elif self._options.inline:
            trace = core.trace_state.trace
            if type(trace) is staging.DynamicJaxprTrace:
                # As JAX stages an inlined call: array arguments become tracers first, so
                # the constants among them are numbered in argument order (scalars stay
                # constants, to be folded and inlined as literals).
                flat_args = [trace.to_jaxpr_tracer(a) if getattr(a, "ndim", 0) else a
                             for a in flat_args]
            outs = eval_jaxpr(entry.closed.jaxpr, entry.closed.consts, *flat_args)
        else:
            sig = entry.signature
            jaxpr, closed_over = entry.staged_call()
            outs = jit_p.bind(*closed_over, *flat_args, jaxpr=jaxpr, name=sig.name,
                              donated_invars=(False,) * len(closed_over) + sig.donated_invars,
                              keep_unused=sig.keep_unused, inline=False)
        return tree_util.tree_unflatten(entry.signature.out_tree, outs)

    def trace(self, *args: Any, **kwargs: Any) -> stages.Traced:
        entry, _, _ = self._entry_for(args, kwargs)
        return stages.Traced(entry.signature, entry.closed)

    def lower(self, *args: Any, **kwargs: Any) -> stages.Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self) -> None:
        self._cache.clear()

    def _cache_size(self) -> int:
        return len(self._cache.traced)

    # -- the cache ---------------------------------------------------------------------------
    def _split_static(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple]:
        """(dynamic args, dynamic kwargs, static key)."""
        if self._simple:
            return args, kwargs, ()
        positions, dynamic = self._positions(len(args))
        dyn_args = tuple([args[i] for i in dynamic])
        static = tuple([(i, args[i]) for i in positions])
        if kwargs:
            static_names = self._options.static_argnames
            dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
            static += tuple(sorted(((k, v) for k, v in kwargs.items() if k in static_names),
                                   key=lambda kv: kv[0]))
        else:
            dyn_kwargs = kwargs
        _hash_static([v for _, v in static])
        return dyn_args, dyn_kwargs, static

    def _positions(self, nargs: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The positions of the static and of the dynamic arguments among `nargs`
        positional ones (memoized per count)."""
        found = self._positions_of.get(nargs)
        if found is None:
            static = {i % nargs for i in self._options.static_argnums if -nargs <= i < nargs}
            found = self._positions_of[nargs] = (
                tuple(sorted(static)), tuple(i for i in range(nargs) if i not in static))
        return found

    def _add_fast_calls(self, entry: _Entry, args: tuple, kwargs: dict, flat_args: list,
                        key: tuple) -> None:
        """Makes the fast calls of `entry`'s signature, when its arguments are Arrays."""
        avals = _array_avals(tuple(flat_args))
        if avals is None:
            return
        cache = self._cache
        in_tree, _, static_key = key[:3]
        tree_key = (in_tree, *static_key)
        runners = cache.fast_trees.setdefault(tree_key, [])
        fast = _fast_call(entry, avals)
        if fast is not _no_fast_call and len(runners) < _FAST_TREE_SIGNATURES:
            runners.append(fast)
        if self._simple and not kwargs and _array_avals(args) is not None:
            cache.fast[avals] = cache.last = fast  # the positional Arrays are the leaves

    def _entry_for(self, args: tuple, kwargs: dict) -> tuple[_Entry, list[Any], tuple]:
        dyn_args, dyn_kwargs, static = self._split_static(args, kwargs)
        flat_args, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = staging.abstractify_args(
            self._fun, flat_args,
            lambda: staging.leaf_arg_names(self._fun, dyn_args, dyn_kwargs, frozenset()))
        # Static values that compare equal but differ in type (1, 1.0, True) trace apart.
        static_key = (static, tuple(type(v) for _, v in static))
        key = (in_tree, avals, static_key, config.trace_context())
        in_shardings = self._in_shardings(flat_args, avals, dyn_args, dyn_kwargs)
        if in_shardings is not None:
            key += (in_shardings,)
        entry = self._cache.traced.get(key)
        if entry is not None and entry.traced_under not in (None, core.trace_state.trace):
            entry = None
        if entry is None:
            if config.read("jax_explain_cache_misses"):
                names = staging.leaf_arg_names(self._fun, dyn_args, dyn_kwargs, frozenset())
                _explain_miss(self._name, self._fun, self._cache.traced, key, names)
            entry = self._trace(args, kwargs, dyn_args, dyn_kwargs, static, in_tree, avals,
                                in_shardings)
            # A trace closing over an enclosing trace's tracers holds them: it serves the
            # calls made under the same trace only (JAX keys its cache on the current trace
            # to the same effect), so two calls in one traced function share one jaxpr.
            if entry.staged_call()[1]:
                entry.traced_under = core.trace_state.trace
            self._cache.traced[key] = entry
        return entry, flat_args, key

    def _trace(self, args: tuple, kwargs: dict, dyn_args: tuple, dyn_kwargs: dict,
               static: tuple, in_tree: tree_util.PyTreeDef, avals: tuple[ShapedArray, ...],
               in_shardings: tuple[Any, ...] | None = None) -> _Entry:
        static_positions = dict(s for s in static if isinstance(s[0], int))
        static_kwargs = {k: v for k, v in static if isinstance(k, str)}
        nargs = len(args)
        fun = self._fun
        out_trees: list[tree_util.PyTreeDef] = []
        out_paths: list[tuple[str, ...]] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            d_args, d_kwargs = tree_util.tree_unflatten(in_tree, leaves)
            it = iter(d_args)
            full_args = [static_positions[i] if i in static_positions else next(it)
                         for i in range(nargs)]
            out = fun(*full_args, **d_kwargs, **static_kwargs)
            paths_and_leaves, out_tree = tree_util.tree_flatten_with_path(out)
            out_trees.append(out_tree)
            out_paths.append(tuple(keystr(path) for path, _ in paths_and_leaves))
            leaves_out = [leaf for _, leaf in paths_and_leaves]
            for leaf in leaves_out:
                if not (isinstance(leaf, core.Tracer) or core.valid_jaxtype(leaf)):
                    raise TypeError(f"Argument '{leaf}' of type {type(leaf)} is not a valid "
                                    "JAX type")
            return leaves_out

        names = staging.leaf_arg_names(fun, args, dyn_kwargs, frozenset(static_positions))
        debug = staging.debug_info("jit", fun, names)
        if config.read("jax_no_tracing"):
            raise RuntimeError(f"re-tracing function {debug.func_src_info} for `jit`, but "
                               "'no_tracing' is set")
        with monitoring.log_elapsed_time("Finished tracing {fun_name} for jit in "
                                         "{elapsed_time:.9f} sec", self._name,
                                         monitoring.JAXPR_TRACE_EVENT):
            closed = staging.trace_to_jaxpr(flat_fun, list(avals), debug)
        donated = self._donated_leaves(args, kwargs, dyn_args, dyn_kwargs, static_positions)
        signature = stages.Signature(
            name=self._name, in_tree=in_tree, out_tree=out_trees[0], in_avals=avals,
            arg_names=tuple(names), donated_invars=donated,
            keep_unused=self._options.keep_unused, out_paths=out_paths[0],
            in_shardings=in_shardings,
            out_shardings=self._out_shardings(out_trees[0], closed.out_avals, out_paths[0]))
        return _Entry(closed, signature)

    def _in_shardings(self, flat_args: list[Any], avals: tuple[ShapedArray, ...],
                      dyn_args: tuple, dyn_kwargs: dict) -> tuple[Any, ...] | None:
        """Per flat argument, the sharding over a mesh it runs with: `in_shardings`' where
        given (checked against the argument as JAX checks it), else the one it comes with;
        None when none is over a mesh of several devices."""
        names: list[str] = []

        def name_of(k: int) -> str:  # the arguments' names, built only for an error
            if not names:
                names.extend(staging.leaf_arg_names(self._fun, dyn_args, dyn_kwargs,
                                                    frozenset()))
            return names[k] if k < len(names) else f"args[{k}]"

        found = spmd.mesh_shardings(flat_args)
        given = self._options.in_shardings
        if given is None:
            spmd.check_devices(flat_args, found, name_of, self._name)
            return spmd.unify(found)
        if isinstance(given, (tuple, list)) and len(given) != len(dyn_args):
            raise ValueError(
                "pjit in_shardings specification must be a tree prefix of the positional "
                "arguments tuple. In particular, pjit in_shardings must either be a Sharding, a "
                "PartitionSpec, or a tuple of length equal to the number of positional "
                "arguments. But pjit in_shardings is the wrong length: got a tuple or list of "
                f"length {len(given)} for an args tuple of length {len(dyn_args)}.")
        positional = tree_util.tree_structure(dyn_args)
        flat = list(spmd.resolve(flatten_axes("pjit in_shardings", positional, given),
                                 "in_shardings"))
        flat += [None] * (len(flat_args) - len(flat))
        merged = []
        for k, (arg, sharding) in enumerate(zip(flat_args, flat, strict=True)):
            if sharding is None:
                merged.append(found[k] if found is not None else None)
                continue
            spmd.check_fits("arguments", lambda: name_of(k), sharding, avals[k].shape)
            spmd.check_committed(arg, sharding)
            merged.append(sharding)
        if not any(s is not None for s in merged):
            return None
        spmd.check_devices(flat_args, merged, name_of, self._name)
        return spmd.unify(tuple(merged))

    def _out_shardings(self, out_tree: tree_util.PyTreeDef, out_avals: Sequence[ShapedArray],
                       out_paths: Sequence[str]) -> tuple[Any, ...] | None:
        """Per flat result, `out_shardings`' sharding (None where unspecified), checked
        against the result as JAX checks it."""
        given = self._options.out_shardings
        if given is None:
            return None
        flat = spmd.resolve(flatten_axes("pjit out_shardings", out_tree, given),
                            "out_shardings")
        for k, (sharding, aval) in enumerate(zip(flat, out_avals, strict=True)):
            if sharding is not None:
                path = out_paths[k] if k < len(out_paths) else f"[{k}]"
                spmd.check_fits("outputs", lambda: "result" + path, sharding, aval.shape)
        return flat if any(s is not None for s in flat) else None

    def _donated_leaves(self, args: tuple, kwargs: dict, dyn_args: tuple, dyn_kwargs: dict,
                        static_positions: dict) -> tuple[bool, ...]:
        options = self._options
        nargs = len(args)
        donate_positions = {i % nargs for i in options.donate_argnums if -nargs <= i < nargs}
        # As JAX: under `jax_debug_nans` nothing is donated, so that the de-optimized rerun
        # after a NaN still has the arguments.
        donate_names = options.donate_argnames
        if config.read("jax_debug_nans"):
            donate_positions, donate_names = set(), ()
        flags: list[bool] = []
        for i, arg in enumerate(args):
            if i in static_positions:
                continue
            flags.extend([i in donate_positions] * len(tree_util.tree_leaves(arg)))
        for key, value in dyn_kwargs.items():
            flags.extend([key in donate_names] * len(tree_util.tree_leaves(value)))
        return tuple(flags)


def _user_call_site() -> str:
    """`file:line (function)` of the innermost frame outside justjax: where the user called."""
    frame = source_info_util.user_frame(1)
    if frame is None:
        return "unknown"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def _definition_site(fun: Callable) -> str:
    try:
        target = inspect.unwrap(fun.func if isinstance(fun, functools.partial) else fun)
        return f"{inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]}"
    except (TypeError, OSError):
        return "unknown"


def _explain_miss(name: str, fun: Callable, cache: dict, key: tuple,
                  arg_names: Sequence[str]) -> None:
    """Logs why a call traces again (`jax_explain_cache_misses`), in JAX's words."""
    lines = [f"TRACING CACHE MISS at {_user_call_site()}:"]
    if not cache:
        lines += ["  never seen function:",
                  f"    {name} id={id(fun)} defined at {_definition_site(fun)}"]
    else:
        lines += [f"  for {name} defined at {_definition_site(fun)}",
                  "  all previously seen cache keys differ. For the closest previous key:"]
        in_tree, avals, static, context = key[:4]
        seen = list(cache)
        if all(k[0] != in_tree for k in seen):
            lines += ["  different input pytree:", f"  * now {in_tree} and before {seen[-1][0]}"]
        elif all(k[3] != context for k in seen):
            lines += ["  different config affecting tracing (e.g. jax_enable_x64)"]
        elif all(k[2] != static for k in seen):
            lines += ["  different static arguments:",
                      f"  * now {static[0]!r} and before {seen[-1][2][0]!r}"]
        elif all(k[4:] != key[4:] for k in seen if k[:4] == key[:4]) and any(
                k[:4] == key[:4] for k in seen):
            lines += ["  different input shardings"]
        else:
            same_tree = [k for k in seen if k[0] == in_tree and k[2] == static]
            closest = min(same_tree, key=lambda k: sum(
                a != b for a, b in zip(k[1], avals, strict=True)))
            lines.append("  different input types:")
            for i, (old, new) in enumerate(zip(closest[1], avals, strict=True)):
                if old != new:
                    where = arg_names[i] if i < len(arg_names) else f"args[{i}]"
                    lines.append(f"  * at {where}, now {_typeof(new)} and before "
                                 f"{_typeof(old)}")
    logger.warning("\n".join(lines))


def _typeof(aval: ShapedArray) -> str:
    return aval.str_short() + ("{weak_type=True}" if aval.weak_type else "")


def jit(fun: Callable | None = None, /, *, in_shardings: Any = None, out_shardings: Any = None,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Iterable[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Iterable[str] | None = None,
        keep_unused: bool = False, device: Any = None, backend: str | None = None,
        inline: bool = False, compiler_options: dict[str, Any] | None = None) -> Any:
    """Compile `fun` with justjax's pipeline: trace to a jaxpr, lower to StableHLO, compile.

    Args:
      fun: the function to compile; omitted, `jit` returns a decorator.
      static_argnums / static_argnames: arguments passed as Python values (hashable), baked
        into the trace; a new value traces again.
      donate_argnums / donate_argnames: arguments whose buffers the call may reuse; the
        donated Arrays are deleted by the call.
      keep_unused: keep arguments the function does not read in the compiled program.
      inline: inline the function's jaxpr into an enclosing trace instead of a `jit` call.
      in_shardings / out_shardings: a `Sharding` (or None) for every argument / result, or
        a pytree of them that is a prefix of the positional arguments / of the result: the
        program is partitioned over their mesh (`compilation/spmd.py`), the inputs cut into
        the devices' blocks as given, the results laid out as given.
      device, backend, compiler_options: accepted for compatibility; there is one CPU
        backend.
    Returns:
      The jitted function (`__wrapped__`, `__name__`, `__doc__` kept), with `.trace`,
      `.lower` and `.eval_shape`.
    """
    if fun is None:
        return functools.partial(
            jit, in_shardings=in_shardings, out_shardings=out_shardings,
            static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums, donate_argnames=donate_argnames,
            keep_unused=keep_unused, device=device, backend=backend, inline=inline,
            compiler_options=compiler_options)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    static_nums, static_names = _infer_argnums_and_argnames(
        fun, _as_tuple(static_argnums), _as_tuple(static_argnames), "static")
    donate_nums, donate_names = _infer_argnums_and_argnames(
        fun, _as_tuple(donate_argnums), _as_tuple(donate_argnames), "donate")
    options = _Options(static_nums, static_names, donate_nums, donate_names,
                       bool(keep_unused), bool(inline),
                       spmd.user_shardings(in_shardings, "in_shardings"),
                       spmd.user_shardings(out_shardings, "out_shardings"))
    return PjitFunction(fun, options)
