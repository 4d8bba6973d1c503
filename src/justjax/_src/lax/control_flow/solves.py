"""`lax.custom_linear_solve` and `lax.custom_root`: solves whose derivatives come from implicit
differentiation at the solution rather than from differentiating the solver.

`custom_linear_solve` is a primitive, `linear_solve_p` (printed `custom_linear_solve`), holding
four closed jaxprs (`matvec`, its transpose `vecmat`, `solve`, `transpose_solve`) whose
closed-over values are its leading operands, counted per jaxpr by `const_lengths`, as in JAX.
It evaluates (and lowers to) `solve`; its jvp solves again for `A^-1 (b' - A' x)`; it is
linear in `b`, transposing to a solve with the transposed jaxprs. `custom_root` is written
on top of it with `custom_jvp`, as JAX's.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from justjax._src.pytrees import tree_util
from justjax._src.core import core
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr, jaxpr_as_fun
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax.control_flow import common

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


class _LinearSolveTuple(NamedTuple):
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> "_LinearSolveTuple":
        """The tuple of the transposed problem: matvec and vecmat, solve and transpose_solve
        swap."""
        return type(self)(self.vecmat, self.matvec, self.transpose_solve, self.solve)


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)


def _split(args: Sequence[Any], const_lengths: _LinearSolveTuple
           ) -> tuple[_LinearSolveTuple, list[Any]]:
    """The operands as (consts per jaxpr, b)."""
    groups, start = [], 0
    for length in const_lengths:
        groups.append(list(args[start:start + length]))
        start += length
    return _LinearSolveTuple(*groups), list(args[start:])


def _flatten(groups: Sequence[Sequence[Any]]) -> list[Any]:
    return [x for group in groups for x in group]


def _check_shapes(func_name: str, actual: Sequence[Any], expected: Sequence[ShapedArray]
                  ) -> None:
    actual_shapes = [core.get_aval(x).shape for x in actual]
    expected_shapes = [a.shape for a in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match b, got {actual_shapes} and "
                         f"{expected_shapes}")


def _shape_checked(fun: Callable, name: str, b_avals: Sequence[ShapedArray], has_aux: bool
                   ) -> Callable:
    def checked(x: Any) -> Any:
        out = fun(x)
        y = out[0] if has_aux else out
        _check_shapes(name, tree_util.tree_leaves(y), b_avals)
        return out

    return checked


def _check_tree(func_name: str, out_tree: Any, tree: Any, has_aux: bool) -> None:
    if has_aux:
        children = tree_util.treedef_children(out_tree)
        if len(children) != 2:
            raise TypeError(f"{func_name}() returned a value of structure {out_tree}, expected "
                            "a pair (solution, aux) with has_aux=True")
        out_tree = children[0]
    if out_tree != tree:
        raise TypeError(f"{func_name}() output pytree structure must match b, got {out_tree} "
                        f"and {tree}.")


def _transpose_fun(matvec: ClosedJaxpr, consts: Sequence[Any], tree: Any,
                   b_avals: Sequence[ShapedArray]) -> Callable:
    """`vecmat`, the transpose of the linear `matvec` (a pytree function of b's structure),
    by transposing its jaxpr."""
    def vecmat(ct: Any) -> Any:
        ct_flat = tree_util.tree_leaves(ct)
        undefined = [ad.UndefinedPrimal(a) for a in b_avals]
        cts = ad.backward_pass(matvec.jaxpr, matvec.consts, [*consts, *undefined], ct_flat)
        out = [ad.instantiate_zeros(c) if type(c) is ad.Zero else c
               for c in cts[len(consts):]]
        return tree_util.tree_unflatten(tree, out)

    return vecmat


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """A matrix-free linear solve whose derivatives are defined implicitly at the solution.

    Args:
      matvec: the linear map `x -> A x` (differentiable in what it closes over).
      b: the right-hand side, any pytree of arrays.
      solve: `solve(matvec, b) -> x` with `matvec(x) == b` (need not be differentiable).
      transpose_solve: `transpose_solve(vecmat, b)` for the transposed map (computed
        automatically); needed for reverse mode unless `symmetric`.
      symmetric: whether `matvec` is its own transpose (then `solve` also solves the
        transposed problem).
      has_aux: whether `solve` and `transpose_solve` return `(x, aux)`.
    Returns:
      `solve(matvec, b)` (and its aux with `has_aux`).
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_flat, tree = tree_util.tree_flatten(b)
    b_avals = [core.get_aval(x) for x in b_flat]
    in_tree = tree_util.tree_structure((b,))

    matvec_traced = common.trace_fun(_shape_checked(matvec, "matvec", b_avals, False),
                                     in_tree, b_avals, "custom_linear_solve")
    _check_tree("matvec", matvec_traced.out_tree, tree, False)
    solve_traced = common.trace_fun(
        _shape_checked(lambda x: solve(matvec, x), "solve", b_avals, has_aux), in_tree,
        b_avals, "custom_linear_solve solve")
    _check_tree("solve", solve_traced.out_tree, tree, has_aux)

    if transpose_solve is None:
        vecmat_jaxpr = tr_solve_jaxpr = None
        vecmat_consts: list[Any] = []
        tr_solve_consts: list[Any] = []
    else:
        if symmetric:
            vecmat = matvec
            vecmat_jaxpr, vecmat_consts = matvec_traced.jaxpr, matvec_traced.consts
        else:
            vecmat = _transpose_fun(matvec_traced.jaxpr, matvec_traced.consts, tree, b_avals)
            traced = common.trace_fun(vecmat, in_tree, b_avals,
                                      "custom_linear_solve transpose_solve")
            vecmat_jaxpr, vecmat_consts = traced.jaxpr, traced.consts
        tr_traced = common.trace_fun(
            _shape_checked(lambda x: transpose_solve(vecmat, x), "transpose_solve", b_avals,
                           has_aux), in_tree, b_avals, "custom_linear_solve transpose_solve")
        _check_tree("transpose_solve", tr_traced.out_tree, tree, has_aux)
        tr_solve_jaxpr, tr_solve_consts = tr_traced.jaxpr, tr_traced.consts

    all_consts = [matvec_traced.consts, vecmat_consts, solve_traced.consts, tr_solve_consts]
    const_lengths = _LinearSolveTuple(*[len(c) for c in all_consts])
    jaxprs = _LinearSolveTuple(matvec_traced.jaxpr, vecmat_jaxpr, solve_traced.jaxpr,
                               tr_solve_jaxpr)
    out_flat = linear_solve_p.bind(*_flatten(all_consts), *b_flat,
                                   const_lengths=const_lengths, jaxprs=jaxprs)
    return tree_util.tree_unflatten(solve_traced.out_tree, out_flat)


def _linear_solve_abstract_eval(*avals: ShapedArray, const_lengths: _LinearSolveTuple,
                                jaxprs: _LinearSolveTuple) -> list[ShapedArray]:
    b_avals = list(avals[sum(const_lengths):])
    num_aux = len(jaxprs.solve.out_avals) - len(jaxprs.matvec.out_avals)
    aux = list(jaxprs.solve.out_avals[len(jaxprs.solve.out_avals) - num_aux:]) if num_aux else []
    return b_avals + aux


def _linear_solve_impl(*args: Any, const_lengths: _LinearSolveTuple,
                       jaxprs: _LinearSolveTuple) -> list[Any]:
    consts, b = _split(args, const_lengths)
    return jaxpr_as_fun(jaxprs.solve)(*consts.solve, *b)


linear_solve_p.def_abstract_eval(_linear_solve_abstract_eval)
linear_solve_p.def_impl(_linear_solve_impl)
lowering.register_lowering(linear_solve_p, lowering.lower_fun(_linear_solve_impl))


def _matvec_tangent(matvec: ClosedJaxpr, consts: Sequence[Any], consts_dot: Sequence[Any],
                    x: Sequence[Any]) -> list[Any]:
    """`A' x`: the tangent of `matvec(consts, x)` in its consts alone."""
    nonzeros = [type(t) is not ad.Zero for t in consts_dot] + [False] * len(x)
    jvp_closed, _ = pe.jvp_jaxpr(matvec, nonzeros, instantiate=True)
    nz_tangents = [t for t in consts_dot if type(t) is not ad.Zero]
    outs = eval_jaxpr(jvp_closed.jaxpr, jvp_closed.consts, *consts, *x, *nz_tangents)
    return list(outs[len(matvec.out_avals):])


def _linear_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                      const_lengths: _LinearSolveTuple, jaxprs: _LinearSolveTuple
                      ) -> tuple[list[Any], list[Any]]:
    """A x = b gives A' x + A x' = b', so x' = A^-1 (b' - A' x)."""
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    x = linear_solve_p.bind(*primals, **params)
    consts, _ = _split(primals, const_lengths)
    consts_dot, b_dot = _split(tangents, const_lengths)
    x_leaves = x[:len(b_dot)]
    if all(type(t) is ad.Zero for t in consts_dot.matvec):
        rhs = b_dot
    else:
        matvec_dot = _matvec_tangent(jaxprs.matvec, consts.matvec, consts_dot.matvec, x_leaves)
        rhs = [ad.add_tangents(bd, -md) for bd, md in zip(b_dot, matvec_dot, strict=True)]
    rhs = [ad.instantiate_zeros(r) for r in rhs]
    x_dot = linear_solve_p.bind(*_flatten(consts), *rhs, **params)
    aux_dot = [ad.Zero(core.get_aval(a).to_tangent_aval()) for a in x[len(b_dot):]]
    return x, list(x_dot[:len(b_dot)]) + aux_dot


