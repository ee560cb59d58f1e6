"""Layering of src/mbertlab, read with `ast` (nothing is imported): no import cycles, no library package
importing the layers above it (studies, papers, cli), no module over 400 lines, no function over 50 lines,
no top-level folder over 20% of the package's lines. Limits that hold only in a test stay held.

An import edge goes to the module an import statement names, and for `from P import n` also to P.n when
that is a module; top-level and function-local imports count alike, relative imports are resolved, and a
package `__init__` is a module of its own. An import of the importer's own enclosing package is not an
edge (Python initialises that package first anyway). Imports made with `importlib` are not seen.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mbertlab"
LIBRARY = {"formats", "data", "corpus", "tokenizers", "pretrain", "tasks", "transfer", "analysis", "embeddings",
           "store", "report"}
ABOVE = {"studies", "papers", "cli"}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50
MAX_FOLDER_SHARE = 0.20


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under the package directory `root`."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported(name: str, path: Path, tree: ast.AST, known: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` (at `path`) imports anywhere in its body."""
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                anchor = here[:len(here) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {t for t in targets if t in known and t != name and not name.startswith(t + ".")}


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(name, path, ast.parse(path.read_text(encoding="utf-8")), known)
            for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def layer(module: str) -> str | None:
    """The first name under the package (`mbertlab.studies.spec` -> studies); None for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [f"{source} -> {target}" for source in sorted(graph) if layer(source) in LIBRARY
            for target in sorted(graph[source]) if layer(target) in ABOVE]


def size_problems(root: Path) -> list[str]:
    """Modules over the line limit, functions over theirs, and top-level folders over their share."""
    problems = []
    folders: dict[str, int] = {}
    for name, path in modules(root).items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            problems.append(f"module over {MAX_MODULE_LINES} lines: {path} {lines} lines")
        is_folder = path.parent != root
        folder = path.relative_to(root).parts[0] if is_folder else "(top-level modules)"
        folders[folder] = folders.get(folder, 0) + lines
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    problems.append(f"function over {MAX_FUNCTION_LINES} lines: {path}:{node.lineno} "
                                    f"{node.name} {length} lines")
    total = sum(folders.values())
    problems += [f"folder over {MAX_FOLDER_SHARE:.0%} of the package: {folder} {lines / total:.0%}"
                 for folder, lines in sorted(folders.items())
                 if folder != "(top-level modules)" and lines / total > MAX_FOLDER_SHARE]
    return problems


def problems(root: Path) -> list[str]:
    graph = import_graph(root)
    return ([f"cycle: {' <-> '.join(c)}" for c in cycles(graph)]
            + [f"upward import: {u}" for u in upward_imports(graph)]
            + size_problems(root))


def test_mbertlab_layering():
    found = problems(PACKAGE)
    assert not found, f"{len(found)} layering problems:\n" + "\n".join(found)


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_checker_catches_a_cycle_an_upward_import_and_sizes(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(50))
    pkg = write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/formats/__init__.py": "",
        "pkg/formats/a.py": "from . import b\n",
        "pkg/formats/b.py": "def late():\n    from pkg.formats.c import helper\n",  # function-local
        "pkg/formats/c.py": "from .a import *\nfrom pkg.cli.main import run\n",  # relative + upward
        "pkg/formats/d.py": "from pkg.formats import a\n",  # imports into the cycle, not part of it
        "pkg/cli/__init__.py": "from pkg.cli import main\n",  # a package importing its submodule: no cycle
        "pkg/cli/main.py": "from pkg import cli\n" + "\n" * 400,  # its own package: no edge
        "pkg/studies/__init__.py": "",
        "pkg/studies/long.py": "def long():\n" + body,
    })
    graph = import_graph(pkg)
    assert graph["pkg.formats.b"] == {"pkg.formats.c"}
    assert graph["pkg.formats.c"] == {"pkg.formats.a", "pkg.cli.main"}
    assert cycles(graph) == [["pkg.formats.a", "pkg.formats.b", "pkg.formats.c"]]
    assert upward_imports(graph) == ["pkg.formats.c -> pkg.cli.main"]
    assert problems(pkg) == [
        "cycle: pkg.formats.a <-> pkg.formats.b <-> pkg.formats.c",
        "upward import: pkg.formats.c -> pkg.cli.main",
        f"module over 400 lines: {pkg / 'cli' / 'main.py'} 401 lines",
        f"function over 50 lines: {pkg / 'studies' / 'long.py'}:1 long 51 lines",
        "folder over 20% of the package: cli 88%",
    ]


def test_planning_a_study_does_not_import_torch():
    """The task table and the designs are read to plan, validate and report a study: importing them must not pull
    in torch (seconds of start-up, and a machine that only plans need not have it working)."""
    import subprocess
    import sys

    code = ("import sys, mbertlab.studies.designs, mbertlab.studies.kinds, mbertlab.transfer.task_table; "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
