"""`lax.scan` and the `scan` primitive: abstract eval, eager execution, jvp, batching, dead-code
elimination, lowering to `stablehlo.while` and printing.

The primitive's params are JAX 0.10.2's, and only those: `reverse` (iterate from the end),
`length` (the trip count), `jaxpr` (a `ClosedJaxpr` without consts from
`(consts, carry, x) -> (carry, y)`), `num_consts`, `num_carry` and `unroll` (an int >= 0; `0`
unrolls fully). The operands are `consts + init + xs`; the results are the final carry and
the ys stacked along a new leading axis of size `length`.

Reverse mode (partial evaluation under linearize, the checkpoint rule, transposition) is the
last section.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.compilation import caches
from justjax._src.compilation import dispatch
from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray, mapped_aval, unmapped_aval
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import slicing, structural
from justjax._src.lax.control_flow import common

__all__ = ["scan", "scan_p"]

scan_p = core.Primitive("scan", multiple_results=True)


def _unmapped_aval(length: int, aval: ShapedArray) -> ShapedArray:
    """`aval` with a leading axis of size `length` (a stacked y)."""
    return unmapped_aval(length, 0, aval)


def _replicated_leading(aval: ShapedArray) -> ShapedArray:
    """`aval` of an x, whose leading (scanned) dimension may not be split over Explicit mesh
    axes (JAX's error)."""
    spec = aval.type_spec
    if spec is not None and spec[0] is not None:
        raise ValueError(f"0th dimension of all xs should be replicated. Got {aval.sharding.spec}")
    return aval


def _mapped_aval(aval: ShapedArray) -> ShapedArray:
    """`aval` without its leading axis (one slice of an x)."""
    return mapped_aval(aval.shape[0], 0, aval)


def _scan_abstract_eval(*avals: ShapedArray, reverse: bool, length: int, jaxpr: ClosedJaxpr,
                        num_consts: int, num_carry: int, unroll: int) -> list[ShapedArray]:
    if len(avals) != len(jaxpr.in_avals):
        raise ValueError("scan number of arguments doesn't match the number of jaxpr "
                         f"arguments: {len(avals)} vs {len(jaxpr.in_avals)}")
    carry_avals = list(jaxpr.out_avals[:num_carry])
    y_avals = jaxpr.out_avals[num_carry:]
    return carry_avals + [_unmapped_aval(length, a) for a in y_avals]


scan_p.def_abstract_eval(_scan_abstract_eval)
# Eager scans run as one compiled program (the `stablehlo.while` lowering below).
dispatch.def_backend_impl(scan_p)


# ---------------------------------------------------------------------------------------------
# The API.

def _infer_length(xs_flat: Sequence[Any], length: Any) -> int:
    """The trip count from the xs' leading axes and `length`, with JAX's errors."""
    try:
        lengths = [x.shape[0] for x in xs_flat]
    except AttributeError as err:
        raise ValueError("scan got value with no leading axis to scan over: "
                         + ", ".join(str(x) for x in xs_flat if not hasattr(x, "shape"))
                         + ".") from err
    if length is not None:
        length = core.concrete_or_error(
            int, length,
            "The `length` argument to `scan` expects a concrete `int` value. For scan-like "
            "iteration with a dynamic length, use `while_loop` or `fori_loop`.")
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    unique = set(lengths)
    if len(unique) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(str(n) for n in lengths) + ".")
    if not unique:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return unique.pop()


