"""The opcode registry: what each StableHLO, CHLO, func and hlo opcode of the IR is.

One `Opcode` entry per opcode holds every fact the compiler reads about it: its arity and
type rule (verifier), whether it is elementwise, commutative, fusible and expensive
(fusion, buffer assignment), its cost per output element in XLA's `HloCostAnalysis`
(cost model), and how it prints (its XLA HLO name, its MLIR properties, its pretty form).
Passes, printers, the verifier and the backends derive their opcode sets from this table
(`names(...)`) instead of restating them, so adding an opcode is one entry here.

Cost facts follow XLA's `HloCostAnalysis` on the module as given: an elementwise op costs
one flop per output element, `exp`, `log`, `logistic`, `sin`, `sqrt`, `pow`, `erf` ...
one transcendental instead. XLA expands the other CHLO ops into StableHLO before it counts;
`chlo.square` becomes a multiply (one flop) and `chlo.conj` real, imag, negate and complex
(four), while the polynomial expansions of the special functions are counted here as one
transcendental per element (their real counts depend on XLA's expansion).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

__all__ = ["Keyword", "Opcode", "OPCODES", "lookup", "is_registered", "names", "hlo_name",
           "is_elementwise"]

# Values of `Opcode.expense` (XLA CPU's `IsExpensive`).
CHEAP = "cheap"
EXPENSIVE = "expensive"
COMPLEX_ONLY = "complex"  # expensive for complex element types only (sin, cos, abs ...)

# Values of `Opcode.bytes_read` (what the cost model counts as read).
READS_ALL = "all"
READS_NOTHING = "free"     # neither reads nor writes count (constants, returns, tokens)
READS_OUTPUT = "output"    # reads only as many bytes of operand 0 as it produces (slices)
READS_UPDATE = "update"    # reads and writes only its update (dynamic_update_slice)

# Values of `Opcode.control_flow`.
LOOP = "loop"          # regions run an unknown number of times: counted once
BRANCH = "branch"      # one region runs: the dearest counts
CALL = "call"          # runs the callee function


@dataclass(frozen=True)
class Keyword:
    """One `keyword = value` of a pretty form (`dims = [0, 1]`): the attribute it prints,
    the kind of value (`dims`, `int`, `enum`, `string`, `bool`), and whether it may be
    absent."""

    keyword: str
    attribute: str
    kind: str
    optional: bool = False


@dataclass(frozen=True)
class Opcode:
    """The facts about one opcode.

    Attributes:
      name: the IR opcode, `dialect.op` (`stablehlo.add`, `chlo.erf`, `func.call`).
      arity: its number of operands; None when variadic.
      elementwise: each result element depends only on the operand elements at its index
        (StableHLO's `Elementwise` trait).
      same_type: its operands and its result have one type (binary and unary arithmetic).
      commutative: a binary op whose operands may be swapped.
      flops: flops per output element (XLA's `HloCostAnalysis`).
      transcendentals: transcendentals per output element (XLA's `HloCostAnalysis`).
      cost_rule: a cost formula of its own in `passes/cost.py` (dot, convolution, reduce,
        reduce_window, fft, sort), or None.
      bytes_read: what its bytes accessed count (`READS_*`).
      control_flow: LOOP, BRANCH or CALL for ops that run nested computations, else None.
      fusible: XLA CPU fuses it into loop fusions.
      wrapped: left alone, XLA CPU's `FusionWrapper` puts it into a fusion of its own.
      expense: XLA CPU's `IsExpensive`: CHEAP, EXPENSIVE or COMPLEX_ONLY (divide,
        remainder and convert depend on their operands, decided by the fusion pass).
      permuting: reads its operand's elements in another order (slice, transpose ...).
      in_place: its result may overwrite operand 0 (dynamic_update_slice, scatter).
      side_effect: it matters beyond its results, or must run once per call (I/O, random
        state, tokens, barriers); never removed, duplicated or moved by a pass.
      hlo: its XLA HLO opcode (`dot`, `broadcast`, `exponential-minus-one`).
      hlo_attributes: whether the HLO printer spells its attributes as XLA does (by a
        printer of its own, or it has none to print); else each prints as `key=value`.
      properties: its MLIR inherent attributes, printed in `<{...}>` in generic form.
      print_form: its StableHLO pretty form: "operands" (`op %a, %b : type`),
        "functional" (`op %a : (types) -> type`), "nullary" (`op : type`), "keywords"
        (`op %a, kw = v : (types) -> type`), "keywords_same" (the same with one type
        when all agree), "chlo" (`op %a : type -> type`), "chlo_broadcast"
        (`op %a, %b : (types) -> type`), or None (a printer of its own or the generic form).
      keywords: the `kw = value` pairs of a keywords form, in order.
      result_names: the names MLIR gives its results (`%values, %indices`), if any.
    """

    name: str
    arity: int | None = None
    elementwise: bool = False
    same_type: bool = False
    commutative: bool = False
    flops: float = 0.0
    transcendentals: float = 0.0
    cost_rule: str | None = None
    bytes_read: str = READS_ALL
    control_flow: str | None = None
    fusible: bool = False
    wrapped: bool = False
    expense: str = CHEAP
    permuting: bool = False
    in_place: bool = False
    side_effect: bool = False
    hlo: str = ""
    hlo_attributes: bool = False
    properties: frozenset[str] = frozenset()
    print_form: str | None = None
    keywords: tuple[Keyword, ...] = ()
    result_names: tuple[str, ...] = ()

    @property
    def dialect(self) -> str:
        """`stablehlo`, `chlo`, `func` or `hlo`."""
        return self.name.split(".", 1)[0]

    @property
    def transcendental(self) -> bool:
        """Whether XLA counts it as a transcendental (exp, log, sin, erf ...)."""
        return self.transcendentals > 0


def _default_hlo(name: str) -> str:
    return name.split(".", 1)[-1].replace("_", "-")


_table: dict[str, Opcode] = {}


def _add(names: str, dialect: str = "stablehlo", **facts: Any) -> None:
    """Registers each of the space-separated `names` of `dialect` with `facts`."""
    for short in names.split():
        name = f"{dialect}.{short}"
        assert name not in _table, name
        entry = Opcode(name, **facts)
        if not entry.hlo:
            entry = dataclasses.replace(entry, hlo=_default_hlo(name))
        _table[name] = entry


def _props(*attributes: str) -> frozenset[str]:
    return frozenset(attributes)


# ---------------------------------------------------------------------------------------------
# StableHLO elementwise ops. All fuse into loop kernels and are wrapped when alone.

_ELEMENTWISE = dict(elementwise=True, fusible=True, wrapped=True, print_form="operands")
_ARITH = dict(_ELEMENTWISE, same_type=True, flops=1.0)
_MATH = dict(_ELEMENTWISE, same_type=True, transcendentals=1.0, expense=EXPENSIVE)

_add("negate floor ceil round_nearest_afz round_nearest_even not popcnt", arity=1, **_ARITH)
_add("count_leading_zeros", arity=1, hlo="clz", **_ARITH)
_add("sign", arity=1, expense=COMPLEX_ONLY, **_ARITH)
_add("exponential exponential_minus_one log log_plus_one logistic tanh sqrt rsqrt cbrt",
     arity=1, **_MATH)
_add("sine cosine tan", arity=1, **dict(_MATH, expense=COMPLEX_ONLY))
_add("add multiply maximum minimum and or xor", arity=2, commutative=True, **_ARITH)
_add("subtract divide remainder shift_left shift_right_arithmetic shift_right_logical",
     arity=2, **_ARITH)
_add("power atan2", arity=2, **_MATH)
# Not one type: abs of complex is real, is_finite gives i1, convert changes the type.
_add("abs", arity=1, expense=COMPLEX_ONLY, **dict(_ELEMENTWISE, flops=1.0))
_add("convert is_finite real imag", arity=1, **dict(_ELEMENTWISE, flops=1.0))
_add("clamp", arity=3, **dict(_ELEMENTWISE, flops=1.0))
_add("complex compare", arity=2, **dict(_ELEMENTWISE, flops=1.0, print_form=None))
_add("select", arity=3, **dict(_ELEMENTWISE, flops=1.0, print_form=None))
# XLA counts no flops for a reinterpretation or a rounding of the mantissa.
_add("bitcast_convert reduce_precision", arity=1, **dict(_ELEMENTWISE, print_form=None))

# ---------------------------------------------------------------------------------------------
# CHLO: XLA expands these into StableHLO before fusion; here they fuse whole, as expensive
# as their expansions (but square and conj).

_CHLO = dict(elementwise=True, fusible=True, wrapped=True, transcendentals=1.0,
             expense=EXPENSIVE, print_form="chlo")
_add("acos acosh asin asinh atan atanh bessel_i1e cosh digamma erf erf_inv erfc lgamma sinh",
     dialect="chlo", arity=1, **_CHLO)
_add("square", dialect="chlo", arity=1, **dict(_CHLO, transcendentals=0.0, flops=1.0,
                                                expense=CHEAP))
_add("conj", dialect="chlo", arity=1, **dict(_CHLO, transcendentals=0.0, flops=4.0,
                                              expense=CHEAP))
_add("next_after polygamma zeta", dialect="chlo", arity=2,
     **dict(_CHLO, print_form="chlo"))
# Read from StableHLO text only: no backend implements them, so they do not fuse. XLA
# expands is_inf into abs and compare, is_pos_inf/is_neg_inf into one compare.
_TEXT_ONLY = dict(_CHLO, fusible=False, wrapped=False)
_add("tan", dialect="chlo", arity=1, **_TEXT_ONLY)
_add("is_inf", dialect="chlo", arity=1,
     **dict(_TEXT_ONLY, transcendentals=0.0, flops=2.0, expense=CHEAP))
_add("is_neg_inf is_pos_inf", dialect="chlo", arity=1,
     **dict(_TEXT_ONLY, transcendentals=0.0, flops=1.0, expense=CHEAP))
_add("top_k", dialect="chlo", arity=1, expense=EXPENSIVE, properties=_props("k"),
     result_names=("values", "indices"))

# ---------------------------------------------------------------------------------------------
# Data movement: free in flops.

_add("broadcast_in_dim", arity=1, fusible=True, wrapped=True, hlo="broadcast")
_add("reshape transpose", arity=1, fusible=True, permuting=True)
_add("reverse", arity=1, fusible=True, wrapped=True, permuting=True)
_add("slice", arity=1, fusible=True, wrapped=True, permuting=True, bytes_read=READS_OUTPUT)
_add("concatenate", fusible=True, permuting=True)
_add("pad", arity=2, fusible=True, wrapped=True)
_add("iota", arity=0, fusible=True, wrapped=True)
_add("dynamic_slice", fusible=True, wrapped=True, bytes_read=READS_OUTPUT)
_add("dynamic_update_slice", fusible=True, wrapped=True, in_place=True,
     bytes_read=READS_UPDATE)
_add("gather", arity=2, fusible=True, wrapped=True, expense=EXPENSIVE,
     bytes_read=READS_OUTPUT,
     properties=_props("dimension_numbers", "indices_are_sorted", "slice_sizes"))
_add("scatter", wrapped=True, in_place=True, expense=EXPENSIVE,
     properties=_props("indices_are_sorted", "scatter_dimension_numbers", "unique_indices"))
_add("broadcast", arity=1)
_add("dynamic_broadcast_in_dim dynamic_reshape real_dynamic_slice dynamic_iota")
_add("dynamic_gather", properties=_props("dimension_numbers", "indices_are_sorted"))
_add("get_dimension_size", arity=1)
_add("constant", arity=0, bytes_read=READS_NOTHING)

# ---------------------------------------------------------------------------------------------
# Computation with formulas of their own in the cost model.

_add("dot_general", arity=2, cost_rule="dot", expense=EXPENSIVE, hlo="dot")
_add("dot", arity=2, expense=EXPENSIVE)
_add("convolution", arity=2, cost_rule="convolution", expense=EXPENSIVE)
_add("reduce", fusible=True, wrapped=True, cost_rule="reduce", expense=EXPENSIVE,
     properties=_props("dimensions"))
_add("reduce_window", cost_rule="reduce_window", expense=EXPENSIVE,
     properties=_props("base_dilations", "padding", "window_dilations", "window_dimensions",
                       "window_strides"))
_add("dynamic_reduce_window")
_add("select_and_scatter", arity=3, expense=EXPENSIVE,
     properties=_props("padding", "window_dimensions", "window_strides"))
_add("sort", cost_rule="sort", expense=EXPENSIVE, properties=_props("dimension", "is_stable"))
_add("fft", arity=1, cost_rule="fft", expense=EXPENSIVE,
     properties=_props("fft_length", "fft_type"))
_add("cholesky", arity=1, expense=EXPENSIVE)
_add("triangular_solve", arity=2, expense=EXPENSIVE,
     properties=_props("left_side", "lower", "transpose_a", "unit_diagonal"))
_add("einsum", arity=2)
_add("map", properties=_props("dimensions"))
for _name in ("batch_norm_grad", "batch_norm_inference", "batch_norm_training"):
    _add(_name, properties=_props("epsilon", "feature_index"))
_add("rng", arity=3, expense=EXPENSIVE)
_add("rng_bit_generator", arity=1, expense=EXPENSIVE, result_names=("output_state", "output"))

# ---------------------------------------------------------------------------------------------
# Control flow, calls, custom calls, tuples and tokens.

_add("while", control_flow=LOOP, expense=EXPENSIVE)
_add("case", control_flow=BRANCH, expense=EXPENSIVE, hlo="conditional")
_add("if", arity=1, control_flow=BRANCH, expense=EXPENSIVE, hlo="conditional")
_add("return", bytes_read=READS_NOTHING)
_add("call", dialect="func", control_flow=CALL, expense=EXPENSIVE,
     properties=_props("arg_attrs", "callee", "res_attrs"))
_add("return", dialect="func", bytes_read=READS_NOTHING)
_add("fusion", dialect="hlo", expense=EXPENSIVE)
_add("custom_call", expense=EXPENSIVE)
_add("composite", properties=_props("composite_attributes", "decomposition", "name",
                                    "version"))
_add("optimization_barrier", bytes_read=READS_NOTHING, hlo="opt-barrier")
# Shardy's annotation of a value's sharding (`with_sharding_constraint`): read by the SPMD
# partitioner, which replaces it; no backend runs it.
_add("sharding_constraint", dialect="sdy", arity=1, properties=_props("sharding"))
# Shardy's manual computation (`shard_map` in a jitted program): its region is the program of
# one device, on the blocks its operands' `in_shardings` cut, over the `manual_axes`; the SPMD
# partitioner inlines it. `sdy.return` ends its region.
_add("manual_computation", dialect="sdy", control_flow=BRANCH, expense=EXPENSIVE,
     properties=_props("in_shardings", "manual_axes", "out_shardings"))
_add("return", dialect="sdy", bytes_read=READS_NOTHING)
# A rotation along `dimension` (element i of the result is element (i + shift) mod n of the
# operand): the SPMD partitioner's name for a concatenate of two slices of one value
# (`jnp.roll`), which it splits with collective-permutes as XLA's; it never leaves the
# partitioner.
_add("rotate", dialect="spmd", arity=1, properties=_props("dimension", "shift"))
_add("tuple", bytes_read=READS_NOTHING)
_add("get_tuple_element", arity=1, bytes_read=READS_NOTHING, properties=_props("index"))
_add("after_all create_token", bytes_read=READS_NOTHING)
_add("infeed", arity=1, properties=_props("infeed_config", "layout"))
_add("outfeed", properties=_props("outfeed_config"))
_add("send", properties=_props("channel_handle", "is_host_transfer", "source_target_pairs"))
_add("recv", arity=1,
     properties=_props("channel_handle", "is_host_transfer", "source_target_pairs"))

# ---------------------------------------------------------------------------------------------
# Collectives and replica queries.

_add("all_gather", properties=_props("all_gather_dim", "channel_handle", "replica_groups",
                                     "use_global_device_ids"))
_add("all_reduce", properties=_props("channel_handle", "replica_groups",
                                     "use_global_device_ids"))
_add("all_to_all", properties=_props("channel_handle", "concat_dimension", "replica_groups",
                                     "split_count", "split_dimension"))
_add("reduce_scatter", properties=_props("channel_handle", "replica_groups",
                                         "scatter_dimension", "use_global_device_ids"))
_add("collective_broadcast", arity=1, properties=_props("channel_handle", "replica_groups"))
_add("collective_permute", arity=1,
     properties=_props("channel_handle", "source_target_pairs"))
_add("replica_id partition_id", arity=0)


def _update(names: str, **facts: Any) -> None:
    """Sets `facts` on each of the space-separated registered `names`."""
    for name in names.split():
        _table[name] = dataclasses.replace(_table[name], **facts)


# The ops the HLO printer knows the XLA spelling of (the rest print generic attributes).
_update(" ".join("stablehlo." + n for n in (
    "abs add after_all and atan2 bitcast_convert broadcast_in_dim case cbrt ceil cholesky "
    "clamp compare complex concatenate constant convert convolution cosine "
    "count_leading_zeros custom_call divide dot_general dynamic_slice dynamic_update_slice "
    "exponential exponential_minus_one fft floor gather imag iota is_finite log log_plus_one "
    "logistic maximum minimum multiply negate not optimization_barrier or pad popcnt power "
    "real reduce reduce_precision reduce_window remainder reshape reverse rng_bit_generator "
    "round_nearest_afz round_nearest_even rsqrt scatter select select_and_scatter "
    "shift_left shift_right_arithmetic shift_right_logical sign sine slice sort sqrt "
    "subtract tan tanh transpose triangular_solve tuple while xor").split()) + " func.call",
    hlo_attributes=True)

_update("stablehlo.reshape stablehlo.bitcast_convert stablehlo.dynamic_update_slice "
        "stablehlo.dynamic_reshape", print_form="functional")
_update("stablehlo.replica_id stablehlo.partition_id", print_form="nullary")


def _keywords(name: str, *keywords: tuple[str, ...], same: bool = False) -> None:
    """Gives `name` a keywords pretty form with `keywords` (keyword, attribute, kind[,
    "optional"])."""
    entries = tuple(Keyword(k, a, kind, bool(rest)) for k, a, kind, *rest in keywords)
    _update("stablehlo." + name, keywords=entries,
            print_form="keywords_same" if same else "keywords")


for _name in ("broadcast_in_dim", "dynamic_broadcast_in_dim"):
    _keywords(_name, ("dims", "broadcast_dimensions", "dims"))
_keywords("transpose", ("dims", "permutation", "dims"))
_keywords("reverse", ("dims", "dimensions", "dims"), same=True)
_keywords("concatenate", ("dim", "dimension", "int"))
_keywords("dynamic_slice", ("sizes", "slice_sizes", "dims"))
_keywords("pad", ("low", "edge_padding_low", "dims"), ("high", "edge_padding_high", "dims"),
          ("interior", "interior_padding", "dims"))
_keywords("fft", ("type", "fft_type", "enum"), ("length", "fft_length", "dims"))
_keywords("get_dimension_size", ("dim", "dimension", "int"))
_keywords("dynamic_iota", ("dim", "iota_dimension", "int"))
_keywords("broadcast", ("sizes", "broadcast_sizes", "dims"))
_keywords("rng", ("distribution", "rng_distribution", "enum"))
_keywords("rng_bit_generator", ("algorithm", "rng_algorithm", "enum"))
_keywords("einsum", ("config", "einsum_config", "string"))
_keywords("cholesky", ("lower", "lower", "bool", "optional"), same=True)

# Collectives without a channel are not effectful (as in XLA): every replica runs the same
# optimized program, so an unused one is removed from all replicas alike.
_update("stablehlo.outfeed stablehlo.infeed stablehlo.send stablehlo.recv stablehlo.rng "
        "stablehlo.rng_bit_generator stablehlo.optimization_barrier stablehlo.create_token "
        "stablehlo.after_all", side_effect=True)

# CHLO's implicitly broadcasting binary ops (from StableHLO text only: JAX's lowering
# broadcasts first), costing what the op they broadcast costs.
for _name in ("add and atan2 complex divide maximum minimum multiply next_after or polygamma "
              "power remainder shift_left shift_right_arithmetic shift_right_logical "
              "subtract xor zeta").split():
    _base = _table.get(f"stablehlo.{_name}") or _table[f"chlo.{_name}"]
    _add(f"broadcast_{_name}", dialect="chlo", arity=2, print_form="chlo_broadcast",
         flops=_base.flops, transcendentals=_base.transcendentals)

OPCODES: Mapping[str, Opcode] = MappingProxyType(_table)


# ---------------------------------------------------------------------------------------------
# Queries.

def lookup(name: str) -> Opcode | None:
    """The entry of opcode `name`, or None if it is not registered."""
    return OPCODES.get(name)


def is_registered(name: str) -> bool:
    """Whether `name` is a registered opcode."""
    return name in OPCODES


def names(predicate: Callable[[Opcode], bool] | None = None, **facts: Any) -> frozenset[str]:
    """The opcodes whose entries satisfy `predicate` and have every one of `facts`.

    Args:
      predicate: a test of an entry, or None.
      facts: field (or property) values, e.g. `elementwise=True`, `dialect="chlo"`,
        `transcendental=True`.
    Returns:
      The matching opcode names.
    """
    return frozenset(
        name for name, entry in OPCODES.items()
        if (predicate is None or predicate(entry))
        and all(getattr(entry, key) == value for key, value in facts.items()))


def hlo_name(name: str) -> str:
    """The XLA HLO opcode of `name` (`stablehlo.dot_general` -> `dot`); an unregistered
    opcode keeps its name without dialect, `_` written `-`."""
    entry = OPCODES.get(name)
    return entry.hlo if entry is not None else _default_hlo(name)


def is_elementwise(name: str) -> bool:
    """Whether `name` is a registered elementwise opcode."""
    entry = OPCODES.get(name)
    return entry is not None and entry.elementwise
