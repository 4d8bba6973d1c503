"""`lax.cond`, `lax.switch` and the `cond` primitive (`_src/lax/control_flow/conditionals.py`),
for what the corpus of `test_control_flow_programs.py` (195 programs JAX recorded: jaxprs,
values, errors, StableHLO text) and the table of `test_control_flow.py` do not hold:
`disable_jit` running only the chosen branch, dead-code elimination inside the branches,
transposition, residuals joined across branches, the reverse-mode safety of a batched
predicate, checkpointing, and the lowering's structure on the reference backend. Expected
values were read off real JAX 0.10.2.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src.interpreters import partial_eval as pe
from tests.harness import assert_close, lower_to_module, run_reference


def _three_outputs(x: Any) -> Any:
    return lax.cond(x[0] > 0, lambda x: (x * 2.0, x + 1.0, jnp.sin(x)),
                    lambda x: (x, x * 3.0, x), x)


def _eqns(jaxpr: Any, primitive: Any) -> list:
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is primitive:
            found.append(eqn)
        for sub in eqn.params.get("branches", ()):
            found.extend(_eqns(sub.jaxpr, primitive))
    return found


# ---------------------------------------------------------------------------------------------
# disable_jit: a concrete predicate calls one branch in Python, as JAX does.

@pytest.mark.parametrize("choose, expected", [
    (lambda t, f: lax.cond(jnp.array(True), t, f, 1.0), ["t"]),
    (lambda t, f: lax.cond(0, t, f, 1.0), ["f"]),
    (lambda t, f: lax.switch(7, [f, t], 1.0), ["t"]),
], ids=["cond_true", "cond_int_zero", "switch_clamped"])
def test_disable_jit_calls_only_the_chosen_branch(choose: Any, expected: list) -> None:
    calls: list[str] = []
    true_fun = lambda x: calls.append("t") or x * 2.0
    false_fun = lambda x: calls.append("f") or x - 1.0
    with jax.disable_jit():
        out = choose(true_fun, false_fun)
    assert calls == expected
    assert float(out) == (2.0 if expected == ["t"] else 0.0)


def test_without_disable_jit_both_branches_are_traced() -> None:
    calls: list[str] = []
    lax.cond(True, lambda x: calls.append("t") or x, lambda x: calls.append("f") or x, 1.0)
    assert calls == ["t", "f"]


# ---------------------------------------------------------------------------------------------
# Dead-code elimination (JAX's printed result: an unused output leaves every branch, and so
# does the work only it needed).

DCE_AS_JAX = """\
{ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
    d:bool[] = gt c 0.0:f32[]
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d
    f:f32[3] = cond[
      branches=(
        { lambda ; g:f32[3]. let h:f32[3] = mul g 3.0:f32[] in (h,) }
        { lambda ; i:f32[3]. let j:f32[3] = add i 1.0:f32[] in (j,) }
      )
    ] e a
  in (f,) }"""


def test_dce_drops_unused_outputs_from_every_branch() -> None:
    closed = jax.make_jaxpr(_three_outputs)(jnp.ones(3))
    jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [False, True, False])
    assert used == [True]
    assert str(jaxpr) == DCE_AS_JAX


def test_dce_drops_operands_no_branch_reads() -> None:
    f = lambda x, y: lax.cond(x > 0, lambda x, y: (x + 1.0, y * 2.0),
                              lambda x, y: (x - 1.0, y), x, y)
    closed = jax.make_jaxpr(f)(jnp.float32(1.0), jnp.ones(2))
    jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [True, False])
    assert used == [True, False]
    (eqn,) = _eqns(jaxpr, lax.cond_p)
    assert len(eqn.invars) == 2 and len(eqn.outvars) == 1
    assert all(len(b.jaxpr.invars) == 1 for b in eqn.params["branches"])


def test_dce_removes_an_unused_cond() -> None:
    closed = jax.make_jaxpr(_three_outputs)(jnp.ones(3))
    jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [False, False, False])
    assert not _eqns(jaxpr, lax.cond_p)


# ---------------------------------------------------------------------------------------------
# Transposition and residuals.

@pytest.mark.parametrize("pred", [True, False])
def test_transpose_of_a_linear_cond(pred: bool) -> None:
    """The pullback of a cond linear in both operands is the chosen branch's transpose."""
    f = lambda x, y: lax.cond(pred, lambda x, y: (2.0 * x + y, -y),
                              lambda x, y: (x, 3.0 * x), x, y)
    ct = (jnp.array([1.0, 2.0, 3.0]), jnp.array([0.5, -1.0, 4.0]))
    _, pullback = jax.vjp(f, jnp.ones(3), jnp.ones(3))
    ct_x, ct_y = pullback(ct)
    want_x, want_y = ((2.0 * ct[0], ct[0] - ct[1]) if pred else (ct[0] + 3.0 * ct[1], 0 * ct[1]))
    assert_close(ct_x, want_x, 0)
    assert_close(ct_y, want_y, 0)