def _scan_python_loop(f: Callable, init: Any, xs_flat: list[Any], xs_tree: Any, length: int,
                      reverse: bool) -> tuple[Any, Any]:
    """`scan` under `disable_jit()`: the body called once per slice, as JAX does."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry = init
    ys = []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = [slicing.index_in_dim(v, i, keepdims=False) for v in xs_flat]
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, x))
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_util.tree_map(
        lambda *leaves: structural.concatenate([structural.expand_dims(v, (0,)) for v in leaves],
                                            0),
        *ys)
    return carry, stacked


def _trace_body(f: Callable, init_tree: Any, carry_avals: Sequence[ShapedArray], xs_tree: Any,
                x_avals: Sequence[ShapedArray]) -> tuple[common.TracedFun, Any, Any]:
    """Traces `f(carry, x)` and splits its output pair; returns the traced body and the
    structures of the carry output and of the ys."""
    in_tree = tree_util.treedef_tuple([init_tree, xs_tree])
    traced = common.trace_fun(f, in_tree, [*carry_avals, *x_avals], "scan")
    out_tree = traced.out_tree
    children = ([] if tree_util.treedef_is_leaf(out_tree)
                else tree_util.treedef_children(out_tree))
    if len(children) != 2:
        shown = tree_util.tree_unflatten(out_tree, traced.out_avals)
        raise TypeError(f"scan body output must be a pair, got {shown}.")
    return traced, children[0], children[1]


def _prune_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    outvars = [v for v, k in zip(closed.jaxpr.outvars, keep, strict=True) if k]
    return ClosedJaxpr(closed.jaxpr.replace(outvars=outvars), closed.consts)


def _move_inputs_to_front(closed: ClosedJaxpr, to_move: Sequence[bool]) -> ClosedJaxpr:
    moved, rest = pe.partition_list([not m for m in to_move], closed.jaxpr.invars)
    return ClosedJaxpr(closed.jaxpr.replace(invars=[*moved, *rest]), closed.consts)


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, _split_transpose: bool = False
         ) -> tuple[Any, Any]:
    """Scans `f` over leading array axes while carrying along state, as `jax.lax.scan`.

    Args:
      f: the body, `f(carry, x) -> (carry, y)`; the carry keeps its pytree structure and
        types from step to step.
      init: the initial carry (a pytree).
      xs: the values scanned over (a pytree whose leaves share their leading axis size), or
        None with `length`.
      length: the number of steps; required when `xs` is None.
      reverse: iterate from the last slice to the first (ys still stacked in xs' order).
      unroll: how many steps each iteration of the lowered loop runs (`True`: all of them).
      _split_transpose: accepted for compatibility with JAX; it changes nothing here.
    Returns:
      The final carry and the ys stacked leaf by leaf along a new leading axis. Lowers to
      `stablehlo.while`.
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_flat, init_tree = tree_util.tree_flatten(init)
    xs_flat, xs_tree = tree_util.tree_flatten(xs)
    length = _infer_length(xs_flat, length)
    if config.read("jax_disable_jit"):
        return _scan_python_loop(f, init, xs_flat, xs_tree, length, reverse)

    carry_avals = [common.abstractify(x) for x in init_flat]
    x_avals = [_mapped_aval(_replicated_leading(common.abstractify(x))) for x in xs_flat]
    traced, carry_tree, ys_tree = _trace_body(f, init_tree, carry_avals, xs_tree, x_avals)
    carry_out_avals = traced.out_avals[:carry_tree.num_leaves]
    if len(carry_out_avals) != len(carry_avals):
        common.check_carry_type("scan body", f, init_tree, carry_avals, carry_tree,
                                carry_out_avals)
    init_flat, changed = common.promote_weak_carries(init_flat, carry_avals, carry_out_avals)
    if changed:
        carry_avals = [common.abstractify(x) for x in init_flat]
        traced, carry_tree, ys_tree = _trace_body(f, init_tree, carry_avals, xs_tree, x_avals)
        carry_out_avals = traced.out_avals[:carry_tree.num_leaves]
    common.check_carry_type("scan body", f, init_tree, carry_avals, carry_tree, carry_out_avals)
    unroll = _canonical_unroll(unroll, length)

    outs = _bind_forwarding(traced, init_flat, xs_flat, length=length, reverse=reverse,
                            unroll=unroll)
    num_carry = len(init_flat)
    return (tree_util.tree_unflatten(carry_tree, outs[:num_carry]),
            tree_util.tree_unflatten(ys_tree, outs[num_carry:]))


def _canonical_unroll(unroll: Any, length: int) -> int:
    unroll = core.concrete_or_error(
        lambda u: u, unroll,
        "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, (bool, np.bool_)):
        return max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return unroll


def _bind_forwarding(traced: common.TracedFun, init_flat: list[Any], xs_flat: list[Any], *,
                     length: int, reverse: bool, unroll: int) -> list[Any]:
    """Binds `scan_p`, as JAX does, without carries the body passes through unchanged (they
    become consts) and without ys that are xs slices (the xs are returned instead)."""
    jaxpr, consts = traced.jaxpr, list(traced.consts)
    num_carry, num_xs = len(init_flat), len(xs_flat)
    num_ys = len(jaxpr.out_avals) - num_carry
    forwarded = common.forwarded_inputs(jaxpr.jaxpr)
    carry_fwd, ys_fwd = forwarded[:num_carry], forwarded[num_carry:]
    move_to_const = [len(consts) + i == src for i, src in enumerate(carry_fwd)]
    args = [*init_flat, *xs_flat]
    if any(move_to_const):
        jaxpr = _prune_outputs(jaxpr, [not m for m in move_to_const] + [True] * num_ys)
        jaxpr = _move_inputs_to_front(
            jaxpr, [False] * len(consts) + move_to_const + [False] * num_xs)
        args, new_consts = pe.partition_list(move_to_const + [False] * num_xs, args)
        consts = [*new_consts, *consts]
        num_carry -= len(new_consts)
    else:
        new_consts = []
    ys_from_xs = [src - len(consts) if src is not None and src >= num_carry + len(consts)
                  else None for src in ys_fwd]
    jaxpr = _prune_outputs(jaxpr, [True] * num_carry + [src is None for src in ys_from_xs])
    outs = scan_p.bind(*consts, *args, reverse=reverse, length=length, jaxpr=jaxpr,
                       num_consts=len(consts), num_carry=num_carry, unroll=unroll)
    carry_out, computed = outs[:num_carry], iter(outs[num_carry:])
    ys = [next(computed) if src is None else args[src] for src in ys_from_xs]
    outs = [*carry_out, *ys]
    if any(move_to_const):
        outs = pe.merge_lists(move_to_const + [False] * num_ys, outs, new_consts)
    return outs



def _consts_as_operands(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """`closed` without consts (they become leading invars) and those consts, which the
    caller passes as leading scan consts: a scan's jaxpr holds no consts."""
    if not closed.consts:
        return closed, []
    return pe.close_jaxpr(pe.convert_constvars_jaxpr(closed.jaxpr)), list(closed.consts)


def _split(items: Sequence[Any], num_consts: int, num_carry: int
           ) -> tuple[list[Any], list[Any], list[Any]]:
    items = list(items)
    return (items[:num_consts], items[num_consts:num_consts + num_carry],
            items[num_consts + num_carry:])


# ---------------------------------------------------------------------------------------------
# Forward mode: a scan of the jvp body, the nonzero tangents of consts, carries and xs
# beside their primals; which carries have a tangent is a fixpoint (a zero initial tangent
# becomes nonzero when the body makes it so).

@pe.transform_cache
def _jvp_body(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
              nonzeros: tuple[bool, ...]) -> tuple[ClosedJaxpr, list[Any], tuple[bool, ...],
                                                    tuple[bool, ...]]:
    """The jvp body with binders ordered `consts, consts_dot, carry, carry_dot, xs, xs_dot ->
    carry, carry_dot, ys, ys_dot`, its own consts, the carries with a tangent, and which
    outputs have a tangent."""
    const_nz, init_nz, xs_nz = _split(nonzeros, num_consts, num_carry)
    num_ys = len(jaxpr.out_avals) - num_carry
    carry_nz = init_nz
    for _ in range(1 + len(carry_nz)):
        jvp_closed, out_nz = pe.jvp_jaxpr(jaxpr, [*const_nz, *carry_nz, *xs_nz],
                                          instantiate=[*carry_nz, *[False] * num_ys])
        carry_nz_out = out_nz[:num_carry]
        if carry_nz_out == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, carry_nz_out, strict=True)]
    else:
        raise AssertionError("scan jvp: the carry tangents reached no fixpoint")
    body, body_consts = _consts_as_operands(jvp_closed)
    inner = body.jaxpr
    num_body_consts = len(body_consts)
    own_consts = inner.invars[:num_body_consts]
    primals = inner.invars[num_body_consts:num_body_consts + len(nonzeros)]
    tangents = inner.invars[num_body_consts + len(nonzeros):]
    p_consts, p_carry, p_xs = _split(primals, num_consts, num_carry)
    t_consts, t_carry, t_xs = _split(tangents, sum(const_nz), sum(carry_nz))
    num_outs = len(jaxpr.out_avals)
    out_primals, out_tangents = inner.outvars[:num_outs], inner.outvars[num_outs:]
    num_carry_dot = sum(carry_nz)
    invars = [*own_consts, *p_consts, *t_consts, *p_carry, *t_carry, *p_xs, *t_xs]
    outvars = [*out_primals[:num_carry], *out_tangents[:num_carry_dot],
               *out_primals[num_carry:], *out_tangents[num_carry_dot:]]
    rearranged = pe.close_jaxpr(inner.replace(invars=invars, outvars=outvars))
    return rearranged, body_consts, tuple(carry_nz), tuple(out_nz)


def _scan_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, reverse: bool, length: int,
              jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, unroll: int
              ) -> tuple[list[Any], list[Any]]:
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    body, body_consts, carry_nz, out_nz = _jvp_body(jaxpr, num_consts, num_carry, nonzeros)
    const_nz, _, xs_nz = _split(nonzeros, num_consts, num_carry)
    consts, init, xs = _split(primals, num_consts, num_carry)
    t_consts, t_init, t_xs = _split(tangents, num_consts, num_carry)
    consts_dot = [t for t, nz in zip(t_consts, const_nz, strict=True) if nz]
    init_dot = [ad.instantiate_carry_zeros(t) for t, nz in zip(t_init, carry_nz, strict=True)
                if nz]
    xs_dot = [t for t, nz in zip(t_xs, xs_nz, strict=True) if nz]
    outs = scan_p.bind(*body_consts, *consts, *consts_dot, *init, *init_dot, *xs, *xs_dot,
                       reverse=reverse, length=length, jaxpr=body,
                       num_consts=len(body_consts) + num_consts + len(consts_dot),
                       num_carry=num_carry + len(init_dot), unroll=unroll)
    num_ys = len(jaxpr.out_avals) - num_carry
    carry, carry_dot = outs[:num_carry], outs[num_carry:num_carry + len(init_dot)]
    rest = outs[num_carry + len(init_dot):]
    ys, ys_dot = rest[:num_ys], rest[num_ys:]
    primals_out = [*carry, *ys]
    dots = iter([*carry_dot, *ys_dot])
    tangents_out = [next(dots) if nz else ad.Zero.from_primal_value(p)
                    for p, nz in zip(primals_out, out_nz, strict=True)]
    return primals_out, tangents_out


