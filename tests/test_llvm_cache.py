"""The llvm backend's persistent compilation cache (`backends/llvm/runtime/object_cache.py`).

Across processes: a first process compiling jitted programs with the cache folder set writes
entries, a second loads every program from them (LLVM generates no code) and computes the
same results; two processes writing one key at once leave only whole entries; the cache is
off without a folder. In this process, on hand-written IR: bad entries (truncated, flipped
bytes, wrong magic, format or key) are compiled afresh and replaced, never loaded; JAX's
thresholds; an unusable folder warns once; the public `set_cache_dir` / `reset_cache`. Without
the cache, the engines programs share are freed with the programs.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import struct
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest

import justjax
from justjax._src.backends.llvm.runtime import object_cache
from justjax.experimental.compilation_cache import compilation_cache

_CACHE_ENV = ("JAX_COMPILATION_CACHE_DIR", "JUSTJAX_COMPILATION_CACHE_DIR",
              "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
              "JUSTJAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
              "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
              "JUSTJAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
              "JAX_ENABLE_COMPILATION_CACHE", "JUSTJAX_ENABLE_COMPILATION_CACHE")

# Two jitted programs: one large enough for O3 (`runtime.FAST_COMPILE_ELEMENTS`), one small
# (no optimization, math linked by symbol).
_PROGRAMS = """
import hashlib, json, sys
import numpy as np
import justjax as jax, justjax.numpy as jnp
from justjax._src.backends.llvm.runtime import object_cache

big = jax.jit(lambda x, y: jnp.tanh(x @ y) * 2 + jnp.sum(jnp.exp(y), axis=0))
small = jax.jit(lambda x: jnp.where(x > 0, jnp.sin(x), x * 3) + jnp.cumsum(x))
x = np.linspace(-1, 1, 256 * 256, dtype=np.float32).reshape(256, 256)
y = np.cos(np.arange(256 * 256, dtype=np.float32)).reshape(256, 256) / 16
outs = [np.asarray(big(x, y)), np.asarray(small(np.arange(-5, 5, dtype=np.int32)))]
digest = hashlib.sha256(b"".join(o.tobytes() for o in outs)).hexdigest()
"""


def _child(code: str, cwd: Path, **env: str) -> subprocess.Popen:
    """Starts `code` in a fresh interpreter with the cache settings of `env` only."""
    environ = {k: v for k, v in os.environ.items() if k not in _CACHE_ENV}
    environ.update(JAX_PLATFORMS="cpu", **env)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                            env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _result(process: subprocess.Popen) -> dict[str, Any]:
    """The JSON object the child printed last."""
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _report(extra: str = "") -> str:
    return _PROGRAMS + extra + "\nprint(json.dumps({'stats': vars(object_cache.stats), " \
        "'digest': digest}))\n"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("llvm-*"))


def test_second_process_loads_the_code(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    env = dict(JAX_COMPILATION_CACHE_DIR=str(folder),
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    first = _result(_child(_report(), tmp_path, **env))
    assert first["stats"]["hits"] == 0
    assert first["stats"]["writes"] == first["stats"]["codegen"] >= 2
    assert len(_entries(folder)) == first["stats"]["writes"]
    second = _result(_child(_report(), tmp_path, **env))
    assert second["stats"]["codegen"] == 0, "LLVM generated code despite the cache"
    assert second["stats"]["hits"] == first["stats"]["writes"]
    assert second["stats"]["writes"] == second["stats"]["rejected"] == 0
    assert second["digest"] == first["digest"]


def test_off_by_default(tmp_path: Path) -> None:
    code = _report("\nassert jax.config.jax_compilation_cache_dir is None\n")
    result = _result(_child(code, tmp_path))
    assert result["stats"]["codegen"] >= 2
    assert result["stats"]["hits"] == result["stats"]["misses"] == 0
    assert result["stats"]["writes"] == 0
    assert list(tmp_path.iterdir()) == []


_WRITER = """
import json, os, sys, time
from pathlib import Path
from justjax._src.backends.llvm.runtime import object_cache

