"""`hlo/stablehlo_parser.py`: StableHLO text -> `ir.Module`, checked by print -> parse -> print
round trips over real JAX's texts (the golden files), over justjax's lowering of the jit
programs and of every op record, and by running parsed modules."""
from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import justjax
from justjax._src.backends import get_backend
from justjax._src.hlo import ir
from justjax._src.hlo.stablehlo_parser import StableHLOParseError, parse_module
from justjax._src.hlo.stablehlo_printer import format_float, parse_float, print_module

GOLDEN = pathlib.Path(__file__).parent / "golden"


def _golden_texts() -> list[tuple[str, str]]:
    """The StableHLO modules real JAX 0.10.2 printed, recorded in the golden files."""
    texts = []
    for name in ("jit_programs", "control_flow_programs", "random_programs"):
        for case in json.loads((GOLDEN / f"{name}.json").read_text())["cases"]:
            text = case.get("stablehlo", {}).get("result")
            if isinstance(text, str) and text.startswith("module"):
                texts.append((f"{name}/{case['title']}", text))
    for key, text in json.loads((GOLDEN / "linalg.json").read_text()).items():
        if isinstance(text, str) and text.startswith("module"):
            texts.append((f"linalg/{key}", text))
    return texts


GOLDEN_TEXTS = _golden_texts()


def _round_trip(text: str) -> str:
    return print_module(parse_module(text))


def test_golden_corpus_is_large() -> None:
    assert len(GOLDEN_TEXTS) > 400


@pytest.mark.parametrize("text", [t for _, t in GOLDEN_TEXTS],
                         ids=[n for n, _ in GOLDEN_TEXTS])
def test_round_trips_jax_text(text: str) -> None:
    """Real JAX's text parses, and the parsed module prints as the same text."""
    assert _round_trip(text).strip() == text.strip()


def _jit_program_cases() -> list:
    from tests import test_jit_programs
    return [pytest.param(c, id=c["title"]) for c in test_jit_programs.CASES
            if "stablehlo" in c and "error" not in c["stablehlo"]]


