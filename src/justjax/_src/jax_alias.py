"""Standing in for `jax`: `import jax` and every `jax.*` module resolve to justjax's modules.

`install_as_jax()` puts a finder first on `sys.meta_path` that serves `jax.X.Y` with the module
`justjax.X.Y` itself (`jax.numpy is justjax.numpy`), so client libraries (optax, chex, flax,
equinox ...) run unchanged. Only the top-level `jax` module is a separate object: it reports
the JAX release whose behaviour justjax reproduces (`jax.__version__ == "0.10.2"`), so that
clients' version gates take today's code paths, while `justjax.__version__` stays justjax's
own; every other attribute is justjax's.

JAX's private modules (`jax._src.*`) are served only where a client cannot run without one:
`PRIVATE_MODULES` lists them. Any other `jax._src` path raises `ImportError` naming it.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import os
import runpy
import sys
import types
from typing import Any, Sequence

# The JAX release whose names, defaults and behaviour justjax reproduces (`jax.__version__`,
# `jax.version`), the jaxlib release it comes with (`jax.lib.__version__`) and the oldest
# jaxlib that JAX release accepts (`jax.version._minimum_jaxlib_version`).
JAX_VERSION = "0.10.2"
JAX_VERSION_INFO = (0, 10, 2)
JAXLIB_VERSION = "0.10.2"
MINIMUM_JAXLIB_VERSION = "0.10.1"
MINIMUM_JAXLIB_VERSION_INFO = (0, 10, 1)

# Private JAX modules that a client imports and cannot run without, and the justjax
# module serving each (the client: what it reads there).
PRIVATE_MODULES = {
    # equinox, flax: register_exclusion, api_boundary, include_frame, _exclude_paths
    "jax._src.traceback_util": "justjax._src.traceback_util",
    # chex: restrict_backends wraps backend_compile_and_load
    "jax._src.compiler": "justjax._src.compilation.compiler",
    # equinox: imports it and reads wait_for_tokens if present (it is not)
    "jax._src.dispatch": "justjax._src.compilation.dispatch",
    # equinox: TypePromotionError; flax.linen: DType, extended, ExtendedDType, finfo
    "jax._src.dtypes": "justjax._src.core.dtypes",
    # flax.linen: ShapedArray
    "jax._src.core": "justjax._src.core.core",
    # flax.nnx: _registry (the pytree node types)
    "jax._src.tree_util": "justjax._src.pytrees.tree_util",
    # flax.nnx: AbstractRef (to tell references apart; justjax makes none)
    "jax._src.state.types": "justjax._src.state",
    # flax: checkify (Out, JaxException, user_checks, checkify, Error)
    "jax._src.checkify": "justjax._src.transformations.checkify",
    # chex: _backends (set_n_cpu_devices asks whether the CPU backend is up)
    "jax._src.xla_bridge": "justjax._src.compilation.xla_bridge",
    # lineax: stop_gradient_p (it registers a transpose rule for it)
    "jax._src.ad_util": "justjax._src.transformations.ad_util",
}


class _JaxModule(types.ModuleType):
    """The top-level `jax`: justjax's namespace, with JAX's version numbers."""

    def __getattr__(self, name: str) -> Any:
        if name == "_src":  # JAX's private modules, not justjax's: see PRIVATE_MODULES
            return importlib.import_module("jax._src")
        import justjax
        try:
            value = getattr(justjax, name)
        except AttributeError:
            raise AttributeError(f"module 'jax' has no attribute '{name}' "
                                 "(justjax does not provide jax." f"{name})") from None
        # Kept here so that the next `jax.<name>` is a plain attribute read: libraries read
        # `jax.Array`, `jax.tree` ... on every call.
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        import justjax
        return sorted(set(dir(justjax)) | set(self.__dict__))


def _target(fullname: str) -> str | None:
    """The justjax module serving the JAX module `fullname`; "" for a private package that
    only holds served modules; None for a private path justjax does not serve."""
    if fullname == "jax._src" or fullname.startswith("jax._src."):
        if fullname in PRIVATE_MODULES:
            return PRIVATE_MODULES[fullname]
        if any(path.startswith(fullname + ".") for path in PRIVATE_MODULES):
            return ""
        return None
    return "justjax" + fullname[len("jax"):]


def _private_attribute(package: str) -> Any:
    def getattr_(attribute: str) -> Any:
        fullname = f"{package}.{attribute}"
        if _target(fullname) is None:
            raise AttributeError(f"module '{package}' has no attribute '{attribute}' "
                                 "(a private JAX module justjax does not provide)")
        return importlib.import_module(fullname)
    return getattr_


class _AliasLoader:
    """Loads `jax.X` by putting the module `justjax.X` in its place in `sys.modules`. (The
    import protocol needs no base class: `importlib.abc` would cost 10 ms at import.)"""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == "jax":
            return _JaxModule("jax")
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        if name == "jax":
            import justjax
            module.__dict__.update(__version__=JAX_VERSION, __version_info__=JAX_VERSION_INFO,
                                   __doc__=justjax.__doc__, __path__=[],
                                   __file__=justjax.__file__)
            return
        if not self.target:
            # `jax._src` (or `jax._src.state`): a namespace holding only the private modules
            # served, imported when first read as attributes (JAX imports them with `jax`).
            module.__path__ = []
            module.__getattr__ = _private_attribute(name)
            return
        try:
            served = importlib.import_module(self.target)
        except ModuleNotFoundError as error:
            if error.name is not None and self.target.startswith(error.name):
                raise ModuleNotFoundError(f"No module named '{name}' (justjax does not provide "
                                          f"{name})", name=name) from None
            raise
        # The import system returns what `sys.modules` holds once `exec_module` is done:
        # the justjax module itself, untouched (its `__spec__` and `__name__` stay its own).
        sys.modules[name] = served


class _JaxFinder:
    """Finds `jax` and `jax.*` for the alias, before any installed package."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        served = _target(fullname)
        if served is None:
            raise ModuleNotFoundError(f"No module named '{fullname}' (a private JAX module "
                                      "justjax does not provide)", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(served), is_package=True)


