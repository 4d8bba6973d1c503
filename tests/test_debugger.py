"""`jax.debug.breakpoint` and its command-line debugger `jdb`, driven through `stdin=` and
`stdout=` (JAX's non-interactive use). Transcripts recorded from JAX 0.10.2 with the same
sessions."""
from __future__ import annotations

import inspect
import io

import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src.debug import debugger


def _session(commands: str, **kwargs):
    out = io.StringIO()

    def f(x):
        y = x * 2
        name = "label"
        jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out, **kwargs)
        return y + len(name)

    return f, out


BREAKPOINT_LINE = inspect.getsourcelines(_session)[1] + 6


def test_jdb_prints_values_of_a_jitted_function():
    f, out = _session("p y\npp {'a': y}\np name\nd\nnope\n1/0\nc\n", num_frames=1)
    assert jax.jit(f)(jnp.arange(3.0)).tolist() == [5.0, 7.0, 9.0]
    jax.effects_barrier()
    text = out.getvalue()
    head = ("Entering jdb:\n(jdb) Array([0., 2., 4.], dtype=float32)\n"
            "(jdb) {'a': Array([0., 2., 4.], dtype=float32)}\n(jdb) 'label'\n"
            f"(jdb) At bottommost frame.\n> {__file__}({BREAKPOINT_LINE})\n")
    assert text.startswith(head), text
    assert "\n->          jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out, " \
           "**kwargs)\n" in text
    assert text.endswith("(jdb) *** NameError: name 'nope' is not defined\n"
                         "(jdb) *** ZeroDivisionError: division by zero\n(jdb) ")


def test_jdb_frames_where_and_up():
    f, out = _session("w\nu\nu\nc\n", num_frames=2)
    f(jnp.float32(1.0))  # eagerly: the breakpoint runs at once
    lines = out.getvalue().split("\n")
    assert lines[:6] == ["Entering jdb:", "(jdb) Traceback:",
                         f'  File "{__file__}", line {CALLER_LINE}',
                         "    f(jnp.float32(1.0))  # eagerly: the breakpoint runs at once",
                         f'  File "{__file__}", line {BREAKPOINT_LINE}',
                         "    jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out, "
                         "**kwargs)"]
    assert f"(jdb) > {__file__}({CALLER_LINE})" in lines
    assert "(jdb) At topmost frame." in lines


CALLER_LINE = inspect.getsourcelines(test_jdb_frames_where_and_up)[1] + 2


def test_quit_and_end_of_input_exit_the_program():
    f, out = _session("q\n", num_frames=1)
    with pytest.raises(SystemExit):
        f(jnp.float32(1.0))
    # From compiled code the exit is the callback's failure, as JAX reports it.
    f, out = _session("", num_frames=1)
    with pytest.raises(jax.errors.JaxRuntimeError, match="CpuCallback error calling "
                                                         "callback(.|\n)*SystemExit"):
        jax.jit(f)(1.0)
        jax.effects_barrier()
    assert out.getvalue() == "Entering jdb:\n(jdb) "


def test_token_is_returned_after_the_debugger_ran():
    out = io.StringIO()

    def g(x):
        token = jax.debug.breakpoint(token=x, stdin=io.StringIO("p x\nc\n"), stdout=out)
        return token * 2

    assert jax.jit(g)(jnp.ones(2)).tolist() == [2.0, 2.0]
    assert out.getvalue().split("\n")[:2] == ["Entering jdb:",
                                              "(jdb) Array([1., 1.], dtype=float32)"]
    with pytest.raises(ValueError, match="^`ordered` and `token` are mutually exclusive "
                                         "arguments.$"):
        jax.debug.breakpoint(token=1, ordered=True)


def test_registered_debuggers_by_priority(monkeypatch):
    monkeypatch.setattr(debugger, "_debugger_registry", dict(debugger._debugger_registry))
    calls = []
    debugger.register_debugger("recorder", lambda frames, thread_id, **kw: calls.append(
        (frames[0].locals["y"].tolist(), frames[0].filename, kw)), priority=5)
    with pytest.raises(ValueError, match='^Debugger with name "recorder" already '
                                         'registered.$'):
        debugger.register_debugger("recorder", lambda *a, **k: None, 0)

    def f(x):
        y = x + 1
        jax.debug.breakpoint(num_frames=1, marker=3)
        return y

    jax.jit(f)(jnp.zeros(2))
    jax.effects_barrier()
    assert calls == [([1.0, 1.0], __file__, {"marker": 3})]
    assert debugger.get_debugger("cli") is debugger.run_cli_debugger
    assert debugger.get_debugger() is not debugger.run_cli_debugger


def test_filter_frames_hides_justjax_frames():
    seen = []

    def record(frames, thread_id, **kwargs):
        seen.append([fr.filename for fr in frames])

    saved = dict(debugger._debugger_registry)
    debugger._debugger_registry.clear()
    debugger.register_debugger("record", record, 0)
    try:
        jax.jit(lambda x: jax.debug.breakpoint() or x)(1.0)
        jax.vmap(lambda x: jax.debug.breakpoint(filter_frames=False) or x)(jnp.ones(1))
        jax.effects_barrier()
    finally:
        debugger._debugger_registry.clear()
        debugger._debugger_registry.update(saved)
    assert seen[0][0] == __file__ and all("/justjax/" not in name for name in seen[0])
    assert any("/justjax/" in name for name in seen[1])
