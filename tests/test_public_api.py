"""The public modules re-export exactly the implementations' `__all__` names, and nothing else."""
from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import justjax

PUBLIC_TO_PRIVATE = {
    "justjax.numpy": "justjax._src.numpy",
    "justjax.lax": "justjax._src.lax",
    "justjax.nn": "justjax._src.nn",
    "justjax.scipy.special": "justjax._src.scipy",
    "justjax.scipy.stats": "justjax._src.scipy.stats",
    **{f"justjax.scipy.stats.{name}": "justjax._src.scipy.stats" for name in (
        "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
        "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
        "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
        "truncnorm", "uniform", "vonmises", "wrapcauchy")},
    "justjax.scipy.linalg": "justjax._src.scipy",
    "justjax.scipy.sparse.linalg": "justjax._src.scipy.sparse",
    "justjax.scipy.optimize": "justjax._src.scipy.optimize",
    "justjax.scipy.integrate": "justjax._src.scipy",
    "justjax.scipy.interpolate": "justjax._src.scipy",
    "justjax.scipy.cluster": "justjax._src.scipy.cluster",
    "justjax.scipy.cluster.vq": "justjax._src.scipy.cluster",
    "justjax.scipy.ndimage": "justjax._src.scipy",
    "justjax.scipy.spatial": "justjax._src.scipy.spatial",
    "justjax.scipy.spatial.transform": "justjax._src.scipy.spatial",
    "justjax.nn.initializers": "justjax._src.nn",
    "justjax.random": "justjax._src.random",
    "justjax.numpy.fft": "justjax._src.numpy",
    "justjax.scipy.fft": "justjax._src.scipy",
    "justjax.scipy.signal": "justjax._src.scipy",
    "justjax.example_libraries.optimizers": "justjax._src.example_libraries",
    "justjax.example_libraries.stax": "justjax._src.example_libraries",
    "justjax.experimental.sparse": "justjax._src.sparse",
    "justjax.export": "justjax._src.export",
    "justjax.custom_batching": "justjax._src.transformations.custom_batching",
    "justjax.dlpack": "justjax._src.runtime.dlpack",
    "justjax.experimental.ode": "justjax._src.ode",
    "justjax.example_libraries.optimizers": "justjax._src.example_libraries",
    "justjax.example_libraries.stax": "justjax._src.example_libraries",
}


def _private_modules(package: str, public: str) -> list[str]:
    path = pathlib.Path(importlib.import_module(public).__file__)
    tree = ast.parse(path.read_text())
    return sorted({node.module for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.module
                   and node.module.startswith(package) and node.module != "justjax._src.runtime.array"})


@pytest.mark.parametrize("public,package", PUBLIC_TO_PRIVATE.items())
def test_every_public_name_is_exported(public: str, package: str) -> None:
    module = importlib.import_module(public)
    for private in _private_modules(package, public):
        missing = [n for n in importlib.import_module(private).__all__ if not hasattr(module, n)]
        assert not missing, f"{public} lacks {private} names {missing}"


@pytest.mark.parametrize("public", PUBLIC_TO_PRIVATE)
def test_public_modules_only_reexport(public: str) -> None:
    path = pathlib.Path(importlib.import_module(public).__file__)
    for node in ast.parse(path.read_text()).body:
        if _is_deprecation_getattr(node):
            continue
        assert isinstance(node, (ast.ImportFrom, ast.Import, ast.Expr)), \
            f"{public} defines something at line {node.lineno}"


def _is_deprecation_getattr(node: ast.stmt) -> bool:
    """`__getattr__ = _deprecation_getattr(...)`: the names JAX deprecated or removed."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1
            and getattr(node.targets[0], "id", None) == "__getattr__"
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "_deprecation_getattr")


def test_top_level_namespace() -> None:
    for name in ("Array", "make_jaxpr", "eval_shape", "device_put", "devices", "config",
                 "block_until_ready", "ShapeDtypeStruct", "numpy", "lax", "nn", "scipy",
                 "tree_util", "tree", "errors", "dtypes"):
        assert hasattr(justjax, name), name


def test_subpackages_are_attributes() -> None:
    """Clients reach these as attributes of an `import jax` alone (`jax.nn.initializers.
    lecun_normal()`, `jax.scipy.stats.norm.logpdf`)."""
    assert justjax.nn.initializers.lecun_normal is not None
    assert justjax.scipy.stats.norm.logpdf is not None
    assert justjax.scipy.special.ndtri is not None