_finder = _JaxFinder()


def is_installed() -> bool:
    """Whether `import jax` resolves to justjax in this interpreter."""
    return _finder in sys.meta_path


def install_as_jax() -> None:
    """Makes `import jax` and every `import jax.X` resolve to justjax's modules.

    Call it before anything imports `jax` (a notebook's first cell, a program's first line);
    `python -m justjax run prog.py` calls it for you. Calling it again does nothing.

    Raises:
      RuntimeError: real JAX (or anything else named `jax`) was already imported.
    """
    if is_installed():
        return
    loaded = sorted(name for name in sys.modules if name == "jax" or name.startswith("jax."))
    if loaded:
        origin = getattr(sys.modules.get("jax"), "__file__", None) or "?"
        raise RuntimeError(
            "justjax.install_as_jax() must run before `jax` is imported, but "
            f"{', '.join(loaded[:3])}{' ...' if len(loaded) > 3 else ''} is already imported "
            f"(from {origin}). Call it first, or run the program with "
            "`python -m justjax run`.")
    sys.meta_path.insert(0, _finder)


_USAGE = """usage: python -m justjax run SCRIPT.py [ARGS ...]
       python -m justjax run -m MODULE [ARGS ...]

Runs a JAX program unchanged, with `import jax` (and every jax.* module) resolving to
justjax's modules."""


def run_main(argv: Sequence[str]) -> int:
    """`python -m justjax run script.py args...` / `python -m justjax run -m module args...`."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    install_as_jax()
    if argv[0] == "-m":
        module, rest = argv[1], argv[2:]
        sys.argv = [module, *rest]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        script, rest = argv[0], argv[1:]
        sys.argv = [script, *rest]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    return 0
