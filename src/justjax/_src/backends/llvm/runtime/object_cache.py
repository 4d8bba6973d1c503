"""The persistent compilation cache of the llvm backend: compiled object code on disk.

JAX's persistent compilation cache, for native code: with `jax_compilation_cache_dir` set
(or `JAX_COMPILATION_CACHE_DIR`, or `compilation_cache.set_cache_dir(path)`), the object code
that LLVM generates for a program is written to that folder, and a later process compiling
the same program loads it instead of running LLVM's optimizer and code generator.

The key is the sha256 of everything the object code depends on: the LLVM IR as generated,
the optimization level, the host CPU's name and features, the llvmlite, LLVM and justjax
versions and this file's `FORMAT_VERSION`. One entry is one file `llvm-<key>` holding a
header (magic, format version, key, payload lengths, payload sha256) and the payload (the
object code, then the optimized IR compressed, so that `as_text` answers as after a fresh
compile). An entry that does not check out (truncated, corrupt, of another key or format) is
never loaded: the program is compiled afresh and the entry replaced. Writes go to a temporary
file renamed over the entry (`os.replace`), so readers and concurrent writers of one key only
ever see whole entries.

As in JAX, an entry is written only when the compile took at least
`jax_persistent_cache_min_compile_time_secs` and the entry is at least
`jax_persistent_cache_min_entry_size_bytes` long, the folder is chosen once (at the first
compile that finds it set; `reset_cache()` forgets it), and errors reading or writing the cache
are warnings unless `jax_raise_persistent_cache_errors` is set. A folder this process can read
but not write is read from (a shared, prepared cache); one that cannot be created or read is
warned about once, and programs then compile without the cache. With
`jax_compilation_cache_max_size` (bytes; -1: no limit, 0: no cache), a write that takes the
folder's entries past the limit removes the least recently used ones (a hit marks its entry
used by its modification time); an entry larger than the limit is not written.

An entry's object code is checked before LLVM loads it (`object_check`): its checksum, then
its structure, so that a damaged or altered entry is refused (and replaced), never a crash.
Whoever can write the folder can still run code in the processes that read it: its machine
code is not judged, as with JAX's cache.
"""
from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
import threading
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import llvmlite
import llvmlite.binding as llvm

from justjax._src import monitoring
from justjax._src.backends.llvm.runtime import host, object_check, optimizer
from justjax._src.config import config

__all__ = ["compile", "cache_key", "cache_dir", "reset_cache", "stats", "CompiledObject",
           "FORMAT_VERSION", "compile_object", "load_object", "empty_engine",
           "encode_entry", "decode_entry", "write_atomically", "digest_of"]

logger = logging.getLogger("justjax")

FORMAT_VERSION = 1
MAGIC = b"JJAXOBJ\x00"
# magic, format version, key (sha256), object length, compressed IR length, payload sha256.
_HEADER = struct.Struct("<8sI32sQQ32s")
_PREFIX = "llvm-"


@dataclass
class Stats:
    """Counters of this process's use of the cache (tests read them).

    Attributes:
      codegen: programs LLVM optimized and generated code for (with or without the cache).
      hits: programs loaded from an entry.
      misses: lookups that found no usable entry.
      writes: entries written.
      rejected: entries found unusable (truncated, corrupt, foreign) and not loaded.
      evicted: entries removed to keep the folder within `jax_compilation_cache_max_size`.
    """

    codegen: int = 0
    hits: int = 0
    misses: int = 0
    writes: int = 0
    rejected: int = 0
    evicted: int = 0


stats = Stats()


@dataclass
class CompiledObject:
    """A program's finalized execution engine.

    Attributes:
      engine: the MCJIT engine holding the program's code (`get_function_address("entry")`).
      optimized_ir: the LLVM IR after LLVM's optimizations.
      cache_hit: whether the code was loaded from the cache.
      compile_seconds: time spent in LLVM (parsing, optimizing, code generation or loading).
      entry: the name of the program's entry point in `engine`.
    """

    engine: llvm.ExecutionEngine
    optimized_ir: str
    cache_hit: bool
    compile_seconds: float
    entry: str = "entry"


