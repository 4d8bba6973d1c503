"""`jax.export`: a jitted function lowered to StableHLO, to keep, ship and call later.

`export(jit(f))(*specs)` traces and lowers `f` as `jit(f).lower` does and wraps the module
in an `Exported`: its calling convention (pytree structure and avals of the inputs and
outputs), the platforms, and the module as StableHLO text (`mlir_module()`; the bytes of
that text are `mlir_module_serialized`). `Exported.call(*args)` runs it, eagerly or inside
`jit`, `grad` and `vmap`: the call is the `call_exported` primitive, whose lowering parses
the module (`hlo/stablehlo_parser.py`) and inlines it as a private function
`@call_exported_<name>` called from the caller's module, as JAX merges the exported module.
Reverse-mode differentiation goes through the exported VJP (`Exported.vjp()`), itself an
`Exported`; a deserialized `Exported` has one only if it was serialized with
`vjp_order >= 1`. `serialization.py` describes the serialized form.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import re
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from justjax._src.compilation import compiler
from justjax._src.compilation import stages
from justjax._src.pytrees import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.transformations.custom_derivatives import custom_vjp
from justjax._src.export import export_poly, symbolic_specs
from justjax._src.hlo import ir, stablehlo_parser, stablehlo_printer
from justjax._src.hlo.passes import refine_shapes
from justjax._src.interpreters import batching, lowering
from justjax._src.compilation.jit import PjitFunction
from justjax._src.pytrees.tree_errors import equality_errors

__all__ = ["DisabledSafetyCheck", "Exported", "export", "deserialize",
           "register_pytree_node_serialization", "register_namedtuple_serialization",
           "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "default_export_platform"]

# The calling-convention versions JAX 0.10.2 reads and writes (its
# `jax_export_calling_convention_version` defaults to the maximum).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10

# Custom call targets JAX guarantees stable, so an exported module may hold them: the CPU's
# LAPACK FFI kernels (`lapack_<t><name>_ffi`) and the few below. justjax's host callbacks
# are not among them, as JAX's are not.
_STABLE_LAPACK = re.compile(
    r"lapack_[sdcz](potrf|geqrf|orgqr|ungqr|syevd|heevd|geev|gesdd|getrf|sytrd|hetrd|gehrd|"
    r"gees|trsm|gtsv)_ffi")
_STABLE_TARGETS = frozenset(("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                             "annotate_device_placement", "shape_assertion",
                             "AllocateBuffer", "stablehlo.dynamic_reduce_window"))


class DisabledSafetyCheck:
    """A safety check to skip on (de)serialization (`jax.export.DisabledSafetyCheck`)."""

    def __init__(self, _impl: str) -> None:
        # Use the builders `platform()` and `custom_call(target)`.
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allows calling on another platform than the export platforms."""
        return DisabledSafetyCheck("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allows exporting custom calls to `target_name`, not known to be stable."""
        return DisabledSafetyCheck(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this check allows, or None."""
        found = re.match(r"custom_call:(.+)$", self._impl)
        return found.group(1) if found else None

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


@dataclasses.dataclass(frozen=True)
class Exported:
    """A JAX function lowered to StableHLO (`jax.export.Exported`).

    Attributes:
      fun_name: the exported function's name.
      in_tree: the pytree structure of `(args, kwargs)`.
      in_avals: the flat input avals (shapes may hold dimension expressions).
      out_tree: the pytree structure of the result.
      out_avals: the flat output avals.
      in_shardings_hlo / out_shardings_hlo: one None per input / output (unspecified).
      nr_devices: the number of devices the module was lowered for.
      platforms: the platforms it was lowered for (`("cpu",)`).
      ordered_effects / unordered_effects: the effects of the module (none).
      disabled_safety_checks: the checks disabled at export.
      mlir_module_serialized: the module's StableHLO text, UTF-8 encoded.
      calling_convention_version: the version of the module's calling convention.
      module_kept_var_idx: the inputs the module takes (the others are unused).
      uses_global_constants: whether the module uses shape polymorphism.
    """

    fun_name: str
    in_tree: tree_util.PyTreeDef
    in_avals: tuple[ShapedArray, ...]
    out_tree: tree_util.PyTreeDef
    out_avals: tuple[ShapedArray, ...]
    _has_named_shardings: bool
    _in_named_shardings: tuple[Any, ...]
    _out_named_shardings: tuple[Any, ...]
    in_shardings_hlo: tuple[Any, ...]
    out_shardings_hlo: tuple[Any, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[Any, ...]
    unordered_effects: tuple[Any, ...]
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None

    def mlir_module(self, serialized: bool = True) -> Any:
        """The module: its StableHLO text, or with `serialized=False` a fresh `ir.Module`."""
        text = self.mlir_module_serialized.decode("utf-8")
        return text if serialized else stablehlo_parser.parse_module(text)

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    def in_shardings_jax(self, mesh: Any) -> Sequence[Any]:
        """The input shardings over `mesh` (None: unspecified)."""
        return tuple(self._in_named_shardings)

    def out_shardings_jax(self, mesh: Any) -> Sequence[Any]:
        """The output shardings over `mesh` (None: unspecified)."""
        return tuple(self._out_named_shardings)

    def has_vjp(self) -> bool:
        """Whether this Exported can give its VJP (so supports reverse-mode AD)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: takes the flat primal inputs then one cotangent per flat output,
        and gives a tuple of the flat inputs' cotangents.

        Raises:
          ValueError: no VJP is available (a deserialized Exported saved without it).
        """
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        vjp = _vjps.get(self)
        if vjp is None:
            # Exported (or read) once: every reverse pass of a call uses it.
            vjp = _vjps[self] = self._get_vjp(self)
        return vjp

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The serialized form (see `serialization.py`), with `vjp_order` orders of VJPs
        (1 allows `grad` of the deserialized function, 2 `grad(grad(...))`)."""
        from justjax._src.export import serialization
        return serialization.serialize(self, vjp_order=vjp_order)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the exported function on arguments of the pytree structure and types it was
        exported for; usable eagerly and under `jit`, `grad` and `vmap`."""
        fun = _imported.get(self)
        if fun is None:
            # One calling function per Exported: its custom_vjp is traced once per type.
            fun = _imported[self] = call_exported(self)
        return fun(*args, **kwargs)


_imported: weakref.WeakKeyDictionary[Exported, Callable[..., Any]] = \
    weakref.WeakKeyDictionary()
_vjps: weakref.WeakKeyDictionary[Exported, Exported] = weakref.WeakKeyDictionary()


def deserialize(blob: bytes | bytearray) -> Exported:
    """The Exported of a `serialize()`d blob (the function need not exist any more)."""
    from justjax._src.export import serialization
    return serialization.deserialize(blob)


# ---------------------------------------------------------------------------------------------
# Pytree node serialization registry.

serialization_registry: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
deserialization_registry: dict[str, tuple[type, Callable[[bytes], Any],
                                          Callable[[Any, Sequence[Any]], Any]]] = {}


def register_pytree_node_serialization(nodetype: type, *, serialized_name: str,
                                       serialize_auxdata: Callable[[Any], bytes],
                                       deserialize_auxdata: Callable[[bytes], Any],
                                       from_children: Callable[[Any, Sequence[Any]], Any]
                                       | None = None) -> type:
    """Registers how to (de)serialize pytree nodes of `nodetype` in `in_tree`/`out_tree`.

    Args:
      nodetype: a type registered as a pytree node (or a namedtuple with `from_children`).
      serialized_name: the name the serialization stores for the type.
      serialize_auxdata: node aux data -> bytes.
      deserialize_auxdata: bytes -> node aux data.
      from_children: (aux data, children) -> a node; default: the registered unflatten.

    Returns:
      `nodetype`, so this can decorate a class.
    """
    if nodetype in serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. Previous "
            f"registration was with serialized_name `{serialization_registry[nodetype][0]}`.")
    if serialized_name in deserialization_registry:
        raise ValueError(
            "Duplicate serialization registration for serialized_name "
            f"`{serialized_name}`. Previous registration was for type "
            f"`{deserialization_registry[serialized_name][0]}`.")
    if from_children is None:
        kind = tree_util.default_registry.node_types.get(nodetype)
        if kind is None:
            raise ValueError("If `from_children` is not present, you must call first"
                             f"`jax.tree_util.register_pytree_node` for `{nodetype}`")
        from_children = kind.make
    serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def _is_namedtuple(nodetype: type) -> bool:
    return (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")
            and all(isinstance(f, str) for f in nodetype._fields))


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Registers a namedtuple type for serialization of `in_tree`/`out_tree`.

    Args:
      nodetype: a `collections.namedtuple` class.
      serialized_name: the name the serialization stores for the type.

    Returns:
      `nodetype`.
    """
    if not _is_namedtuple(nodetype):
        raise ValueError("Use `jax.export.register_pytree_node_serialization` for types "
                         "other than `collections.namedtuple`.")
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(list(nodetype._fields)).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=lambda keys, children: nodetype(**dict(zip(keys, children, strict=True))))


def _serialize_ordereddict_keys(keys: Any) -> bytes:
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode("utf-8")
    raise NotImplementedError("Serialization of collections.OrderedDict is supported only "
                              f"when the keys are strings. Found keys: {keys}.")


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_serialize_ordereddict_keys,
    deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")))


# ---------------------------------------------------------------------------------------------
# Exporting.

def default_export_platform() -> str:
    """The platform exports are for when none is given: justjax's, `"cpu"`."""
    return "cpu"


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = (),
           _override_lowering_rules: Any = None) -> Callable[..., Exported]:
    """Exports a jitted function (`jax.export.export`).

    Args:
      fun_jit: the result of `jax.jit`.
      platforms: the platforms to export for (default: `("cpu",)`).
      disabled_checks: safety checks to skip (`DisabledSafetyCheck`).

    Returns:
      A function taking the arguments (arrays or `ShapeDtypeStruct`s, possibly with
      symbolic shapes) and returning the `Exported`.
    """
    if not isinstance(fun_jit, PjitFunction):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    chosen = tuple(platforms) if platforms is not None else (default_export_platform(),)
    overrides = tuple(_override_lowering_rules or ())

    def do_export(*args_specs: Any, **kwargs_specs: Any) -> Exported:
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        with _lowering_rules(overrides):
            return _export_traced(traced, chosen, tuple(disabled_checks))

    return do_export


