"""The modules a Python script run out of process (`exec: python agent.py`) imports,
checked before any run.

An `exec:` agent runs in its own process, so a module it cannot import would fail every
run with a traceback. Its `python` is the interpreter running evals, so what that
interpreter can import is what the script will find: the script's top-level imports (and
those of the modules beside it that it imports) are looked up without importing anything,
and a missing one stops the suite at load, naming the module and the extra or package
that provides it. Imports under `try:` or inside functions are optional and left alone,
and so is a file that edits `sys.path` (what it finds is up to it).
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path

from evals.common.extras import extra_of_module

# How deep the check follows local modules importing local modules.
_MAX_DEPTH = 4


def _top_level_imports(tree: ast.Module) -> Iterator[str]:
    """The absolute modules a module's own statements import (not under try, if or def)."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def _edits_sys_path(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
        for node in ast.walk(tree)
    )


def _child(name: str, locations: list[str]) -> tuple[bool, list[str] | None]:
    """Whether module `name` lies in its parent's `locations`, and where its own submodules
    would be (None for a plain module), read off the file system with each path entry's
    finder: a namespace package's portions are joined, as the import system joins them,
    without importing the parent."""
    portions: list[str] = []
    for location in locations:
        finder = pkgutil.get_importer(location)
        spec = None if finder is None else finder.find_spec(name)
        if spec is None:
            continue
        if spec.loader is not None:
            locations_of = spec.submodule_search_locations
            return True, None if locations_of is None else list(locations_of)
        portions += list(spec.submodule_search_locations or [])
    return bool(portions), portions or None


def findable(name: str) -> bool:
    """Whether module `name` (dotted) can be imported here, found without importing it or
    running any package's `__init__`."""
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    locations = spec.submodule_search_locations
    for depth in range(1, len(parts)):
        if locations is None:
            return True  # `from module import name`: the rest is an attribute
        found, locations = _child(".".join(parts[: depth + 1]), list(locations))
        if not found:
            return False
    return True


def _local(name: str, directory: Path) -> Path | None:
    """The file of module `name` when it lies beside the script (`desk.py`, `pkg/`)."""
    top = name.split(".")[0]
    for candidate in (directory / f"{top}.py", directory / top / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def missing_imports(script: Path) -> list[str]:
    """The modules `script` (and the local modules it imports) imports at top level that
    this interpreter cannot find, in the order met."""
    missing: list[str] = []
    seen: set[Path] = set()

    def visit(path: Path, depth: int) -> None:
        if path in seen or depth > _MAX_DEPTH:
            return
        seen.add(path)
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            return  # the run will say what is wrong with it
        if _edits_sys_path(tree):
            return
        for name in _top_level_imports(tree):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            local = _local(name, path.parent)
            if local is not None:
                visit(local, depth + 1)
            elif not findable(name) and name not in missing:
                missing.append(name)

    visit(script, 0)
    return missing


def install_hint(module: str) -> str:
    """What installs `module`: the evals extra that provides it, else its package."""
    extra = extra_of_module(module)
    if extra is not None:
        return (
            f"install evals with its [{extra}] extra: pip install 'evals-harness[{extra}]' "
            f"(in a checkout: pip install -e '.[{extra}]')"
        )
    return f"install the package that provides {module.split('.')[0]!r} into {sys.prefix}"
