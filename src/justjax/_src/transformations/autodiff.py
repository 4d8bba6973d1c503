"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian.

Thin pytree wrappers over the flat transforms in `_src/interpreters/ad.py`, with JAX's
argument checks and error messages.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import api_util, util
from justjax._src.pytrees import tree_util
from justjax._src.api import check_callable
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from justjax._src.interpreters import ad, batching, staging
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import elementwise, joining, structural
from justjax._src.numpy import array_creation, scalar_types
from justjax._src.runtime.array import from_numpy
from justjax._src.pytrees.tree_errors import equality_errors, keystr


def _dtype(x: Any) -> np.dtype:
    return np.dtype(getattr(x, "dtype", None) or core.get_aval(x).dtype)


def _tangent_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtypes.is_inexact(dtype) else dtypes.float0


class _OutputStore:
    """What a flattened function learned while being traced: its output structure and,
    with `has_aux`, the structure of its auxiliary output."""

    def __init__(self) -> None:
        self.out_tree: tree_util.PyTreeDef | None = None
        self.aux_tree: tree_util.PyTreeDef | None = None

    def aux(self, aux_leaves: Sequence[Any]) -> Any:
        return tree_util.tree_unflatten(self.aux_tree, aux_leaves)


def _flat_fun(fun: Callable, in_tree: tree_util.PyTreeDef, store: _OutputStore,
              has_aux: bool = False) -> Callable[..., Any]:
    """`fun` on flat leaves; with `has_aux` it returns `(out_leaves, aux_leaves)`."""
    def flat(*leaves: Any) -> Any:
        args = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("expected function with aux output to return a two-element "
                                f"tuple, but got type {type(out)} with value {out!r}")
            out, aux = out
            aux_leaves, store.aux_tree = tree_util.tree_flatten(aux)
        out_leaves, store.out_tree = tree_util.tree_flatten(out)
        for leaf in out_leaves:
            # JAX's text for outputs lacks the final period of its input check.
            _check_arg(leaf, ending="")
        return (out_leaves, aux_leaves) if has_aux else out_leaves
    return flat


# ---------------------------------------------------------------------------------------------
# Forward mode.

def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
        ) -> tuple[Any, ...]:
    """Jacobian-vector product of `fun` at `primals` along `tangents`.

    Args:
      fun: a function of arrays (or pytrees of arrays).
      primals: a tuple or list of the positional arguments.
      tangents: a tuple or list of the same structure: the direction.
      has_aux: `fun` returns `(output, aux)`; aux is returned undifferentiated.
    Returns:
      `(primals_out, tangents_out)`, plus `aux` when `has_aux`.
    """
    check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    primal_leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    tangent_leaves, tangent_tree = tree_util.tree_flatten(tuple(tangents))
    if in_tree != tangent_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {in_tree} whereas tangents "
                        f"have tree structure {tangent_tree}.")
    flat_tangents = []
    for p, t in zip(primal_leaves, tangent_leaves, strict=True):
        expected = _tangent_dtype(_dtype(p))
        if _dtype(t) != expected:
            raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must "
                            "be equal, or in case of int/bool primal dtype the tangent dtype "
                            f"must be float0.Got primal dtype {_dtype(p)} and so expected "
                            f"tangent dtype {expected}, but got tangent dtype {_dtype(t)} "
                            "instead.")
        if np.shape(p) != np.shape(t):
            raise ValueError("jvp called with different primal and tangent shapes;"
                             f"Got primal shape {np.shape(p)} and tangent shape as {np.shape(t)}")
        flat_tangents.append(ad.Zero(ad.tangent_aval(core.get_aval(p)))
                             if expected == dtypes.float0 else t)
    store = _OutputStore()
    flat = _flat_fun(fun, in_tree, store, has_aux)
    out_primals, out_tangents, *aux = ad.jvp_flat(flat, primal_leaves, flat_tangents,
                                                  has_aux=has_aux)
    result = (tree_util.tree_unflatten(store.out_tree, out_primals),
              tree_util.tree_unflatten(store.out_tree, out_tangents))
    if has_aux:
        return result + (store.aux(aux[0]),)
    return result