class _State:
    """The cache folder, chosen once per process as JAX does (until `reset_cache`), and
    whether this process may write it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.initialized = False
        self.directory: Path | None = None
        self.writable = False
        self.warned: set[str] = set()


_state = _State()


def reset_cache() -> None:
    """Forgets the cache folder: the next compile reads `jax_compilation_cache_dir` again
    (as JAX's `compilation_cache.reset_cache`). Entries on disk are kept."""
    with _state.lock:
        _state.initialized = False
        _state.directory = None


def cache_dir() -> Path | None:
    """The folder entries are read from and written to, or None when the cache is off.

    The folder is taken from `jax_compilation_cache_dir` at the first call that finds it set,
    created if missing and checked; one that cannot be used is warned about once and the cache
    stays off until `reset_cache()`.
    """
    if not config.read("jax_enable_compilation_cache"):
        return None
    if config.read("jax_compilation_cache_max_size") == 0:
        return None
    with _state.lock:
        if not _state.initialized:
            path = config.read("jax_compilation_cache_dir")
            if not path:
                return None
            _state.initialized = True
            _state.directory, _state.writable = _usable_directory(Path(path))
        return _state.directory


def _usable_directory(path: Path) -> tuple[Path | None, bool]:
    """`path`, created if missing, if this process can list and read it (else None after a
    warning), and whether it can write it too."""
    try:
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.R_OK | os.X_OK):
            raise PermissionError(f"no read access to {str(path)!r}")
        os.listdir(path)
    except OSError as e:
        _error(f"Persistent compilation cache directory {str(path)!r} cannot be used; "
               f"compiling without the cache: {type(e).__name__}: {e}", e)
        return None, False
    writable = os.access(path, os.W_OK)
    logger.debug("Initialized persistent compilation cache at %s%s", path,
                 "" if writable else " (read-only: entries are read, none written)")
    return path, writable


def _error(message: str, error: BaseException) -> None:
    """Raises `error` under `jax_raise_persistent_cache_errors`, else warns (once per
    message: a failing folder would otherwise warn at every compile)."""
    if config.read("jax_raise_persistent_cache_errors"):
        raise error
    if message not in _state.warned:
        _state.warned.add(message)
        warnings.warn(message, stacklevel=3)


def _justjax_version() -> str:
    # The installed distribution's version (the package itself sits above this layer).
    from importlib import metadata
    try:
        return metadata.version("justjax")
    except metadata.PackageNotFoundError:
        return "unknown"


def _host_parts() -> tuple[str, ...]:
    """What object code depends on besides its IR: the cache format, the justjax, llvmlite
    and LLVM versions, the target triple and the host CPU's name and features."""
    cpu_name, cpu_features = host.host_cpu()
    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    return (f"format={FORMAT_VERSION}", f"justjax={_justjax_version()}",
            f"llvmlite={llvmlite.__version__}", f"llvm={llvm_version}",
            f"triple={llvm.get_process_triple()}", f"cpu={cpu_name}",
            f"features={cpu_features}")


def cache_key(llvm_ir: str, opt_level: int) -> str:
    """The entry key of a program: a sha256 hex digest of its LLVM IR as generated, the
    optimization level, the host CPU and the versions of every tool that made the code."""
    return digest_of((*_host_parts(), f"opt={opt_level}", llvm_ir))


