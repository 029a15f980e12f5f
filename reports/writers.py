"""Pick a report format from the output file's name, as promptfoo's `-o` does."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from evals.errors import SuiteError
from evals.evaluation import EvaluationResult

Renderer = Callable[[EvaluationResult], str]

# Each format's module and function, imported when a report of that format is written.
# Longest suffix first, so `.junit.xml` wins over `.xml`.
FORMATS: dict[str, tuple[str, str]] = {
    ".junit.xml": ("reports.junit", "render_junit"),
    ".jsonl": ("reports.data_files", "render_jsonl"),
    ".json": ("reports.data_files", "render_json"),
    ".yaml": ("reports.data_files", "render_yaml"),
    ".yml": ("reports.data_files", "render_yaml"),
    ".csv": ("reports.data_files", "render_csv"),
    ".xml": ("reports.junit", "render_junit"),
    ".md": ("reports.markdown", "render_markdown"),
    ".markdown": ("reports.markdown", "render_markdown"),
    ".html": ("reports.html", "render_html"),
    ".htm": ("reports.html", "render_html"),
}


def renderer_for(path: Path) -> Renderer:
    """The renderer for a file name; unknown extensions are an input error."""
    name = path.name.lower()
    for suffix, (module, function) in FORMATS.items():
        if name.endswith(suffix):
            return getattr(importlib.import_module(module), function)
    known = ", ".join(sorted(FORMATS))
    raise SuiteError(f"unknown report format for {path.name!r}", fix=f"use one of: {known}")


def write_report(path: Path, result: EvaluationResult) -> None:
    """Write `result` to `path` in the format its extension names (parents are created)."""
    path = Path(path)
    content = renderer_for(path)(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
