"""The llvm backend against the reference backend, op by op: every op record's function, as
jit compiles it (optimized, fused), run by both backends on the same inputs.

Integers, booleans and structural results must be equal bit for bit; floats within the
record's tolerance (the math library is a few ULPs off NumPy, the reference backend's
source). Every op must run natively except the ones listed in `FALLBACK_ALLOWED`, each with
its reason; an op listed there that runs natively fails the test too, so the list stays true.
"""
from __future__ import annotations

import numpy as np
import pytest

import justjax
from justjax._src import backends
from justjax._src.hlo.passes import optimize
from tests.harness import OpRecord, assert_close, lower_to_module, record_rng, x64_mode
from tests.test_op_records import CASES as ALL_CASES

# LAPACK decompositions run by SciPy on both backends: their inputs agree within an ulp,
# which can flip the sign of an eigenvector or singular vector, so their values are compared
# in tests/test_linalg.py (by reconstruction) instead.
_SIGN_AMBIGUOUS = ("eigh", "svd", "pinv", "qr", "schur", "eig", "lstsq", "matrix_rank")
CASES = [case for case in ALL_CASES
         if not any(word in case.values[0].name for word in _SIGN_AMBIGUOUS)]

# Opcode -> why the llvm backend hands it to the reference backend.
FALLBACK_ALLOWED: dict[str, str] = {
    "stablehlo.custom_call": "LAPACK routines (cholesky, eigh, svd, qr, lu) and host "
                             "callbacks run through SciPy and Python",
    "stablehlo.fft": "FFTs run through pocketfft, SciPy's compiled FFT library",
}


def _is_x64(dtypes: tuple) -> bool:
    return any(d.itemsize == 8 and d.kind in "fiuc" for d in dtypes)


def _run_both(record: OpRecord, shapes: tuple, dtypes: tuple):
    args = record.make(record_rng(record, shapes, dtypes, salt="llvm"), shapes, dtypes)
    with x64_mode(_is_x64(dtypes)):
        module = optimize.optimize(lower_to_module(
            lambda *xs: record.fun(*xs, **record.static), *args))
    buffers = [np.asarray(a) for a in args]
    kept = [buffers[i] for i in range(len(module.function("main").args))]
    expected = backends.get_backend("reference").compile(module).execute(kept)
    executable = backends.get_backend("llvm").compile(module)
    return executable, executable.execute(kept), expected


@pytest.mark.parametrize("record,shapes,dtypes", CASES)
def test_llvm_matches_reference(record: OpRecord, shapes: tuple, dtypes: tuple) -> None:
    executable, results, expected = _run_both(record, shapes, dtypes)
    assert len(results) == len(expected)
    for got, want in zip(results, expected, strict=True):
        got, want = np.asarray(got), np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), record.name
        if got.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=record.name)
        else:
            assert_close(got, want, record.tolerance(got.dtype), context=record.name)
    fallbacks = {fb.op.opcode for fb in executable.program.fallbacks}
    unexpected = fallbacks - set(FALLBACK_ALLOWED)
    assert not unexpected, f"{record.name}: ran by the reference backend: {sorted(unexpected)}"


def test_fallback_list_is_current() -> None:
    """Each op `FALLBACK_ALLOWED` names still falls back for some program."""
    seen: set[str] = set()
    for param in ALL_CASES:
        record, shapes, dtypes = param.values
        if not any(p in record.name for p in ("cholesky", "eigh", "svd", "qr", "lu", "fft")):
            continue
        executable, _, _ = _run_both(record, shapes, dtypes)
        seen |= {fb.op.opcode for fb in executable.program.fallbacks}
        if seen >= set(FALLBACK_ALLOWED):
            break
    assert set(FALLBACK_ALLOWED) <= seen, sorted(set(FALLBACK_ALLOWED) - seen)


def test_default_backend_is_llvm_and_reference_is_selectable() -> None:
    assert backends.get_backend().name == "llvm"
    with justjax.config.override("jax_platforms", "reference"):
        assert backends.get_backend().name == "reference"


# ---------------------------------------------------------------------------------------------
# The program around the ops: native control flow, in-place loop state, callbacks, dispatch.

def _both(fun, *args):
    """`fun` jitted on the llvm backend and on the reference backend."""
    native = justjax.jit(fun)(*args)
    with justjax.config.override("jax_platforms", "reference"):
        # A fresh function: the jit cache must not hand back the llvm executable.
        reference = justjax.jit(lambda *xs: fun(*xs))(*args)
    return native, reference


def test_while_loop_state_permutation_and_scan_outputs() -> None:
    def swap(a, b):
        return justjax.lax.fori_loop(0, 5, lambda i, ab: (ab[1] * 2, ab[0] + i), (a, b))

    def rnn(w, xs):
        step = lambda h, x: (justjax.numpy.tanh(h @ w + x),) * 2
        return justjax.lax.scan(step, justjax.numpy.zeros(4, np.float32), xs)

    rng = np.random.default_rng(0)
    for fun, args in [(swap, (np.float32(1), np.float32(3))),
                      (rnn, (rng.random((4, 4), np.float32), rng.random((7, 4), np.float32)))]:
        native, reference = _both(fun, *args)
        for got, want in zip(justjax.tree.leaves(native), justjax.tree.leaves(reference),
                             strict=True):
            assert_close(got, want, 1e-6)


