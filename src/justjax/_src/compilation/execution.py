"""Running a compiled program on Arrays: JAX's execution of a jit call (`pxla`'s
`ExecuteReplicated`, `dispatch`'s result handlers).

A `CompiledCall` holds an executable and the bookkeeping of its call: which arguments the
program reads, the buffers handed to it (donation), the transfer guards, partitioned (SPMD) runs, and
the Arrays its results become (committed to the arguments' device, laid out as the program
shards them). `compiler.compile_jaxpr` makes them; the executable comes from the backend
through its declared interface (`backends.interface`): `execute_async` (a backend without
asynchronous runs runs inline), `prepare_replica_thread` for each replica's thread.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Sequence

import numpy as np

from justjax._src import errors
from justjax._src.backends import Executable, get_backend
from justjax._src.compilation import spmd as spmd_lib
from justjax._src.config import config, transfer_guards_unset
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from justjax._src.hlo import ir
from justjax._src.runtime import devices as devices_lib
from justjax._src.runtime import transfer_guard
from justjax._src.runtime.sharding import SingleDeviceSharding
from justjax._src.runtime.array import (Array, donatable_buffer, from_numpy,
                                        pending_runs, set_sharding, to_numpy)


@dataclass(frozen=True)
class ModuleInfo:
    """A lowered jaxpr: the module, which jaxpr inputs it keeps, and the output avals."""

    module: ir.Module
    kept_inputs: tuple[int, ...]
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    donated_invars: tuple[bool, ...]
    # Per input and per output, the sharding over a mesh it was lowered for (None: on one
    # device, or unspecified).
    in_shardings: tuple[Any, ...] | None = None
    out_shardings: tuple[Any, ...] | None = None


@dataclass(eq=False)
class Program:
    """A module after the optimizing pipeline and its executable (compiled once, shared by
    every call of a same module: `compiler`'s cache holds it weakly)."""

    optimized: ir.Module
    executable: Executable
    backend: str  # the name of the backend that compiled it
    # How a program partitioned over a mesh runs (None: on one device).
    spmd: spmd_lib.SpmdLayout | None = None


class CompiledCall:
    """An executable with the bookkeeping of its call: which arguments it reads and the
    avals (weak types included) of its results."""

    def __init__(self, info: ModuleInfo, name: str, closed: ClosedJaxpr,
                 program: Program) -> None:
        self.info = info
        self.name = name
        self.closed = closed
        self._program = program  # held: the compile cache keeps it as long as a call does
        self.optimized = program.optimized
        if self.optimized.name != info.module.name:  # compiled for a same program's module
            self.optimized = ir.Module(info.module.name, self.optimized.functions,
                                       self.optimized.attributes)
        self.executable = program.executable
        self.backend = program.backend
        self._kept = info.kept_inputs
        self._in_dtypes = [info.in_avals[i].dtype for i in self._kept]
        self._out_avals = info.out_avals
        # The parameters (positions among the kept inputs) donated to an output: their
        # Arrays are deleted by the call, and their buffers may hold the outputs. A donated
        # input no output can use, or that the program does not read, stays (as in JAX).
        self._aliased = frozenset(info.module.function("main").aliased_outputs)
        # A program partitioned over a mesh: how it runs, and its results' shardings.
        self._spmd = program.spmd
        # Results the program lays out over devices (a pmap's, a sharding constraint's).
        found = out_shardings(closed.jaxpr)
        if self._spmd is not None:
            given = [s for s in (*found, *(info.out_shardings or ()),
                                 *(info.in_shardings or ())) if hasattr(s, "mesh")]
            # The mesh of the results' own shardings or of those given, else of the
            # program's sharding constraints.
            mesh = (given[0].mesh if given
                    else spmd_lib.runtime_mesh(self._spmd.results[0].mesh))
            chosen = info.out_shardings or (None,) * len(self._spmd.results)
            found = [c if c is not None else spmd_lib.named_sharding(mesh, s)
                     for c, s in zip(chosen, self._spmd.results, strict=True)]
        self._out_shardings = found if any(s is not None for s in found) else None

    def call_flat(self, args: Sequence[Any]) -> list[Array]:
        """Runs on concrete flat arguments (Arrays, NumPy values, scalars). Results live on
        the device of the committed arguments, committed to it (JAX's rule)."""
        if config.read("jax_no_execution"):
            raise RuntimeError(f"JAX tried to execute function jit({self.name}), but the "
                               "no_execution config option is set")
        debug = self.closed.jaxpr.debug_info
        device = devices_lib.committed_device(
            args, debug.arg_names if debug is not None else None, self.name)
        if not transfer_guards_unset():
            _check_transfers(args, device)
        if self._spmd is not None:
            if self._aliased:
                _check_donated_once([device_array(args[i]) for i in self._kept], self._aliased)
            results = self._call_partitioned(args)
        else:
            results = self._call_whole(args, device)
        self._delete_donated(args, self._aliased)
        if config.read("jax_debug_nans") or config.read("jax_debug_infs"):
            from justjax._src.debug import callbacks  # only when asked: it imports lax
            callbacks.check_nans(self.name, self.closed, args, results)
        return results

    def _call_whole(self, args: Sequence[Any], device: Any) -> list[Any]:
        """The results of the program run once on the whole values (on one device, or
        placed on several by the program's pmaps and sharding constraints)."""
        given = self._given_buffers(args) if self._aliased else _NOTHING
        buffers = self.input_buffers(args)
        try:
            outs, ready = self._run(buffers, given)
        except BaseException:
            # The program may have written the buffers it was given before it failed.
            self._delete_donated(args, given)
            raise
        # An output in a buffer given up is adopted as it is (the same memory, as in JAX);
        # one that is another input is copied.
        input_ids = {id(b) for k, b in enumerate(buffers) if k not in given}
        results = [_wrap_result(out, aval, input_ids, ready)
                   for out, aval in zip(outs, self._out_avals, strict=True)]
        if device is not None:
            for result in results:
                _commit(result, device)
        if self._out_shardings is not None:
            for result, sharding in zip(results, self._out_shardings, strict=True):
                array = device_array(result)  # None for a float0 result (NumPy)
                if sharding is not None and array is not None:
                    set_sharding(array, sharding)
        return results

    def _call_partitioned(self, args: Sequence[Any]) -> list[Any]:
        """The results of the partitioned program run on every device of its mesh: each
        device reads its blocks of the arguments (an Array's own, when it holds them so
        laid out) and its blocks of the results are the result Arrays' memory."""
        layout = self._spmd
        assert layout is not None and self._out_shardings is not None
        inputs: list[Any] = []
        for i, (k, dtype) in enumerate(zip(self._kept, self._in_dtypes, strict=True)):
            array = device_array(args[k])
            blocks = (spmd_lib.matching_blocks(array, layout.args[i])
                      if array is not None else None)
            inputs.append(blocks if blocks is not None else host_buffer(args[k], dtype))
        after = pending_runs([device_array(args[k]) for k in self._kept])
        outs, input_ids, ready = spmd_lib.run(self.executable, layout, inputs,
                                              get_backend(self.backend).prepare_replica_thread,
                                              after)
        return [blocks_result(blocks, aval, sharding, input_ids, ready)
                for blocks, aval, sharding
                in zip(outs, self._out_avals, self._out_shardings, strict=True)]

    def input_buffers(self, args: Sequence[Any]) -> list[np.ndarray]:
        """The buffers the executable reads for the flat arguments `args`."""
        return [host_buffer(args[i], dtype)
                for i, dtype in zip(self._kept, self._in_dtypes, strict=True)]

    def _run(self, buffers: list[np.ndarray], given: frozenset[int]) -> tuple[list[Any], Any]:
        """Runs the executable on `buffers` (`given`: the parameters whose buffers it may
        write); returns the outputs and the future of a run still going on (or None)."""
        return self.executable.execute_async(buffers, given)

    def _given_buffers(self, args: Sequence[Any]) -> frozenset[int]:
        """The donated parameters whose buffers the program may write its outputs into: a
        donated Array's buffer that belongs to it alone (`donatable_buffer`). NumPy values
        and buffers shared with anything else are copied by the executable instead. Raises
        JAX's error when a donated Array is also another argument of the call."""
        arrays = [device_array(args[i]) for i in self._kept]
        _check_donated_once(arrays, self._aliased)
        if self._spmd is not None:
            return frozenset()  # every device writes its own copy
        return frozenset(k for k in self._aliased
                         if arrays[k] is not None and donatable_buffer(arrays[k]) is not None)

    def _delete_donated(self, args: Sequence[Any], params: frozenset[int]) -> None:
        """Deletes the Arrays (and key arrays) passed for the parameters `params`."""
        for k in params:
            array = device_array(args[self._kept[k]])
            if array is not None:
                array.delete()


_NOTHING: frozenset[int] = frozenset()


def device_array(arg: Any) -> Array | None:
    """The Array holding the buffer of argument `arg` (a key array's base array), or None
    for a NumPy value or a scalar."""
    # `type(...) is Array`: key arrays and tracers are Arrays to isinstance (jax.Array).
    if type(arg) is Array:
        return arg
    base = getattr(arg, "_base_array", None)
    return base if type(base) is Array else None


def _check_donated_once(arrays: Sequence[Array | None], donated: frozenset[int]) -> None:
    """Raises JAX's INVALID_ARGUMENT error when an Array donated to the call is passed for
    another parameter too (donated twice, or donated and read)."""
    first: dict[int, tuple[int, bool]] = {}
    for k, array in enumerate(arrays):
        if array is None:
            continue
        seen = first.setdefault(id(array), (k, k in donated))
        if seen[0] == k or not (seen[1] or k in donated):
            continue
        if seen[1] and k in donated:
            what, toy = "donate the same buffer twice in", "f(donate(a), donate(a))"
        elif k in donated:
            what, toy = "donate a buffer which is also used by the same call to", \
                "f(a, donate(a))"
        else:
            what, toy = "use a buffer that was previously donated in the same call to", \
                "f(donate(a), a)"
        raise errors.JaxRuntimeError(
            f"INVALID_ARGUMENT: Attempt to {what} Execute() (flattened argument {k}, "
            f"replica 0, partition 0, first use: {seen[0]}). Toy example for this bug: "
            f"`{toy}`.")


# Primitives whose results are laid out over devices (`shard_map`, `sharding_constraint`,
# `reshard`) or come from an inner program (`jit`): equation -> one sharding (or None) per
# result.
result_shardings: dict[core.Primitive, Callable[[JaxprEqn], list[Any]]] = {}


def out_shardings(jaxpr: Jaxpr) -> list[Any]:
    """The sharding of each output of `jaxpr` that an equation of `result_shardings` gives
    back as it is, else None."""
    found: dict[Var, Any] = {}
    for eqn in jaxpr.eqns:
        rule = result_shardings.get(eqn.primitive)
        if rule is not None:
            found.update(zip(eqn.outvars, rule(eqn), strict=True))
    return [found.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars]


def _commit(result: Any, device: Any) -> None:
    """Places `result` (an Array, or a key array over one) on `device`, committed."""
    array = device_array(result)
    if array is not None:
        array._device, array._committed = device, True



def result_array(out: np.ndarray, aval: ShapedArray) -> Any:
    """The Array (or key array) of a program's result buffer `out`, of `aval`."""
    return _wrap_result(out, aval, ())


def _is_host_data(arg: Any) -> bool:
    """A user's host value: a NumPy array of at least one dimension or a Python scalar.
    NumPy scalars (and 0-d arrays) are left out: justjax's rules evaluated eagerly pass
    their constants so, where JAX's run staged and transfer nothing."""
    if type(arg) in (bool, int, float, complex):
        return True
    return isinstance(arg, np.ndarray) and arg.ndim > 0 and arg.dtype != dtypes.float0


def _check_transfers(args: Sequence[Any], device: Any) -> None:
    """The transfers running on `args` implies (on `device`, or the default one): host
    values copied in, uncommitted arrays moved to the committed arguments' device."""
    target = device or devices_lib.default_device_override() or devices_lib.default_device()
    dst = SingleDeviceSharding(target)
    for arg in args:
        if type(arg) is Array:
            if device is not None and not arg.committed and arg.device != device:
                transfer_guard.device_to_device(arg.aval, SingleDeviceSharding(arg.device),
                                                dst)
        elif _is_host_data(arg):
            transfer_guard.host_to_device(core.get_aval(arg), dst)


def host_buffer(arg: Any, dtype: np.dtype) -> np.ndarray:
    """The buffer a program reads for argument `arg` of `dtype` (a key array's is its base
    array)."""
    if dtypes.is_extended(dtype):
        # A key array runs as its base array (uint32, one trailing key dimension more).
        return to_numpy(core.physical_value(arg), dtype.physical_dtype)
    # float0 (the tangent type of integers) has no bits: it travels as bool, as JAX lowers it.
    if dtype == dtypes.float0:
        return np.zeros(np.shape(arg), np.bool_)
    # A program reads a value as stored (flat above NumPy's rank limit).
    return to_numpy(arg, dtype, elementwise=True)


def blocks_result(blocks: Sequence[np.ndarray | None], aval: ShapedArray, sharding: Any,
                  input_ids: Collection[int], ready: Any = None) -> Any:
    """The Array (or key array) laid out as `sharding` says whose devices hold `blocks` (a
    block that is an input or a view of one is copied; None for another process's
    device). `ready`: the future of the SPMD run still writing them."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    adopted = [b is None or (type(b) is np.ndarray and b.base is None
                             and b.flags.c_contiguous and id(b) not in input_ids)
               for b in blocks]
    if not all(adopted):
        if ready is not None:
            ready.result()  # a block that is copied must be complete first
            ready = None
        blocks = [b if kept else np.array(b, copy=True)
                  for b, kept in zip(blocks, adopted, strict=True)]
    if dtypes.is_extended(aval.dtype):
        # A key array's base array: its key dimensions last, whole on every device.
        held = next(b for b in blocks if b is not None)
        physical = ShapedArray(aval.shape + held.shape[aval.ndim:],
                               aval.dtype.physical_dtype)
        base = Array.from_blocks(blocks, physical, sharding, ready)
        return core.logical_value_handlers[type(aval.dtype)](aval, base)
    return Array.from_blocks(blocks, aval, sharding, ready)


def _wrap_result(out: np.ndarray, aval: ShapedArray, input_ids: Collection[int],
                 ready: Any = None) -> Any:
    """The Array of result `out` (`ready`: the future of the program still writing it;
    `input_ids`: the ids of the program's input buffers not given up)."""
    if dtypes.is_extended(aval.dtype):
        physical = ShapedArray(np.shape(out), aval.dtype.physical_dtype)
        base = _wrap_result(out, physical, input_ids, ready)
        return core.logical_value_handlers[type(aval.dtype)](aval, base)
    if aval.dtype == dtypes.float0:
        # A float0 result holds no data: JAX hands it back as a NumPy array (its
        # TypedNdArray), which compares and prints as NumPy's.
        return np.zeros(aval.shape, dtypes.float0)
    # A fresh buffer (or a donated one given up, not in `input_ids`) is adopted as it is;
    # an input passed through, a view or a constant is copied by `from_numpy`, so no Array
    # shares memory anyone can write.
    if (type(out) is np.ndarray and out.base is None and out.flags.c_contiguous
            and out.dtype == aval.dtype and id(out) not in input_ids):
        return Array.adopt(out, aval, ready)
    if ready is not None:
        ready.result()  # a result that is copied must be complete first
    return from_numpy(out, aval, input_ids)



# -- the fast path of a cached call ------------------------------------------------------------
# What `fast_call`'s runner returns when the arguments are not of the kind it serves: the
# caller then takes the general path (`CompiledCall.call_flat`), which also raises the errors.
MISS: Any = object()


def plain_config() -> bool:
    """Whether no flag that `CompiledCall.call_flat` reads asks for more than running the
    program: no `jax_no_execution`, NaN or Inf checks, transfer guards or default device.
    `fast_call`'s runners are valid while it holds (their callers check the config's
    generation)."""
    return (not config.read("jax_no_execution") and not config.read("jax_debug_nans")
            and not config.read("jax_debug_infs") and transfer_guards_unset()
            and config.read("jax_default_device") is None)


def _plain_aval(aval: ShapedArray) -> bool:
    return (type(aval) is ShapedArray and not dtypes.is_extended(aval.dtype)
            and aval.dtype != dtypes.float0)


def _partitioned_fast_call(call: CompiledCall, in_avals: tuple[ShapedArray, ...],
                           single: bool) -> Callable[[tuple], Any] | None:
    """`fast_call` of a partitioned program: a runner of it on Arrays already laid out as
    it reads them (their devices' blocks read as they are, checked once per sharding), or
    None when it needs the general path (donation, key or float0 values)."""
    layout = call._spmd
    assert layout is not None and call._out_shardings is not None
    if call._aliased or not all(map(_plain_aval, (*in_avals, *call._out_avals))):
        return None
    kept, count = call._kept, len(in_avals)
    outputs = list(zip(call._out_avals, call._out_shardings, strict=True))
    thread_setup = get_backend(call.backend).prepare_replica_thread
    # Per kept argument, the last sharding its Arrays came with whose blocks matched.
    matched: list[Any] = [None] * len(kept)

    def run(args: tuple) -> Any:
        if len(args) != count:
            return MISS
        inputs = []
        for i, k in enumerate(kept):
            arg, aval = args[k], in_avals[k]
            if type(arg) is not Array or (arg.aval is not aval and arg.aval != aval):
                return MISS
            blocks = arg._blocks
            if blocks is None:
                return MISS
            if arg._sharding is not matched[i]:
                if spmd_lib.matching_blocks(arg, layout.args[i]) is None:
                    return MISS
                matched[i] = arg._sharding
            inputs.append(blocks)
        after = pending_runs([args[k] for k in kept])
        outs, input_ids, ready = spmd_lib.run(call.executable, layout, inputs, thread_setup,
                                              after)
        results = [blocks_result(blocks, aval, sharding, input_ids, ready)
                   for blocks, (aval, sharding) in zip(outs, outputs, strict=True)]
        return results[0] if single else results

    return run


def fast_call(call: CompiledCall, in_avals: tuple[ShapedArray, ...], single: bool
              ) -> Callable[[tuple], Any] | None:
    """A runner of `call` on a tuple of Arrays of exactly `in_avals` (`jit`'s cached calls
    and eager ops), or None when `call` needs the general path (donation, replicas, results
    laid out over devices, key or float0 values).

    The runner returns the list of result Arrays (the single result itself when `single`),
    as `call.call_flat` would, or MISS for arguments it does not serve: anything but an
    Array of the aval expected, a deleted or sharded Array, committed Arrays on two devices.
    It reads the Arrays' buffers in place by their addresses (cached on the Arrays) and
    builds the results without the general constructor. Valid under `plain_config()` only.
    """
    if call._spmd is not None:
        return _partitioned_fast_call(call, in_avals, single)
    if (call._aliased or call._out_shardings is not None
            or not all(map(_plain_aval, (*in_avals, *call._out_avals)))):
        return None
    kept, count, out_avals = call._kept, len(in_avals), call._out_avals
    all_kept = kept == tuple(range(count))
    # The executable (a compiled tier may replace it on the call) and its inline runner.
    current: list[Any] = [None, None]
    new_array = object.__new__

    def run(args: tuple) -> Any:
        if len(args) != count:
            return MISS
        addresses = []
        device = None
        for arg, aval in zip(args, in_avals, strict=True):
            if type(arg) is not Array or (arg.aval is not aval and arg.aval != aval):
                return MISS
            if arg._sharding is not None:
                return MISS
            if arg._committed:
                if device is None:
                    device = arg._device
                elif arg._device is not device:
                    return MISS  # the general path raises JAX's error
            if arg._ready is not None:
                arg._value  # a program still writing it: wait (raises its error)
            address = arg._address
            if not address:
                buffer = arg._buffer
                if buffer is None:
                    return MISS  # deleted: the general path raises
                address = arg._address = buffer.ctypes.data
            addresses.append(address)
        executable = call.executable
        if executable is not current[0]:
            current[:] = executable, executable.inline_runner()
        runner = current[1]
        if runner is None:
            results = call.call_flat(args)
            return results[0] if single else results
        outs, out_addresses = runner(addresses if all_kept else [addresses[i] for i in kept])
        results = []
        for out, address, aval in zip(outs, out_addresses, out_avals, strict=True):
            out.setflags(write=False)
            result = new_array(Array)
            result._buffer, result._address, result.aval = out, address, aval
            result._ready, result._sharding, result._owner = None, None, True
            result._blocks = None
            result._device, result._committed = device, device is not None
            results.append(result)
        return results[0] if single else results

    return run
