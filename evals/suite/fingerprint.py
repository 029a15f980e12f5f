"""Content fingerprints: what a suite measures with, what each agent is, what each case asks.

Two fingerprints answer two questions. The **suite fingerprint** (cases, prompts,
assertions, graders, gates and the files they read, never the providers) says whether two
evaluations measured with the same yardstick, so their pass rates compare. The **agent
fingerprint** of each provider (its id, config, transform, its code and the local code
that code imports) says what changed between two evaluations; comparing across agent
changes is the point of an evaluation. A **case fingerprint** (vars, assertions, options
and the files they name) says which cases two different suites still share.

Credentials in a provider's config (keys named like `api_key`, `token`, `password`) and
the execution settings `worker` / `isolation` are left out of the agent fingerprint:
rotating a key or isolating an agent in a process does not change what it answers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from evals.model.suite import Case, ProviderSpec
from evals.tracing.redact import Redactor

# Config keys that say how an agent runs, not what it answers.
EXECUTION_KEYS = frozenset({"worker", "isolation"})
_CREDENTIALS = Redactor()
_FILE_REF = re.compile(r"^(?:file://|python:)(.+?)(?::[A-Za-z_][\w.]*)?$")


def project_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding `.git` (else `start` itself).

    Modules inside it are the project's own code: an agent importing them is
    fingerprinted with them, while installed packages are not.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


# `import a.b` / `from a.b import c` / `from .a import b` at the start of a line, in any
# block: a text scan rather than a parse, so closing the agent's code over a large
# package stays fast. A match inside a docstring only makes the fingerprint stricter.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.?)([A-Za-z_]\w*)|import[ \t]+([^#\n]+))", re.M)
_NAME = re.compile(r"[A-Za-z_]\w*")


def imported_names(text: str) -> set[str]:
    """Top-level module names a Python source imports (absolute or one level relative)."""
    names: set[str] = set()
    for match in _IMPORT.finditer(text):
        if match.group(2):
            names.add(match.group(2))
        elif match.group(3):
            for part in match.group(3).split(","):
                found = _NAME.match(part.strip())
                if found:
                    names.add(found.group(0))
    return names


class _Imports:
    """The project's Python files that given files import, with lookups remembered."""

    def __init__(self, project: Path | None) -> None:
        self.project = project
        self.packages: dict[str, list[Path]] = {}

    def of(self, py_file: Path) -> list[Path]:
        """The local modules `py_file` imports: beside it, or (with a project) anywhere
        in the project the harness can import them from."""
        try:
            text = py_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        found: list[Path] = []
        for name in sorted(imported_names(text)):
            candidate = py_file.parent / f"{name}.py"
            package = py_file.parent / name
            if candidate.is_file():
                found.append(candidate)
            elif (package / "__init__.py").is_file():
                found.extend(package.rglob("*.py"))
            elif self.project is not None:
                if name not in self.packages:
                    self.packages[name] = _project_package(name, self.project)
                found.extend(self.packages[name])
        return found


def _project_package(name: str, project: Path) -> list[Path]:
    """Every Python file of an importable top-level module that lives in `project`.

    Only the top-level name is looked up (`find_spec` then imports nothing); a module in
    a virtual environment inside the project is an installed package, not project code.
    """
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return []
    origin = Path(spec.origin).resolve()
    if not origin.is_relative_to(project) or "site-packages" in origin.parts:
        return []
    if origin.name == "__init__.py":
        return sorted(p for p in origin.parent.rglob("*.py") if "__pycache__" not in p.parts)
    return [origin]


def expand_python_imports(files: Iterable[Path], project: Path | None = None) -> list[Path]:
    """Close a file list over the local imports of its Python files.

    Without `project`, a local import is a module beside the importing file; with it,
    also any module or package the harness imports from inside that folder (not from a
    virtual environment there).
    """
    imports = _Imports(project)
    seen: set[Path] = set()
    queue = [f.resolve() for f in files]
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.suffix == ".py":
            queue.extend(p if p.is_absolute() else p.resolve() for p in imports.of(path))
    return sorted(seen)


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _hash_files(digest: Any, files: Iterable[Path], root: Path) -> None:
    for path in sorted(set(files)):
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = path.name
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")


