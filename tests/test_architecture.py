"""The package's shape, checked from its source: layers without import cycles, small
modules, SPARQL only in templates, no dev-only imports at run time, no capability
probing with ``getattr``.

The import graph is read with ``ast`` from ``middleware/**/*.py``, counting imports
inside functions and under ``if TYPE_CHECKING:`` too: ``import a.b`` is an edge to
``a/b``; ``from a import b`` is an edge to the submodule ``a/b`` when there is one,
else to ``a/__init__.py``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "middleware"
MAX_LINES = 400

# The layers, lowest first: a module imports only from its own layer or one before it
# in this list. docs/architecture.md draws the same list, in the same order.
LAYERS = (
    "support",
    "errors",
    "config",
    "kg",
    "text",
    "llm",
    "planning",
    "methods",
    "workspace",
    "serialize",
    "eval",
    "tuning",
    "doctor",
    "server",
    "integrations",
    "testing",
    "cli",
)
# Import paths that moved before the first release (see CHANGELOG.md); they must not
# come back as modules of their own.
REMOVED_PATHS = (
    "middleware.server.answers",
    "middleware.server.chat",
    "middleware.server.sparql_proxy",
    "middleware.server.sparql_fast",
    "middleware.server.intake",
    "middleware.server.gunicorn_workers",
    "middleware.server.loopback_server",
    "middleware.methods.planned",
    "middleware.methods.plan_sources",
    "middleware.methods.sources",
    "middleware.kg.templates",
    "middleware.llm.templates",
    "middleware.cli.sources",
    "middleware.eval.ksl_dataset",
    "middleware.methods.ksl.training",
    "middleware.methods.ksl.linked",
    "middleware.methods.ksl.subgraph",
    "middleware.settings",
    "middleware.linking",
    "middleware.verbalize",
    "middleware.embeddings",
    "middleware.sample",
    "middleware.sources",
    "middleware.kg.local",
    "middleware.kg.endpoint",
    "middleware.kg.rdflib_graph",
    "middleware.methods.base",
)
# Modules of the dev extras and the import name each goes by.
DEV_IMPORTS = {
    "pytest": "pytest",
    "pytest-timeout": "pytest_timeout",
    "hypothesis": "hypothesis",
    "networkx": "networkx",
    "selenium": "selenium",
    "httpx": "httpx",
    "jsonschema": "jsonschema",
    "ruff": "ruff",
    "mypy": "mypy",
    "langchain-tests": "langchain_tests",
    "pytest-asyncio": "pytest_asyncio",
}
# The optional extras' frameworks and the integration modules (middleware/integrations/
# STEM*.py) that alone may import them, so ``import middleware`` works without them.
OPTIONAL_IMPORTS = {
    "langchain_core": "langchain",
    "langchain_openai": "langchain",
    "llama_index": "llamaindex",
}
INTEGRATIONS = PACKAGE / "integrations"
# ``getattr`` with a literal name is allowed only on third-party objects whose fields
# are optional by their own API (module stem, attribute).
GETATTR_ALLOWED = {
    ("openai_compat", "usage"),
    ("openai_compat", "model"),
    ("openai_compat", "finish_reason"),
    ("openai_wire", "usage"),
    ("openai_wire", "model"),
    ("openai_wire", "finish_reason"),
    ("openai_wire", "prompt_tokens"),
    ("openai_wire", "completion_tokens"),
    ("app", "started"),
    ("endpoint", "read1"),
    ("loading", "lineno"),
    ("loading", "line"),
    ("sqlite_file", "db"),
    ("operations", "count"),
    ("xml_scan", "SetReparseDeferralEnabled"),  # Python 3.10.14+, 3.11.9+, 3.12.3+
}
_SPARQL = re.compile(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b[^\n]*\{", re.IGNORECASE)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports, anywhere in its source."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, path.name == "__init__.py", node)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in known:
                    found.add(target)
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_cycle_finder_names_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_module_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def layer_of(module: str) -> str:
    """The layer a package module belongs to: its first name below ``middleware``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_folder_and_top_module_has_a_layer() -> None:
    present = {layer_of(m) for m in modules()} - {""}
    assert present == set(LAYERS), (
        f"not in LAYERS: {sorted(present - set(LAYERS))}; "
        f"in LAYERS but gone: {sorted(set(LAYERS) - present)}"
    )


