"""The extension API libraries use to define primitives and transformations (`jax.extend`,
`jax.interpreters`, `jax.core`, `jax.api_util`): a library's primitive behaves as a built-in
one under every transformation."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import justjax as jax
import justjax.api_util
import justjax.core
import justjax.custom_derivatives
import justjax.extend
import justjax.extend.linear_util as lu
import justjax.interpreters.ad as ad
import justjax.interpreters.batching as batching
import justjax.interpreters.mlir as mlir
import justjax.interpreters.partial_eval as pe
import justjax.numpy as jnp
from justjax import lax
from justjax import tree_util

# A library's primitive: y = x * scale + shift, defined only through the public API, with a
# jvp, a transpose, a batching rule in JAX's short form and a lowering from lower_fun.
affine_p = jax.extend.core.Primitive("affine")


def _affine_impl(x, shift, *, scale):
    return x * scale + shift


affine_p.def_impl(_affine_impl)
affine_p.def_abstract_eval(lambda x, shift, *, scale: jax.core.ShapedArray(x.shape, x.dtype))


def _affine_jvp(primals, tangents, *, scale):
    x, shift = primals
    tx, tshift = tangents
    out = affine_p.bind(x, shift, scale=scale)
    tx = ad.instantiate_zeros(tx)
    tshift = ad.instantiate_zeros(tshift)
    return out, affine_p.bind(tx, tshift, scale=scale)


def _affine_transpose(ct, x, shift, *, scale):
    assert ad.is_undefined_primal(x) or ad.is_undefined_primal(shift)
    ct_x = ct * scale if ad.is_undefined_primal(x) else None
    ct_shift = ct if ad.is_undefined_primal(shift) else None
    return [ct_x, ct_shift]


def _affine_batch(args, dims, *, scale):
    x, shift = args
    x_dim, shift_dim = dims
    x = batching.bdim_at_front(x, x_dim, _size(args, dims))
    shift = batching.bdim_at_front(shift, shift_dim, _size(args, dims))
    return affine_p.bind(x, shift, scale=scale), 0


def _size(args, dims):
    return next(a.shape[d] for a, d in zip(args, dims) if d is not None)


ad.primitive_jvps[affine_p] = _affine_jvp
ad.primitive_transposes[affine_p] = _affine_transpose
batching.primitive_batchers[affine_p] = _affine_batch
mlir.register_lowering(affine_p, mlir.lower_fun(_affine_impl, multiple_results=False))


def affine(x, shift, scale=2.0):
    return affine_p.bind(x, shift, scale=scale)


X = np.arange(3.0, dtype=np.float32)
SHIFT = np.ones(3, np.float32)


def test_a_library_primitive_runs_eagerly_and_under_jit():
    np.testing.assert_allclose(affine(X, SHIFT), X * 2 + 1)
    np.testing.assert_allclose(jax.jit(affine)(X, SHIFT), X * 2 + 1)
    assert "affine[scale=2.0]" in str(jax.make_jaxpr(affine)(X, SHIFT))
    text = jax.jit(affine).lower(X, SHIFT).as_text()
    assert "stablehlo.multiply" in text and "stablehlo.add" in text


def test_a_library_primitive_differentiates_and_vectorizes():
    grad = jax.grad(lambda x: jnp.sum(affine(x, SHIFT, 3.0)))(X)
    np.testing.assert_allclose(grad, np.full(3, 3.0))
    primal, tangent = jax.jvp(lambda s: affine(X, s), (SHIFT,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(tangent, np.ones(3))
    batch = np.stack([X, X + 1])
    np.testing.assert_allclose(jax.vmap(affine, in_axes=(0, None))(batch, SHIFT), batch * 2 + 1)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(lambda x: affine(x, 1.0).sum())))(batch),
                               np.full((2, 3), 2.0))


def test_axis_primitive_batchers_receive_the_axis():
    seen = []
    double_p = jax.extend.core.Primitive("double_with_axis")
    double_p.def_impl(lambda x: x * 2)
    double_p.def_abstract_eval(lambda x: x)

    def rule(axis_size, axis_name, trace_type, args, dims):
        seen.append((axis_size, axis_name))
        return double_p.bind(*args), dims[0]

    batching.axis_primitive_batchers[double_p] = rule
    out = jax.vmap(double_p.bind, axis_name="i")(jnp.ones((4, 2)))
    np.testing.assert_allclose(out, np.full((4, 2), 2.0))
    assert seen == [(4, "i")]
    assert batching.fancy_primitive_batchers[double_p] is not None


def test_effectful_abstract_eval_keeps_the_equation():
    class Log(jax.extend.core.Effect):
        pass

    log_p = jax.extend.core.Primitive("log_value")
    log_p.def_impl(lambda x: x)
    log_p.def_effectful_abstract_eval(lambda x: (x, {Log()}))
    mlir.register_lowering(log_p, mlir.lower_fun(lambda x: x, multiple_results=False))

    def f(x):
        log_p.bind(x)  # result unused: only its effect keeps it
        return x + 1

    closed = jax.make_jaxpr(f)(1.0)
    assert closed.eqns[0].primitive is log_p and closed.eqns[0].effects
    jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [True])
    assert [e.primitive.name for e in jaxpr.eqns] == ["log_value", "add"]


def test_primitive_impl_and_bind_params():
    assert affine_p.impl(X, SHIFT, scale=1.0).tolist() == (X + 1).tolist()
    assert affine_p.get_bind_params({"scale": 3.0}) == {"scale": 3.0}


def test_traces_are_visible_to_libraries():
    seen = []

    def f(x):
        seen.append((type(jax.extend.core.find_top_trace([x])).__name__,
                     jax.extend.core.get_opaque_trace_state()))
        return x

    outer = jax.extend.core.get_opaque_trace_state()
    jax.jvp(f, (1.0,), (1.0,))
    jax.jit(f)(1.0)
    (jvp_trace, jvp_state), (jit_trace, jit_state) = seen
    assert jvp_trace == "JVPTrace" and jit_trace == "DynamicJaxprTrace"
    assert jvp_state != jit_state and jvp_state != outer
    assert outer == jax.extend.core.get_opaque_trace_state()


def test_jax_core_keeps_and_retires_names_as_jax_does():
    assert jax.core.ShapedArray((2,), np.float32).to_tangent_aval() == \
        jax.core.ShapedArray((2,), np.float32)
    assert jax.core.ShapedArray((2,), np.int32).to_tangent_aval().dtype == jax.dtypes.float0
    with pytest.warns(DeprecationWarning, match="Use jax.extend.core.find_top_trace"):
        jax.core.find_top_trace
    with pytest.raises(AttributeError, match="use jax.typeof instead"):
        jax.core.get_aval
    assert jax.extend.core.mapped_aval(4, 0, jax.core.ShapedArray((4, 3), np.float32)) == \
        jax.core.ShapedArray((3,), np.float32)
    assert jax.extend.core.unmapped_aval(4, 1, jax.core.ShapedArray((3,), np.float32)) == \
        jax.core.ShapedArray((3, 4), np.float32)


def test_eval_jaxpr_and_jaxpr_as_fun():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0)
    assert isinstance(closed, jax.extend.core.ClosedJaxpr)
    out, = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, 0.5)
    np.testing.assert_allclose(out, np.sin(0.5) * 2, rtol=1e-6)
    np.testing.assert_allclose(jax.extend.core.jaxpr_as_fun(closed)(0.5)[0], out)
    eqn = closed.eqns[0]
    copy = jax.extend.core.new_jaxpr_eqn(eqn.invars, eqn.outvars, eqn.primitive, eqn.params,
                                         eqn.effects)
    assert copy.primitive is eqn.primitive and copy.params == eqn.params


def test_wrapped_functions_and_flatten_fun():
    def f(a, b):
        return {"sum": a["x"] + b, "b": b}

    args = ({"x": 1.0}, 2.0)
    flat, in_tree = tree_util.tree_flatten((args, {}))
    debug = jax.api_util.debug_info("test", f, args, {})
    assert debug.arg_names == ("a['x']", "b")
    wrapped, out_tree = jax.api_util.flatten_fun(lu.wrap_init(f, debug_info=debug), in_tree)
    outs = wrapped.call_wrapped(*flat)
    assert tree_util.tree_unflatten(out_tree(), outs) == {"sum": 3.0, "b": 2.0}

    @lu.transformation2
    def doubled(inner, *args):
        return [2 * o for o in inner(*args)]

    wrapped2, out_tree2 = jax.api_util.flatten_fun_nokwargs(
        lu.wrap_init(lambda a: (a, a + 1), debug_info=debug), tree_util.tree_structure((0.0,)))
    assert doubled(wrapped2).call_wrapped(1.0) == [2.0, 4.0]

    fixed, dyn = jax.api_util.argnums_partial(lu.wrap_init(lambda a, b: a - b), (1,), (10, 3))
    assert dyn == (3,) and fixed.call_wrapped(3) == 7
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.api_util.argnums_partial(lu.wrap_init(lambda a, b: a), (1,), ([1], 3))
    assert jax.api_util.rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)


def test_partial_evaluation_with_partial_vals():
    def f(known, unknown):
        k2 = known * 2
        return [k2, k2 + unknown]

    pvals = [pe.PartialVal.known(jnp.float32(3.0)),
             pe.PartialVal.unknown(jax.core.ShapedArray((), np.float32))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(lu.wrap_init(f), pvals)
    assert out_pvals[0].is_known() and float(out_pvals[0].get_known()) == 6.0
    assert not out_pvals[1].is_known()
    assert len(jaxpr.outvars) == 1 and len(jaxpr.invars) == 1
    out, = jax.core.eval_jaxpr(jaxpr, consts, 1.5)
    assert float(out) == 7.5

    jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(
        lu.wrap_init(lambda x: [jnp.cos(x)]), [jax.core.ShapedArray((2,), np.float32)])
    assert out_avals == [jax.core.ShapedArray((2,), np.float32)] and not consts


def test_custom_jvp_equations_rebind_from_bind_params():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda primals, tangents: (f(*primals), 10.0 * tangents[0]))
    closed = jax.make_jaxpr(f)(0.3)
    eqn = closed.eqns[0]
    assert eqn.primitive is jax.custom_derivatives.custom_jvp_call_p
    params = eqn.primitive.get_bind_params(eqn.params)
    fun, jvp = params["subfuns"]
    np.testing.assert_allclose(fun.call_wrapped(0.3)[0], np.sin(0.3), rtol=1e-6)

    def rebound(x):
        return eqn.primitive.bind(x, **params)[0]

    assert float(jax.grad(rebound)(0.3)) == 10.0


def test_emit_python_callback_from_a_library_lowering():
    calls = []
    host_p = jax.extend.core.Primitive("host_square")
    host_p.def_impl(lambda x: x * x)
    host_p.def_abstract_eval(lambda x: x)

    def lowering(ctx, x):
        def callback(value):
            calls.append(value.copy())
            return [np.square(value)]

        results, _, keepalive = mlir.emit_python_callback(
            ctx, callback, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)
        ctx.module_context.add_keepalive(keepalive)
        return results

    mlir.register_lowering(host_p, lowering)
    out = jax.jit(host_p.bind)(jnp.arange(3.0))
    np.testing.assert_allclose(out, [0.0, 1.0, 4.0])
    assert len(calls) == 1


def test_lowering_rules_for_other_platforms_are_not_used_on_cpu():
    other_p = jax.extend.core.Primitive("gpu_only")
    other_p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(other_p, lambda ctx, x: [x], platform="cuda")
    with pytest.raises(Exception, match="gpu_only"):
        jax.jit(other_p.bind)(1.0)


def test_donated_buffers_that_no_output_can_use_warn():
    f = jax.jit(lambda x, y: x + jnp.sum(y), donate_argnums=(0, 1))
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[10\]"):
        f(jnp.array(1.0), jnp.ones((10,)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.jit(lambda x: x + 1, donate_argnums=0)(jnp.ones(3))


def test_compile_options_outside_xla_flags_are_refused():
    lowered = jax.jit(lambda x: 2 * x).lower(1.0)
    assert float(lowered.compile(compiler_options={"xla_gpu_autotune_level": "0"})(2.0)) == 4.0
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bad'"):
        lowered.compile(compiler_options={"bad": "value"})


def test_aux_outputs_may_be_any_python_value():
    (value, aux), grad = jax.value_and_grad(lambda x: (x * x, "note"), has_aux=True)(3.0)
    assert aux == "note" and float(grad) == 6.0


def test_transformations_accept_callables_without_a_string_name():
    class Callable:
        __name__ = property(lambda self: 3)  # an object whose name is not a string

        def __call__(self, x):
            return x * 2

    np.testing.assert_allclose(jax.vmap(Callable())(jnp.arange(3.0)), [0.0, 2.0, 4.0])
    assert float(jax.grad(Callable())(1.0)) == 2.0
