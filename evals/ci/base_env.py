"""Main's side of a pull request, in an environment of its own.

The pull request's job has the pull request's code on its import path: the checkout on
`PYTHONPATH`, or the project installed into the job's interpreter (`pip install -e .` or
`pip install .`). Main's agent must not see any of it, or "main's agent" is the pull
request's agent measured twice. `base_environment` therefore gives the child process
that describes and runs main's suite (`evals.ci.checkout`):

- an import path of its own: the job's import path entries that lie inside the
  repository, each moved to the same place in the merge base's worktree (`src` becomes
  the worktree's `src`), and nothing else from `PYTHONPATH`;
- when the project is installed in the job's interpreter, or declares requirements
  (`requirements.txt` beside the project or the suite), a virtual environment built
  from the merge base: the harness as the job has it, the merge base's requirements,
  and the project installed from the worktree the way the job installed it (editable
  or not, with the same extras). The environment is cached under the digest of what
  decides its packages (the merge base's dependency files, the interpreter, the
  harness), so a pull request that leaves the dependencies alone reuses it and only
  reinstalls the project; a pull request that bumps an SDK gets main's SDK on main's
  side. `uv` builds it when it is on PATH (seconds), else `venv` and `pip`.

When the project under test is the harness itself, main's agent runs with the job's
harness: the import path still comes from the merge base.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals.model.errors import HarnessFault
from evals.suite.fingerprint import SITE_FOLDERS, dependency_files, local_source, site_folder

HARNESS = "evals-harness"
# The harness's extras that agents need to run (framework adapters, instrumentation);
# installed on main's side when the job has them.
AGENT_EXTRAS = ("openai-agents", "langgraph", "pydantic-ai", "instrumentation")
# Variables main's side never inherits: the store's write URL, and what would point it
# at the job's interpreter or packages.
DROPPED = ("EVALS_STORE_URL", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
READY = ".evals-env-ready"
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class BaseEnvironment:
    """The interpreter and environment variables main's side runs with, and a sentence
    saying what they are."""

    python: str
    env: dict[str, str]
    description: str


@dataclass(frozen=True, slots=True)
class ProjectInstall:
    """How the project under test is installed in the job's interpreter: its
    distribution, its folder relative to the repository, editable or not, its extras."""

    name: str
    folder: Path
    editable: bool
    extras: tuple[str, ...]

    def requirement(self, root: Path) -> list[str]:
        """The installer's arguments for the project at `root` (the merge base)."""
        path = str(root / self.folder)
        spec = f"{path}[{','.join(self.extras)}]" if self.extras else path
        return ["-e", spec] if self.editable else [spec]


def default_cache() -> Path:
    """Where environments are cached: $EVALS_ENV_CACHE, else the user's cache folder."""
    chosen = os.environ.get("EVALS_ENV_CACHE")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evals" / "envs"


def mapped_import_path(head: Path, base: Path, entries: Sequence[str], harness: Path) -> list[str]:
    """Each folder of `entries` inside the repository `head`, moved to the same place
    under `base`; installed packages, the folder holding the harness `harness` and
    anything outside the repository are left out."""
    kept: list[str] = []
    for entry in entries:
        path = Path(entry or ".").resolve()
        if not path.is_dir() or not path.is_relative_to(head):
            continue  # path hooks' markers (editable finders), zip files, other folders
        if path.name in SITE_FOLDERS or site_folder(path):
            continue
        if (path / harness.name).resolve() == harness:
            continue
        moved = str(base / path.relative_to(head))
        if moved not in kept:
            kept.append(moved)
    return kept


def left_out(head: Path) -> list[str]:
    """The `PYTHONPATH` entries outside the repository `head`: main's side never sees
    them."""
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    return [e for e in entries if not Path(e).resolve().is_relative_to(head)]


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _direct_url(dist: importlib.metadata.Distribution) -> dict[str, object]:
    try:
        data = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def installed_extras(dist: importlib.metadata.Distribution, among: Sequence[str] = ()) -> list[str]:
    """The extras of `dist` whose every requirement is installed here (the extras it was
    installed with, as far as the installed packages tell), optionally among `among`."""
    needs: dict[str, list[str]] = {}
    for requirement in dist.requires or []:
        found = _EXTRA.search(requirement)
        name = _NAME.match(requirement)
        if found and name:
            needs.setdefault(found.group(1), []).append(name.group(0))
    chosen = []
    for extra, names in sorted(needs.items()):
        if among and extra not in among:
            continue
        try:
            for required in names:
                importlib.metadata.distribution(required)
        except importlib.metadata.PackageNotFoundError:
            continue
        chosen.append(extra)
    return chosen


