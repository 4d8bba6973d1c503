"""The opcode registry (`hlo/opcodes.py`): every opcode the project uses has an entry, the
entries are consistent, and the tables derived from them say what XLA says."""
from __future__ import annotations

import importlib
import pathlib
import pkgutil
import re

import numpy as np
import pytest

import justjax
import justjax._src
from justjax._src.hlo import ir, opcodes
from justjax._src.hlo.passes import cost
from justjax._src.hlo.verifier import VerificationError, verify
from justjax._src.interpreters import lowering
from tests.harness import hand_built_module

SRC = pathlib.Path(justjax.__file__).parent
OPCODE = re.compile(r"^(stablehlo|chlo|func|hlo|sdy|spmd)\.[a-z][a-z_0-9]*$")
QUOTED = re.compile(r"""["']((?:stablehlo|chlo|func|hlo|sdy|spmd)\.[a-z][a-z_0-9]*)["']""")
# Quoted names of the form `dialect.name` in src/ that are not opcodes of the IR.
NOT_OPCODES = {
    "func.func",                       # the function keyword of the text syntax
    "stablehlo.conv",                  # `#stablehlo.conv<...>`: convolution dimension numbers
    "stablehlo.output_operand_alias",  # `#stablehlo.output_operand_alias<...>`
    "sdy.sharding",                    # Shardy's sharding attribute (`sdy.sharding = ...`)
    "sdy.sharding_rule",               # a custom call's Shardy rule attribute
    "sdy.op_sharding_rule",            # `#sdy.op_sharding_rule<...>`
}
F32 = np.dtype(np.float32)


