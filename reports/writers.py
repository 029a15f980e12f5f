"""Pick a report format from the output file's name, as promptfoo's `-o` does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evals.errors import SuiteError
from evals.evaluation import EvaluationResult
from reports.data_files import render_csv, render_json, render_jsonl, render_yaml
from reports.html import render_html
from reports.junit import render_junit
from reports.markdown import render_markdown

Renderer = Callable[[EvaluationResult], str]

# Longest suffix first, so `.junit.xml` wins over `.xml`.
FORMATS: dict[str, Renderer] = {
    ".junit.xml": render_junit,
    ".jsonl": render_jsonl,
    ".json": render_json,
    ".yaml": render_yaml,
    ".yml": render_yaml,
    ".csv": render_csv,
    ".xml": render_junit,
    ".md": render_markdown,
    ".markdown": render_markdown,
    ".html": render_html,
    ".htm": render_html,
}


def renderer_for(path: Path) -> Renderer:
    """The renderer for a file name; unknown extensions are an input error."""
    name = path.name.lower()
    for suffix, renderer in FORMATS.items():
        if name.endswith(suffix):
            return renderer
    known = ", ".join(sorted(FORMATS))
    raise SuiteError(f"unknown report format for {path.name!r}", fix=f"use one of: {known}")


def write_report(path: Path, result: EvaluationResult) -> None:
    """Write `result` to `path` in the format its extension names (parents are created)."""
    path = Path(path)
    content = renderer_for(path)(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