ad.primitive_jvps[linear_solve_p] = _linear_solve_jvp


def _linear_solve_transpose(cts: Sequence[Any], *args: Any, const_lengths: _LinearSolveTuple,
                            jaxprs: _LinearSolveTuple) -> list[Any]:
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    consts, b = _split(args, const_lengths)
    if any(ad.is_undefined_primal(c) for group in consts for c in group):
        raise NotImplementedError("custom_linear_solve is not linear in what its functions "
                                  "close over")
    x_cts = cts[:len(b)]
    if any(type(ct) is not ad.Zero for ct in cts[len(b):]):
        raise NotImplementedError("cotangents of custom_linear_solve's aux outputs")
    x_cts = [ad.instantiate_zeros(ct) for ct in x_cts]
    ct_b = linear_solve_p.bind(*_flatten(consts.transpose()), *x_cts,
                               const_lengths=const_lengths.transpose(),
                               jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(ct_b[:len(b)])


ad.primitive_transposes[linear_solve_p] = _linear_solve_transpose


def _batch_with_flags(jaxpr: ClosedJaxpr, axis_data: batching.AxisData,
                      batched: Sequence[bool], instantiate: Sequence[bool]
                      ) -> tuple[ClosedJaxpr, list[bool]]:
    """`jaxpr` batched at axis 0 of its `batched` inputs; the outputs in `instantiate` are
    batched (broadcast if need be), the others where they come out batched (at axis 0)."""
    in_dims = [0 if b else None for b in batched]
    out_dims = [0 if inst else batching.zero_if_mapped for inst in instantiate]
    batched_jaxpr, dims = batching.batch_jaxpr(jaxpr, axis_data, in_dims, out_dims)
    return batched_jaxpr, [d is not None for d in dims]


def _or(*flag_lists: Sequence[bool]) -> list[bool]:
    return [any(flags) for flags in zip(*flag_lists, strict=True)]


def _linear_solve_batch(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, const_lengths: _LinearSolveTuple,
                        jaxprs: _LinearSolveTuple) -> tuple[list[Any], list[int | None]]:
    """Which parts of x and b are batched is a fixed point over the four jaxprs (a batched
    matvec batches x through solve, x batches b through matvec, ...), so that they agree;
    consts and b are then batched at axis 0 where needed, as in JAX."""
    consts, b = _split(vals, const_lengths)
    consts_dims, b_dims = _split(dims, const_lengths)
    consts_bat = _LinearSolveTuple(*[[d is not None for d in group] for group in consts_dims])
    matvec, vecmat, solve, solve_t = jaxprs
    num_x = len(matvec.out_avals)
    num_aux = len(solve.out_avals) - num_x
    orig_b_bat = [d is not None for d in b_dims]
    b_bat, x_bat = orig_b_bat, [False] * len(solve.out_avals)
    cache: dict[tuple, tuple[ClosedJaxpr, list[bool]]] = {}

    def _batch_flags(jaxpr: ClosedJaxpr, axis_data: batching.AxisData,
                     batched: Sequence[bool], instantiate: Sequence[bool]
                     ) -> tuple[ClosedJaxpr, list[bool]]:
        # One batched jaxpr per (jaxpr, flags): a symmetric solve's matvec and vecmat stay
        # one object, printed once as JAX prints it.
        key = (id(jaxpr), tuple(batched), tuple(instantiate))
        if key not in cache:
            cache[key] = _batch_with_flags(jaxpr, axis_data, batched, instantiate)
        return cache[key]

    for _ in range(2 + len(orig_b_bat) + len(solve.out_avals)):
        solve_batched, solve_x_bat = _batch_flags(solve, axis_data,
                                                  consts_bat.solve + b_bat, x_bat)
        vecmat_batched = None
        x_bat_out = solve_x_bat
        if vecmat is not None:
            vecmat_batched, vecmat_x_bat = _batch_flags(vecmat, axis_data,
                                                        consts_bat.vecmat + b_bat, b_bat)
            x_bat_out = _or(vecmat_x_bat + [True] * num_aux, solve_x_bat)
        x_bat_noaux = x_bat_out[:num_x]
        matvec_batched, matvec_b_bat = _batch_flags(matvec, axis_data,
                                                    consts_bat.matvec + x_bat_noaux, b_bat)
        solve_t_batched = None
        b_bat_out = _or(matvec_b_bat, orig_b_bat)
        if solve_t is not None:
            solve_t_batched, solve_t_bat = _batch_flags(
                solve_t, axis_data, consts_bat.transpose_solve + x_bat_noaux, x_bat_out)
            b_bat_out = _or(b_bat_out, solve_t_bat[:len(orig_b_bat)])
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:
        raise AssertionError("custom_linear_solve batching: no fixed point")
    batched_jaxprs = _LinearSolveTuple(matvec_batched, vecmat_batched, solve_batched,
                                       solve_t_batched)
    new_consts = [batching.moveaxis(x, d, 0) if d is not None else x
                  for x, d in zip(_flatten(consts), _flatten(consts_dims), strict=True)]
    new_b = [batching.bdim_at_front(x, d, axis_data.size) if now else x
             for x, d, now in zip(b, b_dims, b_bat, strict=True)]
    outs = linear_solve_p.bind(*new_consts, *new_b, const_lengths=const_lengths,
                               jaxprs=batched_jaxprs)
    return outs, [0 if bat else None for bat in solve_x_bat]


batching.primitive_batchers[linear_solve_p] = _linear_solve_batch


# ---------------------------------------------------------------------------------------------
# custom_root

def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """Finds a root of `f` with derivatives from the implicit function theorem.

    Args:
      f: the function whose root is sought; `f(x)` has `x`'s structure.
      initial_guess: the starting point, of `x`'s structure.
      solve: `solve(f, initial_guess) -> x` with `f(x) == 0` (need not be differentiable).
      tangent_solve: `tangent_solve(g, y) -> x` solving the linear `g(x) = y` (g is f's
        linearization at the root); e.g. `lambda g, y: y / g(1.0)` for scalars.
      has_aux: whether `solve` returns `(x, aux)`.
    Returns:
      The root (and aux with `has_aux`); derivatives flow through what `f` closes over.
    """
    from justjax._src.transformations.custom_derivatives import custom_jvp

    guess_flat, in_tree = tree_util.tree_flatten((initial_guess,))
    guess_avals = [core.get_aval(x) for x in guess_flat]
    out_tree = tree_util.tree_structure(initial_guess)
    f_traced = common.trace_fun(f, in_tree, guess_avals, "custom_root")
    if f_traced.out_tree != out_tree:
        raise TypeError(f"f() output pytree structure must match initial_guess, got "
                        f"{f_traced.out_tree} and {out_tree}.")
    # solve is traced with f's constants as its own, so that no value of an enclosing
    # transformation is closed over by the custom_jvp function below.
    solve_traced = common.trace_fun(lambda x: solve(f, x), in_tree, guess_avals,
                                    "custom_root solve")
    _check_tree("solve", solve_traced.out_tree, out_tree, has_aux)
    f_jaxpr, solve_jaxpr = f_traced.jaxpr, solve_traced.jaxpr
    num_f = len(f_traced.consts)

    @custom_jvp
    def root(*args: Any) -> Any:
        solve_consts, guess = args[num_f:-len(guess_flat) or None], args[-len(guess_flat):]
        outs = jaxpr_as_fun(solve_jaxpr)(*solve_consts, *guess)
        return tree_util.tree_unflatten(solve_traced.out_tree, outs)

    @root.defjvp
    def root_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        f_consts = list(primals[:num_f])
        out = root(*primals)
        solution = out[0] if has_aux else out
        sol_flat = tree_util.tree_leaves(solution)
        fun = jaxpr_as_fun(f_jaxpr)
        zeros = [ad.Zero(core.get_aval(x).to_tangent_aval()) for x in sol_flat]
        # rhs = (d f / d consts) consts' at the root.
        _, rhs = ad.jvp_flat(fun, [*f_consts, *sol_flat], [*tangents[:num_f], *zeros])

        def linearized(x: Any) -> Any:
            consts_zeros = [ad.Zero(core.get_aval(c).to_tangent_aval()) for c in f_consts]
            _, lin = ad.jvp_flat(fun, [*f_consts, *sol_flat],
                                 [*consts_zeros, *tree_util.tree_leaves(x)])
            return tree_util.tree_unflatten(out_tree, lin)

        delta = tangent_solve(linearized, tree_util.tree_unflatten(out_tree, rhs))
        solution_dot = tree_util.tree_map(lambda d: -d, delta)
        if has_aux:
            aux_dot = tree_util.tree_map(lambda a: a * 0, out[1])
            return out, (solution_dot, aux_dot)
        return out, solution_dot

    return root(*f_traced.consts, *solve_traced.consts, *guess_flat)
