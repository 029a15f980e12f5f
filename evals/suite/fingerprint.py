"""Content fingerprint of a suite: the suite file plus every file it references."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path


def local_imports(py_file: Path) -> list[Path]:
    """Python modules beside `py_file` that it imports, so agent code changes the fingerprint."""
    try:
        tree = ast.parse(py_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level <= 1:
            names.add(node.module.split(".")[0])
    found = []
    for name in sorted(names):
        candidate = py_file.parent / f"{name}.py"
        if candidate.is_file() and candidate != py_file:
            found.append(candidate)
        package = py_file.parent / name
        if (package / "__init__.py").is_file():
            found.extend(sorted(package.rglob("*.py")))
    return found


def expand_python_imports(files: list[Path]) -> list[Path]:
    """Close a file list over the local imports of its Python files."""
    seen: dict[Path, None] = {}
    queue = [f.resolve() for f in files]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen[path] = None
        if path.suffix == ".py":
            queue.extend(p.resolve() for p in local_imports(path))
    return sorted(seen)


def fingerprint(files: list[Path], root: Path) -> str:
    """SHA-256 over (relative path, content) of each file, in a stable order."""
    digest = hashlib.sha256()
    for path in sorted(set(files)):
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = path.name
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()[:16]