ad.primitive_jvps[scan_p] = _scan_jvp


# ---------------------------------------------------------------------------------------------
# Batching: the body batched along axis 0 of its consts and carries and of the slices of the
# xs (whose batch axis moves to 1, right after the scanned axis); which carries are batched
# is a fixpoint, and unbatched consts stay unbatched.

@pe.transform_cache
def _batch_body(jaxpr: ClosedJaxpr, axis_data: batching.AxisData, num_consts: int,
                num_carry: int, batched: tuple[bool, ...]
                ) -> tuple[ClosedJaxpr, list[Any], tuple[bool, ...], tuple[bool, ...]]:
    """The batched body (with its own consts as leading operands), the consts, which
    carries are batched and which ys are."""
    const_b, init_b, xs_b = _split(batched, num_consts, num_carry)
    num_ys = len(jaxpr.out_avals) - num_carry
    carry_b = init_b
    for _ in range(1 + len(carry_b)):
        in_dims = [0 if b else None for b in (*const_b, *carry_b, *xs_b)]
        out_dims = [0 if b else batching.zero_if_mapped for b in carry_b]
        batched_closed, dims_out = batching.batch_jaxpr(
            jaxpr, axis_data, in_dims, [*out_dims, *[batching.zero_if_mapped] * num_ys])
        carry_b_out = [d is not None for d in dims_out[:num_carry]]
        if carry_b_out == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, carry_b_out, strict=True)]
    else:
        raise AssertionError("scan batching: the batched carries reached no fixpoint")
    ys_b = tuple(d is not None for d in dims_out[num_carry:])
    body, body_consts = _consts_as_operands(batched_closed)
    return body, body_consts, tuple(carry_b), ys_b


def _scan_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                  dims: Sequence[int | None], *, reverse: bool, length: int,
                  jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, unroll: int
                  ) -> tuple[list[Any], list[int | None]]:
    batched = tuple(d is not None for d in dims)
    body, body_consts, carry_b, ys_b = _batch_body(jaxpr, axis_data, num_consts, num_carry,
                                                   batched)
    consts, init, xs = _split(vals, num_consts, num_carry)
    const_dims, init_dims, xs_dims = _split(dims, num_consts, num_carry)
    consts = [x if d is None else batching.moveaxis(x, d, 0)
              for x, d in zip(consts, const_dims, strict=True)]
    init = [batching.moveaxis(x, d, 0) if d is not None
            else batching.broadcast(x, axis_data.size, 0) if now_batched else x
            for x, d, now_batched in zip(init, init_dims, carry_b, strict=True)]
    xs = [x if d is None else batching.moveaxis(x, d, 1)
          for x, d in zip(xs, xs_dims, strict=True)]
    outs = scan_p.bind(*body_consts, *consts, *init, *xs, reverse=reverse, length=length,
                       jaxpr=body, num_consts=len(body_consts) + num_consts,
                       num_carry=num_carry, unroll=unroll)
    out_dims = [0 if b else None for b in carry_b] + [1 if b else None for b in ys_b]
    return outs, out_dims