def digest_of(parts: tuple[str, ...]) -> str:
    """The sha256 hex digest of a sequence of strings."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode()
        # Length-prefixed: no two different lists of parts hash the same bytes.
        digest.update(struct.pack("<Q", len(data)))
        digest.update(data)
    return digest.hexdigest()


def compile(llvm_ir: str, opt_level: int, name: str = "program") -> CompiledObject:
    """Compiles `llvm_ir` for the host CPU, through the cache when it is on.

    Args:
      llvm_ir: the program's LLVM IR as generated (before LLVM's optimizations).
      opt_level: the level to compile at (`host.QUICK`, `host.LINKED`, `host.FULL`).
      name: the module's name, for log messages.

    Returns:
      A `CompiledObject` whose engine is finalized.
    """
    directory = cache_dir()
    if directory is None:
        return _compile_shared(llvm_ir, opt_level)
    monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
    key = cache_key(llvm_ir, opt_level)
    path = directory / (_PREFIX + key)
    start = time.perf_counter()
    entry, rejected = _read_entry(path, key, name)
    if entry is not None:
        _mark_used(path)
        compiled = _load(entry, opt_level, name, key)
        monitoring.record_event("/jax/compilation_cache/cache_hits")
        monitoring.record_event_duration_secs("/jax/compilation_cache/cache_retrieval_time_sec",
                                              time.perf_counter() - start)
        return compiled
    stats.misses += 1
    miss_level = logging.WARNING if config.read("jax_explain_cache_misses") else logging.DEBUG
    logger.log(miss_level, "PERSISTENT COMPILATION CACHE MISS for '%s' with key %r", name, key)
    if not _state.writable:
        return _compile_shared(llvm_ir, opt_level)  # a read-only folder takes no entry
    compiled, obj = _compile_fresh(llvm_ir, opt_level, keep_object=True)
    written = obj is not None and _maybe_write(path, key, name, obj, compiled)
    if rejected and not written:
        # A bad entry not replaced (the fresh compile is under a threshold) is removed, so
        # that later processes do not read and reject it again.
        _remove(path)
    return compiled


class _SharedEngine:
    """MCJIT engines shared by the programs compiled without the disk cache: an engine of its
    own costs each program about 800 KB (its target machine and memory manager); in a shared
    one, a program costs its code. Each program's entry point is renamed `entry.<n>` (its
    other symbols are internal); its module is removed from the engine once its code is
    generated, which leaves the code in place.

    An engine frees its code only when it is disposed, and each program's code and constants
    take memory mappings of their own (the kernel allows 65,530 per process): so an engine
    takes `PROGRAMS_PER_ENGINE` programs per optimization level, then a fresh one starts.
    Each program's executable holds the engines its code is in, so an engine whose programs
    are all gone (evicted from the caches, `jax.clear_caches()`) is disposed with its code,
    and a process compiling programs without end keeps only the live ones' code mapped."""

    PROGRAMS_PER_ENGINE = 128

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # optimization level -> (the engine new programs go to, how many it took)
        self.engines: dict[int, tuple[llvm.ExecutionEngine, int]] = {}
        self.count = 0

    def compile(self, llvm_ir: str, opt_level: int) -> CompiledObject:
        start = time.perf_counter()
        with self.lock:
            self.count += 1
            entry = f"entry.{self.count}"
            module = optimizer.parse(llvm_ir.replace('define void @"entry"(',
                                                     f'define void @"{entry}"(', 1),
                                     host.runs_ir_pipeline(opt_level))
            optimized_ir = str(module)
            engine, taken = self.engines.get(opt_level, (None, self.PROGRAMS_PER_ENGINE))
            if taken >= self.PROGRAMS_PER_ENGINE:
                engine, taken = empty_engine(opt_level), 0
            self.engines[opt_level] = (engine, taken + 1)
            engine.add_module(module)
            engine.finalize_object()
            engine.remove_module(module)
            stats.codegen += 1
        seconds = time.perf_counter() - start
        return CompiledObject(engine, optimized_ir, False, seconds, entry)


_shared = _SharedEngine()


def _compile_shared(llvm_ir: str, opt_level: int) -> CompiledObject:
    return _shared.compile(llvm_ir, opt_level)


