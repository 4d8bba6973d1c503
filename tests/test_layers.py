"""The architecture's rules that a test can enforce: import direction and rule coverage."""
from __future__ import annotations

import ast
import importlib
import pathlib
import pkgutil

import pytest

import justjax
from justjax._src.core import core

SRC = pathlib.Path(justjax.__file__).parent

# DESIGN.md "Layers": imports point down only (a lower rank never imports a higher one).
LAYER_OF_PREFIX = [
    ("justjax._src.core", 0), ("justjax._src.config", 0), ("justjax._src.errors", 0),
    ("justjax._src.deprecations", 0), ("justjax._src.source_info_util", 0),
    ("justjax._src.util", 0), ("justjax._src.traceback_util", 0), ("justjax._src.state", 0),
    ("justjax._src.layout", 1),
    ("justjax._src.pytrees.tree_util", 0), ("justjax._src.pytrees.treedef", 0), ("justjax._src.pytrees.tree_errors", 0),
    ("justjax._src.source_info_util", 0), ("justjax._src.monitoring", 0),
    ("justjax._src.compilation.caches", 0), ("justjax._src.traceback_util", 0), ("justjax._src.typing", 1),
    ("justjax._src.runtime", 1),
    # The IR, its printers and verifier are data that backends read. The numerics (what lax,
    # the passes and the backends must agree on: identities, conversions, monoids, windows)
    # read the IR and nothing above it. The passes sit above the reference backend (constant
    # folding is handed its evaluator); the native backend compiles what the passes produce
    # and uses their analyses (buffer assignment, fusion): it sits beside them.
    ("justjax._src.hlo.passes", 3),
    ("justjax._src.hlo", 1),
    ("justjax._src.numerics", 1),
    # The backend interface and registry: what `runtime` and `config`'s platforms check.
    ("justjax._src.backends.interface", 1), ("justjax._src.backends.registry", 1),
    ("justjax._src.backends.reference", 2),
    ("justjax._src.backends", 3),
    ("justjax._src.interpreters", 4),
    ("justjax._src.lax", 5), ("justjax._src.transformations.custom_derivatives", 5),
    ("justjax._src.transformations.checkpoint", 5), ("justjax._src.compilation.jit_primitive", 5),
    ("justjax._src.compilation.call_primitive", 5),
    ("justjax._src.compilation.jit", 5), ("justjax._src.compilation.stages", 5), ("justjax._src.compilation.compiler", 5),
    ("justjax._src.compilation.execution", 5), ("justjax._src.compilation.spmd", 5),
    ("justjax._src.compilation.xla_bridge", 5),
    ("justjax._src.transformations.shard_map", 5), ("justjax._src.transformations.varying_axes", 5),
    ("justjax._src.transformations.shard_map_eager", 5),
    ("justjax._src.hijax", 5), ("justjax._src.debug.callbacks", 5),
    ("justjax._src.debug.debugger", 5), ("justjax._src.transformations.custom_batching", 5),
    ("justjax._src.compilation.dispatch", 5), ("justjax._src.transformations.ad_util", 5),
    # checkify: a transformation over lax, its control flow and jit.
    ("justjax._src.transformations.checkify", 5),
    ("justjax._src.numpy", 6), ("justjax._src.nn", 6), ("justjax._src.random", 6),
    # scipy.optimize differentiates the objective (autodiff, api's layer): it sits with api.
    ("justjax._src.scipy.optimize", 7),
    ("justjax._src.scipy", 6), ("justjax._src.pytrees.flatten_util", 6), ("justjax._src.image", 6),
    ("justjax._src.api", 7), ("justjax._src.transformations.autodiff", 7), ("justjax._src.api_util", 7),
    ("justjax._src.transformations.pmap", 7), ("justjax._src.transformations.shard_map_api", 7),
    ("justjax._src.transformations.saved_residuals", 7), ("justjax._src.jax_alias", 8),
    ("justjax._src.export", 7),
    ("justjax._src.environment", 8), ("justjax._src.ode", 8),
    ("justjax._src.multihost_utils", 8),
    # JAX's example libraries are written against the public API, as JAX's are.
    ("justjax._src.example_libraries", 8), ("justjax._src.sparse", 8),
    ("justjax._src.test_util", 7),
    # The folders' own `__init__`s import nothing (each module inside has its rank above);
    # the explorer sits on top of everything.
    ("justjax._src.pytrees", 0),
    ("justjax._src.transformations", 0),
    ("justjax._src.compilation", 0),
    ("justjax._src.debug", 0),
    ("justjax._src.explain", 8),
    ("justjax", 8),
]