def test_case_index_out_of_range_takes_last_branch() -> None:
    branches = [lambda x: x + 1, lambda x: x * 10, lambda x: x - 100]
    fun = lambda i, x: justjax.lax.switch(i, branches, x)
    for index in (-3, 0, 1, 2, 7):
        native, reference = _both(fun, np.int32(index), np.float32(2))
        assert float(native) == float(reference)


def test_error_in_callback_stops_the_program() -> None:
    """A Python error in a callback inside a native loop ends the program (the loop would
    otherwise spin on a counter the callback never wrote) and is raised to the caller."""
    def fails(x):
        raise ValueError("callback failed")

    result_type = justjax.ShapeDtypeStruct((), np.float32)
    body = lambda c: justjax.pure_callback(fails, result_type, c)
    loop = lambda x: justjax.lax.while_loop(lambda c: c < 10, body, x)
    with pytest.raises(justjax.errors.JaxRuntimeError, match="callback failed"):
        justjax.block_until_ready(justjax.jit(loop)(np.float32(0)))


def test_async_dispatch_gives_the_values_and_isolates_inputs() -> None:
    from justjax._src.backends.llvm.runtime import executable
    x = np.random.default_rng(1).random(executable.ASYNC_ELEMENTS, np.float32)
    f = justjax.jit(lambda v: justjax.numpy.exp(justjax.numpy.sin(v)) * 2)
    mutable = x.copy()
    y = f(mutable)
    mutable[:] = 7  # written right after dispatch: the program reads its own copy
    chained = f(f(y))  # pending arrays as arguments
    expected = np.exp(np.sin(x)) * 2
    assert_close(np.asarray(y), expected, 1e-5)
    assert_close(np.asarray(chained), np.exp(np.sin(np.exp(np.sin(expected)) * 2)) * 2, 1e-5)
    assert chained.block_until_ready().is_ready()


def test_compiled_as_text_dialects() -> None:
    compiled = justjax.jit(lambda v: justjax.numpy.tanh(v) + 1).lower(
        np.ones(8, np.float32)).compile()
    assert "define void @" in compiled.as_text("llvm")
    assert "entry" in compiled.as_text("asm") and "ret" in compiled.as_text("asm")
    assert compiled.as_text().startswith("HloModule")
    with pytest.raises(ValueError, match="Unknown dialect"):
        compiled.as_text("ptx")


def test_fusions_computed_in_place_read_each_element_before_writing_it() -> None:
    """A loop fusion shares its operand's buffer only when every element is read before the
    same element is written: not through a reverse, and not when another root reads it."""
    x = np.arange(8, dtype=np.int32)[::-1].copy()
    flipped = justjax.jit(lambda v: justjax.numpy.flip(justjax.numpy.sort(v) + 1))(x)
    np.testing.assert_array_equal(flipped, np.arange(8, 0, -1))
    two_roots = justjax.jit(lambda v: (lambda s: (s + 1, s * 2))(justjax.numpy.sort(v)))(x)
    np.testing.assert_array_equal(two_roots[0], np.arange(1, 9))
    np.testing.assert_array_equal(two_roots[1], np.arange(8) * 2)


# ---------------------------------------------------------------------------------------------
# Loops split across cores.

@pytest.mark.parametrize("n,tasks", [(1, 2), (7, 2), (1000, 2), (1001, 3), (5, 8)])
def test_run_split_covers_every_element_once(n, tasks):
    from justjax._src.backends.llvm.runtime import parallel_for
    seen = np.zeros(n, np.int64)

    def task(begin, end):
        seen[begin:end] += 1

    parallel_for.run_split(task, n, tasks)
    np.testing.assert_array_equal(seen, np.ones(n, np.int64))


def test_run_split_raises_a_task_error():
    from justjax._src.backends.llvm.runtime import parallel_for

    def task(begin, end):
        if begin > 0:
            raise ValueError("piece failed")

    with pytest.raises(ValueError, match="piece failed"):
        parallel_for.run_split(task, 100, 2)


def test_large_elementwise_op_is_split_and_exact():
    from justjax._src.backends.llvm.runtime import parallel_for
    jnp = justjax.numpy
    x = np.random.default_rng(5).random(1 << 22, np.float32)
    fun = justjax.jit(lambda v: jnp.exp(v) * 2)
    # 16 MiB written: one task per 4 MiB, at most one per core.
    assert fun.lower(x).compile()._call.executable._tasks == min(4, parallel_for.core_count())
    np.testing.assert_array_equal(np.asarray(fun(x)), np.asarray(jnp.exp(x) * 2))