batching.primitive_batchers[scan_p] = _scan_batcher


# ---------------------------------------------------------------------------------------------
# Dead-code elimination: unused ys go; a carry goes when neither the caller nor the next
# step reads it (a fixpoint: a carry the body reads to compute a used output stays).

@pe.transform_cache
def _dce_body(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
              used_outputs: tuple[bool, ...]
              ) -> tuple[ClosedJaxpr, tuple[bool, ...], tuple[bool, ...]]:
    """The pruned body, which inputs it keeps and which outputs (carries kept because the
    body reads them count as used)."""
    used_carry, used_ys = list(used_outputs[:num_carry]), list(used_outputs[num_carry:])
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    for _ in range(1 + num_carry):
        body, used_inputs = pe.dce_jaxpr(
            jaxpr.jaxpr, [*used_carry, *used_ys],
            instantiate=[False] * num_consts + used_carry + [False] * num_xs)
        used_carry_in = used_inputs[num_consts:num_consts + num_carry]
        if used_carry_in == used_carry:
            break
        used_carry = [a or b for a, b in zip(used_carry, used_carry_in, strict=True)]
    else:
        raise AssertionError("scan dce: the used carries reached no fixpoint")
    new_used_outputs = (*used_carry, *used_ys)
    if all(used_inputs) and all(new_used_outputs) and body.eqns == jaxpr.jaxpr.eqns:
        return jaxpr, tuple(used_inputs), new_used_outputs
    return pe.close_jaxpr(body), tuple(used_inputs), new_used_outputs


def _scan_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    params = eqn.params
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    body, used_inputs, used_outputs = _dce_body(params["jaxpr"], num_consts, num_carry,
                                                tuple(used_outputs))
    if body is params["jaxpr"]:
        return list(used_inputs), eqn
    new_params = dict(params, jaxpr=body, num_consts=sum(used_inputs[:num_consts]),
                      num_carry=sum(used_inputs[num_consts:num_consts + num_carry]))
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=new_params)
    return list(used_inputs), new_eqn


pe.dce_rules[scan_p] = _scan_dce

# ---------------------------------------------------------------------------------------------
# Lowering: as JAX lowers scan, a `stablehlo.while` over a counter whose body slices each x
# (`@dynamic_index_in_dim`), calls the body (`@closed_call`, `unroll` times) and writes each y
# (`@dynamic_update_index_in_dim`); with `unroll`, the xs are reshaped to
# `(trips, unroll, ...)` and the steps left over run after the loop, unrolled.

def _emit(ctx: lowering.LoweringRuleContext, fun: Callable[..., Sequence[Any]],
          args: Sequence[ir.Value]) -> list[ir.Value]:
    """Lowers `fun` (written with lax, returning a list) in place on IR values `args`."""
    avals = [ShapedArray(a.type.shape, a.type.dtype) for a in args]
    closed = staging.trace_to_jaxpr(lambda *xs: list(fun(*xs)), avals)
    return lowering.lower_closed_jaxpr_inline(ctx, closed, args)


@caches.cached_function
@functools.lru_cache(maxsize=256)
def _index_jaxpr(x_aval: ShapedArray) -> ClosedJaxpr:
    index_aval = ShapedArray((), np.dtype(np.int32))
    return staging.trace_to_jaxpr(
        lambda x, i: [slicing.dynamic_index_in_dim(x, i, 0, keepdims=False,
                                                   allow_negative_indices=False)],
        [x_aval, index_aval])


@caches.cached_function
@functools.lru_cache(maxsize=256)
def _update_jaxpr(ys_aval: ShapedArray, y_aval: ShapedArray) -> ClosedJaxpr:
    index_aval = ShapedArray((), np.dtype(np.int32))
    return staging.trace_to_jaxpr(
        lambda ys, y, i: [slicing.dynamic_update_index_in_dim(ys, y, i, 0,
                                                              allow_negative_indices=False)],
        [ys_aval, y_aval, index_aval])


def _aval_of(value: ir.Value) -> ShapedArray:
    return ShapedArray(value.type.shape, value.type.dtype)


