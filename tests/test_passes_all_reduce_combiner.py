"""All-reduce combining (`hlo/passes/all_reduce_combiner.py`): independent all-reduces over the
same groups with the same reduction become one variadic all-reduce; the ops reading them move
after it; dependent ones stay apart. Checked on the IR and by running it as replicas."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
from justjax._src import backends
from justjax._src.hlo import ir, verifier
from justjax._src.hlo.passes.all_reduce_combiner import AllReduceCombiner
from justjax._src.runtime import replicas

F32 = np.dtype(np.float32)
GROUPS = np.array([[0, 1]], np.int64)


@pytest.fixture(autouse=True)
def two_devices():
    with jax.config.override("jax_num_cpu_devices", 2):
        yield


def _all_reduce(b, x, opcode="stablehlo.add", groups=GROUPS):
    region, rb = ir.new_region([ir.TensorType((), x.type.dtype)] * 2)
    rb.ret([rb.one(opcode, list(region.block.args), ir.TensorType((), x.type.dtype))])
    return b.op("stablehlo.all_reduce", [x], [x.type], {"replica_groups": groups},
                [region]).result


def _module(build):
    """A module `main(x: f32[3], y: f32[2, 2])` whose body `build(b, x, y)` returns results."""
    args = [ir.Value(ir.TensorType((3,), F32)), ir.Value(ir.TensorType((2, 2), F32))]
    block = ir.Block(args, [])
    b = ir.Builder(block)
    outs = build(b, *args)
    b.ret(outs, "func.return")
    main = ir.Function("main", block, [v.type for v in outs], visibility="public")
    return ir.Module("m", [main])


def _opcodes(module):
    return [op.opcode.split(".")[-1] for op in module.main.body.ops]


def _run(module, inputs):
    executable = backends.get_backend("reference").compile(module)
    return replicas.run_replicas(executable, inputs, [0, 1])


def test_independent_sums_become_one_and_their_readers_follow():
    def build(b, x, y):
        sx = _all_reduce(b, b.one("stablehlo.exponential", [x], x.type), "stablehlo.add")
        doubled = b.one("stablehlo.add", [sx, sx], sx.type)   # reads the first sum early
        sy = _all_reduce(b, b.one("stablehlo.tanh", [y], y.type), "stablehlo.add")
        return [doubled, sy]

    module = _module(build)
    x = [np.arange(3, dtype=F32), np.ones(3, F32)]
    y = [np.full((2, 2), 0.5, F32), np.full((2, 2), -0.25, F32)]
    want = _run(module, [[x[0], y[0]], [x[1], y[1]]])
    assert AllReduceCombiner().run(module)
    verifier.verify(module)
    assert _opcodes(module) == ["exponential", "tanh", "all_reduce", "add", "return"]
    (combined,) = [op for op in module.main.body.ops if op.opcode == "stablehlo.all_reduce"]
    assert len(combined.operands) == 2
    got = _run(module, [[x[0], y[0]], [x[1], y[1]]])
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(got[0][0], 2 * (np.exp(x[0]) + np.exp(x[1])), rtol=1e-6)


def test_a_sum_of_a_sum_stays_apart():
    def build(b, x, y):
        first = _all_reduce(b, x)
        second = _all_reduce(b, b.one("stablehlo.multiply", [first, first], x.type))
        return [second]

    module = _module(build)
    assert not AllReduceCombiner().run(module)


@pytest.mark.parametrize("change", ["reduction", "groups", "dtype"])
def test_different_reductions_groups_or_types_stay_apart(change):
    def build(b, x, y):
        flat = b.one("stablehlo.reshape", [y], ir.TensorType((4,), F32))
        other = flat
        kwargs = {}
        if change == "reduction":
            kwargs = {"opcode": "stablehlo.maximum"}
        elif change == "groups":
            kwargs = {"groups": np.array([[0], [1]], np.int64)}
        else:
            other = b.one("stablehlo.convert", [flat], ir.TensorType((4,), np.dtype(np.float64)))
        return [_all_reduce(b, x), _all_reduce(b, other, **kwargs)]

    module = _module(build)
    assert not AllReduceCombiner().run(module)
