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

An agent with code of its own also runs with the packages the project declares: its
fingerprint covers the project's dependency files (requirements and lock files, the
dependency tables of `pyproject.toml`), so bumping an SDK is an agent change. The
project's own package counts as the agent's code however it is imported: from the
checkout (a path entry, an editable install) or installed into `site-packages` from a
folder of the project (`pip install .`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

from evals.model.errors import SuiteError
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


# A file's facts by (path, modification time, size): a file read once per version.
_FileKey = tuple[str, int, int]
_NAMES: dict[_FileKey, frozenset[str]] = {}
_DIGESTS: dict[_FileKey, bytes] = {}


def _key(path: Path) -> _FileKey | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return str(path), stat.st_mtime_ns, stat.st_size


def _names_of(path: Path) -> frozenset[str]:
    key = _key(path)
    if key is None:
        return frozenset()
    names = _NAMES.get(key)
    if names is None:
        try:
            names = frozenset(imported_names(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            names = frozenset()
        _NAMES[key] = names
    return names


def _digest_of(path: Path) -> bytes:
    key = _key(path)
    if key is None:
        return b"<missing>"
    digest = _DIGESTS.get(key)
    if digest is None:
        digest = hashlib.sha256(path.read_bytes()).digest()
        _DIGESTS[key] = digest
    return digest


class _Imports:
    """The project's Python files that given files import, with lookups remembered."""

    def __init__(self, project: Path | None) -> None:
        self.project = project
        self.listings: dict[Path, tuple[set[str], set[str]]] = {}
        self.expanded: set[str] = set()

    def _listing(self, folder: Path) -> tuple[set[str], set[str]]:
        """(module file names, package names) in a folder, read once."""
        listing = self.listings.get(folder)
        if listing is None:
            modules: set[str] = set()
            packages: set[str] = set()
            try:
                for entry in os.scandir(folder):
                    if entry.name.endswith(".py") and entry.is_file():
                        modules.add(entry.name[:-3])
                    elif entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                        packages.add(entry.name)
            except OSError:
                pass
            listing = self.listings[folder] = (modules, packages)
        return listing

    def of(self, py_file: Path) -> list[Path]:
        """The local modules `py_file` imports: beside it, or (with a project) anywhere
        in the project the harness can import them from. A package's files are
        returned once per closure."""
        found: list[Path] = []
        modules, packages = self._listing(py_file.parent)
        for name in sorted(_names_of(py_file)):
            if name in modules:
                found.append(py_file.parent / f"{name}.py")
            elif name in packages:
                found.extend(_python_files(py_file.parent / name))
            elif self.project is not None and name not in self.expanded:
                self.expanded.add(name)
                found.extend(_project_package(name, self.project))
        return found


def _python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


# Where each top-level module name is found, by name: the harness's own import path
# does not change while it runs.
_ORIGINS: dict[str, Path | None] = {}


def _origin(name: str) -> Path | None:
    if name not in _ORIGINS:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        found = origin is not None and origin not in ("built-in", "frozen")
        _ORIGINS[name] = Path(origin).resolve() if found and origin else None
    return _ORIGINS[name]


SITE_FOLDERS = ("site-packages", "dist-packages")


def site_folder(path: Path) -> Path | None:
    """The `site-packages` folder holding `path`, or None when it is not installed code."""
    return next((parent for parent in path.parents if parent.name in SITE_FOLDERS), None)


def local_source(url: object) -> Path | None:
    """The folder a `direct_url.json` URL names when it is a local folder (`file://`)."""
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    return Path(unquote(urlparse(url).path)).resolve()


def _top_level_names(dist_info: Path) -> set[str]:
    """The top-level modules a distribution installed (`top_level.txt`, else `RECORD`)."""
    try:
        listed = (dist_info / "top_level.txt").read_text(encoding="utf-8").split()
    except OSError:
        listed = []
    if listed:
        return set(listed)
    names: set[str] = set()
    try:
        record = (dist_info / "RECORD").read_text(encoding="utf-8")
    except OSError:
        return names
    for line in record.splitlines():
        first = line.split(",", 1)[0].split("/", 1)[0]
        if first and not first.startswith(".") and not first.endswith((".dist-info", ".pth")):
            names.add(first.removesuffix(".py"))
    return names - {"__pycache__"}


_LOCAL_INSTALLS: dict[tuple[Path, Path], frozenset[str]] = {}


def installed_from_project(site: Path, project: Path) -> frozenset[str]:
    """Top-level modules of `site` whose distribution was installed from a folder inside
    `project` (`pip install .`): the project's own code, installed."""
    key = (site, project)
    if key not in _LOCAL_INSTALLS:
        names: set[str] = set()
        try:
            entries = [e for e in os.scandir(site) if e.name.endswith(".dist-info")]
        except OSError:
            entries = []
        for entry in entries:
            try:
                direct = json.loads(Path(entry.path, "direct_url.json").read_bytes())
            except (OSError, ValueError):
                continue
            source = local_source(direct.get("url") if isinstance(direct, dict) else None)
            if source is not None and source.is_relative_to(project):
                names |= _top_level_names(Path(entry.path))
        _LOCAL_INSTALLS[key] = frozenset(names)
    return _LOCAL_INSTALLS[key]


def _project_package(name: str, project: Path) -> list[Path]:
    """Every Python file of an importable top-level module that is the project's code:
    it lives in `project`, or it was installed into `site-packages` from a folder of it.

    Only the top-level name is looked up (`find_spec` then imports nothing); any other
    installed package (in a virtual environment inside the project too) is not the
    project's code.
    """
    origin = _origin(name)
    if origin is None:
        return []
    site = site_folder(origin)
    if site is not None:
        if name not in installed_from_project(site, project):
            return []
    elif not origin.is_relative_to(project):
        return []
    if origin.name == "__init__.py":
        return _python_files(origin.parent)
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
            queue.extend(imports.of(path))
    return sorted(seen, key=str)


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _shown_path(path: Path, base: Path) -> str:
    """The name a file is hashed under: relative to the `site-packages` folder it is
    installed in, else to `base`, else its own name; the same file checked out or
    installed elsewhere keeps its name."""
    site = site_folder(path)
    if site is not None:
        return path.relative_to(site).as_posix()
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.name


def _hash_files(digest: Any, files: Iterable[Path], root: Path) -> None:
    base = root.resolve()
    # In the order of the names they are hashed under, which is where they are checked
    # out or installed elsewhere too.
    for rel, path in sorted((_shown_path(path, base), path) for path in set(files)):
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(_digest_of(path))
        digest.update(b"\0")


def fingerprint(files: Iterable[Path], root: Path, document: Any = None) -> str:
    """SHA-256 over a JSON document (canonical: sorted keys) and (path, content hash) of
    files. `files` are absolute and resolved; paths are taken relative to `root`, so the
    same content checked out elsewhere has the same fingerprint; 16 hex digits.
    """
    digest = hashlib.sha256()
    if document is not None:
        digest.update(_canonical(document))
        digest.update(b"\0")
    _hash_files(digest, files, root)
    return digest.hexdigest()[:16]


# Top-level keys that say how runs execute, not what is measured.
_EXECUTION_SECTIONS = ("providers", "targets", "limits", "pass_env", "reports")


def suite_document(raw: dict[str, Any]) -> dict[str, Any]:
    """The suite mapping without what belongs to the agents (providers, targets) or to
    how runs execute and are reported (limits, pass_env, reports)."""
    return {k: v for k, v in raw.items() if k not in _EXECUTION_SECTIONS}


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


def command_modules(provider_id: str) -> list[str]:
    """The top-level modules an `exec:` command runs: `python -m NAME`, and those a
    console script it starts imports (the script itself, written by the installer, is
    not the agent's code)."""
    if not provider_id.startswith("exec:"):
        return []
    try:
        words = shlex.split(provider_id[len("exec:") :])
    except ValueError:
        return []
    names = [words[i + 1].split(".")[0] for i, word in enumerate(words[:-1]) if word == "-m"]
    script = shutil.which(words[0]) if words and "/" not in words[0] else None
    if script is not None and _is_python_script(Path(script)):
        names += sorted(_names_of(Path(script)))
    return names


def _is_python_script(path: Path) -> bool:
    """True for a small text file whose first line runs Python (a console script)."""
    try:
        if path.stat().st_size > 64 * 1024:
            return False
        with path.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def agent_code(spec: ProviderSpec, root: Path, files: Iterable[Path] = ()) -> list[Path]:
    """The provider's code: the files its id, config or transform name (and an `exec:`
    command's script or module), plus `files`, closed over the project's Python
    imports."""
    project = project_root(root)
    named = referenced_files([spec.id, spec.config, spec.transform], root)
    named += command_files(spec.id, root)
    for name in command_modules(spec.id):
        named += _project_package(name, project)
    named += framework_code(spec.id, root, project)
    return expand_python_imports([*named, *files], project)


def framework_code(provider_id: str, root: Path, project: Path) -> list[Path]:
    """The project's files a framework id (`langgraph:graph.py:graph`,
    `pydantic-ai:my_app.agent:agent`) names: its module file, or the project's package
    of a dotted module."""
    from evals.agents.frameworks.common import FRAMEWORKS, module_file, parse_framework_id

    if not provider_id.startswith(tuple(FRAMEWORKS)):
        return []
    try:
        _, module, _ = parse_framework_id(provider_id)
    except SuiteError:
        return []
    found = module_file(module, root)
    if found is not None:
        return [found.resolve()]
    return _project_package(module.split(".")[0], project)


# Files that say which packages a project's code runs with, read whole.
DEPENDENCY_FILES = (
    "requirements.txt",
    "constraints.txt",
    "setup.py",
    "setup.cfg",
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile",
    "Pipfile.lock",
)
# The tables of pyproject.toml that name dependencies (the rest configures tools).
PYPROJECT_TABLES = (
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("project", "requires-python"),
    ("build-system",),
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "group"),
    ("tool", "uv"),
    ("tool", "pdm", "dev-dependencies"),
)


def dependency_files(folders: Iterable[Path]) -> list[Path]:
    """The dependency files (`DEPENDENCY_FILES` and `pyproject.toml`) in `folders`."""
    found: dict[Path, None] = {}
    for folder in folders:
        for name in (*DEPENDENCY_FILES, "pyproject.toml"):
            path = (folder / name).resolve()
            if path.is_file():
                found[path] = None
    return list(found)


_PYPROJECTS: dict[_FileKey, Any] = {}


def _pyproject_dependencies(path: Path) -> Any:
    """The dependency tables of a pyproject.toml (its digest when it does not parse),
    read once per version of the file."""
    file_key = _key(path)
    if file_key is not None and file_key in _PYPROJECTS:
        return _PYPROJECTS[file_key]
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return _digest_of(path).hex()
    chosen: dict[str, Any] = {}
    for keys in PYPROJECT_TABLES:
        value: Any = document
        for name in keys:
            value = value.get(name) if isinstance(value, dict) else None
        if value is not None:
            chosen[".".join(keys)] = value
    if file_key is not None:
        _PYPROJECTS[file_key] = chosen
    return chosen


def environment_document(project: Path, folders: Iterable[Path]) -> dict[str, Any]:
    """What the project's code runs with: each dependency file in `folders` by its path
    relative to `project`, as its content digest (`pyproject.toml`: its dependency
    tables only, so configuring a linter changes nothing)."""
    base = project.resolve()
    return {
        _shown_path(path, base): _pyproject_dependencies(path)
        if path.name == "pyproject.toml"
        else _digest_of(path).hex()
        for path in dependency_files(folders)
    }


def agent_fingerprint(spec: ProviderSpec, root: Path, files: Iterable[Path] = ()) -> str:
    """What the provider is: id, config (without credentials), transform, and its code.

    The code is every file the id, config or transform names (and an `exec:` command's
    script), plus `files`, closed over
    the project's Python imports: a one-word change to `agent.py` or to a module it
    imports changes the fingerprint. A provider with code of its own also covers the
    dependency files of the project and of the suite's folder (`environment_document`).
    """
    project = project_root(root)
    code = agent_code(spec, root, files)
    document: dict[str, Any] = {
        "id": spec.id,
        "config": _behaviour_config(spec.config),
        "transform": spec.transform,
    }
    if code:
        document["environment"] = environment_document(project, [project, root])
    return fingerprint(code, project, document)


# Providers answered by a model the id and config name: the fingerprint covers all the
# harness sends; the service behind the name may move, which the drift guard watches.
MODEL_PROVIDERS = ("openai:", "anthropic:")


def fingerprint_gap(spec: ProviderSpec, root: Path, files: Iterable[Path] = ()) -> str | None:
    """What of the agent its fingerprint cannot see, in words; None when it sees the code
    the agent runs: the project's Python files its id, config or transform names (and
    `files`, closed over their imports), or a model named by id and config (`echo`,
    `openai:`, `anthropic:`). An agent whose code lies outside the project (an HTTP
    endpoint, a command or an installed package the project does not hold) or is not
    Python (whose imports are not followed) can change without its fingerprint changing,
    so its stored runs are not reused unless asked for (`evals run --reuse-baseline`)."""
    if spec.id == "echo" or spec.id.startswith(MODEL_PROVIDERS):
        return None
    code = agent_code(spec, root, files)
    if not code:
        return (
            f"the code behind {spec.id} is not a file of the project, so a change to it "
            "would not change the agent's fingerprint"
        )
    foreign = sorted(path.name for path in code if path.suffix != ".py")
    if foreign:
        return f"{foreign[0]} is not Python: the fingerprint does not follow what it imports"
    return None


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
    canonical = _canonical(document)
    digest = hashlib.sha256(canonical)
    digest.update(b"\0")
    if b"file://" in canonical or b"python:" in canonical:  # most cases name no file
        files = referenced_files(
            [case.vars, document["assert"], case.options, case.scoring_function], root
        )
        _hash_files(digest, expand_python_imports(files), root)
    return digest.hexdigest()[:16]