def linearize(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`fun(*primals)` and its linearization: a function of tangents, backed by a linear
    jaxpr whose constvars are the residuals computed once here.

    Returns:
      `(primals_out, f_jvp)`, plus `aux` when `has_aux`.
    """
    check_callable(fun)
    primal_leaves, in_tree = tree_util.tree_flatten(primals)
    store = _OutputStore()
    flat = _flat_fun(fun, in_tree, store, has_aux)
    out_primals, linear, *aux = ad.linearize_flat(flat, primal_leaves, has_aux=has_aux)
    out_tree = store.out_tree
    in_avals = tuple(core.get_aval(p) for p in primal_leaves)
    # A pytree whose leaves are the residuals, as JAX's: it passes through jit and vmap.
    f_jvp = tree_util.Partial(_Linearized(linear.jaxpr, in_tree, out_tree, in_avals),
                              list(linear.consts))
    f_jvp.linear_jaxpr = linear  # what the linearization is, for inspection
    result = (tree_util.tree_unflatten(out_tree, out_primals), f_jvp)
    if has_aux:
        return result + (store.aux(aux[0]),)
    return result


class _Linearized:
    """The function `linearize` returns, applied to its residuals first (held by the
    `Partial` wrapping it) and then to tangents like the primals."""

    def __init__(self, jaxpr: Any, in_tree: tree_util.PyTreeDef, out_tree: tree_util.PyTreeDef,
                 in_avals: tuple[ShapedArray, ...]) -> None:
        self.jaxpr, self.in_tree, self.out_tree, self.in_avals = jaxpr, in_tree, out_tree, in_avals

    def __call__(self, residuals: list[Any], *tangents: Any) -> Any:
        tangent_leaves, tangent_tree = tree_util.tree_flatten(tangents)
        if tangent_tree != self.in_tree:
            raise TypeError(f"expected {self.in_tree}, got {tangent_tree}")
        for primal_aval, tangent in zip(self.in_avals, tangent_leaves, strict=True):
            expected = ad.tangent_aval(primal_aval)
            got = core.get_aval(tangent)
            if got.shape != expected.shape or got.dtype != expected.dtype:
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values:\nGot tangent aval {got} for primal aval "
                    f"{primal_aval} but expected {expected}.")
        outs = eval_jaxpr(self.jaxpr, residuals, *tangent_leaves)
        return tree_util.tree_unflatten(self.out_tree, outs)


# ---------------------------------------------------------------------------------------------
# Reverse mode.

class VJPFunction:
    """The pullback `jax.vjp` returns: maps an output cotangent to a tuple of input ones.
    It is a pytree whose leaves are the residuals, as JAX's: it passes through jit and vmap."""

    def __init__(self, fun_name: str, linear: ClosedJaxpr, in_tree: tree_util.PyTreeDef,
                 out_tree: tree_util.PyTreeDef, out_avals: tuple[ShapedArray, ...]) -> None:
        self._fun_name = fun_name
        self._linear = linear
        self._in_tree = in_tree
        self._out_tree = out_tree
        self._out_avals = out_avals

    def _flatten(self) -> tuple[list[Any], tuple]:
        static = (self._fun_name, self._linear.jaxpr, self._in_tree, self._out_tree,
                  self._out_avals)
        return list(self._linear.consts), static

    @classmethod
    def _unflatten(cls, static: tuple, residuals: list[Any]) -> VJPFunction:
        fun_name, jaxpr, in_tree, out_tree, out_avals = static
        return cls(fun_name, ClosedJaxpr(jaxpr, list(residuals)), in_tree, out_tree, out_avals)

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise TypeError(_VJP_TOO_MANY_ARGS.format(self._fun_name, len(args)))
        (ct,) = args
        ct_leaves, ct_tree = tree_util.tree_flatten(ct, is_leaf=lambda x: type(x) is ad.Zero)
        if ct_tree != self._out_tree:
            self._tree_error(ct)
        for leaf, aval in zip(ct_leaves, self._out_avals, strict=True):
            if type(leaf) is ad.Zero:
                continue
            got = core.get_aval(leaf)
            expected = ad.tangent_aval(aval)
            compatible = got.shape == expected.shape and (
                got.dtype == expected.dtype or expected.dtype == dtypes.float0)
            if not compatible:
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                    f"{got.str_short(short_dtypes=False)}, but expected "
                    f"{expected.str_short(short_dtypes=False)} because the corresponding output "
                    f"of the differentiated function had JAX type "
                    f"{aval.str_short(short_dtypes=False)}")
        ct_leaves = [ad.Zero(ad.tangent_aval(aval)) if ad.is_float0(leaf) else leaf
                     for leaf, aval in zip(ct_leaves, self._out_avals, strict=True)]
        cts = ad.pull_back(self._linear, ct_leaves)
        return tree_util.tree_unflatten(self._in_tree, cts)

    def _tree_error(self, ct: Any) -> None:
        expected = tree_util.tree_unflatten(self._out_tree, [0] * self._out_tree.num_leaves)
        lines = [f"  * out{keystr(path)} was a {thing1} in the original output, but a "
                 f"{thing2} here, so {explanation}."
                 for path, thing1, thing2, explanation in equality_errors(expected, ct)]
        raise ValueError("unexpected tree structure.\n\nThe argument to a VJP function "
                         "returned by `jax.vjp` must match the pytree\nstructure of the "
                         f"differentiated function {self._fun_name}.\n\nBut the tree "
                         "structures differ:\n" + "\n".join(lines))


