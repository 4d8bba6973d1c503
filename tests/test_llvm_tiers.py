"""Tiered compilation (`backends/llvm/runtime/tiers.py`) and the linked math library
(`mathlib/link.py`): a program gives the same bits from its first call (math linked), after
its tier-up (math inlined) and when compiled fully optimized at once."""
from __future__ import annotations

import ctypes
import re
from typing import Any, Callable

import llvmlite.binding as llvm
import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.backends.llvm.mathlib import link, rare
from justjax._src.backends.llvm.runtime import host, object_cache, tiers
from justjax._src.compilation import compiler

# Large enough to be compiled at O3 (`executable.FAST_COMPILE_ELEMENTS`), in tiers.
N = 1 << 17


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32) * 3
    # Arguments around the trigonometric functions' rare-path bound and beyond.
    x[:64] = np.float32(2.0) ** rng.integers(-30, 40, 64)
    y = rng.uniform(0.01, 4, N).astype(np.float32)
    return {"x": x, "y": y, "m": rng.standard_normal((512, 256)).astype(np.float32),
            "w": rng.standard_normal((256, 256)).astype(np.float32) * np.float32(0.06),
            "xs": rng.standard_normal((1000, 256)).astype(np.float32)}


def _math(x: Any, y: Any) -> Any:
    return (jnp.sin(x) * jnp.cos(y) + jnp.tanh(x * y) - jnp.exp(-y) * jnp.log(y)
            + jax_nn_sigmoid(x) + lax.erf(x * 0.1) + jnp.arctan2(x, y) + jnp.power(y, 0.3))


def jax_nn_sigmoid(x: Any) -> Any:
    return justjax.nn.sigmoid(x)


def _scan(w: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = jnp.tanh(h @ w + x)
        return h, jnp.exp(-h * h)
    return lax.scan(step, jnp.zeros(256, jnp.float32), xs)


# name -> (function, argument names)
PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "elementwise": (_math, ("x", "y")),
    "two_outputs": (lambda x, y: (_math(x, y), jnp.sin(x) - jnp.expm1(y * 0.1)), ("x", "y")),
    "reductions": (lambda x, y: (jnp.sum(jnp.sin(x) ** 2), jnp.mean(jnp.exp(-y), axis=0),
                                 jnp.max(jnp.tanh(x))), ("x", "y")),
    "row_reductions": (lambda m: jnp.sum(jnp.log1p(m * m), axis=1)
                       + jnp.max(jnp.cos(m), axis=1), ("m",)),
    "math_heavy": (lambda x, y: (_math(x, y), _math(y, x) * jnp.cos(x)), ("x", "y")),
    "dot": (lambda m, w: jnp.tanh(m @ w) + jnp.exp(m @ w * 0.1), ("m", "w")),
    "no_math": (lambda m, w: justjax.nn.relu(m @ w + 1.0) * 2.0 - m[:, :1], ("m", "w")),
    "reduce_and_math": (lambda m: (jnp.sum(m * m, axis=1), jnp.exp(m) * 2.0), ("m",)),
    "scan": (_scan, ("w", "xs")),
}


def _leaves(tree: Any) -> list[bytes]:
    return [np.asarray(leaf).tobytes() for leaf in justjax.tree_util.tree_leaves(tree)]


def _tiers_compiled() -> list[int]:
    """The tiers of the executables compiled in this process that run in tiers."""
    found = []
    for program in list(compiler._programs.values()):
        executable = program.executable
        holder = getattr(executable, "_kernel", executable)
        tier = getattr(holder, "tier", None)
        if tier is not None and getattr(holder, "opt_level", 0) == 3:
            found.append(tier)
    return found


def _run(name: str, inputs: dict[str, np.ndarray]) -> Any:
    fun, names = PROGRAMS[name]
    return justjax.jit(fun)(*[inputs[n] for n in names])


# Programs compiled in one tier (none: reductions fix their order in the IR, so programs
# whose fusions reduce what math functions compute run in tiers too).
ONE_TIER: set[str] = set()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tiers_give_the_same_bits(name: str) -> None:
    inputs = _inputs()
    justjax.clear_caches()
    with justjax.config.override("justjax_tiered_compilation", False):
        at_once = _leaves(_run(name, inputs))
    assert 1 not in _tiers_compiled()
    justjax.clear_caches()
    with justjax.config.override("justjax_tiered_compilation", True):
        first = _leaves(_run(name, inputs))
        # The first call ran the quickly compiled version.
        assert (1 in _tiers_compiled()) == (name not in ONE_TIER)
        second = _leaves(_run(name, inputs))  # hot: the tier-up starts
        tiers.wait()
        assert _tiers_compiled() and set(_tiers_compiled()) == {2}
        optimized = _leaves(_run(name, inputs))
    assert first == at_once
    assert second == at_once
    assert optimized == at_once