def fingerprint(files: Iterable[Path], root: Path, document: Any = None) -> str:
    """SHA-256 over a JSON document (canonical: sorted keys) and (path, content) of files.

    Paths are relative to `root`, so the same content checked out elsewhere has the
    same fingerprint; 16 hex digits.
    """
    digest = hashlib.sha256()
    if document is not None:
        digest.update(_canonical(document))
        digest.update(b"\0")
    _hash_files(digest, files, root)
    return digest.hexdigest()[:16]


def suite_document(raw: dict[str, Any]) -> dict[str, Any]:
    """The suite mapping without what belongs to the agents (providers, targets)."""
    return {k: v for k, v in raw.items() if k not in ("providers", "targets")}


def _behaviour_config(config: Any) -> Any:
    """A provider config without credentials and execution settings."""
    if isinstance(config, dict):
        return {
            k: _behaviour_config(v)
            for k, v in config.items()
            if str(k) not in EXECUTION_KEYS and not _CREDENTIALS.redacts_key(str(k))
        }
    if isinstance(config, list):
        return [_behaviour_config(v) for v in config]
    return config


def referenced_files(values: Iterable[Any], root: Path) -> list[Path]:
    """Files named by `file://` (or `python:`) references among the strings in `values`,
    searched recursively through lists and mappings; references to missing files are
    left out (the loader reports those)."""
    found: list[Path] = []
    pending = list(values)
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
        elif isinstance(value, str):
            match = _FILE_REF.match(value.strip())
            target = (root / match.group(1)).resolve() if match else None
            if target is not None and target.is_file():
                found.append(target)
    return found


def command_files(provider_id: str, root: Path) -> list[Path]:
    """The files under `root` an `exec:` provider's command line names (its script)."""
    if not provider_id.startswith("exec:"):
        return []
    try:
        words = shlex.split(provider_id[len("exec:") :])
    except ValueError:
        return []
    base = root.resolve()
    targets = [(base / word).resolve() for word in words if "/" in word or "." in word]
    return [t for t in targets if t.is_file() and t.is_relative_to(base)]


def agent_fingerprint(spec: ProviderSpec, root: Path, files: Iterable[Path] = ()) -> str:
    """What the provider is: id, config (without credentials), transform, and its code.

    The code is every file the id, config or transform names (and an `exec:` command's
    script), plus `files`, closed over
    the project's Python imports: a one-word change to `agent.py` or to a module it
    imports changes the fingerprint.
    """
    project = project_root(root)
    named = referenced_files([spec.id, spec.config, spec.transform], root)
    named += command_files(spec.id, root)
    code = expand_python_imports([*named, *files], project)
    document = {
        "id": spec.id,
        "config": _behaviour_config(spec.config),
        "transform": spec.transform,
    }
    return fingerprint(code, project, document)


def case_document(case: Case) -> dict[str, Any]:
    """What a case asks and how it is graded (not its description, tags or priority)."""
    return {
        "vars": case.vars,
        "assert": [assertion.raw or {"type": assertion.type} for assertion in case.asserts],
        "threshold": case.threshold,
        "options": case.options,
        "providers": case.providers,
        "prompts": case.prompts,
        "providerOutput": case.provider_output,
        "assertScoringFunction": case.scoring_function,
    }


def case_fingerprint(case: Case, root: Path) -> str:
    """A case's content and the files its vars, assertions and options name."""
    document = case_document(case)
    files = referenced_files(
        [case.vars, document["assert"], case.options, case.scoring_function], root
    )
    return fingerprint(expand_python_imports(files), root, document)