@contextlib.contextmanager
def _lowering_rules(overrides: Sequence[tuple[Any, Any]]) -> Iterator[None]:
    """The (primitive, lowering rule) pairs of `export`'s `_override_lowering_rules` in force
    while the function is lowered."""
    saved = {prim: lowering.lowerings.get(prim) for prim, _ in overrides}
    try:
        for prim, rule in overrides:
            lowering.lowerings[prim] = rule
        yield
    finally:
        for prim, rule in saved.items():
            if rule is None:
                lowering.lowerings.pop(prim, None)
            else:
                lowering.lowerings[prim] = rule


def _export_traced(traced: stages.Traced, platforms: tuple[str, ...],
                   disabled_checks: tuple[DisabledSafetyCheck, ...]) -> Exported:
    sig = traced._signature
    closed = traced.jaxpr
    symbolic = bool(symbolic_specs.all_dim_vars(a.shape for a in closed.in_avals))
    if symbolic:
        _check_one_scope(closed.in_avals, sig.in_tree, sig.name)
        # Every input is kept: the dimension values are read off their shapes.
        steps, _ = symbolic_specs.solve_plan(closed.in_avals, sig.in_tree)
    info = compiler.lower_jaxpr(closed, sig.name, (False,) * len(closed.in_avals),
                              sig.keep_unused or symbolic, sig.out_paths)
    module = info.module
    if symbolic:
        export_poly.wrap_main(module, closed.in_avals, sig.in_tree, steps)
    if len(platforms) > 1:
        export_poly.add_platform_index(module)
    # Like JAX, a module taking global constants (dimension values, a platform index) is
    # marked as using shape polymorphism: it needs refinement before compilation.
    uses_global_constants = symbolic or len(platforms) > 1
    module.attributes["jax.uses_shape_polymorphism"] = uses_global_constants
    _check_custom_calls(module, disabled_checks)
    nr_in, nr_out = len(closed.in_avals), len(closed.out_avals)

    def get_vjp(primal: Exported) -> Exported:
        return _export_vjp(closed, primal)

    return Exported(
        fun_name=sig.name, in_tree=sig.in_tree, in_avals=tuple(closed.in_avals),
        out_tree=sig.out_tree, out_avals=tuple(closed.out_avals),
        _has_named_shardings=True, _in_named_shardings=(None,) * nr_in,
        _out_named_shardings=(None,) * nr_out, in_shardings_hlo=(None,) * nr_in,
        out_shardings_hlo=(None,) * nr_out, nr_devices=1, platforms=platforms,
        ordered_effects=(), unordered_effects=(), disabled_safety_checks=disabled_checks,
        mlir_module_serialized=stablehlo_printer.print_module(module).encode("utf-8"),
        calling_convention_version=maximum_supported_calling_convention_version,
        module_kept_var_idx=tuple(info.kept_inputs),
        uses_global_constants=uses_global_constants,
        _get_vjp=get_vjp)


