"""The layering of the packages: kernels at the bottom, precond and graphkit above it and
never importing each other, no import circles between modules, and no private name
imported from another module (the rules of docs/design.md)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kernels", "precond", "graphkit", "matrices")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(modules):
    """``{module: [(imported module, names, line)]}``, every import statement (lazy ones too)."""
    out = {}
    for name, path in modules.items():
        found = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found += [(a.name, [], node.lineno) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(name, path, node)
                names = [a.name for a in node.names]
                # "from package import submodule" imports the submodule
                subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules]
                found.append((target, [n for n in names if f"{target}.{n}" not in modules], node.lineno))
                found += [(s, [], node.lineno) for s in subs]
        out[name] = found
    return out


def _owner(target, modules):
    """The project module ``target`` names (itself or its nearest parent), or None."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def test_graphkit_and_precond_do_not_import_each_other():
    modules = _modules()
    for name, found in _imports(modules).items():
        top = name.split(".")[0]
        for target, _, line in found:
            other = target.split(".")[0]
            if {top, other} == {"graphkit", "precond"}:
                pytest.fail(f"{name} (line {line}) imports {target}")
            if top == "kernels" and other in ("graphkit", "precond"):
                pytest.fail(f"{name} (line {line}) imports {target}: kernels is the bottom layer")


def test_no_import_circles():
    """Between modules (a package's ``__init__`` re-exporting its own modules aside)."""
    modules = _modules()
    graph = {}
    for name, found in _imports(modules).items():
        edges = set()
        for target, _, _ in found:
            owner = _owner(target, modules)
            if owner and owner != name and not (modules[name].name == "__init__.py" and owner.startswith(name + ".")):
                if modules[owner].name == "__init__.py" and name.startswith(owner + "."):
                    continue  # a module of a package reaching its own package's namespace
                edges.add(owner)
        graph[name] = edges
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_no_private_names_imported_across_modules():
    modules = _modules()
    for name, found in _imports(modules).items():
        for target, names, line in found:
            if _owner(target, modules) is None:
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{name} (line {line}) imports private {private} from {target}"