tree_util.register_pytree_node(VJPFunction, VJPFunction._flatten, VJPFunction._unflatten)


_VJP_TOO_MANY_ARGS = """
The function returned by `jax.vjp` applied to {} was called with {} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise.
"""


def _fun_name(fun: Callable) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def vjp(fun: Callable, *primals: Any, has_aux: bool = False, reduce_axes: Sequence = ()
        ) -> tuple[Any, ...]:
    """Vector-Jacobian product: `fun(*primals)` and its pullback.

    Returns:
      `(primals_out, vjp_fun)`, plus `aux` when `has_aux`. `vjp_fun(ct)` takes a cotangent
      shaped like `primals_out` and returns a tuple with one cotangent per primal.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    check_callable(fun)
    primal_leaves, in_tree = tree_util.tree_flatten(primals)
    for leaf in primal_leaves:
        _check_arg(leaf)
    store = _OutputStore()
    flat = _flat_fun(fun, in_tree, store, has_aux)
    out_primals, linear, *aux = ad.linearize_flat(flat, primal_leaves, has_aux=has_aux)
    pullback = VJPFunction(_fun_name(fun), linear, in_tree, store.out_tree,
                           tuple(core.get_aval(o) for o in out_primals))
    result = (tree_util.tree_unflatten(store.out_tree, out_primals), pullback)
    if has_aux:
        return result + (store.aux(aux[0]),)
    return result


def _ensure_index(argnums: Any) -> int | tuple[int, ...]:
    if isinstance(argnums, (list, tuple)):
        return tuple(operator.index(i) for i in argnums)
    return operator.index(argnums)


def _argnums_partial(fun: Callable, argnums: int | tuple[int, ...], args: Sequence[Any],
                     kwargs: dict[str, Any]) -> tuple[Callable, tuple[Any, ...]]:
    """`fun` as a function of the arguments at `argnums` only, and those arguments."""
    positions = (argnums,) if isinstance(argnums, int) else argnums
    positions = tuple(p % len(args) if p < 0 else p for p in positions)
    dyn_args = tuple(args[p] for p in positions)

    def partial_fun(*dyn: Any) -> Any:
        full = list(args)
        for p, value in zip(positions, dyn, strict=True):
            full[p] = value
        return fun(*full, **kwargs)

    return partial_fun, dyn_args


def _check_argnums(argnums: int | tuple[int, ...], args: Sequence[Any]) -> None:
    max_argnum = argnums if isinstance(argnums, int) else max(argnums, default=-1)
    if max_argnum >= len(args):
        raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                        f"{max_argnum + 1} positional arguments to be passed by the caller, "
                        f"but got only {len(args)} positional arguments.")


def _check_arg(x: Any, ending: str = ".") -> None:
    if not (isinstance(x, core.Tracer) or core.valid_jaxtype(x)):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type{ending}")


def _check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, x: Any) -> None:
    _check_arg(x)
    dtype = core.get_aval(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {dtypes.dtype_name(dtype)}.")
    if dtypes.is_int(dtype) or dtypes.is_bool(dtype):
        if not allow_int:
            raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got "
                            f"{dtypes.dtype_name(dtype)}. If you want to use Boolean- or "
                            "integer-valued inputs, use vjp or set allow_int to True.")
    elif not dtypes.is_inexact(dtype):
        raise TypeError(f"{name} requires numerical-valued inputs (input dtype that is a "
                        "sub-dtype of np.bool_ or np.number), but got "
                        f"{dtypes.dtype_name(dtype)}.")


def _check_output_dtype_revderiv(name: str, holomorphic: bool, x: Any) -> None:
    dtype = core.get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtypes.dtype_name(dtype)}.")
    elif dtypes.is_complex(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dtypes.dtype_name(dtype)}. "
                        "For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex "
                        "outputs, use jax.vjp directly.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dtypes.dtype_name(dtype)}. "
                        "For differentiation of functions with integer outputs, use "
                        "jax.vjp directly.")


def _check_scalar(x: Any) -> None:
    message = "Gradient only defined for scalar-output functions. Output {}.".format
    try:
        aval = core.get_aval(x)
    except TypeError as e:
        raise TypeError(message(f"was {x}")) from e
    if aval.shape != ():
        raise TypeError(message(f"had shape: {aval.shape}"))


def _one_like(x: Any) -> Any:
    # The seed keeps the output's weak type, so a weakly typed input gets a weak gradient.
    aval = core.get_aval(x)
    return from_numpy(np.ones((), aval.dtype), aval)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Sequence = ()) -> Callable[..., tuple[Any, Any]]:
    """A function computing both `fun` and its gradient with respect to `argnums`.

    Returns:
      `f(*args, **kwargs) -> (value, grad)`, or `((value, aux), grad)` with `has_aux`. The
      gradient has the structure of the argument at `argnums` (a tuple for a sequence).
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    check_callable(fun)
    argnums = core.concrete_or_error(_ensure_index, argnums)

    @util.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        _check_argnums(argnums, args)
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        for leaf in tree_util.tree_leaves(dyn_args):
            _check_input_dtype_revderiv("grad", holomorphic, allow_int, leaf)
        ans, pullback, *maybe_aux = vjp(f_partial, *dyn_args, has_aux=has_aux)
        _check_scalar(ans)
        tree_util.tree_map(functools.partial(_check_output_dtype_revderiv, "grad", holomorphic),
                           ans)
        g = pullback(_one_like(ans))
        g = g[0] if isinstance(argnums, int) else g
        return ((ans, *maybe_aux) if has_aux else ans), g

    return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False, reduce_axes: Sequence = ()
         ) -> Callable[..., Any]:
    """The gradient of scalar-valued `fun` with respect to the arguments at `argnums`.

    Returns:
      `g(*args, **kwargs)`: the gradient, shaped like the argument at `argnums` (a tuple
      for a sequence of argnums); `(grad, aux)` with `has_aux`.
    """
    value_and_grad_f = value_and_grad(fun, argnums, has_aux=has_aux, holomorphic=holomorphic,
                                      allow_int=allow_int, reduce_axes=reduce_axes)

    @util.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        ans, g = value_and_grad_f(*args, **kwargs)
        if has_aux:
            return g, ans[1]
        return g

    return grad_f