def layer(module: str) -> int:
    for prefix, rank in LAYER_OF_PREFIX:
        if module == prefix or module.startswith(prefix + "."):
            return rank
    raise AssertionError(f"module {module} belongs to no layer")


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("justjax"):
            found.append(node.module)
            # `from justjax._src.pytrees import tree_util` imports the submodule itself.
            found.extend(f"{node.module}.{alias.name}" for alias in node.names
                         if (SRC.parent / node.module.replace(".", "/") / f"{alias.name}.py").exists()
                         or (SRC.parent / node.module.replace(".", "/") / alias.name).is_dir())
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.startswith("justjax"))
    return found


SOURCES = sorted(SRC.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: pathlib.Path) -> None:
    source = _module_name(path)
    for target in _imports(path):
        if target in ("justjax._src",):
            continue
        assert layer(target) <= layer(source), f"{source} (layer {layer(source)}) imports " \
                                               f"{target} (layer {layer(target)})"


# What a module outside `backends/` may import of it: the registry and the interface.
BACKEND_FACE = {"justjax._src.backends", "justjax._src.backends.registry",
                "justjax._src.backends.interface"}


def test_only_backends_import_a_backend() -> None:
    """Nothing outside `backends/` imports a backend's modules: lax, the passes and the
    runtime share `numerics` (and `runtime.host_callbacks`) with the backends, and a backend
    is reached through the registry (`justjax._src.backends.get_backend`)."""
    offenders = []
    for path in SOURCES:
        source = _module_name(path)
        if source.startswith("justjax._src.backends"):
            continue
        offenders.extend(f"{source} imports {target}" for target in _imports(path)
                         if target.startswith("justjax._src.backends.")
                         and target not in BACKEND_FACE)
    assert not offenders, offenders


# Modules outside the primitive packages that define primitives of their own.
PRIMITIVE_MODULES = ("justjax._src.interpreters.ad", "justjax._src.transformations.custom_derivatives",
                     "justjax._src.transformations.checkpoint", "justjax._src.compilation.jit_primitive",
                     "justjax._src.compilation.call_primitive",
                     "justjax._src.transformations.shard_map", "justjax._src.transformations.checkify.check",
                     "justjax._src.export._export", "justjax._src.transformations.custom_batching")


def _all_primitives() -> list[core.Primitive]:
    modules = [importlib.import_module(name) for name in PRIMITIVE_MODULES]
    for package in ("justjax._src.lax", "justjax._src.numpy", "justjax._src.nn"):
        pkg = importlib.import_module(package)
        modules.extend(importlib.import_module(info.name)
                       for info in pkgutil.walk_packages(pkg.__path__, f"{package}."))
    prims = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, core.Primitive):
                prims[id(value)] = value
    return sorted(prims.values(), key=lambda p: p.name)