def _compile_fresh(llvm_ir: str, opt_level: int,
                   keep_object: bool) -> tuple[CompiledObject, bytes | None]:
    """Parses, verifies, optimizes and generates code for `llvm_ir`; with `keep_object`,
    also returns the object code MCJIT produced."""
    start = time.perf_counter()
    engine, optimized_ir, obj = compile_object(llvm_ir, opt_level, keep_object)
    stats.codegen += 1
    seconds = time.perf_counter() - start
    return CompiledObject(engine, optimized_ir, False, seconds), obj


def compile_object(llvm_ir: str, opt_level: int, keep_object: bool = True
                   ) -> tuple[llvm.ExecutionEngine, str, bytes | None]:
    """A finalized engine of `llvm_ir` (parsed, verified, optimized and code generated at
    `opt_level`), its optimized IR and, with `keep_object`, the object code MCJIT produced."""
    module = optimizer.parse(llvm_ir, host.runs_ir_pipeline(opt_level))
    optimized_ir = str(module)
    engine = llvm.create_mcjit_compiler(module, host.new_target_machine(opt_level))
    objects: list[bytes] = []
    if keep_object:
        engine.set_object_cache(lambda _module, buffer: objects.append(buffer), None)
    engine.finalize_object()
    return engine, optimized_ir, objects[0] if len(objects) == 1 else None


def _load(entry: tuple[bytes, str], opt_level: int, name: str, key: str) -> CompiledObject:
    """An engine running the cached object code: MCJIT is given an empty module and asks
    the object cache for its code, which is the entry's, so LLVM generates nothing."""
    start = time.perf_counter()
    obj, optimized_ir = entry
    engine = load_object(obj, opt_level)
    stats.hits += 1
    hit_level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
    logger.log(hit_level, "Persistent compilation cache hit for '%s' with key %r", name, key)
    return CompiledObject(engine, optimized_ir, True, time.perf_counter() - start)


def load_object(obj: bytes, opt_level: int) -> llvm.ExecutionEngine:
    """A finalized engine running the object code `obj`: MCJIT is given an empty module and
    asks the object cache for its code, which is `obj`, so LLVM generates nothing."""
    engine = empty_engine(opt_level)
    engine.set_object_cache(None, lambda _module: obj)
    engine.finalize_object()
    return engine


def empty_engine(opt_level: int) -> llvm.ExecutionEngine:
    """An MCJIT engine for the host holding an empty module (object files can be added)."""
    machine = host.new_target_machine(opt_level)
    stub = llvm.parse_assembly(f'target datalayout = "{machine.target_data}"\n'
                               f'target triple = "{llvm.get_process_triple()}"\n')
    return llvm.create_mcjit_compiler(stub, machine)


