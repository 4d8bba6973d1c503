"""JAX's generic call primitives: `closed_call_p` and `call_p` (`jax.extend.core.primitives`).

`closed_call` calls a closed jaxpr (param `call_jaxpr`, a ClosedJaxpr); `call` calls an
open one without constants (param `call_jaxpr`, a Jaxpr): `closed_call_p.bind(*args,
call_jaxpr=closed)`. Libraries reach these to recognise them in jaxprs (numpyro's
provenance tracking reads `call_jaxpr`); JAX's own binding protocol for them (a
`WrappedFun` through `bind_with_trace`) is internal and not reproduced.

Unlike `jit`, which every transform keeps as a call, these are transparent to transforms
here: forward mode, batching and transposition run the body inline under the transform,
and lowering emits the body in place; the results are the body's.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr, jaxpr_as_fun
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters import partial_eval as pe

__all__ = ["call_p", "closed_call_p"]


def _closed_call_jaxpr(params: dict) -> ClosedJaxpr:
    return params["call_jaxpr"]


def _open_call_jaxpr(params: dict) -> ClosedJaxpr:
    return ClosedJaxpr(params["call_jaxpr"], [])


def _def_call_rules(prim: core.Primitive, closed_of: Callable[[dict], ClosedJaxpr]) -> None:
    """The rules of a transparent call primitive whose body `closed_of(params)` gives."""

    def impl(*args: Any, **params: Any) -> list[Any]:
        closed = closed_of(params)
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    def abstract_eval(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
        return list(closed_of(params).out_avals)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
            ) -> tuple[list[Any], list[Any]]:
        return ad.jvp_flat(jaxpr_as_fun(closed_of(params)), primals, tangents,
                           instantiate=False)

    def transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
        in_linear = [ad.is_undefined_primal(a) for a in args]
        out_zeros = [type(ct) is ad.Zero for ct in cts]
        transposed, in_zeros = pe.transpose_jaxpr(closed_of(params), in_linear, out_zeros)
        operands = [*[a for a, lin in zip(args, in_linear, strict=True) if not lin],
                    *[ct for ct in cts if type(ct) is not ad.Zero]]
        outs = eval_jaxpr(transposed.jaxpr, transposed.consts, *operands)
        return ad.call_cotangents(args, in_zeros, outs)

    def batch(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
              **params: Any) -> tuple[list[Any], list[Any]]:
        batched, out_dims = batching.batch_jaxpr(closed_of(params), axis_data, dims)
        return eval_jaxpr(batched.jaxpr, batched.consts, *vals), out_dims

    def lower(ctx: lowering.LoweringRuleContext, *args: Any, **params: Any) -> list[Any]:
        return lowering.lower_closed_jaxpr_inline(ctx, closed_of(params), args)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    ad.primitive_jvps[prim] = jvp
    ad.primitive_transposes[prim] = transpose
    batching.primitive_batchers[prim] = batch
    lowering.register_lowering(prim, lower)


closed_call_p = core.Primitive("closed_call", multiple_results=True)
_def_call_rules(closed_call_p, _closed_call_jaxpr)


call_p = core.Primitive("call", multiple_results=True)
_def_call_rules(call_p, _open_call_jaxpr)