def _static_steps(ctx: lowering.LoweringRuleContext, jaxpr: ClosedJaxpr, num_carry: int,
                  reverse: bool, n: int, consts: Sequence[ir.Value], carry: Sequence[ir.Value],
                  xs: Sequence[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
    """`n` body calls on static slices of `xs` (leading axis `n`); returns the carry and the
    ys stacked (in xs' order)."""
    ys_steps = []
    carry = list(carry)
    for step in range(n):
        i = n - step - 1 if reverse else step
        x = _emit(ctx, lambda *vs: [slicing.index_in_dim(v, i, keepdims=False) for v in vs],
                  xs)
        outs = lowering.call_jaxpr(ctx, "closed_call", jaxpr, [*consts, *carry, *x])
        carry, y = outs[:num_carry], outs[num_carry:]
        ys_steps.append(y)
    if reverse:
        ys_steps.reverse()
    stacked = [_emit(ctx, lambda *vs: [structural.concatenate(
        [structural.expand_dims(v, (0,)) for v in vs], 0)], column)[0]
        for column in zip(*ys_steps, strict=True)] if ys_steps else []
    return carry, stacked


def _empty(ctx: lowering.LoweringRuleContext, shape: Sequence[int], aval: ShapedArray
           ) -> ir.Value:
    return lowering.full(ctx.builder, 0, ShapedArray((*shape, *aval.shape), aval.dtype))


def _scan_lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value, reverse: bool,
                   length: int, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                   unroll: int) -> list[ir.Value]:
    consts, carry = list(args[:num_consts]), list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])
    y_avals = jaxpr.out_avals[num_carry:]
    num_trips, remainder = (0, length) if unroll == 0 else divmod(length, unroll)
    if unroll != 1 and num_trips == 1 and remainder == 0:
        # One trip of `unroll` steps: JAX unrolls it all, without a loop.
        num_trips, remainder = 0, length
    xs_rem: list[ir.Value] = []
    if unroll == 1:
        xss = xs
        yss = [_empty(ctx, (length,), a) for a in y_avals]
    else:
        if remainder:
            split = remainder if reverse else num_trips * unroll
            pieces = [_emit(ctx, lambda v: [slicing.slice_in_dim(v, 0, split),
                                            slicing.slice_in_dim(v, split, None)], [x])
                      for x in xs]
            heads, tails = [p[0] for p in pieces], [p[1] for p in pieces]
            xs, xs_rem = (tails, heads) if reverse else (heads, tails)
        if num_trips:
            xss = [_emit(ctx, lambda v: [structural.reshape(
                v, (num_trips, unroll, *v.shape[1:]))], [x])[0] for x in xs]
            yss = [_empty(ctx, (num_trips, unroll), a) for a in y_avals]
        else:
            xss = xs
            yss = [_empty(ctx, (num_trips * unroll,), a) for a in y_avals]
    if num_trips:
        carry, yss = _while_loop(ctx, jaxpr, num_carry, reverse, unroll, num_trips, consts,
                                 carry, xss, yss)
    ys = yss
    if unroll != 1 and num_trips != 0:
        ys = [_emit(ctx, lambda v: [structural.reshape(v, (num_trips * unroll,
                                                           *v.shape[2:]))], [y])[0]
              for y in yss]
    if remainder:
        carry, ys_rem = _static_steps(ctx, jaxpr, num_carry, reverse, remainder, consts,
                                      carry, xs_rem)
        pairs = zip(ys_rem, ys, strict=True) if reverse else zip(ys, ys_rem, strict=True)
        ys = [_emit(ctx, lambda a, b: [structural.concatenate([a, b], 0)], pair)[0]
              for pair in pairs]
    return [*carry, *ys]


def _while_loop(ctx: lowering.LoweringRuleContext, jaxpr: ClosedJaxpr, num_carry: int,
                reverse: bool, unroll: int, num_trips: int, consts: list[ir.Value],
                carry: list[ir.Value], xss: list[ir.Value], yss: list[ir.Value]
                ) -> tuple[list[ir.Value], list[ir.Value]]:
    """The `stablehlo.while` running `num_trips` trips; its operands are, as in JAX, the
    loop-invariant xs and consts, the counter, the carry and the ys being written."""
    counter = ctx.builder.constant(0, np.dtype(np.int32))
    operands = [*xss, *consts, counter, *carry, *yss]
    types = [v.type for v in operands]
    num_invariant = len(xss) + len(consts)

    cond_region, cb = ir.new_region(types)
    cond_ctx = ctx.replace(builder=cb)
    i = cond_region.block.args[num_invariant]
    cb.ret(_emit(cond_ctx, lambda i: [i < num_trips], [i]))

    body_region, bb = ir.new_region(types)
    body_ctx = ctx.replace(builder=bb)
    loop_args = list(body_region.block.args)
    b_xss, b_consts = loop_args[:len(xss)], loop_args[len(xss):num_invariant]
    i = loop_args[num_invariant]
    b_carry = loop_args[num_invariant + 1:num_invariant + 1 + len(carry)]
    b_yss = loop_args[num_invariant + 1 + len(carry):]
    index = _emit(body_ctx, lambda i: [num_trips - i - 1], [i])[0] if reverse else i
    x = [lowering.call_jaxpr(body_ctx, "dynamic_index_in_dim", _index_jaxpr(_aval_of(v)),
                             [v, index])[0] for v in b_xss]
    if unroll == 1:
        outs = lowering.call_jaxpr(body_ctx, "closed_call", jaxpr, [*b_consts, *b_carry, *x])
        new_carry, y = outs[:num_carry], outs[num_carry:]
    else:
        new_carry, y = _static_steps(body_ctx, jaxpr, num_carry, reverse, unroll, b_consts,
                                     b_carry, x)
    new_yss = [lowering.call_jaxpr(body_ctx, "dynamic_update_index_in_dim",
                                   _update_jaxpr(_aval_of(ys), _aval_of(v)),
                                   [ys, v, index])[0] for ys, v in zip(b_yss, y, strict=True)]
    next_i = _emit(body_ctx, lambda i: [i + 1], [i])[0]
    bb.ret([*b_xss, *b_consts, next_i, *new_carry, *new_yss])

    results = ctx.builder.op("stablehlo.while", operands, types,
                             regions=[cond_region, body_region]).results
    return (list(results[num_invariant + 1:num_invariant + 1 + len(carry)]),
            list(results[num_invariant + 1 + len(carry):]))


lowering.register_lowering(scan_p, _scan_lowering)


# ---------------------------------------------------------------------------------------------
# Reverse-mode rules of `scan`: partial evaluation (linearize, vjp, grad), the rule splitting
# a scan inside `checkpoint`, and transposition.
#
# - Partial evaluation splits a scan with some unknown operands (tangents, under linearize)
#   into a known scan, run now, and an unknown scan, staged. Which carries are unknown is a
#   fixpoint: a carry whose output depends on an unknown value is unknown from the start. The
#   known scan returns its outputs and the residuals the unknown body reads, stacked along the
#   scan axis; residuals that are known consts or xs are passed to the unknown scan directly
#   (not returned again), and residuals computed from consts alone are hoisted out of the loop
#   and become consts of the unknown scan, as JAX does. The unknown scan's operands are
#   `[loop-invariant residuals, unknown consts, unknown carries, unknown xs, stacked
#   residuals]`.
# - Transposition runs a scan in the opposite direction: the loop-invariant residuals stay
#   consts; the cotangents of the linear consts (accumulated over the iterations) and of the
#   carries are its carries; the cotangents of the ys and the stacked residuals are its xs;
#   the cotangents of the linear xs are its ys.
# - Under `checkpoint`, `partial_eval_jaxpr_custom` splits the body by the policy; the known
#   scan returns the saved residuals stacked, the staged scan takes every operand again.


