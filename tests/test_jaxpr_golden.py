"""make_jaxpr output compared character for character with what real JAX printed.

The expected texts live in tests/golden/jaxprs.txt (read off JAX 0.10.2); each case gives the
source of the traced function and a description of its arguments, which are rebuilt here.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax  # noqa: F401 -- named by golden sources
from tests.harness import dtype_by_name

GOLDEN = pathlib.Path(__file__).parent / "golden" / "jaxprs.txt"

np_const = np.array([1.0, 2.0, 3.0], dtype=np.float32)
np_const64 = np.array([1.0, 2.0, 3.0])
jnp_const = jax.device_put(np.array([10.0, 20.0, 30.0], dtype=np.float32))
jnp_iconst = jax.device_put(np.arange(3, dtype=np.int32))


def f_closure_py_scalar(x):
    return x * 0.1


def f_many_vars(x):
    for i in range(30):
        x = x + float(i)
    return x


def f_many_vars2(x):
    ys = [x * float(i) for i in range(30)]
    return sum(ys[1:], ys[0])


def f_pytree_in(d, t):
    return d["a"] * t[0] + d["b"] - t[1]


def f_pytree_out(x):
    return {"sum": x.sum(), "pair": (x * 2, x - 1), "list": [x]}


def f_unused(x, y):
    a = x * 2
    b = y + 1  # noqa: F841 -- unused on purpose: prints as `_`
    c = jnp.sin(x)  # noqa: F841
    return a


def f_static(x, n):
    for _ in range(n):
        x = x * 2
    return x


ENV = dict(globals())

_ARRAY = re.compile(r"jax\.Array\((\w+)\[([\d, ]*)\](, weak_type=True)?\)")
_NDARRAY = re.compile(r"ndarray\((\w+)\[([\d, ]*)\]\)")


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.split(",") if d.strip())


def _make_args(description: str) -> list:
    """Rebuilds arguments from the golden file's description, e.g. `(jax.Array(f32[3]), int 3)`."""
    if description.startswith("({"):
        return _pytree_case()  # the one pytree case: f_pytree_in
    args: list = []
    for token in re.findall(r"jax\.Array\([^)]*\)|ndarray\([^)]*\)|"
                            r"float64\([^)]*\)|float [-\d.]+|int -?\d+|bool \w+", description):
        if m := _ARRAY.fullmatch(token):
            value = np.ones(_shape(m.group(2)), dtype=dtype_by_name(m.group(1)))
            arr = jax.device_put(value)
            if m.group(3):
                arr = jax.device_put(float(value))
            args.append(arr)
        elif m := _NDARRAY.fullmatch(token):
            args.append(np.ones(_shape(m.group(2)), dtype=m.group(1)))
        elif token.startswith("float64("):
            args.append(np.float64(1.0))
        elif token.startswith("float "):
            args.append(float(token.split()[1]))
        elif token.startswith("int "):
            args.append(int(token.split()[1]))
        elif token.startswith("bool "):
            args.append(token.split()[1] == "True")
    return args


def _pytree_case() -> list:
    ones = jax.device_put(np.ones(3, np.float32))
    return [{"a": ones, "b": ones}, (ones, 2.0)]


def _cases() -> list:
    cases = []
    for block in GOLDEN.read_text().split("\n=== ")[1:]:
        lines = block.split("\n")
        title = lines[0]
        source = lines[1].removeprefix("# source: jax.make_jaxpr(").removesuffix(")(*args)")
        args = lines[2].removeprefix("# args:   ")
        expected_lines = [l for l in lines[3:] if not l.startswith("# (return_shape")]
        shape_lines = [l for l in lines[3:] if l.startswith("# (return_shape")]
        expected = "\n".join(expected_lines).strip("\n")
        shapes = shape_lines[0].split("repr: ", 1)[1] if shape_lines else None
        cases.append(pytest.param(source, args, expected, shapes, id=title.split("]")[0][1:]))
    return cases


@pytest.mark.parametrize("source,args,expected,shapes", _cases())
def test_jaxpr_matches_jax(source: str, args: str, expected: str, shapes: str | None) -> None:
    fun_src, _, kwargs_src = source.partition(", ")
    if fun_src.startswith("lambda") and ", " in source and ":" in source:
        # Lambdas contain commas; split the make_jaxpr keywords off the end instead.
        match = re.match(r"(.*?)(?:, ((?:static_argnums|return_shape)=.*))?$", source)
        fun_src, kwargs_src = match.group(1), match.group(2) or ""
    fun = eval(fun_src, ENV)
    kwargs = eval(f"dict({kwargs_src})", ENV)
    result = jax.make_jaxpr(fun, **kwargs)(*_make_args(args))
    if shapes is not None:
        closed, out_shapes = result
        assert repr(out_shapes) == shapes
    else:
        closed = result
    assert str(closed) == expected