def _check_one_scope(avals: Sequence[ShapedArray], in_tree: Any, fun_name: str) -> None:
    """JAX's error when the symbolic dimensions of the arguments come from several scopes."""
    first = None
    for i, aval in enumerate(avals):
        for d in aval.shape:
            if not symbolic_specs.is_symbolic_dim(d):
                continue
            if first is None:
                first = (d.scope, i)
            elif d.scope is not first[0]:
                raise ValueError(
                    f"Invalid mixing of symbolic scopes when exporting {fun_name}.\n"
                    f"Expected current (from {symbolic_specs.dim_descriptor(in_tree, first[1])}) "
                    f"scope {first[0]}\nand found for '{d}' "
                    f"({symbolic_specs.dim_descriptor(in_tree, i)}) scope {d.scope}\n"
                    "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                    "#user-specified-symbolic-constraints.")


def _check_custom_calls(module: ir.Module, disabled: Sequence[DisabledSafetyCheck]) -> None:
    """JAX's refusals: host callbacks (Python functions cannot be serialized), and custom
    calls whose targets have no stability guarantee."""
    allowed = {c.is_custom_call() for c in disabled} - {None}
    bad = []
    for op in module.walk():
        if op.opcode != "stablehlo.custom_call":
            continue
        if callable(getattr(op.attributes.get("mhlo.backend_config"), "callback", None)):
            raise NotImplementedError("serialization of host_callbacks is not yet implemented")
        target = op.attributes.get("call_target_name", "")
        if _STABLE_LAPACK.fullmatch(target) or target in _STABLE_TARGETS or target in allowed \
                or "ALL" in allowed:
            continue
        bad.append(f"stablehlo.custom_call @{target}")
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            "guarantees. See https://docs.jax.dev/en/latest/export/export.html"
            "#compatibility-guarantees-for-custom-calls. Examples are:\n"
            + "\n".join(bad) + ".\n")


