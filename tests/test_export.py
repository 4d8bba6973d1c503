"""`jax.export`: export, the Exported's fields, serialize/deserialize (across processes), calls
eagerly and under jit/grad/vmap, the VJP, shape polymorphism and JAX's errors.

Expected texts and messages were read off real JAX 0.10.2 (`/work/jaxvenv`)."""
from __future__ import annotations

import collections
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import export, lax

F32 = np.float32


def f(x, y):
    return jnp.sin(x) * y + 1.0


def _exported() -> export.Exported:
    return export.export(jax.jit(f))(np.ones(3, F32), np.ones(3, F32))


# Real JAX 0.10.2's `exp.mlir_module()` of `f` (locations dropped). justjax's lowering puts
# the constant next to its use where JAX hoists it to the top; the rest is the same text.
JAX_MODULE = """\
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.sine %arg0 : tensor<3xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<3xf32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.add %1, %2 : tensor<3xf32>
    return %3 : tensor<3xf32>
  }
}
"""


def _ops(text: str) -> list[str]:
    return sorted(line.strip() for line in text.splitlines())


def test_fields() -> None:
    exp = _exported()
    assert exp.fun_name == "f"
    assert str(exp.in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(exp.out_tree) == "PyTreeDef(*)"
    assert [repr(a) for a in exp.in_avals] == ["ShapedArray(float32[3])"] * 2
    assert [repr(a) for a in exp.out_avals] == ["ShapedArray(float32[3])"]
    assert exp.in_shardings_hlo == (None, None) and exp.out_shardings_hlo == (None,)
    assert exp.in_shardings_jax(None) == (None, None)
    assert exp.nr_devices == 1 and exp.platforms == ("cpu",)
    assert exp.calling_convention_version == 10
    assert exp.module_kept_var_idx == (0, 1) and exp.uses_global_constants is False
    assert exp.ordered_effects == () and exp.disabled_safety_checks == ()
    assert exp.has_vjp()
    assert str(exp) == "Exported(fun_name=f, ...)"
    assert isinstance(exp.mlir_module_serialized, bytes)


def test_mlir_module_is_jaxs_text() -> None:
    assert _ops(_exported().mlir_module()) == _ops(JAX_MODULE)


def test_unused_inputs_are_dropped() -> None:
    exp = export.export(jax.jit(lambda x, y: x * 2))(np.ones(3, F32), np.ones(2, F32))
    assert exp.module_kept_var_idx == (0,)
    np.testing.assert_allclose(exp.call(np.ones(3, F32), np.ones(2, F32)), [2, 2, 2])


def test_call_eager_jit_and_jaxpr() -> None:
    exp = _exported()
    x = np.arange(3, dtype=F32)
    want = np.sin(x) * x + 1
    np.testing.assert_allclose(exp.call(x, x), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(exp.call)(x, x), want, rtol=1e-6)
    text = jax.jit(exp.call).lower(x, x).as_text()
    assert "call @call_exported_f(%arg0, %arg1)" in text
    assert "func.func private @call_exported_f(" in text
    assert "call_exported[exported=Exported(fun_name=f, ...)] d e" in str(
        jax.make_jaxpr(exp.call)(x, x))


def test_calling_twice_merges_once() -> None:
    exp = _exported()
    x = np.ones(3, F32)
    text = jax.jit(lambda x: exp.call(exp.call(x, x), x)).lower(x).as_text()
    assert text.count("func.func private @call_exported_f(") == 1


def test_exported_calling_exported() -> None:
    inner = _exported()
    outer = export.export(jax.jit(lambda x: inner.call(x, x) * 2))(np.ones(3, F32))
    x = np.arange(3, dtype=F32)
    np.testing.assert_allclose(outer.call(x), 2 * (np.sin(x) * x + 1), rtol=1e-6)
    again = export.deserialize(outer.serialize())
    np.testing.assert_allclose(again.call(x), 2 * (np.sin(x) * x + 1), rtol=1e-6)


def test_grad_and_vjp() -> None:
    exp = _exported()
    x = np.arange(3, dtype=F32)
    want = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(jax.grad(lambda x: exp.call(x, x).sum())(x), want, rtol=1e-6)
    vjp = exp.vjp()
    assert vjp.fun_name == "fun_vjp_jax"
    assert str(vjp.in_tree) == "PyTreeDef(((*, *, *), {}))"
    assert str(vjp.out_tree) == "PyTreeDef((*, *))"
    ct_x, ct_y = vjp.call(x, x, np.ones(3, F32))
    np.testing.assert_allclose(ct_x, np.cos(x) * x, rtol=1e-6)
    np.testing.assert_allclose(ct_y, np.sin(x), rtol=1e-6)


def test_second_order_grad_through_serialization() -> None:
    exp = export.export(jax.jit(lambda x: jnp.sin(x) * x))(np.float32(1.0))
    back = export.deserialize(exp.serialize(vjp_order=2))
    x = np.float32(0.7)
    second = jax.grad(jax.grad(back.call))(x)
    np.testing.assert_allclose(second, 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)
    with pytest.raises(ValueError, match="No VJP is available"):
        jax.grad(jax.grad(jax.grad(back.call)))(x)


def test_grad_without_vjp_is_jaxs_error() -> None:
    back = export.deserialize(_exported().serialize())
    assert not back.has_vjp()
    with pytest.raises(ValueError, match="No VJP is available"):
        jax.grad(lambda x: back.call(x, x).sum())(np.ones(3, F32))
    with pytest.raises(ValueError, match="does not have vjps of high-enough order"):
        back.serialize(vjp_order=1)


def test_jvp_is_jaxs_error() -> None:
    x = np.ones(3, F32)
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a "
                                        "custom_vjp function."):
        jax.jvp(_exported().call, (x, x), (x, x))