# ---------------------------------------------------------------------------------------------
# Jacobians.

def _check_input_dtype_fwd(name: str, holomorphic: bool, x: Any) -> None:
    dtype = core.get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtypes.dtype_name(dtype)}.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued inputs (input dtype that is a sub-dtype "
                        f"of np.floating), but got {dtypes.dtype_name(dtype)}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex inputs or integer "
                        "inputs, use jax.jvp directly.")


def _check_output_dtype_fwd(name: str, holomorphic: bool, x: Any) -> None:
    dtype = core.get_aval(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                        f"but got {dtypes.dtype_name(dtype)}.")


def _std_basis(leaves: Sequence[Any]) -> list[Any]:
    """The standard basis of the flattened `leaves`, batched along axis 0: an identity
    matrix of their promoted dtype, split into one part per leaf, shaped `(N,) + leaf.shape`
    and cast to the leaf's type (JAX builds it the same way, so jaxprs match)."""
    flat_basis = array_creation.eye(_total_size(leaves),
                                    dtype=scalar_types.result_type(*leaves))
    return _unravel(leaves, 1, flat_basis, example=None, annotate=True)


def _total_size(leaves: Sequence[Any]) -> int:
    return sum(core.get_aval(x).size for x in leaves)


def _unravel(leaves: Sequence[Any], axis: int, arr: Any, example: Any,
             annotate: bool = False) -> list[Any]:
    """Splits `arr` along `axis` into one part per leaf, each reshaped so that `axis` becomes
    the leaf's shape and cast to the type of `example` (of its own leaf when None)."""
    arr_shape = core.get_aval(arr).shape
    axis = axis % len(arr_shape)
    sizes = tuple(np.array([core.get_aval(x).size for x in leaves], dtype=np.int64))
    parts = joining.split_p.bind(arr, sizes=sizes, axis=axis)
    out = []
    for part, leaf in zip(parts, leaves, strict=True):
        shape = arr_shape[:axis] + core.get_aval(leaf).shape + arr_shape[axis + 1:]
        out.append(_possible_downcast(structural.reshape(part, shape),
                                      leaf if example is None else example, annotate))
    return out