def test_calls_on_arrays_tier_up_too() -> None:
    # Arrays take jit's and eager dispatch's fast paths (`execution.fast_call`): calls made
    # that way count towards the tier-up as the general path's do, and run the optimized
    # entry point once it is swapped in. The first tier's engine stays alive with the
    # program: a call on another thread may still be running its code.
    inputs = _inputs()
    x, y = jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"])
    justjax.clear_caches()
    # Small enough to run inline (`executable.ASYNC_ELEMENTS`): the fast path's runner.
    jitted = justjax.jit(lambda a, b: (jnp.sin(a) * b, jnp.cos(a)))
    first = _leaves(jitted(x, y))
    (program,) = list(compiler._programs.values())
    executable = program.executable
    assert executable.tier == 1
    assert _leaves(jitted(x, y)) == first  # the fast path: hot now
    tiers.wait()
    assert executable.tier == 2
    assert len(executable._engines) == 2
    assert _leaves(jitted(x, y)) == first
    # An eager op on Arrays: its kernel tiers up through the fast path alone.
    justjax.clear_caches()
    eager = [np.asarray(jnp.sin(x)).tobytes() for _ in range(2)]
    tiers.wait()
    assert _tiers_compiled() == [2]
    assert np.asarray(jnp.sin(x)).tobytes() == eager[0] == eager[1]


def test_a_program_called_once_is_not_compiled_again() -> None:
    justjax.clear_caches()
    before = object_cache.stats.codegen
    _run("elementwise", _inputs())
    tiers.wait()
    assert object_cache.stats.codegen - before == 1
    assert _tiers_compiled() == [1]


def test_tier_one_links_the_math_and_tier_two_inlines_it() -> None:
    justjax.clear_caches()
    inputs = _inputs()
    _run("math_heavy", inputs)
    (program,) = list(compiler._programs.values())
    executable = program.executable
    assert executable.tier == 1
    # The loops calling it are vectorized at the host's full width.
    lanes = link.full_width_lanes("f32")
    assert re.search(rf"call <{lanes} x float> @justjax_linked_sin_f32_v{lanes}\(",
                     executable.optimized_ir)
    _run("math_heavy", inputs)
    tiers.wait()
    assert executable.tier == 2
    assert "justjax_linked" not in executable.optimized_ir


@pytest.mark.parametrize("name,level", [("two_outputs", host.QUICK), ("no_math", host.QUICK),
                                        ("scan", host.QUICK), ("math_heavy", host.LINKED),
                                        ("reduce_and_math", host.QUICK)])
def test_first_tier_level(name: str, level: int) -> None:
    """Little math: the fast code generator alone first, reductions included (their order is
    explicit in the IR); much math: O3's IR pipeline with the math linked."""
    justjax.clear_caches()
    _run(name, _inputs())
    (program,) = list(compiler._programs.values())
    assert program.executable.tier == 1
    assert program.executable._code_level == level


@pytest.mark.parametrize("name,dtype", [("exp", "f32"), ("sin", "f32"), ("atan2", "f64"),
                                        ("pow", "f32")])
def test_vector_versions_are_straight_vector_code(name: str, dtype: str) -> None:
    module = llvm.parse_assembly(link.module_text(name, dtype))
    host.optimize(module)
    optimized = str(module)
    element = "float" if dtype == "f32" else "double"
    for n in rare.LANES[dtype]:
        body = optimized.split(f"@justjax_linked_{name}_{dtype}_v{n}(")[1].split("\n}\n")[0]
        if n > 2:
            # The loop over the lanes is gone: one vector computation.
            assert "phi i64" not in body
            assert f"<{n} x {element}>" in body


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_linked_functions_compute_what_the_inlined_ones_do(dtype: str) -> None:
    np_dtype = np.float32 if dtype == "f32" else np.float64
    rng = np.random.default_rng(1)
    # No subnormals: the scalar function called from Python here runs with IEEE denormals,
    # a jitted program with them flushed (`codegen/fp_environment.py`).
    x = np.concatenate([rng.standard_normal(4096) * 50, [0.0, -0.0, np.inf, -np.inf, np.nan,
                                                         2e-38, 3e38, 1e30]]).astype(np_dtype)
    for name in ("exp", "log", "sin", "tanh", "erf"):
        link.load(name, dtype)
        scalar_address = llvm.address_of_symbol(f"justjax_linked_{name}_{dtype}")
        ctype = ctypes.c_float if dtype == "f32" else ctypes.c_double
        scalar = ctypes.CFUNCTYPE(ctype, ctype)(scalar_address)
        per_element = np.array([scalar(v) for v in x], np_dtype)
        with justjax.config.override("justjax_tiered_compilation", False):
            justjax.clear_caches()
            fun = {"exp": jnp.exp, "log": jnp.log, "sin": jnp.sin, "tanh": jnp.tanh,
                   "erf": lax.erf}[name]
            tiled = np.tile(x, N // x.size + 1)
            with justjax.experimental.enable_x64(dtype == "f64"):
                inlined = np.asarray(justjax.jit(fun)(tiled))[:x.size]
        assert per_element.tobytes() == inlined.tobytes(), name


def test_math_runtime_is_kept_in_the_cache_folder(tmp_path: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A fresh engine for the objects loaded here (the process's may hold the same symbols).
    monkeypatch.setattr(link, "_shared", [])
    with justjax.config.override("justjax_runtime_cache_dir", str(tmp_path)):
        engine = link._cached_engine("justjax_linked_cbrt_f32", "cbrt", "f32")
        (entry,) = list(tmp_path.iterdir())
        assert entry.name.startswith("mathlib-justjax_linked_cbrt_f32-")
        loaded = link._cached_engine("justjax_linked_cbrt_f32", "cbrt", "f32")
        assert loaded is link._shared[0] and loaded is not engine
        entry.write_bytes(entry.read_bytes()[:100])  # a truncated entry is not loaded
        again = link._cached_engine("justjax_linked_cbrt_f32", "cbrt", "f32")
        assert again is not link._shared[0]
        assert len(entry.read_bytes()) > 100  # and is replaced