@pytest.mark.parametrize("case", _jit_program_cases())
def test_round_trips_justjax_lowering(case: dict) -> None:
    """justjax's lowering of each jit program round-trips; the parsed module computes what
    the lowered one does."""
    from tests import test_jit_programs
    namespace, args = test_jit_programs._fresh(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lowered = justjax.jit(namespace["f"]).lower(*args)
    module = lowered.compiler_ir()
    text = print_module(module)
    parsed = parse_module(text)
    assert print_module(parsed) == text
    _assert_same_results(module, parsed)


def _assert_same_results(original: ir.Module, parsed: ir.Module) -> None:
    rng = np.random.default_rng(0)
    args = []
    for t in original.main.arg_types:
        if t.dtype == np.bool_:
            args.append(rng.random(t.shape) < 0.5)
        elif t.dtype.kind in "iu":
            args.append(rng.integers(0, 3, t.shape).astype(t.dtype))
        else:
            args.append(rng.normal(size=t.shape).astype(t.dtype))
    backend = get_backend("reference")
    want = backend.compile(original).execute([a.copy() for a in args], frozenset())
    got = backend.compile(parsed).execute([a.copy() for a in args], frozenset())
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_round_trips_every_op_record() -> None:
    """The lowering of one case of each op record (every primitive and library function,
    each dtype) round-trips."""
    from tests.test_op_records import CASES, _rng
    seen = set()
    count = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for param in CASES:
            record, shapes, dtypes = param.values
            key = (record.name, tuple(d.name for d in dtypes))
            if key in seen:
                continue
            seen.add(key)
            args = [justjax.numpy.asarray(a)
                    for a in record.make(_rng(record, shapes, dtypes), shapes, dtypes)]
            text = justjax.jit(lambda *xs, r=record: r.fun(*xs, **r.static)).lower(
                *args).as_text()
            assert _round_trip(text) == text, record.name
            count += 1
    assert count > 1000


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_floats_parse_back_exactly(dtype: str) -> None:
    from justjax._src.core import dtypes
    dt = np.dtype(getattr(dtypes, dtype))
    values = np.array([0.1, -0.0, 1 / 3, 1e-30, 65504, np.inf, -np.inf, np.nan, 3.5e38],
                      np.float64)
    with np.errstate(over="ignore"):
        values = values.astype(dt)
    for v in values:
        back = parse_float(format_float(v, dt), dt)
        assert back.tobytes() == np.asarray(v, dt).tobytes(), (v, format_float(v, dt))


_HAND_WRITTEN = '''module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {tf.aliasing_output = 0 : i32}) -> (tensor<2x3xf32> {jax.result_info = "result[\\22a\\22]"}, tensor<?x3xbf16>) {
    %cst = stablehlo.constant dense<[[0x7FC00000, -0.000000e+00, 1.000000e+00], [2.000000e+00, 3.000000e+00, 0x7F800000]]> : tensor<2x3xf32>
    %c = stablehlo.constant dense<[true, false]> : tensor<2xi1>
    %cst_0 = stablehlo.constant dense<(1.000000e+00,-2.000000e+00)> : tensor<complex<f32>>
    %0:2 = "stablehlo.sort"(%arg0, %cst) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<f32>):
      %2 = stablehlo.compare  LT, %arg1, %arg2,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    }) : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
    %1 = stablehlo.add %0#0, %0#1 : tensor<2x3xf32>
    %3 = stablehlo.custom_call @f(%1) {backend_config = "a\\\\b"} : (tensor<2x3xf32>) -> tensor<?x3xbf16>
    return %1, %3 : tensor<2x3xf32>, tensor<?x3xbf16>
  }
}
'''


def test_hand_written_module() -> None:
    """Generic and pretty forms, `%0#1`, NaN/inf hex floats, complex and bool constants,
    escaped strings, argument attributes and a dynamic dimension."""
    module = parse_module(_HAND_WRITTEN)
    main = module.main
    assert main.arg_attrs == [{"tf.aliasing_output": ir.IntegerAttr(0, "i32")}]
    assert main.result_attrs[0] == {"jax.result_info": 'result["a"]'}
    assert main.result_types[1].shape == (None, 3)
    const = main.body.ops[0].attributes["value"]
    assert np.isnan(const[0, 0]) and np.isinf(const[1, 2]) and np.signbit(const[0, 1])
    assert main.body.ops[2].attributes["value"] == np.complex64(1 - 2j)
    sort = main.body.ops[3]
    add = main.body.ops[4]
    assert add.operands == sort.results
    assert main.body.ops[5].attributes["backend_config"] == "a\\b"


@pytest.mark.parametrize("text,message", [
    ("module {\n  func.func public @main() -> tensor<f32> {\n    return %0 : tensor<f32>\n"
     "  }\n}\n", "line 3, column 12: use of undefined value %0"),
    ("module {\n  func.func public @main(%arg0: tensor<3xq8>) {\n  }\n}\n",
     "no dtype for StableHLO element type q8"),
    ("module {\n}\ntrailing", "unexpected text after the module"),
    ("module {\n  func.func public @main(%arg0: tensor<f32>) {\n    %0:2 = stablehlo.add "
     "%arg0, %arg0 : tensor<f32>\n  }\n}\n", "has 1 results; the text names 2"),
])
def test_errors_name_the_place(text: str, message: str) -> None:
    with pytest.raises(StableHLOParseError, match=message.replace("(", r"\(")):
        parse_module(text)


def _poly_programs() -> list:
    from tests.test_export import POLY_PROGRAMS
    return list(POLY_PROGRAMS.items())


@pytest.mark.parametrize("name,fun", _poly_programs(), ids=[n for n, _ in _poly_programs()])
def test_round_trips_polymorphic_exports(name: str, fun) -> None:
    """Shape-polymorphic modules (`tensor<?x4xf32>`, dynamic ops, dimension arguments,
    shape assertions) round-trip too."""
    from justjax import export
    spec = justjax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
    text = export.export(justjax.jit(fun))(spec).mlir_module()
    assert "?x4" in text
    assert _round_trip(text) == text