def _possible_downcast(x: Any, example: Any, annotate: bool) -> Any:
    """`x` cast to `example`'s dtype and weak type. The basis parts carry a layout
    annotation, as JAX's do, which keeps their conversion staged even when it changes no
    type (so jaxprs match JAX's)."""
    aval = core.get_aval(example)
    x_dtype = core.get_aval(x).dtype
    if x_dtype == dtypes.float0:
        # Integer inputs' cotangents are float0 zeros; JAX's conversion gives zeros.
        return ad.zeros_like_aval(ShapedArray(core.get_aval(x).shape, aval.dtype, aval.weak_type))
    if dtypes.is_complex(x_dtype) and not dtypes.is_complex(aval.dtype):
        x = elementwise.real(x)
    if not annotate:
        return structural.convert_element_type(x, aval.dtype, weak_type=aval.weak_type)
    return structural.convert_element_type_p.bind(x, new_dtype=aval.dtype,
                                                  weak_type=aval.weak_type,
                                                  sharding=_BASIS_LAYOUT)


_BASIS_LAYOUT = structural.LayoutAnnotation("jacobian basis")


def _jacobian_axis(basis_leaves: Sequence[Any]) -> batching.AxisData:
    """The unnamed axis a Jacobian maps over: one entry per element of the basis leaves."""
    return batching.AxisData(batching.no_axis_name, _total_size(basis_leaves))