def _export_vjp(closed: Any, primal: Exported) -> Exported:
    """The Exported of the VJP of the primal jaxpr `closed`: `fun_vjp_jax(*primals, *cts)`
    gives the tuple of the flat primals' cotangents."""
    from justjax._src.transformations import autodiff
    from justjax._src.core.jaxpr import jaxpr_as_fun
    from justjax._src.compilation.jit import jit

    fun = jaxpr_as_fun(closed)
    nr_in = len(primal.in_avals)

    def fun_vjp_jax(*args_and_out_cts_flat_jax: Any) -> tuple[Any, ...]:
        primals = args_and_out_cts_flat_jax[:nr_in]
        cts = args_and_out_cts_flat_jax[nr_in:]
        _, pullback = autodiff.vjp(lambda *xs: list(fun(*xs)), *primals)
        return tuple(pullback(list(cts)))

    specs = [*primal.in_avals, *(a.to_tangent_aval() for a in primal.out_avals)]
    structs = [stages.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
               for a in specs]
    return export(jit(fun_vjp_jax), platforms=primal.platforms,
                  disabled_checks=primal.disabled_safety_checks)(*structs)


# ---------------------------------------------------------------------------------------------
# Calling.

def call_exported(exported: Exported) -> Callable[..., Any]:
    """The function calling `exported` (`Exported.call`): checks the arguments' pytree
    structure, and differentiates through the exported VJP."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found {exported}.")

    @custom_vjp
    def f_flat(*args_flat: Any) -> Any:
        return tuple(call_exported_p.bind(*args_flat, exported=exported))

    def f_flat_vjp_fwd(*args_flat: Any) -> Any:
        return f_flat(*args_flat), args_flat

    def f_flat_vjp_bwd(residual: Any, ct_res_flat: Any) -> Any:
        exp_vjp = exported.vjp()
        fixed = [np.zeros(np.shape(ct), dtypes.float0) if want.dtype == dtypes.float0 else ct
                 for ct, want in zip(ct_res_flat, exp_vjp.in_avals[len(residual):],
                                     strict=True)]
        return tuple(exp_vjp.call(*residual, *fixed))

    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)

    def f_imported(*args: Any, **kwargs: Any) -> Any:
        args_flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            got = in_tree.unflatten([0] * in_tree.num_leaves)
            want = exported.in_tree.unflatten([0] * exported.in_tree.num_leaves)
            details = "\n".join(
                f"   - {symbolic_specs.args_kwargs_path_to_str(path)} is a {thing1} in the invocation and a "
                f"{thing2} when exported, so {explanation}.\n"
                for path, thing1, thing2, explanation in equality_errors(got, want))
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{exported.fun_name}' was exported, but they have the "
                "following structural differences:\n" + details)
        return exported.out_tree.unflatten(list(f_flat(*args_flat)))

    return f_imported


call = call_exported

call_exported_p = core.Primitive("call_exported", multiple_results=True)


def _call_exported_abstract_eval(*in_avals: ShapedArray, exported: Exported
                                 ) -> list[ShapedArray]:
    """The output avals, after JAX's checks of the arguments' ranks, dtypes and shapes."""
    for arg_idx, (want, got) in enumerate(zip(exported.in_avals, in_avals, strict=True)):
        def where(dim_idx: int | None = None) -> str:
            return symbolic_specs.dim_descriptor(exported.in_tree, arg_idx, dim_idx)
        if len(want.shape) != len(got.shape):
            raise ValueError(f"Rank mismatch for {where()}: expected {want.shape} and called "
                             f"with {got.shape}")
        if want.dtype != got.dtype:
            raise ValueError(f"Dtype mismatch for {where()}: expected {want.dtype} and called "
                             f"with {got.dtype}")
        for dim_idx, d in enumerate(want.shape):
            if not symbolic_specs.is_symbolic_dim(d) and d != got.shape[dim_idx]:
                raise ValueError(
                    f"Shape mismatch for {where(dim_idx)} (expected same constant): expected "
                    f"{_shape_str(want.shape)} and called with {_shape_str(got.shape)}")
    if not exported.uses_global_constants:
        return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in exported.out_avals]
    env = symbolic_specs.solve_dim_values(exported.in_avals, exported.in_tree,
                                      [a.shape for a in in_avals])
    return [ShapedArray(tuple(d.evaluate(env) if symbolic_specs.is_symbolic_dim(d) else d
                              for d in a.shape), a.dtype, a.weak_type)
            for a in exported.out_avals]


def _shape_str(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


call_exported_p.def_abstract_eval(_call_exported_abstract_eval)


def _call_exported_impl(*args: Any, exported: Exported) -> Any:
    from justjax._src.compilation import dispatch
    return dispatch.apply_primitive(call_exported_p, *args, exported=exported)


core.impl_rules[call_exported_p] = _call_exported_impl


def _merge_module(ctx: lowering.ModuleContext, sub: ir.Module, main_name: str) -> str:
    """Adds `sub`'s functions to `ctx`'s module as private ones under fresh names (its `main`
    as `main_name`), retargeting the calls among them; returns the name `main` got."""
    names: dict[str, str] = {}
    for fn in sub.functions:
        new_name = ctx.fresh_function_name(main_name if fn.name == "main" else fn.name)
        names[fn.name] = new_name
        fn.name = new_name
        fn.visibility = "private"
        ctx.module.functions.append(fn)
    for op in sub.walk():
        callee = op.attributes.get("callee")
        if op.opcode == "func.call" and isinstance(callee, ir.Symbol):
            op.attributes["callee"] = ir.Symbol(names[callee.name])
    return names["main"]


def _call_exported_lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value,
                            exported: Exported) -> list[ir.Value]:
    """`func.call @call_exported_<name>(...)` of the exported module's `main`, merged into
    the module being built (once per module and Exported)."""
    module_ctx = ctx.module_context
    key = ("call_exported", id(exported))
    name = module_ctx.function_names.get(key)
    platform_args = _platform_index_args(ctx.builder, exported)
    in_types = [v.type for v in platform_args] + [
        lowering.aval_to_type(ctx.avals_in[i]) for i in exported.module_kept_var_idx]
    static = all(t.is_static for t in in_types)
    if static:
        key += tuple(str(t) for t in in_types)
        name = module_ctx.function_names.get(key)
    if name is None:
        sub = exported.mlir_module(serialized=False)
        if static and exported.uses_global_constants:
            # Known shapes: the module is refined to them now (JAX refines before compiling).
            sub = refine_shapes.refine_shapes(sub, in_types)
        name = _merge_module(module_ctx, sub, f"call_exported_{exported.fun_name}")
        module_ctx.function_names[key] = name
        module_ctx.keepalives.append(exported)
    callee = module_ctx.module.function(name)
    kept = platform_args + [
        _convert_to(ctx.builder, args[i], t) for i, t in zip(
            exported.module_kept_var_idx, callee.arg_types[len(platform_args):], strict=True)]
    call_op = ctx.builder.op("func.call", kept, list(callee.result_types),
                             {"callee": ir.Symbol(name)})
    return [_convert_to(ctx.builder, v, lowering.aval_to_type(aval))
            for v, aval in zip(call_op.results, ctx.avals_out, strict=True)]


def _platform_index_args(b: ir.Builder, exported: Exported) -> list[ir.Value]:
    """The platform index argument of a multi-platform module (none for one platform), after
    JAX's check that the module was exported for the CPU."""
    if "cpu" in exported.platforms:
        index = exported.platforms.index("cpu")
    elif DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
        index = 0
    else:
        raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                         f"'{exported.platforms}' but it is used on '('cpu',)'.")
    if len(exported.platforms) == 1:
        return []
    return [b.constant(np.asarray(index, np.int32), np.int32)]