def _split3(items: Sequence[Any], num_consts: int, num_carry: int
            ) -> tuple[list[Any], list[Any], list[Any]]:
    """`items` split as a scan's operands: (consts, carries, xs)."""
    items = list(items)
    return (items[:num_consts], items[num_consts:num_consts + num_carry],
            items[num_consts + num_carry:])



def _or(xs: Sequence[bool], ys: Sequence[bool]) -> list[bool]:
    return list(map(operator.or_, xs, ys))


# ---------------------------------------------------------------------------------------------
# Partial evaluation (linearize): a known scan computing the known outputs and the
# residuals, and a staged unknown scan reading them.

def _hoist_loop_invariants(known: ClosedJaxpr, consts: Sequence[Any], num_res: int
                           ) -> tuple[ClosedJaxpr, list[Any], list[bool], list[Any]]:
    """Moves what the known body computes from its consts alone out of the loop, as JAX does:
    it runs now, on the current trace, once.

    Args:
      known: the known body, from known consts, carries and xs to its outputs followed by
        `num_res` residuals.
      consts: the values of its consts.
    Returns:
      The loop body (without the hoisted residuals; its leading inputs are new consts), the
      values of those consts, which residuals were hoisted, and the hoisted residuals.
    """
    num_loop_ins = len(known.in_avals) - len(consts)
    linear = [False] * len(consts) + [True] * num_loop_ins
    body = pe.partial_eval_linear(known, [*consts, *[None] * num_loop_ins], linear)
    jaxpr = body.jaxpr
    const_values = dict(zip(jaxpr.constvars, body.consts, strict=True))
    num_outs = len(jaxpr.outvars) - num_res
    hoisted, hoisted_values = [], []
    for atom in jaxpr.outvars[num_outs:]:
        if isinstance(atom, Literal):
            hoisted.append(True)
            hoisted_values.append(atom.val)
        elif atom in const_values:
            hoisted.append(True)
            hoisted_values.append(const_values[atom])
        else:
            hoisted.append(False)
    res_outvars = [v for v, h in zip(jaxpr.outvars[num_outs:], hoisted, strict=True) if not h]
    jaxpr = jaxpr.replace(outvars=[*jaxpr.outvars[:num_outs], *res_outvars])
    constvars = _jax_constvar_order(jaxpr)
    loop = pe.convert_constvars_jaxpr(jaxpr.replace(constvars=constvars))
    loop, used = pe.dce_jaxpr(loop, True,
                              instantiate=[False] * len(constvars) + [True] * num_loop_ins)
    loop_consts = [const_values[v] for v, u in zip(constvars, used, strict=False) if u]
    return (pe.close_jaxpr(pe.name_unused_outputs(loop)), loop_consts, hoisted,
            hoisted_values)


class _Node:
    """A value in the dependency graph `_jax_constvar_order` sorts."""

    __slots__ = ("parents", "constvar")

    def __init__(self, parents: Sequence[_Node] = (), constvar: Var | None = None) -> None:
        self.parents = parents
        self.constvar = constvar


def _toposort(end_nodes: Sequence[_Node]) -> list[_Node]:
    """JAX's topological sort (`jaxlib.utils.topological_sort` over `parents`): parents
    before children, ties broken as its depth-first counting leaves them."""
    unique = list({id(n): n for n in end_nodes}.values())
    child_counts: dict[int, int] = {}
    stack = list(unique)
    while stack:
        node = stack.pop()
        if id(node) in child_counts:
            child_counts[id(node)] += 1
        else:
            child_counts[id(node)] = 1
            stack.extend(node.parents)
    for node in unique:
        child_counts[id(node)] -= 1
    ordered = []
    childless = [n for n in unique if child_counts[id(n)] == 0]
    while childless:
        node = childless.pop()
        ordered.append(node)
        for parent in node.parents:
            if child_counts[id(parent)] == 1:
                childless.append(parent)
            else:
                child_counts[id(parent)] -= 1
    return ordered[::-1]


def _jax_constvar_order(jaxpr: Jaxpr) -> list[Var]:
    """`jaxpr`'s constvars in the order JAX's partial evaluation lists the consts of the
    jaxpr it builds from tracers: a topological sort of the values from the inputs and
    outputs, where every use of a constant is a node of its own (JAX instantiates a
    constant anew for each equation reading it)."""
    constvars = set(jaxpr.constvars)
    env: dict[Var, _Node] = {v: _Node() for v in jaxpr.invars}

    def use(atom: Any) -> _Node:
        if isinstance(atom, Literal):
            return _Node()
        if atom in constvars:
            return _Node(constvar=atom)
        return env[atom]

    for eqn in jaxpr.eqns:
        parents = [use(a) for a in eqn.invars]
        env.update((v, _Node(parents)) for v in eqn.outvars)
    outs = [use(a) for a in jaxpr.outvars]
    ordered = _toposort([*[env[v] for v in jaxpr.invars], *outs])
    found = list({n.constvar: None for n in ordered if n.constvar is not None})
    # Constvars nothing reaches go last (dead-code elimination drops them).
    return found + [v for v in jaxpr.constvars if v not in set(found)]


