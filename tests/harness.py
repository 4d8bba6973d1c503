"""The op-record table machinery (DESIGN.md "Habits").

Every primitive and library function is described once by an `OpRecord`; the checks in
`test_op_records.py` run each record against NumPy, compare traced against eager evaluation,
and (as transforms land) gradients against finite differences and vmap against a loop.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import ml_dtypes
import numpy as np

import justjax

Shape = tuple[int, ...]
ArgMaker = Callable[[np.random.Generator, Shape, np.dtype], np.ndarray]

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
F64 = np.dtype(np.float64)
C64 = np.dtype(np.complex64)
I8 = np.dtype(np.int8)
I32 = np.dtype(np.int32)
U8 = np.dtype(np.uint8)
U32 = np.dtype(np.uint32)
BOOL = np.dtype(np.bool_)

FLOATS = (F32, F16, BF16)
INTS = (I32, I8, U8, U32)
NUMERIC = FLOATS + INTS
INEXACT = FLOATS + (C64,)

# Default tolerances by dtype (relative and absolute alike).
TOLERANCE = {F32: 1e-5, F16: 2e-3, BF16: 2e-2, F64: 1e-12, C64: 1e-5, I8: 0, I32: 0, U8: 0,
             U32: 0, BOOL: 0}


def _as(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.asarray(values).astype(dtype)


def rand_default(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    """Values around [-3, 3]; integers in [-5, 5] (unsigned [0, 10]); bools 50/50."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return _as(rng.integers(0, 11, shape), dtype)
    if dtype.kind == "i":
        return _as(rng.integers(-5, 6, shape), dtype)
    if dtype.kind == "c":
        return _as(rng.normal(size=shape) + 1j * rng.normal(size=shape), dtype)
    return _as(rng.normal(scale=1.5, size=shape), dtype)