# Primitives without an entry in the jvp table: nextafter has no derivative in JAX either
# (grad raises "Differentiation rule for 'nextafter' not implemented"); the custom-derivative
# calls are differentiated by the traces' process_custom_jvp_call / process_custom_vjp_call
# with the user's rules; custom_lin has no forward-mode meaning (JAX's TypeError).
NO_JVP_RULE = {"nextafter", "custom_jvp_call", "custom_vjp_call", "custom_lin",
               # JAX 0.10.2 has none either: "Differentiation rule for 'pmax' not implemented".
               "pmax", "pmin",
               # Nor for the threefry hash (integers to integers; JAX defines none).
               "threefry2x32",
               # Nor for these (igamma's second derivative in a raises; jax.scipy.special.zeta
               # carries a custom_jvp of its own).
               "igamma_grad_a", "zeta",
               # Nor for LAPACK's compact QR pieces: `qr` itself is differentiated instead.
               "geqrf", "geqp3", "householder_product",
               # Nor for these decompositions and products (JAX 0.10.2: "Differentiation
               # rule for 'schur' not implemented").
               "schur", "hessenberg", "tridiagonal", "cholesky_update", "symmetric_product",
               "ormqr",
               # Nor for an exported call: `Exported.call` is a custom_vjp over it.
               "call_exported"}

# The primitives that can appear applied to a tangent in a linear jaxpr, so reverse mode
# needs their transpose: JAX's transpose table restricted to justjax's primitives.
LINEAR_PRIMITIVES = {
    "add", "add_any", "all_gather", "broadcast_in_dim", "complex", "concatenate", "cond", "conj",
    "conv_general_dilated", "convert_element_type", "copy", "cumsum", "custom_lin", "div",
    "dot_general", "dynamic_slice", "dynamic_update_slice", "fft", "gather", "imag", "jit", "mul",
    "neg",
    "pad", "psum", "real", "reduce_precision", "reduce_scatter", "reduce_sum", "reduce_window_sum", "remat2", "reshape",
    "rev", "scan", "scatter", "scatter-add", "scatter-mul", "scatter-sub", "select_and_gather_add",
    "select_and_scatter_add", "select_n", "reshard", "shard_map", "sharding_constraint", "slice",
    "split", "squeeze", "stack", "sub",
    "tile",
    "transpose", "unstack", "while",
    "tridiagonal_solve", "custom_linear_solve",
}


def test_every_primitive_has_a_jvp_rule() -> None:
    from justjax._src.interpreters import ad
    missing = [p.name for p in _all_primitives()
               if p not in ad.primitive_jvps and p.name not in NO_JVP_RULE]
    assert not missing, f"primitives without a jvp rule: {missing}"


def test_every_linear_primitive_has_a_transpose_rule() -> None:
    from justjax._src.interpreters import ad
    names = {p.name: p for p in _all_primitives()}
    assert LINEAR_PRIMITIVES <= set(names), sorted(LINEAR_PRIMITIVES - set(names))
    missing = [n for n in sorted(LINEAR_PRIMITIVES) if names[n] not in ad.primitive_transposes]
    assert not missing, f"linear primitives without a transpose rule: {missing}"


# Primitives without an entry in the batching table: the custom-derivative calls are batched
# by BatchTrace.process_custom_jvp_call / process_custom_vjp_call; iota has no operands, so
# it is never batched.
NO_BATCHING_RULE = {"custom_jvp_call", "custom_vjp_call", "iota", "dim_as_value",
                    # JAX 0.10.2 has none: "Batching rule for 'cholesky_update' not
                    # implemented", nor for 'composite'.
                    "cholesky_update", "composite",
                    # no operands: vmap never reaches a rule (it binds in the parent)
                    "empty", "platform_index"}


def test_every_primitive_has_a_batching_rule() -> None:
    from justjax._src.interpreters import batching
    missing = [p.name for p in _all_primitives()
               if p not in batching.primitive_batchers and p.name not in NO_BATCHING_RULE]
    assert not missing, f"primitives without a batching rule: {missing}"


@pytest.mark.parametrize("table", ["impl_rules", "abstract_eval_rules"])
def test_every_primitive_has_core_rules(table: str) -> None:
    rules = getattr(core, table)
    missing = [p.name for p in _all_primitives() if p not in rules]
    assert not missing, f"primitives without {table}: {missing}"


