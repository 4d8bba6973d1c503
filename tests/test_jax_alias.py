"""Standing in for `jax`: `python -m justjax run` and `justjax.install_as_jax()`. Each case runs
in its own interpreter, since the alias changes what `import jax` means for the process."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(args: list[str], cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def _script(tmp_path, text: str) -> str:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_run_makes_jax_modules_justjax_modules(tmp_path):
    prog = _script(tmp_path, """
        import sys
        import jax, jax.numpy as jnp, justjax, justjax.numpy
        from jax import lax
        import jax.interpreters.ad
        assert jnp is justjax.numpy and lax is justjax.lax
        assert jax.interpreters.ad is sys.modules["justjax.interpreters.ad"]
        assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2)
        assert justjax.__version__ != jax.__version__
        assert jax.jit is justjax.jit
        print(jax.grad(lambda x: jnp.sin(x))(0.0), sys.argv[1:])
        """)
    result = _run(["-m", "justjax", "run", prog, "a", "--b"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1.0 ['a', '--b']"


def test_run_a_module(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text("import jax, sys\nprint(jax.numpy.ones(2).sum(), sys.argv[1])\n")
    result = _run(["-m", "justjax", "run", "-m", "pkg.main", "x"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2.0 x"


def test_a_script_exit_code_and_errors_pass_through(tmp_path):
    assert _run(["-m", "justjax", "run", _script(tmp_path, "raise SystemExit(3)")]).returncode == 3
    failing = _run(["-m", "justjax", "run", _script(tmp_path, "import jax\njax.no_such_name\n")])
    assert failing.returncode == 1
    assert "module 'jax' has no attribute 'no_such_name'" in failing.stderr


def test_missing_names_are_clear_errors(tmp_path):
    prog = _script(tmp_path, """
        import jax
        try:
            import jax.no_such_module
        except ImportError as e:
            print(e)
        try:
            import jax._src.interpreters.pxla
        except ImportError as e:
            print(e)
        import jax._src.traceback_util
        print(jax._src.traceback_util.register_exclusion.__module__)
        from jax._src.ad_util import stop_gradient_p
        print(stop_gradient_p is jax.lax.stop_gradient_p)
        """)
    result = _run(["-m", "justjax", "run", prog])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "No module named 'jax.no_such_module'" in lines[0]
    assert "'jax._src.interpreters' (a private JAX module justjax does not provide)" in lines[1]
    assert lines[2] == "justjax._src.traceback_util"
    assert lines[3] == "True"  # lineax gives JAX's stop_gradient_p a transpose rule


def test_install_as_jax_in_a_running_interpreter():
    code = ("import justjax\njustjax.install_as_jax()\njustjax.install_as_jax()\n"
            "import jax\nprint(jax.numpy is justjax.numpy)")
    result = _run(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_install_as_jax_after_jax_was_imported_is_an_error():
    code = ("import sys, types\nsys.modules['jax'] = types.ModuleType('jax')\n"
            "import justjax\ntry:\n    justjax.install_as_jax()\nexcept RuntimeError as e:\n"
            "    print(e)\n")
    result = _run(["-c", code])
    assert result.returncode == 0, result.stderr
    assert "must run before `jax` is imported" in result.stdout


def test_usage_message():
    result = _run(["-m", "justjax", "run"])
    assert result.returncode == 2 and "python -m justjax run SCRIPT.py" in result.stderr


@pytest.mark.parametrize("client", ["optax", "chex", "equinox", "flax.nnx", "flax.linen",
                                    "lineax", "optimistix", "diffrax", "numpyro",
                                    "numpyro.infer"])
def test_clients_import(client):
    result = _run(["-c", f"import justjax; justjax.install_as_jax(); import {client}"])
    assert result.returncode == 0, result.stderr[-3000:]