def rand_positive(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return _as(rng.integers(1, 10, shape), dtype)
    if dtype.kind == "c":
        return _as(rng.uniform(0.1, 3, shape) + 1j * rng.uniform(0.1, 3, shape), dtype)
    return _as(rng.uniform(0.1, 3.0, shape), dtype)


def rand_unit(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    """Inside (-1, 1), away from the ends (asin, atanh, erf_inv)."""
    return _as(rng.uniform(-0.9, 0.9, shape), dtype)


def rand_nonzero(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    values = rand_default(rng, shape, dtype)
    return np.where(values == 0, np.array(1).astype(values.dtype), values)


def rand_not_small(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    """Magnitudes in [0.3, 3] of either sign (integers: nonzero), for functions with a pole at
    zero whose finite differences blow up close to it (1/x)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return rand_nonzero(rng, shape, dtype)
    magnitude = rng.uniform(0.3, 3.0, shape)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    if dtype.kind == "c":
        return _as(sign * magnitude + 1j * rng.uniform(0.3, 3.0, shape), dtype)
    return _as(sign * magnitude, dtype)


def rand_small_int(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    return _as(rng.integers(0, 4, shape), dtype)


def rand_special(rng: np.random.Generator, shape: Shape, dtype: np.dtype) -> np.ndarray:
    """Defaults sprinkled with the values that break naive code: 0, -0, inf, -inf, nan."""
    values = rand_default(rng, shape, dtype)
    if np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16:
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=np.float32)
        mask = rng.random(shape) < 0.3
        picks = rng.integers(0, len(specials), shape)
        values = np.where(mask, specials[picks].astype(dtype), values)
    return values


@dataclass(frozen=True)
class OpRecord:
    """One function under test and how to check it.

    Attributes:
      name: the test id.
      fun: the justjax function, called with Arrays (and `static` keyword arguments).
      reference: the NumPy equivalent, called with NumPy arrays of the same dtypes.
      shapes: argument shape lists to try; each entry is one call's shapes.
      dtypes: argument dtypes to try (every argument gets the same dtype) or, per entry,
        a tuple with one dtype per argument.
      make_args: argument generators, one for all arguments or one per argument.
      static: keyword arguments passed to both functions as they are.
      tol: overrides of `TOLERANCE` by dtype.
      expected_dtype: the result dtype JAX gives for the input dtypes (a tuple of dtypes for
        several results), when it differs from the first input's dtype; `None` means "every
        result has the first argument's dtype".
      differentiable: whether gradient checks apply: `check_grads` to second order,
        forward and reverse, in float64 (`test_op_records.test_gradients`).
      grad_modes: the modes checked: ("fwd",) for primitives JAX differentiates in forward
        mode only (a generic reduce_window).
      grad_tol: the tolerance of those checks (absolute and relative; JAX's float64
        default when None).
    """

    name: str
    fun: Callable[..., Any]
    reference: Callable[..., Any]
    shapes: Sequence[Sequence[Shape]]
    dtypes: Sequence[Any]
    make_args: ArgMaker | Sequence[ArgMaker] = rand_default
    static: dict[str, Any] = field(default_factory=dict)
    tol: dict[np.dtype, float] = field(default_factory=dict)
    expected_dtype: Callable[..., np.dtype] | None = None
    differentiable: bool = True
    grad_modes: tuple[str, ...] = ("fwd", "rev")
    grad_tol: float | None = None

    def cases(self) -> list[tuple[tuple[Shape, ...], tuple[np.dtype, ...]]]:
        """Every (shapes, dtypes) combination this record runs."""
        combos = []
        for shapes in self.shapes:
            for dtype in self.dtypes:
                per_arg = dtype if isinstance(dtype, tuple) else (dtype,) * len(shapes)
                combos.append((tuple(tuple(s) for s in shapes),
                               tuple(np.dtype(d) for d in per_arg)))
        return combos

    def make(self, rng: np.random.Generator, shapes: Sequence[Shape],
             dtypes: Sequence[np.dtype]) -> list[np.ndarray]:
        makers = self.make_args if isinstance(self.make_args, (list, tuple)) else \
            [self.make_args] * len(shapes)
        return [maker(rng, shape, dtype)
                for maker, shape, dtype in zip(makers, shapes, dtypes, strict=True)]

    def result_dtypes(self, in_dtypes: Sequence[np.dtype], count: int) -> list[np.dtype]:
        """The dtype each of `count` results must have for these input dtypes."""
        if self.expected_dtype is None:
            return [np.dtype(in_dtypes[0])] * count
        expected = self.expected_dtype(*in_dtypes)
        if isinstance(expected, (tuple, list)):
            return [np.dtype(d) for d in expected]
        return [np.dtype(expected)] * count

    def tolerance(self, dtype: np.dtype) -> float:
        return self.tol.get(np.dtype(dtype), TOLERANCE.get(np.dtype(dtype), 1e-5))


def assert_close(actual: Any, expected: Any, tol: float, *, context: str = "") -> None:
    """Same shape and values within `tol` (exact for tol == 0); NaNs must match NaNs."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{context}: shape {actual.shape} != {expected.shape}"
    if tol == 0 or actual.dtype == BOOL:
        np.testing.assert_array_equal(actual, expected, err_msg=context)
        return
    wide = np.complex128 if actual.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(actual.astype(wide), expected.astype(wide), rtol=tol, atol=tol,
                               equal_nan=True, err_msg=context)


def widen(x: Any, *, integers_to: Any = None, bools_to: Any = None) -> np.ndarray:
    """A full-precision copy of `x` for NumPy references: floats (bfloat16 included) as
    float64, complex as complex128; integers and bools cast to `integers_to` / `bools_to`
    when given, else unchanged."""
    x = np.asarray(x)
    kind = "f" if x.dtype == BF16 else x.dtype.kind
    if kind == "f":
        return x.astype(np.float64)
    if kind == "c":
        return x.astype(np.complex128)
    if kind in "iu" and integers_to is not None:
        return x.astype(integers_to)
    if kind == "b" and bools_to is not None:
        return x.astype(bools_to)
    return x


def widened(fn: Callable[..., Any], **widen_options: Any) -> Callable[..., Any]:
    """`fn` applied to `widen`ed copies of its array arguments."""
    return lambda *args, **kwargs: fn(*[widen(a, **widen_options) for a in args], **kwargs)


@contextlib.contextmanager
def x64_mode(enabled: bool) -> Iterator[None]:
    """Runs the body with `jax_enable_x64` set to `enabled`, restoring it afterwards."""
    with justjax.config.override("jax_enable_x64", enabled):
        yield


def dtype_by_name(name: str) -> np.dtype:
    """`np.dtype(name)`, also for 'bfloat16' (which NumPy alone does not know)."""
    return BF16 if name == "bfloat16" else np.dtype(name)


# ---------------------------------------------------------------------------------------------
# Shared by the vmap tests: the per-example reference, and golden jaxpr texts read off JAX.

def stack_per_example(fun: Callable[..., Any], *args: Any, in_axes: Any = 0) -> Any:
    """What `vmap(fun, in_axes)(*args)` must give: `fun` applied to each example's slices,
    results stacked along axis 0 (pytrees leaf by leaf)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes, strict=True) if ax is not None)
    outs = [fun(*[a if ax is None else np.take(np.asarray(a), i, axis=ax)
                  for a, ax in zip(args, axes, strict=True)]) for i in range(size)]
    return justjax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


def golden_cases(namespace: dict[str, Any]) -> dict[str, Callable[..., Any]]:
    """The module's `case_<name>` functions by name: each builds a jaxpr with the library
    modules it is given (justjax's, or real JAX's to check the golden text)."""
    return {name[len("case_"):]: fun for name, fun in sorted(namespace.items())
            if name.startswith("case_")}


def golden_jaxpr_tests(cases: dict[str, Callable[..., Any]], golden: dict[str, str],
                       justjax_modules: Sequence[Any], jax_modules: Callable[[], Sequence[Any]]
                       ) -> tuple[Callable[..., None], ...]:
    """The three tests of a golden-jaxpr table: each case prints its golden text; every case
    has one; (needs_jax) the texts are what real JAX prints. `jax_modules()` imports the
    modules the cases take, from real JAX."""
    import pytest

    @pytest.mark.parametrize("name", sorted(golden))
    def test_jaxpr_matches_jax(name: str) -> None:
        assert str(cases[name](*justjax_modules)) == golden[name]

    def test_every_case_has_golden_text() -> None:
        assert sorted(cases) == sorted(golden)

    @pytest.mark.needs_jax
    def test_golden_texts_are_what_jax_prints() -> None:
        modules = jax_modules()
        for name, fun in cases.items():
            assert str(fun(*modules)) == golden[name], name

    return test_jaxpr_matches_jax, test_every_case_has_golden_text, \
        test_golden_texts_are_what_jax_prints


def lower_to_module(fun: Callable[..., Any], *args: Any) -> Any:
    """The StableHLO module (`ir.Module`) of `fun` traced on `args`, results named as JAX
    names them (`result`, or `result[i]`)."""
    from justjax._src.interpreters import lowering
    closed = justjax.make_jaxpr(fun)(*[justjax.numpy.asarray(a) for a in args])
    count = len(closed.out_avals)
    infos = ["result"] if count == 1 else [f"result[{i}]" for i in range(count)]
    return lowering.lower_jaxpr_to_module(closed, "f", infos)


def run_reference(module: Any, *args: Any) -> list[np.ndarray]:
    """`module` run by the reference backend on NumPy arguments."""
    return run_on_backend("reference", module, *args)


def run_on_backend(backend: str, module: Any, *args: Any) -> list[np.ndarray]:
    """`module` compiled by `backend` (`reference` or `llvm`) and run on NumPy arguments."""
    from justjax._src import backends
    return backends.get_backend(backend).compile(module).execute([np.asarray(a) for a in args])


def record_cases(records: Sequence[OpRecord]) -> list[Any]:
    """One pytest param (record, shapes, dtypes) per case of `records`, named
    `name-dtypes-shapes`."""
    import pytest
    return [pytest.param(rec, shapes, dtypes,
                         id=f"{rec.name}-{'_'.join(d.name for d in dtypes)}-"
                            f"{'x'.join(str(s) for s in shapes)}")
            for rec in records for shapes, dtypes in rec.cases()]


def record_rng(record: OpRecord, shapes: tuple, dtypes: tuple, salt: str = ""
               ) -> np.random.Generator:
    """The random generator of one record case: seeded by the case (and `salt`), so a
    case draws the same inputs in every run and every process."""
    import zlib
    return np.random.default_rng(zlib.crc32(f"{salt}{record.name}{shapes}{dtypes}".encode()))


def hand_built_module(arg_types: Sequence[Any], build: Callable[..., Sequence[Any]], *,
                      result_types: Sequence[Any] | None = None, name: str = "test",
                      result_infos: Sequence[str] | None = None,
                      attributes: dict[str, Any] | None = None) -> Any:
    """An `ir.Module` whose public `main` takes `arg_types` and returns what
    `build(builder, *args)` gives (declared as `result_types` when given, so verifier tests
    can declare wrong ones), its results annotated `jax.result_info` when `result_infos`."""
    from justjax._src.hlo import ir
    block = ir.Block([ir.Value(t) for t in arg_types])
    builder = ir.Builder(block)
    outs = list(build(builder, *block.args))
    builder.ret(outs, "func.return")
    types = list(result_types) if result_types is not None else [o.type for o in outs]
    attrs = ([{"jax.result_info": info} for info in result_infos]
             if result_infos is not None else None)
    main = ir.Function("main", block, types, "public", result_attrs=attrs)
    return ir.Module(name, [main], dict(attributes or {}))