def test_every_import_points_down_the_layers() -> None:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in import_graph().items()
        if name != "middleware"  # the public face re-exports from every layer
        for target in targets
        if target != "middleware" and rank[layer_of(target)] > rank[layer_of(name)]
    )
    assert not upward, "imports of a higher layer: " + "; ".join(upward)


def test_moved_paths_do_not_come_back() -> None:
    assert not set(REMOVED_PATHS) & set(modules())


def test_dev_extras_are_not_imported_at_run_time() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["dev"]
    dev = {re.split(r"[<>=\[ ]", spec)[0].lower() for spec in extras}
    names = {DEV_IMPORTS[d] for d in dev if d in DEV_IMPORTS}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "testing" in path.relative_to(PACKAGE).parts:
            continue  # the conformance mixins are for test suites
        offenders += [f"{path.relative_to(ROOT)}: {r}" for r in import_roots(path) & names]
    assert not offenders, offenders


def import_roots(path: Path) -> set[str]:
    """The top-level names of the absolute imports anywhere in ``path``."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            roots.add((node.module or "").split(".")[0])
    return roots


def test_optional_frameworks_are_imported_only_by_their_integration() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for root in import_roots(path) & set(OPTIONAL_IMPORTS):
            if path.parent != INTEGRATIONS or not path.stem.startswith(OPTIONAL_IMPORTS[root]):
                offenders.append(f"{path.relative_to(ROOT)}: {root}")
    assert not offenders, offenders


def test_importing_the_package_loads_no_optional_framework() -> None:
    """``middleware`` and the integrations' shared modules load none of the frameworks."""
    prefixes = tuple(set(OPTIONAL_IMPORTS.values()))
    shared = ["middleware", "middleware.cli"] + [
        module_name(p) for p in sorted(INTEGRATIONS.glob("*.py")) if not p.stem.startswith(prefixes)
    ]
    code = (
        f"import sys, importlib\nfor name in {shared!r}: importlib.import_module(name)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(OPTIONAL_IMPORTS)!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def _strings(tree: ast.AST) -> Iterator[ast.Constant]:
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node


def test_sparql_lives_in_templates() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "testing" in path.relative_to(PACKAGE).parts:
            continue  # the conformance suites send raw queries on purpose
        for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if _SPARQL.search(node.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:60]!r}")
    assert not found, "SPARQL outside sparql/*.rq: " + "; ".join(found)


def test_no_getattr_probing() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and (path.stem, node.args[1].value) not in GETATTR_ALLOWED
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.args[1].value}")
    assert not found, "getattr/hasattr probing: " + "; ".join(found)


def _backend_classes() -> set[str]:
    """The classes of the backends and of their common base: only kg/ may test for them."""
    names = {"GraphOperations"}
    for path in (PACKAGE / "kg" / "backends").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names |= {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    return names


def test_no_isinstance_on_backends_outside_kg() -> None:
    """Code above kg/ asks a graph's declared capabilities (``capabilities``,
    ``kg/identity.py``), never which backend it is."""
    backends = _backend_classes()
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "kg":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance"):
                continue
            if len(node.args) == 2 and backends & {
                n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)
            }:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"isinstance on a backend class outside kg/: {found}"


def _method_packages() -> set[str]:
    """Every package under methods/ is one method's (``rok``, ``pseudograph``, ``ksl``)."""
    return {p.parent.name for p in (PACKAGE / "methods").glob("*/__init__.py")}


def test_no_method_imports_another_methods_internals() -> None:
    """A method package's modules are its own: others use what its ``__init__`` exports
    (the registry builds it); shared stages live in methods/ itself."""
    found = []
    for name, targets in import_graph().items():
        for target in targets:
            parts = target.split(".")
            if len(parts) < 4 or parts[1] != "methods" or parts[2] not in _method_packages():
                continue  # not inside a method package
            if name.startswith(f"middleware.methods.{parts[2]}"):
                continue  # its own package
            if name.startswith("middleware.tuning."):
                continue  # the Knowledge Solver's training code reads its walk
            found.append(f"{name} -> {target}")
    assert not found, "imports of another method's internals: " + "; ".join(sorted(found))


def test_no_module_imports_another_modules_private_names() -> None:
    """A leading underscore means "this module's own": no other module imports it."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("middleware"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                found += [f"{path.relative_to(ROOT)}: {name}" for name in private]
    assert not found, f"private names imported from another module: {found}"