def _convert_to(b: ir.Builder, value: ir.Value, wanted: ir.Type) -> ir.Value:
    """`value` as type `wanted` when the types differ only in how a dimension is known
    (symbolic here, dynamic in the merged module): a `stablehlo.convert`, as JAX inserts."""
    if value.type == wanted:
        return value
    return b.one("stablehlo.convert", [value], wanted)


lowering.register_lowering(call_exported_p, _call_exported_lowering)


def _call_exported_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                           dims: Sequence[int | None], *, exported: Exported
                           ) -> tuple[list[Any], list[int]]:
    """vmap of an exported call: one call per element of the mapped axis, in a loop
    (`lax.map`), since the module is fixed to the exported shapes. (JAX 0.10.2 has no
    batching rule for `call_exported`.)"""
    from justjax._src.lax.control_flow.library import map as lax_map

    mapped = [i for i, d in enumerate(dims) if d is not None]
    moved = [batching.moveaxis(vals[i], dims[i], 0) for i in mapped]

    def one(xs: Sequence[Any]) -> list[Any]:
        full = list(vals)
        for i, x in zip(mapped, xs, strict=True):
            full[i] = x
        return list(call_exported_p.bind(*full, exported=exported))

    outs = lax_map(one, moved)
    return list(outs), [0] * len(outs)


batching.primitive_batchers[call_exported_p] = _call_exported_batcher
# No jvp rule, as in JAX: `Exported.call` differentiates through its custom_vjp.