def test_transpose_with_a_linear_operand_one_branch_ignores() -> None:
    """The cotangent of `y` is zero in the false branch and nonzero in the true one: the
    transposed false branch returns zeros for it (as the branches must agree)."""
    f = lambda p, x, y: lax.cond(p, lambda x, y: x + y, lambda x, y: 2.0 * x, x, y)
    for p, want_y in [(True, 1.0), (False, 0.0)]:
        gx, gy = jax.grad(f, argnums=(1, 2))(p, 1.5, 2.5)
        assert float(gx) == (1.0 if p else 2.0) and float(gy) == want_y


def test_residuals_are_joined_by_type_and_filled_with_empty2() -> None:
    """The true branch saves cos(x) (one f32[3]) and the false branch x and exp(x) (two
    f32[3]): the known cond returns two f32[3] residual slots, the true branch filling one
    with `empty2`; the linearized function equals the jvp for either predicate."""
    f = lambda p, x: lax.cond(p, jnp.sin, lambda x: x * jnp.exp(x), x)
    x = jnp.array([0.3, -1.2, 2.0])
    t = jnp.array([1.0, 0.5, -2.0])
    for p in (True, False):
        out, lin = jax.linearize(lambda x: f(p, x), x)
        _, want = jax.jvp(lambda x: f(p, x), (x,), (t,))
        assert_close(lin(t), want, 1e-6)
        assert_close(out, f(p, x), 0)
    forward = jax.make_jaxpr(lambda p, x: jax.linearize(lambda x: f(p, x), x)[0])(True, x)
    (known,) = _eqns(forward.jaxpr, lax.cond_p)
    assert [str(v.aval) for v in known.outvars] == ["float32[3]"] * 3
    false_branch, true_branch = known.params["branches"]
    assert [_producer(false_branch.jaxpr, v) for v in false_branch.jaxpr.outvars] == [
        "mul", "exp", None]
    assert [_producer(true_branch.jaxpr, v) for v in true_branch.jaxpr.outvars] == [
        "sin", "cos", "broadcast_in_dim(empty2)"]


def _producer(jaxpr: Any, var: Any) -> str | None:
    """The primitive computing `var` in `jaxpr` (with its own producer for a broadcast), or
    None for an input."""
    eqn = next((e for e in jaxpr.eqns if var in e.outvars), None)
    if eqn is None:
        return None
    if eqn.primitive.name == "broadcast_in_dim":
        return f"broadcast_in_dim({_producer(jaxpr, eqn.invars[0])})"
    return eqn.primitive.name


# ---------------------------------------------------------------------------------------------
# Batching.

def test_grad_under_vmap_of_batched_predicate_ignores_the_branch_not_taken() -> None:
    """The select over both branches must not leak the untaken branch's NaN derivative
    (sqrt at -1) into the lane's gradient (JAX issue 1052); JAX gives [1, 0.25]."""
    g = jax.vmap(jax.grad(lambda x: lax.cond(x > 0, jnp.sqrt, lambda x: x, x)))
    np.testing.assert_array_equal(np.asarray(g(jnp.array([-1.0, 4.0]))), [1.0, 0.25])