def test_primitive_names_are_unique() -> None:
    names = [p.name for p in _all_primitives()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


# Primitives without a lowering rule: custom_lin exists only until transposition, as in JAX.
NO_LOWERING_RULE = {"custom_lin"}


def test_every_primitive_has_a_lowering_rule() -> None:
    from justjax._src.interpreters import lowering
    missing = [p.name for p in _all_primitives()
               if p not in lowering.lowerings and p.name not in NO_LOWERING_RULE]
    assert not missing, f"primitives without a lowering rule: {missing}"


# -- no import cycles inside lax ------------------------------------------------------------------
# Each primitive is declared in one module with all its rules, and lax's modules import one
# another in one direction only (DESIGN.md "Layers"): a rule that needs an op from a module
# above its own imports it inside the rule. Only module-level imports count (they run when the
# module is imported); `from pkg import sub` depends on `pkg`'s __init__ as well as on `sub`.

LAX_SOURCES = sorted((SRC / "_src" / "lax").rglob("*.py"))
LAX_MODULES = {_module_name(p): p for p in LAX_SOURCES}


def _module_level_nodes(tree: ast.Module) -> list[ast.stmt]:
    """The statements run at import time: top level, and inside top-level `if`/`try`."""
    nodes: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, (ast.If, ast.Try)):
            nodes.extend(n for n in ast.walk(node) if isinstance(n, ast.stmt))
        else:
            nodes.append(node)
    return nodes


def _module_level_lax_imports(module: str, path: pathlib.Path) -> set[str]:
    """The lax modules (packages included) that `module` imports when it is imported."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in _module_level_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.update(p for p in _packages_and_self(base) if p in LAX_MODULES)
            found.update(f"{base}.{a.name}" for a in node.names
                         if f"{base}.{a.name}" in LAX_MODULES)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.update(p for p in _packages_and_self(alias.name) if p in LAX_MODULES)
    return found - {module}


def _packages_and_self(module: str) -> list[str]:
    """`a.b.c` -> [`a`, `a.b`, `a.b.c`]: importing a module runs every enclosing __init__."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_find_cycle_reports_a_cycle() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_package_init_counts_as_imported() -> None:
    assert _packages_and_self("justjax._src.lax.control_flow.scan") == [
        "justjax", "justjax._src", "justjax._src.lax", "justjax._src.lax.control_flow",
        "justjax._src.lax.control_flow.scan"]


def test_no_import_cycles_inside_lax() -> None:
    graph = {m: _module_level_lax_imports(m, p) for m, p in LAX_MODULES.items()}
    cycle = _find_cycle(graph)
    assert cycle is None, "module-level import cycle inside lax: " + " -> ".join(cycle)


# -- no import cycles anywhere in _src -------------------------------------------------------------
# Outside lax a package's __init__ may gather its submodules (backends/ does), so here a module
# depends on the modules it names: `from pkg import sub` on `sub`, `from pkg.sub import x` on
# `pkg.sub`, and on `pkg`'s __init__ only when it takes a name defined there.

SRC_MODULES = {_module_name(p): p for p in SOURCES if _module_name(p).startswith("justjax._src")}


def _module_level_imports(module: str, path: pathlib.Path) -> set[str]:
    found: set[str] = set()
    for node in _module_level_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("justjax"):
            submodules = {f"{node.module}.{a.name}" for a in node.names} & SRC_MODULES.keys()
            found |= submodules
            if node.module in SRC_MODULES and len(submodules) < len(node.names):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names} & SRC_MODULES.keys()
    return found - {module}


def test_no_import_cycles_in_src() -> None:
    graph = {m: _module_level_imports(m, p) for m, p in SRC_MODULES.items()}
    cycle = _find_cycle(graph)
    assert cycle is None, "module-level import cycle: " + " -> ".join(cycle)


def test_import_cycles_are_found() -> None:
    graph = {m: _module_level_imports(m, p) for m, p in SRC_MODULES.items()}
    graph["justjax._src.core.dtypes"] = graph["justjax._src.core.dtypes"] | {"justjax._src.api"}
    assert _find_cycle(graph) is not None  # api imports core.dtypes, indirectly at least
