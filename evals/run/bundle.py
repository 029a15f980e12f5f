"""What a Ray job ships to its workers: the suite folder and the agents' local code.

A worker on another node has none of the driver's files. The bundle is a staged copy of
the suite folder (without hidden files, caches and databases: a `.env` never leaves
the machine) and of every local file the suite and its agents' fingerprints cover
(`file://` references and the project's modules they import), laid out as they are
under the project root. Ray uploads it once as the job's `working_dir`; each worker
checks the files it received against the bundle's digest before it runs anything, so
the code that runs is the code that was fingerprinted. The `evals` package itself is
not shipped: the workers' image installs it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.model.suite import Suite
from evals.suite.fingerprint import agent_code, project_root

_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})
_SKIPPED_SUFFIXES = (".db", ".db-wal", ".db-shm", ".pyc", ".sqlite")


@dataclass(frozen=True, slots=True)
class Bundle:
    """A staged bundle: its folder, the suite file inside it, and its content digest."""

    directory: Path
    suite_path: str
    digest: str
    files: int

    def runtime_env(self, suite: Suite) -> dict[str, Any]:
        """Ray's runtime_env for the workers: the bundle as working_dir, pinned to the
        suite fingerprint (workers of another suite version are never reused)."""
        return {
            "working_dir": str(self.directory),
            "env_vars": {
                "EVALS_SUITE_FINGERPRINT": suite.fingerprint,
                "EVALS_BUNDLE_DIGEST": self.digest,
            },
        }


def _harness_folders() -> list[Path]:
    """The installed harness's own folders (the package and the folders it links)."""
    package = Path(__file__).resolve().parents[1]
    linked = [child.resolve() for child in package.iterdir() if child.is_symlink()]
    return [package.resolve(), *linked]


def _suite_folder_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(
            name for name in subfolders if not name.startswith(".") and name not in _SKIPPED_FOLDERS
        )
        found.extend(
            Path(folder, name).resolve()
            for name in names
            if not name.startswith(".") and not name.endswith(_SKIPPED_SUFFIXES)
        )
    return found


def bundle_files(suite: Suite) -> list[Path]:
    """Every file a worker needs: the suite folder, the suite's referenced files and its
    agents' local code, without the harness's own files."""
    root = suite.root.resolve()
    files = {*_suite_folder_files(root), *(Path(f).resolve() for f in suite.files)}
    for spec in suite.providers:
        files.update(path.resolve() for path in agent_code(spec, root))
    harness = _harness_folders()
    return sorted(
        path
        for path in files
        if path.is_file() and not any(path.is_relative_to(h) for h in harness)
    )


def _digest(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for rel, path in sorted(files):
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def stage_bundle(suite: Suite, into: Path) -> Bundle:
    """Copy the suite's bundle into the empty folder `into`, under their common base
    (the project root when every file is inside it)."""
    files = bundle_files(suite)
    root = suite.root.resolve()
    base = project_root(root)
    if not all(path.is_relative_to(base) for path in files):
        base = Path(os.path.commonpath([root, *files]))
    staged: list[tuple[str, Path]] = []
    for path in files:
        rel = path.relative_to(base).as_posix()
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        staged.append((rel, target))
    suite_path = suite.path.resolve().relative_to(base).as_posix()
    return Bundle(into, suite_path, _digest(staged), len(staged))


def verify_bundle(directory: Path, digest: str) -> str | None:
    """None when `directory` holds exactly the bundle of `digest`, else what differs.

    Bytecode caches are not part of a bundle: Python writes them next to the shipped
    modules when a worker imports them, and workers of one node share the directory.
    """
    files = [
        (path.relative_to(directory).as_posix(), path)
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    ]
    found = _digest(files)
    if found != digest:
        return (
            f"the files shipped to the worker (digest {found}) are not the bundle the "
            f"driver staged (digest {digest})"
        )
    return None
