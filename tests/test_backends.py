"""The backend registry and interface (`backends/__init__.py`, `registry.py`, `interface.py`):
a registered backend is selected through `jax_platforms`, and the optional hooks are declared
with defaults that callers rely on instead of probing for them."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import Collection, Sequence

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.backends import Backend, Executable, registry
from justjax._src.hlo import ir

SRC = pathlib.Path(jax.__file__).parent


class ToyExecutable(Executable):
    """Runs the reference backend's executable; no optional hook overridden."""

    def __init__(self, inner: Executable) -> None:
        self.inner = inner

    def execute(self, args: Sequence[np.ndarray],
                donated: Collection[int] = ()) -> list[np.ndarray]:
        return self.inner.execute(args, donated)


class ToyBackend(Backend):
    """The reference backend under another name, counting what it is asked."""

    name = "toy"

    def __init__(self) -> None:
        self.compiled: list[str] = []
        self.barriers = 0

    def compile(self, module: ir.Module) -> ToyExecutable:
        self.compiled.append(module.name)
        return ToyExecutable(backends.get_backend("reference").compile(module))

    def effects_barrier(self) -> None:
        self.barriers += 1


@pytest.fixture
def toy(monkeypatch) -> ToyBackend:
    """A ToyBackend registered as `toy` for the test only."""
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    monkeypatch.setattr(registry, "_used", dict(registry._used))
    backend = ToyBackend()
    backends.register_backend("toy", lambda: backend, platform="cpu")
    return backend


def test_registered_backend_is_selected_through_jax_platforms(toy) -> None:
    assert backends.registered_backends() == {"llvm": "cpu", "reference": "cpu", "toy": "cpu"}
    with jax.config.override("jax_platforms", "toy"):
        assert registry.check_platforms() == "toy"
        assert backends.get_backend() is toy
        out = jax.jit(lambda x: jnp.sin(x) * 2)(jnp.arange(3.0))
        eager = jnp.arange(3.0) + 1  # an eager op is compiled by the selected backend too
        assert any(name.startswith("jit_") and "lambda" in name for name in toy.compiled)
        jax.effects_barrier()
    np.testing.assert_allclose(out, np.sin(np.arange(3.0)) * 2, rtol=1e-6)
    np.testing.assert_array_equal(eager, [1.0, 2.0, 3.0])
    assert toy.barriers == 1
    # Outside the override, the default (native) backend is back.
    assert backends.get_backend().name == "llvm"


def test_registered_backend_is_first_of_several_platforms(toy) -> None:
    with jax.config.override("jax_platforms", "toy,cpu"):
        assert backends.get_backend() is toy
    with jax.config.override("jax_platforms", "cpu,toy"):
        assert backends.get_backend().name == "llvm"


def test_unknown_platform_still_raises_jaxs_error(toy) -> None:
    with jax.config.override("jax_platforms", "toy,gpu"):
        with pytest.raises(RuntimeError, match=re.escape(
                "Unable to initialize backend 'gpu': Backend 'gpu' is not in the list of known "
                "backends: ['cpu']. (set JAX_PLATFORMS='' to automatically choose an available "
                "backend)")):
            registry.check_platforms()
    with pytest.raises(RuntimeError, match="Unknown backend 'gpu'"):
        backends.get_backend("gpu")


def test_registering_needs_a_known_platform_and_a_backend_name() -> None:
    with pytest.raises(ValueError, match="platform must be one of"):
        backends.register_backend("toy", ToyBackend, platform="gpu")
    with pytest.raises(ValueError, match="a platform's name"):
        backends.register_backend("cpu", ToyBackend)
    assert "toy" not in backends.registered_backends()


def test_platform_name_selects_the_first_backend_registered_for_it() -> None:
    assert backends.get_backend("cpu") is backends.get_backend("llvm")
    assert backends.get_backend("reference").name == "reference"


def test_native_text_needs_a_backend_that_makes_machine_code(toy) -> None:
    with jax.config.override("jax_platforms", "toy"):
        compiled = jax.jit(lambda x: x + 1).lower(1.0).compile()
    assert "HloModule" in compiled.as_text()
    with pytest.raises(ValueError, match="needs the llvm backend; this program was "
                                         "compiled by the toy backend"):
        compiled.as_text("asm")
    assert compiled(2.0) == 3.0


def test_jax_platforms_environment_selects_a_registered_backend() -> None:
    code = ("from justjax._src import backends\n"
            "ref = backends.get_backend('reference')\n"
            "backends.register_backend('toy', lambda: ref)\n"
            "import justjax.numpy as jnp\n"
            "print(backends.get_backend().name, jnp.ones(2).sum())\n")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent), "JAX_PLATFORMS": "toy"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["reference", "2.0"]


# ---------------------------------------------------------------------------------------------
# The optional hooks: declared on the interface, with defaults that do without them.

BACKEND_HOOKS = ("effects_barrier", "prepare_replica_thread", "compile_profiled",
                 "cycle_counter_hz", "reset_persistent_cache")
EXECUTABLE_HOOKS = ("execute_async", "as_text")


def test_hooks_are_declared_on_the_interface() -> None:
    for hook in BACKEND_HOOKS:
        assert callable(vars(Backend).get(hook)), hook
    for hook in EXECUTABLE_HOOKS:
        assert callable(vars(Executable).get(hook)), hook
    for name in ("llvm", "reference"):
        assert isinstance(backends.get_backend(name), Backend)


def test_hook_defaults(toy) -> None:
    assert toy.prepare_replica_thread() is None
    assert toy.compile_profiled(ir.Module("m", [])) is None
    assert toy.cycle_counter_hz() is None
    assert toy.reset_persistent_cache() is None
    module = jax.jit(lambda x: x * 2).lower(np.ones(2, np.float32)).compiler_ir()
    executable = toy.compile(module)
    outs, future = executable.execute_async([np.arange(2, dtype=np.float32)])
    assert future is None
    np.testing.assert_array_equal(outs[0], [0.0, 2.0])
    assert executable.as_text("llvm") is None
    with pytest.raises(TypeError, match="abstract"):
        Backend()  # compile is what a backend must implement


def test_builtin_executables_implement_the_interface() -> None:
    module = jax.jit(lambda x: x * 2).lower(np.ones(2, np.float32)).compiler_ir()
    native = backends.get_backend("llvm").compile(module)
    assert isinstance(native, Executable)
    assert "define" in native.as_text("llvm")
    reference = backends.get_backend("reference").compile(module)
    assert isinstance(reference, Executable) and reference.as_text("llvm") is None


# Callers outside backends/ call the hooks; none probes for them or imports a backend.
def _caller_sources() -> list[pathlib.Path]:
    backends_dir = SRC / "_src" / "backends"
    return [path for path in sorted((SRC / "_src").rglob("*.py"))
            if backends_dir not in path.parents]


@pytest.mark.parametrize("path", _caller_sources(),
                         ids=lambda p: str(p.relative_to(SRC / "_src")))
def test_callers_neither_probe_hooks_nor_import_backends(path: pathlib.Path) -> None:
    text = path.read_text()
    for hook in BACKEND_HOOKS + EXECUTABLE_HOOKS:
        assert not re.search(rf"getattr\([^)]*[\"']{hook}[\"']", text), hook
    assert not re.search(r"backends(\.| import )(llvm|reference)\b", text)