def test_vmap_of_switch_clamps_each_lane() -> None:
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    index = jnp.array([-3, 0, 1, 2, 9], jnp.int32)
    x = jnp.arange(5, dtype=jnp.float32)
    out = jax.vmap(lambda i, x: lax.switch(i, branches, x))(index, x)
    want = [branches[min(max(int(i), 0), 2)](float(v)) for i, v in zip(index, x)]
    np.testing.assert_array_equal(np.asarray(out), np.array(want, np.float32))


def test_vmap_with_unbatched_predicate_stays_a_cond() -> None:
    f = jax.vmap(lambda x: lax.cond(True, jnp.sin, jnp.cos, x))
    closed = jax.make_jaxpr(f)(jnp.ones((4, 2)))
    assert len(_eqns(closed.jaxpr, lax.cond_p)) == 1
    assert_close(f(jnp.ones((4, 2))), np.sin(np.ones((4, 2), np.float32)), 1e-6)


# ---------------------------------------------------------------------------------------------
# Checkpoint: cond's rule splits each branch under the policy (the corpus holds JAX's
# printed jaxprs of three policies).

@pytest.mark.parametrize("policy", ["nothing_saveable", "dots_saveable",
                                    "everything_saveable"])
def test_grad_of_checkpointed_cond_matches_plain_grad(policy: str) -> None:
    w = jnp.array([[0.5, -1.0, 0.2], [0.1, 0.3, -0.7], [1.1, 0.0, 0.4]])
    f = lambda x: jnp.sum(lax.cond(x[0] > 0, lambda x: jnp.tanh(w @ x) * x,
                                   lambda x: jnp.exp(-x), x))
    g = jax.checkpoint(f, policy=getattr(jax.checkpoint_policies, policy))
    for x in (jnp.array([0.5, 1.0, 2.0]), jnp.array([-3.0, 0.5, 1.0])):
        assert_close(jax.grad(g)(x), jax.grad(f)(x), 1e-6)
        assert_close(jax.jit(jax.grad(g))(x), jax.grad(f)(x), 1e-6)


# ---------------------------------------------------------------------------------------------
# Lowering.

def test_lowering_is_one_case_with_a_region_per_branch() -> None:
    branches = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x - y]
    f = lambda i, x, y: lax.switch(i, branches, x, y)
    x, y = np.array([1.5, 2.0], np.float32), np.array([4.0, -1.0], np.float32)
    module = lower_to_module(f, np.int32(0), x, y)
    (main,) = [fn for fn in module.functions if fn.name == "main"]
    (case,) = [op for op in main.body.ops if op.opcode == "stablehlo.case"]
    assert len(case.regions) == 3 and len(case.operands) == 1
    for i, branch in enumerate(branches + [branches[-1]]):
        (out,) = run_reference(module, np.int32(i), x, y)
        assert_close(out, branch(x, y), 0)


def test_operand_keyword():
    # JAX 0.10.2 still takes the single operand by keyword, and refuses it with positional
    # operands (its message).
    assert float(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=1.0)) == 2.0
    with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional "
                                        "operands can be passed"):
        lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0, operand=1.0)


def test_old_five_argument_form() -> None:
    """`cond(pred, true_operand, true_fun, false_operand, false_fun)`, which JAX still
    accepts (numpyro's NUTS uses it); anything else not callable is JAX's TypeError."""
    def pick(p):
        return lax.cond(p, jnp.array([1.0, 2.0]), lambda x: x * 10, 3.0,
                        lambda y: jnp.full((2,), y))
    np.testing.assert_array_equal(pick(True), [10.0, 20.0])
    np.testing.assert_array_equal(jax.jit(pick)(False), [3.0, 3.0])
    with pytest.raises(TypeError, match="^lax.cond: true_fun and false_fun arguments should "
                                        "be callable.$"):
        lax.cond(True, 1.0, lambda x: x, 2.0)
