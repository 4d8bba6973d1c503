"""`jnp.vectorize`: NumPy's generalized-ufunc interface, built on vmap (as JAX builds it).

The wrapped function sees one example: scalars by default, or arrays of the *core* shapes a
signature such as `(m,n),(n)->(m)` names. The other (leading) dimensions of the arguments
broadcast against each other, and each broadcast dimension becomes one vmap: a size-1
dimension is squeezed away and the argument is not mapped there (so nothing is copied), and a
dimension of size 1 in every argument is put back on the results at the end.
"""
from __future__ import annotations

import functools
import re
import warnings
from typing import Any, Callable, Collection, Sequence

import numpy as np

from justjax._src.config import config
from justjax._src.interpreters import batching
from justjax._src.lax.utils import broadcast_shapes
from justjax._src.numpy.array_creation import asarray
from justjax._src.numpy.shape_ops import expand_dims, squeeze

__all__ = ["vectorize"]

CoreDims = tuple[str, ...]

# The grammar of a gufunc signature (no spaces, as in JAX): `(n),(n)->()`.
_DIMENSION = r"\w+"
_CORE_DIMENSIONS = rf"(?:{_DIMENSION}(?:,{_DIMENSION})*)?"
_ARGUMENT = rf"\({_CORE_DIMENSIONS}\)"
_ARGUMENTS = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = re.compile(rf"^{_ARGUMENTS}->{_ARGUMENTS}$")


def parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """The core dimension names of each input and each output of a gufunc signature.

    Args:
      signature: e.g. `(m,n),(n,p)->(m,p)`.

    Returns:
      `([('m', 'n'), ('n', 'p')], [('m', 'p')])`.
    """
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = signature.split("->")
    return _core_dims_of(inputs), _core_dims_of(outputs)


def _core_dims_of(arguments: str) -> list[CoreDims]:
    return [tuple(re.findall(_DIMENSION, argument))
            for argument in re.findall(_ARGUMENT, arguments)]


def _record_core_sizes(sizes: dict[str, int], shape: tuple[int, ...], core_dims: CoreDims,
                       context: str, *, is_input: bool) -> None:
    """Checks `shape`'s trailing (core) dimensions against the sizes seen so far and records
    the new ones. An input may have more dimensions (the broadcast ones); an output may not."""
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all "
                         f"core dimensions {core_dims!r} {context}")
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {shape!r} does not match core dimensions "
                         f"{core_dims!r} {context}")
    for name, size in zip(core_dims, shape[len(shape) - n:], strict=True):
        known = sizes.setdefault(name, size)
        if known != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                             f"{known!r} {context}")


def _checking_outputs(func: Callable[..., Any], sizes: dict[str, int],
                      output_core_dims: list[CoreDims], context: str) -> Callable[..., Any]:
    """`func` with its outputs (per example) checked against the signature's core dims."""
    def checked(*args: Any) -> Any:
        out = func(*args)
        if len(output_core_dims) > 1 and not isinstance(out, tuple):
            raise TypeError("output must be a tuple when multiple outputs are expected, "
                            f"got: {out!r}\n{context}")
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(output_core_dims):
            raise TypeError(f"wrong number of output arguments: expected "
                            f"{len(output_core_dims)!r}, got {len(outs)!r} {context}")
        seen = dict(sizes)
        for value, core_dims in zip(outs, output_core_dims, strict=True):
            _record_core_sizes(seen, tuple(np.shape(value)), core_dims, context,
                               is_input=False)
        return out

    return checked


def _bind_static(func: Callable[..., Any], positions: Collection[int | str],
                 args: Sequence[Any], kwargs: dict[str, Any]
                 ) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """Splits off the excluded arguments (positions and keyword names in `positions`): they
    are passed to `func` unchanged, the others are left to vectorize."""
    static_args = [(i, arg) for i, arg in enumerate(args) if i in positions]
    static_kwargs = {k: v for k, v in kwargs.items() if k in positions}
    dynamic_args = [arg for i, arg in enumerate(args) if i not in positions]
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in positions}

    def bound(*dynamic: Any, **more_kwargs: Any) -> Any:
        full_args = list(dynamic)
        for i, arg in static_args:
            full_args.insert(i, arg)
        return func(*full_args, **more_kwargs, **static_kwargs)

    return bound, dynamic_args, dynamic_kwargs