folder, me = Path(sys.argv[1]), sys.argv[2]
key = "ab" * 32
path = folder / ("llvm-" + key)
# Two real objects (an entry's object code is checked when read), told apart by size.
ir = "define i64 @entry(i64 %x) {{\\n  %y = mul i64 %x, {}\\n  ret i64 %y\\n}}\\n"
objects = {w: object_cache.compile_object(ir.format(m), 0 if w == "A" else 3)[2]
           for w, m in (("A", 3), ("B", 5))}
(folder.parent / ("ready-" + me)).touch()
deadline = time.time() + 60
while not all((folder.parent / ("ready-" + w)).exists() for w in "AB"):
    time.sleep(0.001)  # both writers begin together
    assert time.time() < deadline, "the other writer never started"
seen = set()
for i in range(300):
    object_cache.write_atomically(path, object_cache.encode_entry(key, objects[me], "; ir " + me))
    entry, problem = object_cache.decode_entry(path.read_bytes(), key)
    assert not problem, problem
    assert entry[0] == objects[entry[1][-1]]
    seen.add(entry[1][-1])
""" + _PROGRAMS + """
print(json.dumps({"seen": sorted(seen), "stats": vars(object_cache.stats), "digest": digest}))
"""


def test_concurrent_writers(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    env = dict(JAX_COMPILATION_CACHE_DIR=str(folder),
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    writers = [subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(folder), me], cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if k not in _CACHE_ENV},
             "JAX_PLATFORMS": "cpu", **env},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for me in "AB"]
    results = [_result(w) for w in writers]
    # Each writer read back only whole entries, its own or the other's.
    assert all(set(r["seen"]) <= {"A", "B"} for r in results)
    assert results[0]["digest"] == results[1]["digest"]
    assert not list(folder.glob(".*")), "temporary files left behind"
    for path in _entries(folder):
        entry, problem = object_cache.decode_entry(path.read_bytes(), path.name.removeprefix("llvm-"))
        assert entry is not None, (path.name, problem)


# --- in this process, on hand-written IR ---------------------------------------------------

_IR = """
define i64 @entry(i64 %x) {
  %y = mul i64 %x, MULTIPLIER
  ret i64 %y
}
"""


def _ir(multiplier: int) -> str:
    return _IR.replace("MULTIPLIER", str(multiplier))


def _call(compiled: object_cache.CompiledObject, x: int) -> int:
    address = compiled.engine.get_function_address("entry")
    return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(address)(x)


@pytest.fixture
def cache_folder(tmp_path: Path) -> Iterator[Path]:
    """A fresh cache folder, set up as `set_cache_dir` does, writing every entry."""
    folder = tmp_path / "cache"
    compilation_cache.reset_cache()
    with justjax.config.override("jax_compilation_cache_dir", str(folder)), \
            justjax.config.override("jax_persistent_cache_min_compile_time_secs", 0.0):
        yield folder
    compilation_cache.reset_cache()


def _counts() -> dict[str, int]:
    return dict(vars(object_cache.stats))


def _delta(before: dict[str, int]) -> dict[str, int]:
    return {k: v - before[k] for k, v in vars(object_cache.stats).items() if v != before[k]}


@pytest.mark.parametrize("opt_level", [0, 3])
def test_hit_loads_without_codegen(cache_folder: Path, opt_level: int) -> None:
    before = _counts()
    fresh = object_cache.compile(_ir(3), opt_level)
    assert _delta(before) == {"codegen": 1, "misses": 1, "writes": 1}
    before = _counts()
    loaded = object_cache.compile(_ir(3), opt_level)
    assert _delta(before) == {"hits": 1}
    assert loaded.cache_hit and not fresh.cache_hit
    assert _call(fresh, 7) == _call(loaded, 7) == 21
    assert loaded.optimized_ir == fresh.optimized_ir


def _corrupt_truncate(data: bytes, other: bytes) -> bytes:
    return data[:len(data) // 2]


def _corrupt_header_only(data: bytes, other: bytes) -> bytes:
    return data[:40]


def _corrupt_empty(data: bytes, other: bytes) -> bytes:
    return b""


def _corrupt_flip_object(data: bytes, other: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    return bytes(flipped)


def _corrupt_magic(data: bytes, other: bytes) -> bytes:
    return b"NOTJJAX!" + data[8:]


def _corrupt_version(data: bytes, other: bytes) -> bytes:
    return data[:8] + (object_cache.FORMAT_VERSION + 1).to_bytes(4, "little") + data[12:]


def _corrupt_foreign(data: bytes, other: bytes) -> bytes:
    # A whole, valid entry of another program (x * 5) under this program's name.
    return other


def _corrupt_appended(data: bytes, other: bytes) -> bytes:
    return data + b"\0"


@pytest.mark.parametrize("corrupt", [
    _corrupt_truncate, _corrupt_header_only, _corrupt_empty, _corrupt_flip_object,
    _corrupt_magic, _corrupt_version, _corrupt_foreign, _corrupt_appended])
def test_bad_entry_is_recompiled_not_loaded(cache_folder: Path, corrupt: Any,
                                            caplog: pytest.LogCaptureFixture) -> None:
    object_cache.compile(_ir(5), 3)
    object_cache.compile(_ir(3), 3)
    path = cache_folder / ("llvm-" + object_cache.cache_key(_ir(3), 3))
    other = cache_folder / ("llvm-" + object_cache.cache_key(_ir(5), 3))
    good = path.read_bytes()
    path.write_bytes(corrupt(good, other.read_bytes()))
    before = _counts()
    compiled = object_cache.compile(_ir(3), 3)
    assert _delta(before) == {"codegen": 1, "misses": 1, "rejected": 1, "writes": 1}
    assert _call(compiled, 7) == 21
    assert "Ignoring persistent compilation cache entry" in caplog.text
    assert path.read_bytes() == good, "the bad entry was not replaced"


def test_bad_entry_under_threshold_is_removed(cache_folder: Path) -> None:
    object_cache.compile(_ir(3), 0)
    path = cache_folder / ("llvm-" + object_cache.cache_key(_ir(3), 0))
    path.write_bytes(path.read_bytes()[:-1])
    before = _counts()
    with justjax.config.override("jax_persistent_cache_min_compile_time_secs", 1e9):
        assert _call(object_cache.compile(_ir(3), 0), 2) == 6
    assert _delta(before) == {"codegen": 1, "misses": 1, "rejected": 1}
    assert not path.exists()


def test_thresholds(cache_folder: Path) -> None:
    # JAX's defaults: entries of compiles under one second are not written; no size floor.
    assert justjax.config.values["jax_persistent_cache_min_entry_size_bytes"] == 0
    with justjax.config.override("jax_persistent_cache_min_compile_time_secs", 1.0):
        object_cache.compile(_ir(11), 0)
    with justjax.config.override("jax_persistent_cache_min_entry_size_bytes", 1 << 30):
        object_cache.compile(_ir(12), 0)
    assert _entries(cache_folder) == []
    with justjax.config.override("jax_persistent_cache_min_entry_size_bytes", 100):
        object_cache.compile(_ir(13), 0)
    assert len(_entries(cache_folder)) == 1


def test_key_parts(cache_folder: Path) -> None:
    key = object_cache.cache_key(_ir(3), 3)
    assert key == object_cache.cache_key(_ir(3), 3)
    assert len({key, object_cache.cache_key(_ir(3), 0), object_cache.cache_key(_ir(4), 3)}) == 3
    # Tools, CPU and format are part of the key: a different CPU never shares an entry.
    parts = object_cache._host_parts()
    assert any(p.startswith("cpu=") for p in parts)
    assert any(p.startswith("features=") for p in parts)
    assert any(p.startswith("llvm=") for p in parts)


def test_unusable_folder_warns_once(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    compilation_cache.reset_cache()
    try:
        with justjax.config.override("jax_compilation_cache_dir", str(blocker / "cache")):
            with pytest.warns(UserWarning, match="cannot be used; compiling without"):
                assert _call(object_cache.compile(_ir(3), 0), 3) == 9
            before = _counts()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert _call(object_cache.compile(_ir(3), 0), 4) == 12
            assert _delta(before) == {"codegen": 1}
            compilation_cache.reset_cache()
            with justjax.config.override("jax_raise_persistent_cache_errors", True):
                with pytest.raises(OSError):
                    object_cache.compile(_ir(3), 0)
    finally:
        compilation_cache.reset_cache()


def test_set_cache_dir_and_reset(tmp_path: Path) -> None:
    old = justjax.config.read("jax_compilation_cache_dir")
    compilation_cache.reset_cache()
    try:
        with justjax.config.override("jax_persistent_cache_min_compile_time_secs", 0.0):
            compilation_cache.set_cache_dir(tmp_path / "one")
            assert justjax.config.read("jax_compilation_cache_dir") == str(tmp_path / "one")
            object_cache.compile(_ir(21), 0)
            # As in JAX, the folder is chosen once: a new one takes effect after reset_cache.
            compilation_cache.set_cache_dir(tmp_path / "two")
            object_cache.compile(_ir(22), 0)
            assert len(_entries(tmp_path / "one")) == 2
            compilation_cache.reset_cache()
            object_cache.compile(_ir(23), 0)
            assert len(_entries(tmp_path / "two")) == 1
            with justjax.config.override("jax_enable_compilation_cache", False):
                before = _counts()
                object_cache.compile(_ir(21), 0)
                assert _delta(before) == {"codegen": 1}
    finally:
        justjax.config.update("jax_compilation_cache_dir", old)
        compilation_cache.reset_cache()


def _memory_mappings() -> int:
    with open("/proc/self/maps") as maps:
        return sum(1 for _ in maps)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="counts Linux mappings")
def test_code_of_programs_no_longer_used_is_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the disk cache, programs share engines; each program's code and constants take
    # memory mappings of their own, of which a process has 65,530. Once a batch of programs
    # is gone, the engines that held only them are disposed: compiling batch after batch
    # must not add mappings without end (it added two or three per program).
    monkeypatch.setattr(object_cache._SharedEngine, "PROGRAMS_PER_ENGINE", 10)
    import gc
    import numpy as np
    import justjax.numpy as jnp
    x = np.ones(7, np.float32)

    def compile_batch(first: int) -> None:
        for i in range(first, first + 100):
            justjax.jit(lambda a, i=i: jnp.sin(a) * i)(x)
        justjax.clear_caches()
        gc.collect()

    compile_batch(0)
    before = _memory_mappings()
    compile_batch(100)
    compile_batch(200)
    assert _memory_mappings() - before < 100


# --- altered entries: a matching checksum, a broken structure ------------------------------

def _reseal(data: bytes, mutate: Any) -> bytes:
    """The entry `data` with its object code changed by `mutate(bytearray)` and its checksum
    recomputed: what an entry altered on purpose looks like."""
    header = object_cache._HEADER
    magic, version, key, obj_len, ir_len, _ = header.unpack_from(data)
    obj = bytearray(data[header.size:header.size + obj_len])
    mutate(obj)
    payload = bytes(obj) + data[header.size + obj_len:]
    return header.pack(magic, version, key, len(obj), ir_len,
                       hashlib.sha256(payload).digest()) + payload


def _sections(obj: bytearray) -> list[tuple[int, ...]]:
    shoff = struct.unpack_from("<Q", obj, 0x28)[0]
    count = struct.unpack_from("<H", obj, 0x3C)[0]
    return [(shoff + i * 64, *struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * 64))
            for i in range(count)]


def _section_of_kind(obj: bytearray, kind: int) -> tuple[int, ...]:
    return next(s for s in _sections(obj) if s[2] == kind)


def _alter_section_table(obj: bytearray) -> None:
    struct.pack_into("<Q", obj, 0x28, len(obj) + 4096)


def _alter_section_offset(obj: bytearray) -> None:
    at = _section_of_kind(obj, 2)[0]  # the symbol table's header
    struct.pack_into("<Q", obj, at + 24, 1 << 40)


def _alter_symbol_section(obj: bytearray) -> None:
    symtab = _section_of_kind(obj, 2)
    struct.pack_into("<H", obj, symtab[5] + 24 + 6, 900)  # symbol 1's section index


def _alter_relocation_symbol(obj: bytearray) -> None:
    rela = _section_of_kind(obj, 4)
    struct.pack_into("<Q", obj, rela[5] + 8, (1 << 40) | 1)


def _alter_relocation_type(obj: bytearray) -> None:
    rela = _section_of_kind(obj, 4)
    info = struct.unpack_from("<Q", obj, rela[5] + 8)[0]
    struct.pack_into("<Q", obj, rela[5] + 8, (info & ~0xFFFFFFFF) | 250)


def _alter_entry_name(obj: bytearray) -> None:
    at = obj.index(b"entry\0")
    obj[at:at + 6] = b"entrx\0"


def _alter_machine(obj: bytearray) -> None:
    struct.pack_into("<H", obj, 0x12, 3)  # i386


def _alter_alignment(obj: bytearray) -> None:
    struct.pack_into("<Q", obj, _sections(obj)[1][0] + 48, 1 << 50)


@pytest.mark.parametrize("alter", [
    _alter_section_table, _alter_section_offset, _alter_symbol_section,
    _alter_relocation_symbol, _alter_relocation_type, _alter_entry_name, _alter_machine,
    _alter_alignment])
def test_altered_entry_with_a_matching_checksum_is_refused(cache_folder: Path,
                                                          alter: Any) -> None:
    if alter in (_alter_relocation_type, _alter_machine) and \
            not llvmlite_triple().startswith("x86_64"):
        pytest.skip("relocation types and machine codes checked on x86-64 hosts")
    # A program with a relocation (a constant of its own, loaded by address).
    object_cache.compile(_CONSTANT_IR, 3)
    path = cache_folder / ("llvm-" + object_cache.cache_key(_CONSTANT_IR, 3))
    good = path.read_bytes()
    path.write_bytes(_reseal(good, alter))
    before = _counts()
    compiled = object_cache.compile(_CONSTANT_IR, 3)
    assert _delta(before) == {"codegen": 1, "misses": 1, "rejected": 1, "writes": 1}
    assert _call(compiled, 7) == 7 * 1234567
    assert path.read_bytes() == good


_CONSTANT_IR = """
@table = internal constant [4 x i64] [i64 1234567, i64 2, i64 3, i64 4]
@index = internal global i64 0

