"""`python -m justjax explain MODULE:FUNCTION --arg 'f32[128,784]' ... [--html out.html]`.

MODULE is a module to import (`examples.seeds`, found from the current folder too) or a
Python file (`examples/seeds.py`). Each `--arg` is one positional argument, a dtype and a
shape: `f32[128,784]`, `i32[]`, `bf16[8]`; the values are random (normal for floats,
0..9 for integers) from `--seed`.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import pathlib
import re
import sys
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["main", "parse_spec", "load_function"]

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16",
           "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
           "u16": "uint16", "u32": "uint32", "u64": "uint64", "pred": "bool", "c64": "complex64",
           "c128": "complex128"}
_SPEC = re.compile(r"^\s*([a-z0-9]+)\[([0-9,\s]*)\]\s*$")


def parse_spec(spec: str) -> tuple[np.dtype, tuple[int, ...]]:
    """`'f32[128,784]'` -> (float32, (128, 784)).

    Raises:
      ValueError: a spec that is not `dtype[dims]` or names an unknown dtype.
    """
    from justjax._src.core import dtypes
    match = _SPEC.match(spec)
    if match is None:
        raise ValueError(f"--arg {spec!r}: expected a dtype and a shape, like f32[128,784] "
                         "or i32[]")
    name, dims = match.groups()
    try:
        dtype = dtypes.canonicalize_dtype(np.dtype(_dtype(_DTYPES.get(name, name))))
    except TypeError as error:
        raise ValueError(f"--arg {spec!r}: unknown dtype {name!r}") from error
    shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
    return dtype, shape


def _dtype(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return name


def example_value(dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator
                  ) -> np.ndarray:
    """Random data of `dtype` and `shape`."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 10, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def load_function(target: str) -> Callable:
    """The function `MODULE:FUNCTION` names.

    Raises:
      ValueError: a target without `:`, a module or file that cannot be loaded, or a name
        it does not define.
    """
    module_name, sep, function_name = target.rpartition(":")
    if not sep or not module_name or not function_name:
        raise ValueError(f"{target!r}: expected MODULE:FUNCTION, like examples.seeds:predict")
    if module_name.endswith(".py") or "/" in module_name:
        path = pathlib.Path(module_name)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None or not path.exists():
            raise ValueError(f"{target!r}: no Python file {module_name}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path:
            sys.path.insert(0, "")
        module = importlib.import_module(module_name)
    value = module
    for part in function_name.split("."):
        if not hasattr(value, part):
            raise ValueError(f"{target!r}: {module_name} has no {function_name}")
        value = getattr(value, part)
    if not callable(value):
        raise ValueError(f"{target!r}: {function_name} is not callable")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m justjax",
                                     description="justjax's pipeline explorer")
    commands = parser.add_subparsers(dest="command", required=True)
    explain = commands.add_parser("explain", help="every stage of one function",
                                  description=__doc__.split("\n\n")[1])
    explain.add_argument("target", help="MODULE:FUNCTION, e.g. examples.seeds:predict")
    explain.add_argument("--arg", action="append", default=[], metavar="SPEC",
                         help="one positional argument, e.g. f32[128,784] (repeat)")
    explain.add_argument("--html", metavar="PATH", help="also write the HTML report there")
    explain.add_argument("--seed", type=int, default=0, help="seed of the random arguments")
    explain.add_argument("--no-time", action="store_true",
                         help="do not run the program to time it and its kernels")
    args = parser.parse_args(argv)
    from justjax._src.explain.report import explain as explain_fn
    try:
        fun = load_function(args.target)
        rng = np.random.default_rng(args.seed)
        values = [example_value(*parse_spec(spec), rng) for spec in args.arg]
    except ValueError as error:
        parser.error(str(error))
    result = explain_fn(fun, *values, time_kernels=not args.no_time)
    print(result)
    if args.html:
        result.save_html(args.html)
        print(f"HTML report: {args.html}")
    return 0