def installed_project(head: Path) -> ProjectInstall | None:
    """The distribution installed in this interpreter from a folder of the repository
    `head` (not the harness), or None."""
    for dist in importlib.metadata.distributions():
        direct = _direct_url(dist)
        source = local_source(direct.get("url"))
        name = str(dist.metadata["Name"] or "")
        if source is None or not source.is_relative_to(head) or _normalized(name) == HARNESS:
            continue
        info = direct.get("dir_info")
        editable = isinstance(info, dict) and bool(info.get("editable"))
        extras = tuple(installed_extras(dist))
        return ProjectInstall(name, source.relative_to(head), editable, extras)
    return None


def harness_requirement() -> list[str]:
    """The installer's arguments that install this very harness (with the agent extras
    the job has): from its folder, its VCS commit, its wheel, or its version."""
    try:
        dist = importlib.metadata.distribution(HARNESS)
    except importlib.metadata.PackageNotFoundError:
        folder = Path(__file__).resolve().parents[2]
        if (folder / "pyproject.toml").is_file():
            return ["-e", str(folder)]
        raise HarnessFault(
            "cannot tell how the harness was installed, to install it on main's side"
        ) from None
    extras = installed_extras(dist, AGENT_EXTRAS)
    named = f"{HARNESS}[{','.join(extras)}]" if extras else HARNESS
    direct = _direct_url(dist)
    url = direct.get("url")
    source = local_source(url)
    info = direct.get("dir_info")
    if source is not None and source.is_dir():
        spec = f"{source}[{','.join(extras)}]" if extras else str(source)
        return ["-e", spec] if isinstance(info, dict) and info.get("editable") else [spec]
    vcs = direct.get("vcs_info")
    if isinstance(url, str) and isinstance(vcs, dict):
        return [f"{named} @ {vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id', '')}"]
    if isinstance(url, str):
        return [f"{named} @ {url}"]
    return [f"{named}=={dist.version}"]


def requirement_files(base: Path, suite_folder: Path) -> list[Path]:
    """`requirements.txt` of the merge base's repository root and of the suite's folder."""
    found = []
    for folder in (base, base / suite_folder):
        path = folder / "requirements.txt"
        if path.is_file() and path not in found:
            found.append(path)
    return found


def environment_key(
    base: Path, suite_folder: Path, project: ProjectInstall | None, harness: list[str]
) -> str:
    """The digest of what decides main's side's packages: the interpreter, the harness,
    the merge base's dependency files, and how the project is installed."""
    digest = hashlib.sha256()
    facts = {
        "python": [sys.version, sys.platform, sys.implementation.cache_tag],
        "harness": harness,
        "project": [project.name, str(project.folder), project.editable, project.extras]
        if project
        else None,
    }
    digest.update(json.dumps(facts, sort_keys=True).encode())
    folders = [base, base / suite_folder] + ([base / project.folder] if project else [])
    for path in dependency_files(folders):
        digest.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in DROPPED}


