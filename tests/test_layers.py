"""The layers of the code point one way: down the data flow, never back up, never in a circle.

Every module of the installed package (evals/, and graders/, reports/, dashboard/ as
evals.graders, evals.reports, evals.dashboard) is read with `ast`; every import counts,
at module level, inside functions, and under `if TYPE_CHECKING:`. A module's layer is
its subpackage of evals (`evals.run.runner` is in `run`). A module may import its own
subpackage and the layers below it; peers in one layer (model, stats and common; agents
and kits; ci and compat; dashboard, cli and testing) may not import each other except as
`LAYERS` orders them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "evals": "evals",
    "graders": "evals.graders",
    "reports": "evals.reports",
    "dashboard": "evals.dashboard",
}

# Bottom first, in data-flow order. A layer may import the layers before it.
LAYERS: list[tuple[str, ...]] = [
    ("model",),
    ("stats",),
    ("common",),
    ("vendors",),
    ("tracing",),
    ("agents", "kits"),
    ("graders",),
    ("suite",),
    ("plan",),
    ("grade",),
    ("run",),
    ("store",),
    ("analysis",),
    ("gates",),
    ("reports",),
    ("team",),
    ("pipeline",),
    ("ci", "compat"),
    ("dashboard", "cli", "testing"),
    ("__main__",),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's target inside the package."""

    source: str
    target: str
    line: int
    type_checking: bool

    def describe(self) -> str:
        """`evals.x.y (evals/x/y.py:12) imports evals.z` with the import's kind."""
        kind = "a TYPE_CHECKING import" if self.type_checking else "an import"
        return f"{self.source} (line {self.line}) has {kind} of {self.target}"


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by its import name."""
    found = {}
    for folder, prefix in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = [prefix, *path.relative_to(root / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                inside.update(id(n) for n in ast.walk(statement))
    return inside


def _targets(node: ast.Import | ast.ImportFrom, package: str, known: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    ]


def imports(known: dict[str, Path]) -> list[Import]:
    """Every import from one module of the package to another (the nearest known module)."""
    found = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        guarded = _type_checking_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, package, known):
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.append(Import(name, target, node.lineno, id(node) in guarded))
    return found


def layer_of(module: str) -> str:
    """The layer of a module: its subpackage of evals (`evals` itself is the model's)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "model"


# `evals` itself (the model's layer) reads its public names with the stub reader, which
# imports nothing of evals (checked below).
ROOT_READS = Import("evals", "evals.common.stubs", 0, False)


def upward(found: list[Import]) -> list[Import]:
    """Imports of a later layer, or of a peer the layer order does not put below."""
    return [
        i
        for i in found
        if layer_of(i.source) != layer_of(i.target)
        and RANK[layer_of(i.source)] <= RANK[layer_of(i.target)]
        and (i.source, i.target) != (ROOT_READS.source, ROOT_READS.target)
    ]


def cycles(names: list[str], found: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    graph: dict[str, list[str]] = {name: [] for name in names}
    for i in found:
        graph[i.source].append(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(graph[successor])))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
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
                        components.append(sorted(component))

    for name in names:
        if name not in index:
            visit(name)
    return components


KNOWN = modules()
FOUND = imports(KNOWN)


def test_every_module_belongs_to_a_layer() -> None:
    unplaced = sorted({layer_of(name) for name in KNOWN} - set(RANK))

    assert not unplaced, f"add these subpackages of evals to LAYERS: {unplaced}"


def test_the_evals_root_holds_only_the_package_and_the_entry_point() -> None:
    loose = sorted(p.name for p in (ROOT / "evals").glob("*.py"))

    assert loose == ["__init__.py", "__main__.py"]


def test_no_import_points_up_the_layers() -> None:
    wrong = upward(FOUND)

    assert not wrong, (
        "imports against the layer order ("
        + " < ".join("/".join(names) for names in LAYERS)
        + "):\n"
        + "\n".join(i.describe() for i in wrong)
    )


def test_the_stub_reader_the_package_imports_imports_nothing_of_evals() -> None:
    assert [i.target for i in FOUND if i.source == ROOT_READS.target] == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    found = cycles(sorted(KNOWN), FOUND)
    details = []
    for component in found:
        members = set(component)
        inside = [i.describe() for i in FOUND if i.source in members and i.target in members]
        details.append("cycle of " + ", ".join(component) + ":\n  " + "\n  ".join(inside))

    assert not found, "\n".join(details)


def test_the_model_imports_nothing_else_from_evals() -> None:
    outside = [
        i.describe()
        for i in FOUND
        if layer_of(i.source) == "model" and i.source != "evals" and layer_of(i.target) != "model"
    ]

    assert not outside, "\n".join(outside)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from evals.pipeline.evaluation import run_evaluation", "upward"),
        ("if TYPE_CHECKING:\n    from evals.run.runner import Runner", "upward"),
        ("def f():\n    from evals.gates.decide import decide", "upward"),
        ("from evals.model.results import Grade", "fine"),
        ("from evals.kits import toolloop", "peer"),
    ],
)
def test_the_check_sees_every_kind_of_import(tmp_path: Path, source: str, expected: str) -> None:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
    layout = {
        "model/results.py": "",
        "pipeline/evaluation.py": "",
        "run/runner.py": "",
        "gates/decide.py": "",
        "kits/toolloop.py": "",
        "agents/base.py": "from typing import TYPE_CHECKING\n" + source + "\n",
    }
    for rel, text in layout.items():
        path = tmp_path / "evals" / rel
        path.parent.mkdir(exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    known = modules(tmp_path)
    found = [i for i in imports(known) if i.source == "evals.agents.base"]

    wrong = upward(found)
    assert bool(wrong) == (expected != "fine")
    assert all(i.target in known for i in found)


def test_the_check_finds_a_cycle_and_names_its_imports() -> None:
    found = [
        Import("evals.run.a", "evals.run.b", 1, False),
        Import("evals.run.b", "evals.run.c", 2, True),
        Import("evals.run.c", "evals.run.a", 3, False),
        Import("evals.run.c", "evals.model.x", 4, False),
    ]

    names = ["evals.model.x", "evals.run.a", "evals.run.b", "evals.run.c"]
    assert cycles(names, found) == [["evals.run.a", "evals.run.b", "evals.run.c"]]
    assert cycles(names, found[:2]) == []


def test_the_dashboard_reads_the_store_and_never_loads_a_suite() -> None:
    loading = [
        i.describe()
        for i in FOUND
        if layer_of(i.source) == "dashboard" and layer_of(i.target) == "suite"
    ]

    assert not loading, "\n".join(loading)