def _unknown_carries(jaxpr: ClosedJaxpr, num_carry: int, const_uk: list[bool],
                     carry_uk: list[bool], xs_uk: list[bool], forwardable: tuple[bool, ...]
                     ) -> tuple[list[bool], tuple]:
    """The fixpoint of which carries are unknown, and the body split for it."""
    num_ys = len(jaxpr.out_avals) - num_carry
    for _ in range(1 + num_carry):
        split = pe.split_jaxpr(jaxpr, tuple(const_uk + carry_uk + xs_uk),
                               tuple(carry_uk + [False] * num_ys), forwardable, "loop")
        carry_uk_out = list(split[2][:num_carry])
        if carry_uk_out == carry_uk:
            return carry_uk, split
        carry_uk = _or(carry_uk, carry_uk_out)
    raise AssertionError("scan partial evaluation: the carry fixpoint was not reached")


def _scan_partial_eval(trace: ad.TangentStagingTrace, args: Sequence[Any], params: dict
                       ) -> list[Any]:
    """Splits a scan some of whose operands are unknown: the known scan runs on the parent
    trace, the unknown one is staged into `trace` (see the module docstring)."""
    jaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    unknowns = [trace._is_unknown(a) for a in args]
    const_uk, carry_uk, xs_uk = _split3(unknowns, num_consts, num_carry)
    # As JAX, residuals are never read off carries (their value changes every iteration)
    # nor NumPy arrays (which would become constants of the staged jaxpr).
    forwardable = tuple((i < num_consts or i >= num_consts + num_carry)
                        and not isinstance(a, np.ndarray) for i, a in enumerate(args))
    carry_uk, (known, unknown, out_unknowns, sources) = _unknown_carries(
        jaxpr, num_carry, const_uk, carry_uk, xs_uk, forwardable)
    unknowns = const_uk + carry_uk + xs_uk
    known_ins, unknown_ins = pe.partition_list(unknowns, args)
    num_known_consts = num_consts - sum(const_uk)
    num_known_carry = num_carry - sum(carry_uk)
    num_known_outs = len(out_unknowns) - sum(out_unknowns)
    num_computed = sum(kind == "res" for kind, _ in sources)

    with core.set_current_trace(trace.parent_trace):
        loop, loop_consts, hoisted, hoisted_values = _hoist_loop_invariants(
            known, known_ins[:num_known_consts], num_computed)
        known_outs: list[Any] = []
        if loop.jaxpr.outvars or pe.jaxpr_has_effects(loop.jaxpr):
            known_outs = scan_p.bind(
                *loop_consts, *known_ins[num_known_consts:], **dict(
                    params, jaxpr=loop, num_consts=len(loop_consts),
                    num_carry=num_known_carry))
    known_outs, stacked = known_outs[:num_known_outs], iter(known_outs[num_known_outs:])
    computed = iter(pe.merge_lists(hoisted, list(stacked), hoisted_values))

    # Each residual is loop-invariant (a const of the unknown scan) or extensive (an x).
    residuals, extensive = [], []
    first_known_x = num_known_consts + num_known_carry
    for kind, where in sources:
        if kind == "const":
            residuals.append(where)
            extensive.append(False)
        elif kind == "in":
            residuals.append(known_ins[where])
            extensive.append(where >= first_known_x)
        else:
            is_hoisted = hoisted[where]
            residuals.append(next(computed))
            extensive.append(not is_hoisted)
    invariant_res, extensive_res = pe.partition_list(extensive, residuals)
    num_res = len(residuals)
    res_vars, in_vars = unknown.jaxpr.invars[:num_res], unknown.jaxpr.invars[num_res:]
    invariant_vars, extensive_vars = pe.partition_list(extensive, res_vars)
    unknown_body = ClosedJaxpr(
        unknown.jaxpr.replace(invars=[*invariant_vars, *in_vars, *extensive_vars]),
        unknown.consts)
    staged_params = dict(params, jaxpr=unknown_body,
                         num_consts=len(invariant_res) + sum(const_uk), num_carry=sum(carry_uk))
    unknown_outs = staging.DynamicJaxprTrace.process_primitive(
        trace, scan_p, [*invariant_res, *unknown_ins, *extensive_res], staged_params)
    return pe.merge_lists(list(out_unknowns), known_outs, unknown_outs)


ad.partial_eval_rules[scan_p] = _scan_partial_eval


# ---------------------------------------------------------------------------------------------
# Transposition: a scan in the opposite direction.

@pe.transform_cache
def _transpose_body(jaxpr: ClosedJaxpr, num_carry: int, consts_lin: tuple[bool, ...],
                    xs_lin: tuple[bool, ...]) -> ClosedJaxpr:
    """The body of the transposed scan.

    `jaxpr` is linear in its carries and in the consts and xs flagged linear. The result maps
    `[non-linear consts, const cotangents, carry cotangents, y cotangents, non-linear xs]` to
    `[const cotangents, carry cotangents, x cotangents of the linear xs]`; it first
    recomputes what does not depend on the linear inputs, then transposes the rest.
    """
    num_consts = len(consts_lin)
    const_avals, _, x_avals = _split3(jaxpr.in_avals, num_consts, num_carry)
    in_linear = [*consts_lin, *[True] * num_carry, *xs_lin]
    nonlinear_consts, linear_consts = pe.partition_list(consts_lin, const_avals)
    nonlinear_xs, _ = pe.partition_list(xs_lin, x_avals)
    # The carries' cotangents are those of the carry outputs, which come first.
    ct_avals = [ad.tangent_aval(a) for a in [*linear_consts, *jaxpr.out_avals]]
    num_linear_consts = len(linear_consts)

    def transposed(*args: Any) -> list[Any]:
        ires = args[:len(nonlinear_consts)]
        cts = args[len(nonlinear_consts):len(nonlinear_consts) + len(ct_avals)]
        eres = args[len(nonlinear_consts) + len(ct_avals):]
        nonlinear = pe.merge_lists(in_linear, [*ires, *eres], [None] * sum(in_linear))
        linear_jaxpr = pe.partial_eval_linear(jaxpr, nonlinear, in_linear)
        body = linear_jaxpr.jaxpr
        # The consts' cotangents accumulate onto the incoming ones, which are written
        # first, as JAX's accumulators start from them: listing the consts' inputs as
        # leading outputs makes the backward pass seed them before anything else.
        seeded = body.replace(outvars=[*body.invars[:num_linear_consts], *body.outvars])
        undefined = [ad.UndefinedPrimal(v.aval) for v in body.invars]
        in_cts = ad.backward_pass(seeded, linear_jaxpr.consts, undefined, list(cts))
        return [ad.instantiate_zeros(ct) for ct in in_cts]

    closed = staging.trace_to_jaxpr(transposed, [*nonlinear_consts, *ct_avals, *nonlinear_xs])
    return ClosedJaxpr(pe.name_unused_outputs(closed.jaxpr), closed.consts)


