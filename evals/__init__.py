"""evals: a regression harness for tool-using LLM agents.

Everything imports as `evals.*`. The graders, report writers and dashboard live in the
top-level folders `graders/`, `reports/` and `dashboard/` of the source tree and are
installed inside this package as `evals.graders`, `evals.reports` and `evals.dashboard`
(pyproject's `package-dir`). When this package runs from a source checkout instead (tests
from the repository root, `python -m evals` there), the finder below maps the same three
names onto those folders, so every import resolves to the same files either way.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

__version__ = "0.1.0"

_MAPPED_FOLDERS = ("graders", "reports", "dashboard")


class _SourceTreeFinder:
    """Finds `evals.graders`, `evals.reports` and `evals.dashboard` in a source checkout.

    A meta path finder (no `importlib.abc` base: importing it costs the command's start-up
    a few hundredths of a second).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of a mapped folder's package; None for every other module."""
        parent, _, name = fullname.rpartition(".")
        if parent != __name__ or name not in _MAPPED_FOLDERS:
            return None
        folder = self.root / name
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def _map_source_tree() -> None:
    here = Path(__file__).resolve().parent
    if (here / "graders").is_dir() or not (here.parent / "graders" / "__init__.py").is_file():
        return  # installed: the folders are inside this package
    if not any(isinstance(finder, _SourceTreeFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourceTreeFinder(here.parent))


_map_source_tree()
