"""justjax's serialized form of an `Exported` (`Exported.serialize()`, `jax.export.deserialize`).

JAX serializes to a FlatBuffer holding a VHLO bytecode module; justjax writes a format of its
own, readable without the function that was exported and stable across processes and
justjax versions:

    b"justjax.export\\n"            the magic line
    b"<format version>\\n"          an integer (this module writes 1 and reads <= 1)
    <UTF-8 JSON object>             the Exported, below

The JSON object (keys in this order; readers ignore keys they do not know):

    fun_name                     str
    in_tree, out_tree            pytree structures, nested objects {"kind": ...}:
                                 "leaf" | "none" | "tuple"/"list" with "children" |
                                 "dict" with "keys" (strings) and "children" |
                                 "custom" with "name" (the registered serialized_name),
                                 "auxdata" (hex of the registered serialize_auxdata bytes)
                                 and "children"
    in_avals, out_avals          [{"shape": [dim, ...], "dtype": "float32", "weak_type": bool}]
                                 (a PRNG key's dtype is "key<threefry2x32>")
                                 a dim is an int, or the text of a dimension expression
                                 ("b", "2*b + 1") of the scope below
    symbolic_constraints         the SymbolicScope's constraints (["b >= 2", ...])
    platforms                    ["cpu"]
    nr_devices                   int
    calling_convention_version   int
    module_kept_var_idx          [int]
    uses_global_constants        bool (shape polymorphism)
    disabled_safety_checks       ["platform", "custom_call:<target>", ...]
    mlir_module                  the StableHLO MLIR text of the module, as
                                 `stablehlo_printer` writes it and `stablehlo_parser` reads
    vjp                          the VJP's Exported, same layout, or null

`serialize(exp, vjp_order=k)` includes `k` orders of VJPs (needed for `k` nested `grad`s of
the deserialized function); a deserialized Exported without a `vjp` entry has no VJP.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.core import dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.shape_poly import SymbolicScope, parse_dim
from justjax._src.export import _export, symbolic_specs
from justjax._src.lax import prng
from justjax._src.pytrees.treedef import PyTreeDef

MAGIC = b"justjax.export\n"
FORMAT_VERSION = 1


def serialize(exp: _export.Exported, vjp_order: int = 0) -> bytearray:
    """The bytes of `exp` with `vjp_order` orders of VJPs.

    Raises:
      ValueError: `exp` has no VJP and `vjp_order > 0`.
    """
    payload = json.dumps(_exported_to_json(exp, vjp_order), separators=(",", ":"))
    return bytearray(MAGIC + f"{FORMAT_VERSION}\n".encode() + payload.encode("utf-8"))


def deserialize(blob: bytes | bytearray) -> _export.Exported:
    """The Exported of `serialize`'s bytes.

    Raises:
      ValueError: the bytes are not a justjax export, or of a newer format version.
    """
    blob = bytes(blob)
    if not blob.startswith(MAGIC):
        raise ValueError("Cannot deserialize: the data is not a serialized justjax Exported")
    version_line, _, payload = blob[len(MAGIC):].partition(b"\n")
    try:
        version = int(version_line)
    except ValueError:
        raise ValueError("Cannot deserialize: malformed format version") from None
    if version > FORMAT_VERSION:
        raise ValueError(f"Cannot deserialize: format version {version} is newer than the "
                         f"newest this justjax reads ({FORMAT_VERSION})")
    return _exported_from_json(json.loads(payload.decode("utf-8")))


def _exported_to_json(exp: _export.Exported, vjp_order: int) -> dict[str, Any]:
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of "
                             "high-enough order")
        vjp = _exported_to_json(exp.vjp(), vjp_order - 1)
    return {
        "fun_name": exp.fun_name,
        "in_tree": _tree_to_json(exp.in_tree),
        "out_tree": _tree_to_json(exp.out_tree),
        "in_avals": [_aval_to_json(a) for a in exp.in_avals],
        "out_avals": [_aval_to_json(a) for a in exp.out_avals],
        "symbolic_constraints": list(symbolic_specs.scope_constraints(exp.in_avals)),
        "platforms": list(exp.platforms),
        "nr_devices": exp.nr_devices,
        "calling_convention_version": exp.calling_convention_version,
        "module_kept_var_idx": list(exp.module_kept_var_idx),
        "uses_global_constants": exp.uses_global_constants,
        "disabled_safety_checks": [str(c) for c in exp.disabled_safety_checks],
        "mlir_module": exp.mlir_module(),
        "vjp": vjp,
    }


def _exported_from_json(data: dict[str, Any]) -> _export.Exported:
    scope = SymbolicScope(data.get("symbolic_constraints", ()))
    in_avals = tuple(_aval_from_json(a, scope) for a in data["in_avals"])
    out_avals = tuple(_aval_from_json(a, scope) for a in data["out_avals"])
    vjp_data = data.get("vjp")
    get_vjp = None if vjp_data is None else _vjp_getter(vjp_data)
    nr_in, nr_out = len(in_avals), len(out_avals)
    return _export.Exported(
        fun_name=data["fun_name"], in_tree=_tree_from_json(data["in_tree"]), in_avals=in_avals,
        out_tree=_tree_from_json(data["out_tree"]), out_avals=out_avals,
        _has_named_shardings=True, _in_named_shardings=(None,) * nr_in,
        _out_named_shardings=(None,) * nr_out, in_shardings_hlo=(None,) * nr_in,
        out_shardings_hlo=(None,) * nr_out, nr_devices=int(data["nr_devices"]),
        platforms=tuple(data["platforms"]), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=tuple(_export.DisabledSafetyCheck(c)
                                     for c in data["disabled_safety_checks"]),
        mlir_module_serialized=data["mlir_module"].encode("utf-8"),
        calling_convention_version=int(data["calling_convention_version"]),
        module_kept_var_idx=tuple(data["module_kept_var_idx"]),
        uses_global_constants=bool(data["uses_global_constants"]), _get_vjp=get_vjp)


def _vjp_getter(vjp_data: dict[str, Any]) -> Any:
    """`Exported._get_vjp` of a deserialized Exported: the stored VJP, read when asked."""
    def get_vjp(_: _export.Exported) -> _export.Exported:
        return _exported_from_json(vjp_data)
    return get_vjp


# ---------------------------------------------------------------------------------------------
# Avals.

def _dtype_name(dtype: Any) -> str:
    """`float32`, `float0`, or `key<threefry2x32>` for PRNG keys (by implementation name)."""
    if isinstance(dtype, prng.KeyTy):
        return f"key<{dtype._impl.name}>"
    if dtype == dtypes.float0:
        return "float0"
    return np.dtype(dtype).name


def _dtype_from_name(name: str) -> Any:
    if name == "float0":
        return dtypes.float0
    if name.startswith("key<"):
        impl = prng.PRNG_IMPLS.get(name[4:-1])
        if impl is None:
            raise ValueError(f"Cannot deserialize a key of unknown PRNG implementation {name}")
        return prng.KeyTy(impl)
    return np.dtype(getattr(dtypes, name, name))


def _aval_to_json(aval: ShapedArray) -> dict[str, Any]:
    if dtypes.is_extended(aval.dtype) and not isinstance(aval.dtype, prng.KeyTy):
        raise NotImplementedError(f"serialization of an Exported with a {aval.dtype} input "
                                  "or output")
    return {"shape": [d if isinstance(d, int) else str(d) for d in aval.shape],
            "dtype": _dtype_name(aval.dtype), "weak_type": bool(aval.weak_type)}


def _aval_from_json(data: dict[str, Any], scope: Any) -> ShapedArray:
    shape = tuple(d if isinstance(d, int) else parse_dim(d, scope)
                  for d in data["shape"])
    return ShapedArray(shape, _dtype_from_name(data["dtype"]), bool(data["weak_type"]))


# ---------------------------------------------------------------------------------------------
# Pytree structures.

def _tree_to_json(tree: PyTreeDef) -> dict[str, Any]:
    node = tree.node_data()
    children = [_tree_to_json(c) for c in tree.children()]
    if node is None:
        return {"kind": "leaf"}
    node_type, aux = node
    if node_type is type(None):
        return {"kind": "none"}
    if node_type in (tuple, list):
        return {"kind": node_type.__name__, "children": children}
    if node_type is dict:
        for key in aux:
            if not isinstance(key, str):
                raise TypeError("Serialization is supported only for dictionaries with string "
                                f"keys. Found key {key} of type {type(key)}.")
        return {"kind": "dict", "keys": list(aux), "children": children}
    if node_type in _export.serialization_registry:
        name, serialize_aux = _export.serialization_registry[node_type]
        blob = serialize_aux(aux)
        if not isinstance(blob, (bytes, bytearray)):
            raise ValueError("The custom serialization function for `node_type` must return a "
                             f"`bytes` object. It returned a {type(blob)}.")
        return {"kind": "custom", "name": name, "auxdata": bytes(blob).hex(),
                "children": children}
    raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                     f"`{node_type}`. Use `export.register_pytree_node_serialization` or "
                     "`export.register_namedtuple_serialization`.")


def _tree_to_pytree(data: dict[str, Any]) -> Any:
    """A pytree of the structure `data`, with 0.0 leaves."""
    kind = data["kind"]
    children = [_tree_to_pytree(c) for c in data.get("children", ())]
    if kind == "leaf":
        return 0.0
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(data["keys"], children, strict=True))
    if kind == "custom":
        name = data["name"]
        if name not in _export.deserialization_registry:
            raise ValueError(f"Cannot deserialize a PyTreeDef containing an unregistered type "
                             f"`{name}`. Use `export.register_pytree_node_serialization` or "
                             "`export.register_namedtuple_serialization`.")
        _, deserialize_aux, from_children = _export.deserialization_registry[name]
        return from_children(deserialize_aux(bytes.fromhex(data["auxdata"])), children)
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")


def _tree_from_json(data: dict[str, Any]) -> PyTreeDef:
    return tree_util.tree_structure(_tree_to_pytree(data))