def _read_entry(path: Path, key: str, name: str) -> tuple[tuple[bytes, str] | None, bool]:
    """The object code and optimized IR of the entry at `path` (None if there is none or
    it does not check out), and whether there was one that did not (counted in
    `stats.rejected`, logged, never loaded)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, False
    except OSError as e:
        _error(f"Error reading persistent compilation cache entry for '{name}': "
               f"{type(e).__name__}: {e}", e)
        return None, False
    entry, problem = decode_entry(data, key)
    if problem:
        stats.rejected += 1
        logger.warning("Ignoring persistent compilation cache entry %s: %s", path, problem)
    return entry, bool(problem)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass  # gone already, or the folder is read-only: the entry is rejected again later


def encode_entry(key: str, obj: bytes, optimized_ir: str) -> bytes:
    """The bytes of the entry of `key`: header, object code, compressed optimized IR."""
    ir_bytes = zlib.compress(optimized_ir.encode(), 1)
    payload = obj + ir_bytes
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, bytes.fromhex(key), len(obj), len(ir_bytes),
                          hashlib.sha256(payload).digest())
    return header + payload


def decode_entry(data: bytes, key: str, symbols: Iterable[str] = ("entry",)
                 ) -> tuple[tuple[bytes, str] | None, str]:
    """Checks and splits entry bytes: ((object code, optimized IR), "") or (None, what is
    wrong with them). Past the checksum, the object code's structure is checked
    (`object_check`), with `symbols` (its entry points) defined in it."""
    if len(data) < _HEADER.size:
        return None, f"truncated ({len(data)} bytes, shorter than the header)"
    magic, version, entry_key, obj_len, ir_len, checksum = _HEADER.unpack_from(data)
    if magic != MAGIC:
        return None, "not a justjax object-code entry (wrong magic)"
    if version != FORMAT_VERSION:
        return None, f"format version {version}, expected {FORMAT_VERSION}"
    if entry_key != bytes.fromhex(key):
        return None, "entry of another key"
    payload = data[_HEADER.size:]
    if len(payload) != obj_len + ir_len:
        return None, f"payload of {len(payload)} bytes, expected {obj_len + ir_len}"
    if hashlib.sha256(payload).digest() != checksum:
        return None, "payload checksum mismatch"
    try:
        optimized_ir = zlib.decompress(payload[obj_len:]).decode()
    except (zlib.error, UnicodeDecodeError) as e:
        return None, f"undecodable IR ({e})"
    why = object_check.problem(payload[:obj_len], symbols)
    if why:
        return None, why
    return (payload[:obj_len], optimized_ir), ""


def _maybe_write(path: Path, key: str, name: str, obj: bytes,
                 compiled: CompiledObject) -> bool:
    """Writes the entry of a fresh compile if it passes JAX's two thresholds; returns
    whether it was written."""
    min_seconds = config.read("jax_persistent_cache_min_compile_time_secs")
    if compiled.compile_seconds < min_seconds:
        logger.debug("Not writing persistent cache entry for '%s' because it took < %.2f "
                     "seconds to compile (%.2fs)", name, min_seconds, compiled.compile_seconds)
        return False
    data = encode_entry(key, obj, compiled.optimized_ir)
    min_size = config.read("jax_persistent_cache_min_entry_size_bytes")
    if len(data) < min_size:
        logger.debug("Not writing persistent cache entry with key %r since its size (%d "
                     "bytes) is less than threshold (%d bytes)", key, len(data), min_size)
        return False
    max_size = config.read("jax_compilation_cache_max_size")
    if max_size > 0 and len(data) > max_size:
        logger.debug("Not writing persistent cache entry with key %r since its size (%d "
                     "bytes) exceeds the cache's maximum size (%d bytes)", key, len(data),
                     max_size)
        return False
    try:
        write_atomically(path, data)
    except OSError as e:
        _error(f"Error writing persistent compilation cache entry for '{name}': "
               f"{type(e).__name__}: {e}", e)
        return False
    if max_size > 0:
        _evict(path.parent, max_size, keep=path)
    stats.writes += 1
    logger.debug("Writing %s to persistent compilation cache with key %r", name, key)
    monitoring.record_event("/jax/compilation_cache/cache_misses")
    return True


def _mark_used(path: Path) -> None:
    """Marks the entry at `path` as just used (its modification time: the eviction's order;
    access times are often not kept)."""
    if _state.writable:
        try:
            os.utime(path)
        except OSError:
            pass  # removed meanwhile by another process's eviction


def _evict(folder: Path, max_size: int, keep: Path) -> None:
    """Removes the least recently used entries of `folder` until they take at most
    `max_size` bytes (never `keep`, just written). Entries other processes remove meanwhile
    are skipped."""
    entries = []
    for candidate in folder.glob(f"{_PREFIX}*"):
        try:
            info = candidate.stat()
        except OSError:
            continue
        entries.append((info.st_mtime, info.st_size, candidate))
    total = sum(size for _, size, _ in entries)
    for _, size, candidate in sorted(entries, key=lambda e: e[0]):
        if total <= max_size:
            break
        if candidate == keep:
            continue
        try:
            candidate.unlink()
        except OSError:
            continue
        stats.evicted += 1
        total -= size


def write_atomically(path: Path, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file in the same folder renamed over it:
    a reader sees the old entry or the new one, never part of one; of concurrent writers
    of one key, the last rename wins (their entries are alike)."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