define i64 @entry(i64 %x) {
  %i = load volatile i64, ptr @index
  %p = getelementptr [4 x i64], ptr @table, i64 0, i64 %i
  %c = load i64, ptr %p
  %y = mul i64 %x, %c
  ret i64 %y
}
"""


def llvmlite_triple() -> str:
    import llvmlite.binding as llvm
    return llvm.get_process_triple()


_FUZZ = """
import hashlib, random, struct, sys, json
from pathlib import Path
import justjax
from justjax._src.backends.llvm.runtime import object_cache
sys.path.insert(0, TESTS)
from test_llvm_cache import _CONSTANT_IR, _reseal, _sections

folder = Path(FOLDER)
justjax.config.update("jax_compilation_cache_dir", str(folder))
justjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
object_cache.compile(_CONSTANT_IR, 3)
path = folder / ("llvm-" + object_cache.cache_key(_CONSTANT_IR, 3))
good = path.read_bytes()
rng = random.Random(SEED)
loaded = 0
for trial in range(TRIALS):
    def mutate(obj):
        # Bytes the loader reads: the ELF header, the section table, the symbol and
        # relocation tables.
        spans = [(0, 64)] + [(s[0], s[0] + 64) for s in _sections(obj)]
        spans += [(s[5], s[5] + s[6]) for s in _sections(obj) if s[2] in (2, 4) and s[6]]
        for _ in range(rng.randint(1, 3)):
            lo, hi = rng.choice(spans)
            obj[rng.randrange(lo, min(hi, len(obj)))] = rng.randrange(256)
    path.write_bytes(_reseal(good, mutate))
    compiled = object_cache.compile(_CONSTANT_IR, 3)  # must not crash the process
    loaded += compiled.cache_hit