class _Installer:
    """Builds a virtual environment with uv when it is on PATH, else venv and pip."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.uv = shutil.which("uv")
        scripts = "Scripts" if os.name == "nt" else "bin"
        self.bin = folder / scripts
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")

    @property
    def tool(self) -> str:
        return "uv" if self.uv else "pip"

    def _run(self, command: list[str], what: str) -> None:
        answer = subprocess.run(
            command, env=_clean_env(), capture_output=True, text=True, check=False
        )
        if answer.returncode != 0:
            tail = "\n".join((answer.stderr or answer.stdout).strip().splitlines()[-15:])
            raise HarnessFault(
                f"building main's environment failed ({what}, exit {answer.returncode}): "
                f"{tail}\n  fix: check that the merge base's dependencies install "
                f"(`{' '.join(command[-3:])}`), or clear the cache folder {self.folder.parent}"
            )

    def create(self) -> None:
        if self.uv:
            command = [self.uv, "venv", "--quiet", "--python", sys.executable, str(self.folder)]
        else:
            command = [sys.executable, "-m", "venv", str(self.folder)]
        self._run(command, "creating the virtual environment")

    def install(self, arguments: list[str], what: str) -> None:
        if self.uv:
            command = [self.uv, "pip", "install", "--quiet", "--python", str(self.python)]
        else:
            command = [str(self.python), "-m", "pip", "install", "--quiet"]
            command += ["--disable-pip-version-check"]
        self._run([*command, *arguments], what)

    def reinstall(self, project: ProjectInstall, arguments: list[str]) -> None:
        flags = ["--reinstall-package", project.name] if self.uv else ["--force-reinstall"]
        self.install(["--no-deps", *flags, *arguments], f"installing {project.name}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (two jobs on one machine share a cache)."""
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _installable(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file()


def _child_env(python_path: list[str], venv: Path | None, bin_dir: Path | None) -> dict[str, str]:
    env = _clean_env()
    if python_path:
        env["PYTHONPATH"] = os.pathsep.join(python_path)
    if venv is not None and bin_dir is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    return env


def _path_sentence(python_path: list[str], base: Path, dropped: list[str]) -> str:
    shown = ", ".join(str(Path(p).relative_to(base)) or "." for p in python_path)
    sentence = f"import path from the merge base: {shown or 'the suite folder only'}"
    if dropped:
        sentence += f" (PYTHONPATH entries outside the repository left out: {', '.join(dropped)})"
    return sentence


@contextlib.contextmanager
def base_environment(
    head: Path, base: Path, suite_folder: Path, cache: Path | None = None
) -> Iterator[BaseEnvironment]:
    """The environment main's side runs in, for the repository `head` whose merge base is
    checked out at `base`; `suite_folder` is the suite's folder relative to the
    repository. A virtual environment, when one is needed, is built (or reused) under
    `cache` (default `default_cache()`) and locked while it is in use."""
    harness = Path(__file__).resolve().parents[1]
    python_path = mapped_import_path(head, base, sys.path, harness)
    path_sentence = _path_sentence(python_path, base, left_out(head))
    project = installed_project(head)
    if project is not None and not _installable(base / project.folder):
        project = None  # the project is new in the pull request: nothing to install
    requirements = requirement_files(base, suite_folder)
    if project is None and not requirements:
        yield BaseEnvironment(
            sys.executable,
            _child_env(python_path, None, None),
            "main's side: the job's interpreter (the project is not installed in it), "
            + path_sentence,
        )
        return
    harness_args = harness_requirement()
    key = environment_key(base, suite_folder, project, harness_args)
    root = cache or default_cache()
    folder = root / key
    installer = _Installer(folder)
    with _locked(root / f"{key}.lock"):
        started = time.monotonic()
        if (folder / READY).is_file():
            if project is not None:
                installer.reinstall(project, project.requirement(base))
            how = f"reused from the cache ({installer.tool})"
        else:
            shutil.rmtree(folder, ignore_errors=True)
            installer.create()
            installer.install(harness_args, "installing the harness")
            for path in requirements:
                installer.install(["-r", str(path)], f"installing {path.relative_to(base)}")
            if project is not None:
                installer.install(project.requirement(base), f"installing {project.name}")
            (folder / READY).write_text(key, encoding="utf-8")
            how = f"built with {installer.tool} in {time.monotonic() - started:.0f} s"
        what = []
        if project is not None:
            mode = "editable" if project.editable else "not editable"
            extras = f", extras {', '.join(project.extras)}" if project.extras else ""
            what.append(f"{project.name} installed from the merge base ({mode}{extras})")
        what += [f"{p.relative_to(base)} of the merge base" for p in requirements]
        yield BaseEnvironment(
            str(installer.python),
            _child_env(python_path, folder, installer.bin),
            f"main's side: a virtual environment of its own ({'; '.join(what)}; environment "
            f"{key}, {how}), {path_sentence}",
        )