def test_vmap_loops_over_the_exported_call() -> None:
    exp = _exported()
    xs = np.arange(6, dtype=F32).reshape(2, 3)
    y = np.full(3, 2, F32)
    got = jax.vmap(exp.call, in_axes=(0, None))(xs, y)
    np.testing.assert_allclose(got, np.sin(xs) * y + 1, rtol=1e-6)
    got = jax.vmap(exp.call, in_axes=(1, 1), out_axes=1)(xs.T, xs.T)
    np.testing.assert_allclose(got, (np.sin(xs) * xs + 1).T, rtol=1e-6)


def test_pytrees_and_kwargs() -> None:
    Point = collections.namedtuple("Point", ["x", "y"])
    export.register_namedtuple_serialization(Point, serialized_name="test_export.Point")

    def g(p, *, scale):
        return {"sum": p.x + p.y, "scaled": [p.x * scale]}

    p = Point(np.ones(2, F32), np.full(2, 3, F32))
    exp = export.export(jax.jit(g))(p, scale=np.float32(2))
    back = export.deserialize(exp.serialize())
    for e in (exp, back):
        out = e.call(p, scale=np.float32(2))
        np.testing.assert_allclose(out["sum"], [4, 4])
        np.testing.assert_allclose(out["scaled"][0], [2, 2])
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree


def test_unregistered_node_cannot_serialize() -> None:
    Pair = collections.namedtuple("Pair", ["a", "b"])
    exp = export.export(jax.jit(lambda p: p.a + p.b))(Pair(np.ones(2, F32), np.ones(2, F32)))
    with pytest.raises(ValueError, match="Cannot serialize PyTreeDef containing an "
                                         "unregistered type"):
        exp.serialize()


_CHILD = """
import json, sys
import numpy as np
import justjax as jax
from justjax import export
exp = export.deserialize(open(sys.argv[1], "rb").read())
x = np.arange(3, dtype=np.float32)
out = exp.call(x, x)
g = jax.grad(lambda x: exp.call(x, x).sum())(x)
print(json.dumps({"name": exp.fun_name, "out": np.asarray(out).tolist(),
                  "grad": np.asarray(g).tolist(), "avals": [repr(a) for a in exp.in_avals]}))
"""