print(json.dumps({"rejected": object_cache.stats.rejected, "loaded": loaded}))
"""


def test_randomly_altered_entries_never_crash_the_loader(tmp_path: Path) -> None:
    # 200 entries altered in the parts LLVM's loader reads, each resealed with a matching
    # checksum, loaded in a child process: each is refused or loads; none kills it (12,000
    # over 12 seeds passed when the check was written).
    code = _FUZZ.replace("TESTS", repr(str(Path(__file__).parent))).replace(
        "FOLDER", repr(str(tmp_path / "cache"))).replace("TRIALS", "200").replace("SEED", "0")
    result = _result(_child(code, tmp_path))
    assert result["rejected"] + result["loaded"] == 200
    assert result["rejected"] > 100


# --- the folder's size, read-only folders ------------------------------------------------

def test_max_size_evicts_the_least_recently_used(cache_folder: Path) -> None:
    object_cache.compile(_ir(21), 0)
    one = _entries(cache_folder)[0].stat().st_size
    limit = 3 * one + one // 2  # room for three entries
    with justjax.config.override("jax_compilation_cache_max_size", limit):
        for m in (22, 23):
            object_cache.compile(_ir(m), 0)
        first = cache_folder / ("llvm-" + object_cache.cache_key(_ir(21), 0))
        os.utime(first, (1, 1))  # used long ago ...
        object_cache.compile(_ir(21), 0)  # ... and now again: a hit marks it used
        before = _counts()
        object_cache.compile(_ir(24), 0)
        assert _delta(before) == {"codegen": 1, "misses": 1, "writes": 1, "evicted": 1}
        names = {p.name for p in _entries(cache_folder)}
        assert sum(p.stat().st_size for p in _entries(cache_folder)) <= limit
        assert first.name in names
        assert "llvm-" + object_cache.cache_key(_ir(22), 0) not in names
        # An entry larger than the whole cache is not written.
        with justjax.config.override("jax_compilation_cache_max_size", one // 2):
            before = _counts()
            object_cache.compile(_ir(25), 0)
            assert _delta(before) == {"codegen": 1, "misses": 1}


def test_max_size_zero_turns_the_cache_off(cache_folder: Path) -> None:
    with justjax.config.override("jax_compilation_cache_max_size", 0):
        assert object_cache.cache_dir() is None
        object_cache.compile(_ir(31), 0)
    assert _entries(cache_folder) == []


def test_a_read_only_folder_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "shared"
    compilation_cache.reset_cache()
    try:
        with justjax.config.override("jax_compilation_cache_dir", str(folder)), \
                justjax.config.override("jax_persistent_cache_min_compile_time_secs", 0.0):
            object_cache.compile(_ir(41), 3)
            written = {p.name: p.read_bytes() for p in _entries(folder)}
            compilation_cache.reset_cache()
            folder.chmod(0o555)
            if os.geteuid() == 0:  # root may write anything: the folder says it may not
                real_access = os.access
                monkeypatch.setattr(object_cache.os, "access", lambda p, mode: (
                    False if mode & os.W_OK and Path(p) == folder else real_access(p, mode)))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                before = _counts()
                assert _call(object_cache.compile(_ir(41), 3), 2) == 82
                assert _delta(before) == {"hits": 1}
                before = _counts()
                assert _call(object_cache.compile(_ir(42), 3), 2) == 84
                assert _delta(before) == {"codegen": 1, "misses": 1}
            assert {p.name: p.read_bytes() for p in _entries(folder)} == written
    finally:
        folder.chmod(0o755)
        compilation_cache.reset_cache()