def _jacobian_setup(fun: Callable, argnums: int | tuple[int, ...], args: Sequence[Any],
                    kwargs: dict[str, Any], has_aux: bool, check_input: Callable[[Any], None]
                    ) -> tuple[list[Any], tree_util.PyTreeDef, Callable, _OutputStore]:
    """The flat leaves of the arguments at `argnums` (checked by `check_input`), their tree,
    and `fun` as a flat function of them."""
    _check_argnums(argnums, args)
    f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
    for leaf in tree_util.tree_leaves(dyn_args):
        check_input(leaf)
    in_leaves, in_tree = tree_util.tree_flatten(dyn_args)
    store = _OutputStore()
    return in_leaves, in_tree, _flat_fun(f_partial, in_tree, store, has_aux), store


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of `fun` by forward mode: one linearization, pushed along each input
    basis vector. Each block has shape `out.shape + in.shape`."""
    check_callable(fun)
    argnums = _ensure_index(argnums)

    @util.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        in_leaves, in_tree, flat, store = _jacobian_setup(
            fun, argnums, args, kwargs, has_aux,
            lambda leaf: _check_input_dtype_fwd("jacfwd", holomorphic, leaf))
        basis = _std_basis(in_leaves)
        count: list[int] = []

        def pushfwd(*tangents: Any) -> list[Any]:
            outs, tangent_outs, *aux = ad.jvp_flat(flat, in_leaves, tangents, has_aux=has_aux)
            count[:] = [len(outs), len(aux[0]) if aux else 0]
            return [*outs, *tangent_outs, *(aux[0] if aux else [])]

        def out_dims(n: int) -> list[Any]:
            return [None] * count[0] + [-1] * count[0] + [None] * count[1]

        try:
            results = batching.batch_flat(pushfwd, _jacobian_axis(in_leaves), [0] * len(basis),
                                          out_dims, basis)
        except batching.SpecMatchError as e:
            # A primal output came out batched (a rule let tangents reach it); JAX's vmap
            # names it by its place in (outputs, jacobian).
            if e.leaf_index < count[0]:
                paths = [p for p, _ in tree_util.tree_flatten_with_path(
                    store.out_tree.unflatten(range(count[0])))[0]]
                where = f"[0]{keystr(paths[e.leaf_index])}"
            else:
                where = f"[2][{e.leaf_index - 2 * count[0]}]"
            raise ValueError(f"at vmap out_axes{where}, got axis spec None but output was "
                             f"batched on axis {e.src}") from None
        out_primals = results[:count[0]]
        columns = results[count[0]:2 * count[0]]
        aux = [results[2 * count[0]:]] if has_aux else []
        out_tree = store.out_tree
        for out in out_primals:
            _check_output_dtype_fwd("jacfwd", holomorphic, out)
        # blocks[r][i]: output leaf r, input leaf i, shaped out_r.shape + in_i.shape.
        blocks = [_unravel(in_leaves, -1, column, out)
                  for column, out in zip(columns, out_primals, strict=True)]
        jac = _assemble(blocks, out_tree, in_tree, argnums, len(out_primals),
                        outputs_outer=True)
        return (jac, store.aux(aux[0])) if has_aux else jac

    return jacfun


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian of `fun` by reverse mode: one vjp, pulled back along each output basis
    vector. Each block has shape `out.shape + in.shape`."""
    check_callable(fun)
    argnums = _ensure_index(argnums)

    @util.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        in_leaves, in_tree, flat, store = _jacobian_setup(
            fun, argnums, args, kwargs, has_aux,
            lambda leaf: _check_input_dtype_revderiv("jacrev", holomorphic, allow_int, leaf))
        out_primals, flat_vjp, *aux = ad.vjp_flat(flat, in_leaves, has_aux=has_aux)
        out_tree = store.out_tree
        for out in out_primals:
            _check_output_dtype_revderiv("jacrev", holomorphic, out)
        basis = _std_basis(out_primals)
        rows = batching.batch_flat(lambda *cts: flat_vjp(list(cts)), _jacobian_axis(out_primals),
                                   [0] * len(basis), [0] * len(in_leaves), basis) \
            if basis else []
        blocks = [_unravel(out_primals, 0, row, leaf)
                  for row, leaf in zip(rows, in_leaves, strict=True)]
        # blocks[i][j]: input leaf i, output leaf j, shaped out_j.shape + in_i.shape.
        jac = _assemble(blocks, out_tree, in_tree, argnums, len(out_primals),
                        outputs_outer=False)
        return (jac, store.aux(aux[0])) if has_aux else jac

    return jacfun


jacobian = jacrev


def _assemble(blocks: list[list[Any]], out_tree: tree_util.PyTreeDef,
              in_tree: tree_util.PyTreeDef, argnums: int | tuple[int, ...], num_outs: int,
              *, outputs_outer: bool) -> Any:
    """Nests Jacobian blocks as JAX does: the output structure outside, the input
    structure (the argnums tuple, or the single argument) inside."""
    if outputs_outer:
        per_output = blocks  # blocks[out][in]
    else:
        per_output = [[blocks[i][o] for i in range(len(blocks))] for o in range(num_outs)]
    inner_tree = in_tree
    nested = []
    for row in per_output:
        inner = tree_util.tree_unflatten(inner_tree, row)
        nested.append(inner[0] if isinstance(argnums, int) else inner)
    return tree_util.tree_unflatten(out_tree, nested)


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian of `fun`: `jacfwd(jacrev(fun))` (forward-over-reverse)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


# ---------------------------------------------------------------------------------------------
# Transposition and closure conversion.