def _scan_transpose(cts: Sequence[Any], *args: Any, reverse: bool, length: int,
                    jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, unroll: int
                    ) -> list[Any]:
    """Cotangents of a scan's linear operands: a scan in the opposite direction carrying
    the consts' and carries' cotangents and producing the linear xs' as ys."""
    linear = [ad.is_undefined_primal(a) for a in args]
    consts, carry, xs = _split3(args, num_consts, num_carry)
    consts_lin, _, xs_lin = _split3(linear, num_consts, num_carry)
    ires, linear_consts = pe.partition_list(consts_lin, consts)
    eres, _ = pe.partition_list(xs_lin, xs)
    # Every carry is transposed as linear: one that is a value here (a zero the derivative
    # instantiated) simply gets no cotangent.
    ct_carry, ct_ys = list(cts[:num_carry]), list(cts[num_carry:])
    ct_ys = [ad.instantiate_zeros(ct) for ct in ct_ys]
    ct_carry = [ad.instantiate_zeros(ct) for ct in ct_carry]
    ct_consts = [ad.zeros_like_aval(ad.tangent_aval(c.aval)) for c in linear_consts]
    body = _transpose_body(jaxpr, num_carry, tuple(consts_lin), tuple(xs_lin))
    outs = scan_p.bind(*ires, *ct_consts, *ct_carry, *ct_ys, *eres, reverse=not reverse,
                       length=length, jaxpr=body, num_consts=len(ires),
                       num_carry=len(ct_consts) + num_carry, unroll=unroll)
    ct_consts_out, ct_init, ct_xs = _split3(outs, len(ct_consts), num_carry)
    ct_consts_out, ct_xs = iter(ct_consts_out), iter(ct_xs)
    result = [next(ct_consts_out) if lin else None for lin in consts_lin]
    result += [ct if ad.is_undefined_primal(c) else None
               for c, ct in zip(carry, ct_init, strict=True)]
    result += [next(ct_xs) if lin else None for lin in xs_lin]
    return result


ad.primitive_transposes[scan_p] = _scan_transpose


# ---------------------------------------------------------------------------------------------
# Checkpoint: a scan inside a function `checkpoint` splits by its policy.

def _scan_partial_eval_custom(saveable: Any, unks_in: Sequence[bool], inst_in: Sequence[bool],
                              eqn: JaxprEqn
                              ) -> tuple[JaxprEqn | None, JaxprEqn, list[bool], list[bool],
                                         list[Var]]:
    """`partial_eval_jaxpr_custom` rule: the known scan runs the known part of the body and
    returns the residuals the policy saves, stacked; the staged scan takes every operand (the
    known ones too, so that what is not saved is recomputed) and the residuals as xs."""
    params = eqn.params
    jaxpr, length = params["jaxpr"], params["length"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    num_ys = len(jaxpr.out_avals) - num_carry
    const_uk, carry_uk, xs_uk = _split3(unks_in, num_consts, num_carry)
    for _ in range(1 + num_carry):
        unknowns = const_uk + carry_uk + xs_uk
        known, staged, unks_out, inst_out, num_res = pe.partial_eval_jaxpr_custom(
            jaxpr.jaxpr, unknowns, True, carry_uk + [False] * num_ys, True, saveable)
        carry_uk_out = unks_out[:num_carry]
        if carry_uk_out == carry_uk:
            break
        carry_uk = _or(carry_uk, carry_uk_out)
    else:
        raise AssertionError("scan checkpoint rule: the carry fixpoint was not reached")

    # The residuals are extensive: the staged body reads them as its last xs.
    res_vars = staged.invars[:num_res]
    staged = staged.replace(invars=[*staged.invars[num_res:], *res_vars])
    stacked = [Var(_unmapped_aval(length, v.aval)) for v in res_vars]
    ins_known, _ = pe.partition_list(unknowns, eqn.invars)
    outs_known, _ = pe.partition_list(unks_out, eqn.outvars)
    eqn_known = None
    if known.outvars or pe.jaxpr_has_effects(known):
        known_params = dict(params, jaxpr=ClosedJaxpr(pe.name_unused_outputs(known),
                                                      jaxpr.consts),
                            num_consts=num_consts - sum(const_uk),
                            num_carry=num_carry - sum(carry_uk))
        eqn_known = eqn.replace(invars=ins_known, outvars=[*outs_known, *stacked],
                                params=known_params)
    _, outs_staged = pe.partition_list(inst_out, eqn.outvars)
    staged_params = dict(params, jaxpr=ClosedJaxpr(pe.name_unused_outputs(staged),
                                                   jaxpr.consts))
    eqn_staged = eqn.replace(invars=[*eqn.invars, *stacked], outvars=outs_staged,
                             params=staged_params)
    # Known operands the staged scan reads that the staged side does not have yet.
    new_inst = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(v, Var) and not inst]
    return eqn_known, eqn_staged, list(unks_out), list(inst_out), [*new_inst, *stacked]


pe.partial_eval_jaxpr_custom_rules[scan_p] = _scan_partial_eval_custom