def test_round_trip_across_processes(tmp_path: pathlib.Path) -> None:
    """A blob written here is read, called and differentiated by another process, which
    has never seen `f`."""
    import json
    blob = tmp_path / "f.jaxexport"
    blob.write_bytes(_exported().serialize(vjp_order=1))
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(_CHILD))
    src = str(pathlib.Path(jax.__file__).parent.parent)
    env = dict(os.environ, PYTHONPATH=src)
    done = subprocess.run([sys.executable, str(script), str(blob)], capture_output=True,
                          text=True, env=env, timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    x = np.arange(3, dtype=F32)
    assert result["name"] == "f"
    assert result["avals"] == ["ShapedArray(float32[3])"] * 2
    np.testing.assert_allclose(result["out"], np.sin(x) * x + 1, rtol=1e-6)
    np.testing.assert_allclose(result["grad"], np.cos(x) * x + np.sin(x), rtol=1e-6)


def test_serialized_format_is_versioned() -> None:
    blob = bytes(_exported().serialize())
    assert blob.startswith(b"justjax.export\n1\n")
    with pytest.raises(ValueError, match="not a serialized justjax Exported"):
        export.deserialize(b"garbage")
    with pytest.raises(ValueError, match="format version 99 is newer"):
        export.deserialize(b"justjax.export\n99\n{}")


# -- errors (messages from real JAX 0.10.2) -------------------------------------------------

def test_export_needs_jit() -> None:
    with pytest.raises(ValueError, match="Function to be exported must be the result of `jit` "
                                         "but is: <function f"):
        export.export(f)


@pytest.mark.parametrize("args,message", [
    ((np.ones(4, F32), np.ones(3, F32)),
     r"Shape mismatch for args\[0\].shape\[0\] \(expected same constant\): expected \(3,\) "
     r"and called with \(4,\)"),
    ((np.ones((3, 1), F32), np.ones(3, F32)),
     r"Rank mismatch for args\[0\]: expected \(3,\) and called with \(3, 1\)"),
    ((np.ones(3, np.int32), np.ones(3, F32)),
     "Dtype mismatch for args\\[0\\]: expected float32 and called with int32"),
])
def test_call_with_wrong_types(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _exported().call(*args)


def test_call_with_wrong_tree() -> None:
    exp = _exported()
    with pytest.raises(ValueError) as info:
        exp.call(np.ones(3, F32), y=np.ones(3, F32))
    assert str(info.value) == (
        "The invocation args and kwargs must have the same pytree structure as when the "
        "function 'f' was exported, but they have the following structural differences:\n"
        "   - args is a tuple of length 1 in the invocation and a tuple of length 2 when "
        "exported, so the lengths do not match.\n\n"
        "   - kwargs is a <class 'dict'> with 1 child in the invocation and a <class 'dict'> "
        "with 0 child when exported, so the numbers of children do not match, with the "
        "symmetric difference of key sets: {'y'}.\n")


def test_host_callbacks_cannot_be_exported() -> None:
    def g(x):
        jax.debug.print("{}", x)
        return x

    with pytest.raises(ValueError, match="Cannot serialize code with custom calls whose "
                                         "targets have no compatibility guarantees"):
        export.export(jax.jit(g))(np.ones(3, F32))


def test_platform_mismatch() -> None:
    exp = export.export(jax.jit(jnp.sin), platforms=["tpu"])(np.ones(3, F32))
    assert exp.platforms == ("tpu",)
    with pytest.raises(ValueError, match=r"Function 'sin' was exported for platforms "
                                         r"'\('tpu',\)' but it is used on '\('cpu',\)'."):
        exp.call(np.ones(3, F32))


def test_linalg_custom_calls_export() -> None:
    """LAPACK's FFI targets are stable: a Cholesky exports and runs."""
    a = np.array([[4.0, 2.0], [2.0, 3.0]], F32)
    exp = export.export(jax.jit(jnp.linalg.cholesky))(a)
    back = export.deserialize(exp.serialize())
    np.testing.assert_allclose(back.call(a), np.linalg.cholesky(a), rtol=1e-6)


def test_control_flow_round_trips() -> None:
    def loop(x):
        return lax.fori_loop(0, 5, lambda i, c: c * 2 + i, x)

    exp = export.deserialize(export.export(jax.jit(loop))(np.ones(2, F32)).serialize())
    np.testing.assert_allclose(exp.call(np.ones(2, F32)), loop(np.ones(2, F32)))