def _trace_flat_jaxpr(fun: Callable, in_tree: tree_util.PyTreeDef,
                      in_avals: Sequence[ShapedArray], traced_for: str
                      ) -> tuple[ClosedJaxpr, tree_util.PyTreeDef]:
    """`fun(*args)` (args of structure `in_tree`) traced on flat avals: its closed jaxpr
    and output structure."""
    store = _OutputStore()

    def flat(*leaves: Any) -> list[Any]:
        out_leaves, store.out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(
            in_tree, leaves)))
        return out_leaves

    names = [f"args{keystr(path)}" for path, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves))[0]]
    closed = staging.trace_to_jaxpr(flat, list(in_avals),
                                    staging.debug_info(traced_for, fun, names))
    return closed, store.out_tree


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: Sequence = ()) -> Callable:
    """The transpose of the linear function `fun` (`jax.linear_transpose`).

    Args:
      fun: a function linear in its arguments.
      *primals: example arguments (arrays, scalars or `ShapeDtypeStruct`s, in pytrees): only
        their shapes and dtypes are read.
      reduce_axes: deprecated; must be empty.
    Returns:
      A `tree_util.Partial` (a pytree, so it can be passed to jitted functions) mapping a
      cotangent shaped like `fun(*primals)` to a tuple of cotangents shaped like `primals`.
    Raises:
      TypeError: inputs and outputs are not all inexact or all integer; later, a cotangent
        whose structure or types differ from the output's.
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    primal_leaves, in_tree = tree_util.tree_flatten(primals)
    in_avals = [api_util.shaped_abstractify(x) for x in primal_leaves]
    closed, out_tree = _trace_flat_jaxpr(fun, in_tree, in_avals, "linear_transpose")
    jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.out_avals), instantiate=True)
    out_avals = tuple(closed.out_avals)
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    all_dtypes = in_dtypes + out_dtypes
    if not (all(dtypes.issubdtype(d, np.inexact) for d in all_dtypes)
            or all(dtypes.issubdtype(d, np.integer) for d in all_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{in_dtypes} -> {out_dtypes}.")

    def transposed_fun(consts: list[Any], out_cotangent: Any) -> Any:
        out_cts, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        if not all(_same_type(aval, ct) for aval, ct in zip(out_avals, out_cts, strict=True)):
            raise TypeError("cotangent type does not match function output, expected "
                            f"{out_avals} but got {out_cts}")
        undefined = [ad.UndefinedPrimal(ad.tangent_aval(a)) for a in in_avals]
        in_cts = ad.backward_pass(jaxpr, consts, undefined, out_cts)
        return tree_util.tree_unflatten(in_tree, [ad.instantiate_zeros(ct) for ct in in_cts])

    return tree_util.Partial(transposed_fun, list(closed.consts))


def _same_type(aval: ShapedArray, x: Any) -> bool:
    """Whether `x` has `aval`'s shape and dtype (weak types aside), as JAX's typecheck."""
    try:
        got = core.get_aval(x)
    except TypeError:
        return False
    return got.shape == aval.shape and got.dtype == aval.dtype


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list[Any]]:
    """`fun` with the values it closes over that may carry derivatives (tracers of a
    differentiation, or of a jit trace whose values could be differentiated later) hoisted
    out as explicit trailing arguments (`jax.closure_convert`), for custom derivative rules
    that must see every differentiable input.

    Args:
      fun: a pure function, specialized to the types of `example_args`.
      *example_args: example arguments (pytrees of arrays or scalars).
    Returns:
      `(converted_fun, hoisted)`: `converted_fun(*args, *hoisted)` computes `fun(*args)`.
    Raises:
      TypeError: (from `converted_fun`) arguments whose structure differs from
        `example_args`'.
    """
    flat_args, in_tree = tree_util.tree_flatten(example_args)
    in_avals = tuple(core.typeof(x) for x in flat_args)
    if config.read("jax_check_tracer_leaks"):
        converted, hoisted, _ = _closure_convert_for_avals(fun, in_tree, in_avals)
    else:
        converted, hoisted, _ = _closure_convert_cached(fun, in_tree, in_avals)
    return converted, hoisted


def _closure_convert_for_avals(fun: Callable, in_tree: tree_util.PyTreeDef,
                               in_avals: tuple[ShapedArray, ...]
                               ) -> tuple[Callable, list[Any], list[Any]]:
    """(converted function, hoisted consts, kept consts): the kept ones are returned too so
    that the cache sees any tracer among them and does not keep the result."""
    closed, out_tree = _trace_flat_jaxpr(fun, in_tree, in_avals, "closure_convert")
    hoisted_flags = [_maybe_perturbed(c) for c in closed.consts]
    kept = [c for c, h in zip(closed.consts, hoisted_flags, strict=True) if not h]
    hoisted = [c for c, h in zip(closed.consts, hoisted_flags, strict=True) if h]
    jaxpr = closed.jaxpr

    def converted_fun(*args_and_hoisted: Any) -> Any:
        num_args = len(args_and_hoisted) - len(hoisted)
        args, hoisted_args = args_and_hoisted[:num_args], args_and_hoisted[num_args:]
        kept_iter, hoisted_iter = iter(kept), iter(hoisted_args)
        consts = [next(hoisted_iter) if h else next(kept_iter) for h in hoisted_flags]
        flat, args_tree = tree_util.tree_flatten(tuple(args))
        if args_tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got "
                            f"{args_tree}")
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(jaxpr, consts, *flat))

    return converted_fun, hoisted, kept


# Calling closure_convert again on the same function and types gives the same converted
# function (so a jit keyed on it does not retrace); never when a tracer is involved.
_closure_convert_cached = pe.transform_cache(_closure_convert_for_avals)


def _maybe_perturbed(x: Any) -> bool:
    """Whether `x` may carry a nonzero tangent: a tracer of a differentiation (unless its
    tangent is a symbolic zero), or of a jit trace with a differentiable type; for other
    tracers, whether what they hold may."""
    if not isinstance(x, core.Tracer):
        return False
    if isinstance(x, ad.JVPTracer):
        if type(x.tangent) is ad.Zero:
            return _maybe_perturbed(x.primal)
        return True
    if isinstance(x, staging.DynamicJaxprTracer):
        return ad.tangent_aval(x.aval).dtype != dtypes.float0
    return any(_maybe_perturbed(value) for value in _tracer_contents(x))


def _tracer_contents(x: core.Tracer) -> list[Any]:
    """The values a tracer holds (its slots, its trace aside)."""
    names = {name for cls in type(x).__mro__ for name in getattr(cls, "__slots__", ())}
    return [getattr(x, name, None) for name in names - {"_trace"}]


def custom_gradient(fun: Callable) -> Callable:
    """A function whose reverse-mode derivative `fun` itself supplies (`jax.custom_gradient`).

    `fun(*args)` returns `(value, vjp)`, where `vjp(cotangent)` gives one cotangent per
    argument (a single non-tuple cotangent stands for one argument). The vjp may close over
    values `fun` computed: it is traced to a jaxpr whose constants become the residuals of a
    `custom_vjp`, so the result composes with `grad`, `jit` and `vmap` as JAX's does.

    Args:
      fun: `(*args) -> (value, vjp)`.
    Returns:
      `f(*args) -> value`, differentiable in reverse mode through `vjp`.
    """
    from justjax._src.transformations.custom_derivatives import custom_vjp

    @custom_vjp
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        value, _ = fun(*args, **kwargs)
        return value

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        value, rule = fun(*args, **kwargs)
        out_leaves, out_tree = tree_util.tree_flatten((value,))
        avals = [core.typeof(leaf) for leaf in out_leaves]
        # The rule is traced on the cotangents' types; what it closes over (values of the
        # forward pass) becomes the residuals.
        closed, in_tree = _trace_flat_jaxpr(lambda ct: rule(ct), out_tree,
                                            [a.to_tangent_aval() for a in avals],
                                            "custom_gradient")
        return value, (_RuleJaxpr(closed.jaxpr, in_tree, out_tree), list(closed.consts))

    def bwd(residuals: tuple[Any, list[Any]], ct: Any) -> tuple[Any, ...]:
        rule, consts = residuals
        ct_leaves, ct_tree = tree_util.tree_flatten((ct,))
        if ct_tree != rule.out_tree:
            raise TypeError(f"{rule.out_tree}\n!=\n{ct_tree}")
        out = tree_util.tree_unflatten(rule.in_tree, eval_jaxpr(rule.jaxpr, consts, *ct_leaves))
        return (out,) if tree_util.treedef_is_leaf(rule.in_tree) else out

    wrapped.defvjp(fwd, bwd)
    return wrapped


@tree_util.register_static
class _RuleJaxpr:
    """A custom_gradient rule traced to a jaxpr: static data among the residuals."""

    def __init__(self, jaxpr: Any, in_tree: tree_util.PyTreeDef,
                 out_tree: tree_util.PyTreeDef) -> None:
        self.jaxpr = jaxpr
        self.in_tree = in_tree
        self.out_tree = out_tree