def _check_rank_promotion(args: Sequence[Any], input_core_dims: list[CoreDims],
                          signature: str | None) -> None:
    """jax_numpy_rank_promotion: warn or raise when the broadcast dimensions differ in rank."""
    mode = config.read("jax_numpy_rank_promotion")
    if mode == "allow":
        return
    ranks = {arg.ndim - len(core) for arg, core in zip(args, input_core_dims, strict=True)
             if arg.ndim != 0}
    if len(ranks) < 2:
        return
    message = (f"operands with shapes {[arg.shape for arg in args]} require rank promotion "
               f"for jnp.vectorize function with signature {signature}. Set the "
               "jax_numpy_rank_promotion config option to 'allow' to disable this message; for "
               "more information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    if mode == "raise":
        raise ValueError(message)
    warnings.warn(message, stacklevel=4)


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """`jnp.vectorize`: `pyfunc` applied over the broadcast leading dimensions of its
    arguments, with vmap.

    Args:
      pyfunc: the function of one example, written with JAX operations.
      excluded: positions (ints) and keyword names (strs) of arguments passed to `pyfunc`
        unchanged rather than vectorized. Keyword arguments not named here are not passed
        (as in JAX).
      signature: a gufunc signature such as `(n),(n)->()`: the core dimensions `pyfunc`
        takes and returns. By default every input is a scalar and outputs are anything.

    Returns:
      The vectorized function (`functools.wraps(pyfunc)`).
    """
    if any(not isinstance(entry, (str, int)) for entry in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(entry, int) and entry < 0 for entry in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        # JAX calls the function with the vectorized positional arguments only: keyword
        # arguments that are not excluded are dropped. Kept so that results match JAX's.
        func, args, _ = _bind_static(pyfunc, excluded, args, kwargs)
        if signature is None:
            input_core_dims: list[CoreDims] = [()] * len(args)
            output_core_dims = None
        else:
            input_core_dims, output_core_dims = parse_signature(signature)
        # None arguments are passed through unchanged (when scalar); as in JAX, only once one
        # of them is not the first argument.
        nones = {i for i, arg in enumerate(args) if arg is None}
        if any(nones):
            if any(input_core_dims[i] != () for i in nones):
                raise ValueError(f"Cannot pass None at locations {nones} with "
                                 f"signature={signature!r}")
            func, args, _ = _bind_static(func, nones, args, {})
            input_core_dims = [dims for i, dims in enumerate(input_core_dims) if i not in nones]
        arrays = [asarray(arg) for arg in args]
        return _vectorized_call(func, arrays, input_core_dims, output_core_dims, signature,
                                context)

    return wrapped


def _vectorized_call(func: Callable[..., Any], args: list[Any], input_core_dims: list[CoreDims],
                     output_core_dims: list[CoreDims] | None, signature: str | None,
                     context: str) -> Any:
    if len(args) != len(input_core_dims):
        raise TypeError(f"wrong number of positional arguments: expected "
                        f"{len(input_core_dims)!r}, got {len(args)!r} {context}")
    sizes: dict[str, int] = {}
    for arg, core_dims in zip(args, input_core_dims, strict=True):
        _record_core_sizes(sizes, arg.shape, core_dims, context, is_input=True)
    loop_shapes = [arg.shape[:arg.ndim - len(core)]
                   for arg, core in zip(args, input_core_dims, strict=True)]
    loop_shape = broadcast_shapes(*loop_shapes) if loop_shapes else ()
    if output_core_dims is not None:
        func = _checking_outputs(func, sizes, output_core_dims, context)
    _check_rank_promotion(args, input_core_dims, signature)
    # Size-1 loop dimensions are squeezed away: those arguments are not mapped there.
    squeezed = [squeeze(arg, axis=tuple(i for i, size in enumerate(shape) if size == 1))
                for arg, shape in zip(args, loop_shapes, strict=True)]
    padded = [(1,) * (len(loop_shape) - len(shape)) + shape for shape in loop_shapes]
    kept_in_no_argument = []
    # One vmap per loop dimension, the last dimension innermost.
    for axis in reversed(range(len(loop_shape))):
        in_axes = [None if shape[axis] == 1 else 0 for shape in padded]
        if all(a is None for a in in_axes):
            kept_in_no_argument.append(axis)
        else:
            func = batching.vmap_positional(func, in_axes)
    result = func(*squeezed)
    if not kept_in_no_argument:
        return result
    if isinstance(result, tuple):
        return tuple(expand_dims(r, axis=kept_in_no_argument) for r in result)
    return expand_dims(result, axis=kept_in_no_argument)