def _quoted_in_src() -> dict[str, str]:
    """Every quoted `dialect.op` string in src/, with a file naming it."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for name in QUOTED.findall(path.read_text()):
            found.setdefault(name, str(path.relative_to(SRC)))
    return found


def test_every_opcode_named_in_src_is_registered() -> None:
    missing = {name: where for name, where in _quoted_in_src().items()
               if name not in NOT_OPCODES and not opcodes.is_registered(name)}
    assert not missing, f"opcodes without a registry entry (hlo/opcodes.py): {missing}"


def _opcode_tables() -> list[tuple[str, str, list[str]]]:
    """(module, name, opcodes) of every module-level dict or set of `src/justjax/_src`
    whose keys are all `dialect.op` strings: per-opcode dispatch tables and opcode sets."""
    tables = []
    root = justjax._src
    for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, (dict, set, frozenset)) and value:
                keys = [k for k in value if isinstance(k, str)]
                if len(keys) == len(value) and all(OPCODE.match(k) for k in keys):
                    tables.append((info.name, name, keys))
    return tables


def test_every_opcode_of_every_table_is_registered() -> None:
    tables = _opcode_tables()
    # The walk finds the tables it must: backends' kernels, the verifier, the printers.
    names = {(module.rsplit(".", 1)[-1], name) for module, name, _ in tables}
    assert {("verifier", "_checks"), ("stablehlo_printer", "_pretty"),
            ("reference", "kernel_builders")} <= names
    missing = {f"{module}.{name}": sorted(set(keys) - set(opcodes.OPCODES))
               for module, name, keys in tables if set(keys) - set(opcodes.OPCODES)}
    assert not missing, missing


def test_every_opcode_of_the_op_records_lowered_modules_is_registered() -> None:
    from tests.test_op_records import RECORDS, _rng
    missing: dict[str, str] = {}
    for record in RECORDS:
        shapes, dtypes = next(iter(record.cases()))
        args = [justjax.numpy.asarray(a)
                for a in record.make(_rng(record, shapes, dtypes), shapes, dtypes)]
        closed = justjax.make_jaxpr(lambda *xs: record.fun(*xs, **record.static))(*args)
        module = lowering.lower_jaxpr_to_module(closed, "f",
                                                ["result"] * len(closed.out_avals))
        for op in module.walk():
            if not opcodes.is_registered(op.opcode):
                missing.setdefault(op.opcode, record.name)
    assert not missing, f"opcodes without a registry entry (hlo/opcodes.py): {missing}"


# ---------------------------------------------------------------------------------------------
# The entries agree with each other.

ENTRIES = list(opcodes.OPCODES.values())


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_entry_is_consistent(entry: opcodes.Opcode) -> None:
    assert OPCODE.match(entry.name) and entry.hlo
    assert entry.bytes_read in (opcodes.READS_ALL, opcodes.READS_NOTHING,
                                opcodes.READS_OUTPUT, opcodes.READS_UPDATE)
    assert entry.expense in (opcodes.CHEAP, opcodes.EXPENSIVE, opcodes.COMPLEX_ONLY)
    assert entry.control_flow in (None, opcodes.LOOP, opcodes.BRANCH, opcodes.CALL)
    assert entry.cost_rule is None or entry.cost_rule in cost._RULES
    if entry.cost_rule is not None:
        assert entry.flops == entry.transcendentals == 0
    if entry.same_type:
        assert entry.elementwise and entry.arity in (1, 2)
    if entry.commutative:
        assert entry.elementwise and entry.arity == 2
    if entry.elementwise:
        assert entry.arity is not None
        # XLA counts no flops for a reinterpretation or a mantissa rounding only.
        free = entry.name in ("stablehlo.bitcast_convert", "stablehlo.reduce_precision")
        assert (entry.flops + entry.transcendentals == 0) == free
    if entry.transcendental and entry.dialect == "stablehlo":
        assert entry.expense != opcodes.CHEAP
    if entry.wrapped and entry.name != "stablehlo.scatter":
        assert entry.fusible
    assert (entry.print_form in ("keywords", "keywords_same")) == bool(entry.keywords)
    if entry.print_form == "chlo_broadcast":
        base = entry.name.replace("chlo.broadcast_", "")
        plain = opcodes.lookup(f"stablehlo.{base}") or opcodes.lookup(f"chlo.{base}")
        assert (entry.flops, entry.transcendentals) == (plain.flops, plain.transcendentals)


def test_fusible_elementwise_ops_have_reference_kernels() -> None:
    from justjax._src.backends.reference import kernel_builders
    fusible = opcodes.names(elementwise=True, fusible=True)
    assert not fusible - set(kernel_builders)


def test_queries() -> None:
    assert opcodes.hlo_name("stablehlo.dot_general") == "dot"
    assert opcodes.hlo_name("stablehlo.case") == "conditional"
    assert opcodes.hlo_name("stablehlo.count_leading_zeros") == "clz"
    assert opcodes.hlo_name("stablehlo.not_an_op") == "not-an-op"
    assert opcodes.is_elementwise("chlo.erf") and not opcodes.is_elementwise("stablehlo.dot")
    assert not opcodes.is_elementwise("stablehlo.not_an_op")
    assert opcodes.names(commutative=True, dialect="stablehlo") == {
        f"stablehlo.{n}" for n in ("add", "and", "maximum", "minimum", "multiply", "or", "xor")}
    assert opcodes.names(lambda e: e.control_flow is not None) == {
        "stablehlo.while", "stablehlo.case", "stablehlo.if", "func.call",
        "sdy.manual_computation"}


# ---------------------------------------------------------------------------------------------
# What the registry says is what XLA says.

# (opcode, arity, flops, transcendentals) per element of an f32[8] result, read off JAX
# 0.10.2's `jit(f).lower(x).cost_analysis()` (XLA's HloCostAnalysis) for programs lowering to
# that op: jnp.square -> chlo.square (8 flops), jnp.conj on complex64 (real, imag, negate,
# complex: 32 flops), lax.erf (chlo.erf: 8 transcendentals), jnp.exp, lax.lt.
XLA_PER_ELEMENT = [
    ("chlo.square", 1, 1.0, 0.0),
    ("chlo.erf", 1, 0.0, 1.0),
    ("stablehlo.exponential", 1, 0.0, 1.0),
    ("stablehlo.negate", 1, 1.0, 0.0),
    ("stablehlo.add", 2, 1.0, 0.0),
]


@pytest.mark.parametrize("opcode,arity,flops,transcendentals", XLA_PER_ELEMENT)
def test_cost_per_element_is_xlas(opcode: str, arity: int, flops: float,
                                  transcendentals: float) -> None:
    t = ir.TensorType((8,), F32)
    module = hand_built_module([t] * arity, lambda b, *xs: [b.one(opcode, list(xs), t)])
    figures = cost.cost_analysis(module)
    assert figures.get("flops", 0.0) == 8 * flops
    assert figures.get("transcendentals", 0.0) == 8 * transcendentals


def test_logistic_is_one_transcendental_as_in_xla() -> None:
    # XLA's HloCostAnalysis counts kLogistic among the transcendentals (JAX itself lowers
    # lax.logistic to negate, exp, add, divide, so the op appears only in hand-built IR).
    entry = opcodes.OPCODES["stablehlo.logistic"]
    assert (entry.flops, entry.transcendentals) == (0.0, 1.0)


def test_lowered_cost_analysis_matches_jax() -> None:
    # JAX 0.10.2: jit(lambda x, w: jnp.tanh(x @ w).sum()).lower(ones((2, 3)), ones((3, 4)))
    # .cost_analysis() (without its `utilization{i}{}` keys).
    f = justjax.jit(lambda x, w: justjax.numpy.tanh(x @ w).sum())
    lowered = f.lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    assert lowered.cost_analysis() == {
        "flops": 55.0, "transcendentals": 8.0, "bytes accessed": 208.0,
        "bytes accessed0{}": 88.0, "bytes accessed1{}": 52.0, "bytes accessedout{}": 68.0}


def test_verifier_rejects_an_unregistered_opcode() -> None:
    t = ir.TensorType((3,), F32)
    module = hand_built_module([t], lambda b, x: [b.one("stablehlo.frobnicate", [x], t)])
    with pytest.raises(VerificationError, match="unknown opcode stablehlo.frobnicate"):
        verify(module)
