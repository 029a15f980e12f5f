"""Pick a report format from the output file's name, as promptfoo's `-o` does."""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationResult
from evals.tracing.redact import Redactor

Renderer = Callable[[EvaluationResult], str]

# Each format's module and function, imported when a report of that format is written.
# Longest suffix first, so `.junit.xml` wins over `.xml`.
FORMATS: dict[str, tuple[str, str]] = {
    ".junit.xml": ("evals.reports.junit", "render_junit"),
    ".jsonl": ("evals.reports.data_files", "render_jsonl"),
    ".json": ("evals.reports.data_files", "render_json"),
    ".yaml": ("evals.reports.data_files", "render_yaml"),
    ".yml": ("evals.reports.data_files", "render_yaml"),
    ".csv": ("evals.reports.data_files", "render_csv"),
    ".xml": ("evals.reports.junit", "render_junit"),
    ".md": ("evals.reports.markdown", "render_markdown"),
    ".markdown": ("evals.reports.markdown", "render_markdown"),
    ".html": ("evals.reports.html", "render_html"),
    ".htm": ("evals.reports.html", "render_html"),
}


def renderer_for(path: Path) -> Renderer:
    """The renderer for a file name; unknown extensions are an input error."""
    name = path.name.lower()
    for suffix, (module, function) in FORMATS.items():
        if name.endswith(suffix):
            return getattr(importlib.import_module(module), function)
    known = ", ".join(sorted(FORMATS))
    raise SuiteError(f"unknown report format for {path.name!r}", fix=f"use one of: {known}")


def checked_report_path(text: str) -> Path:
    """An `-o` file as an absolute path that can be written, checked before any run.

    Resolved against the working directory now, so an agent that changes directory does
    not move the report; refused (SuiteError naming the path) when its format is unknown,
    it is a directory, it lies under a file, or its directory cannot be written. Writing
    is tried, not guessed from permissions: a file is created and removed in the nearest
    existing directory (and an existing report opened for appending), so a file system
    that takes no new files (`/proc`, a read-only mount) is refused here, before any run.
    """
    path = Path(text).expanduser().absolute()
    renderer_for(path)
    fix = "give -o a file path in a directory you can write (missing directories are created)"
    if path.is_dir():
        raise SuiteError(f"-o {text}: {path} is a directory, not a file", fix=fix)
    above = next(p for p in path.parents if p.exists())
    if not above.is_dir():
        raise SuiteError(f"-o {text}: {above} is a file, not a directory", fix=fix)
    try:
        _try_writing(path, above)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SuiteError(f"-o {text}: {path} cannot be written ({reason})", fix=fix) from None
    return path


def _try_writing(path: Path, folder: Path) -> None:
    """Create and remove a file in `folder`, and open `path` for appending if it exists;
    OSError when either cannot be done."""
    if path.exists():
        with path.open("ab"):
            pass
    handle, probe = tempfile.mkstemp(prefix=".evals-write-check-", dir=folder)
    os.close(handle)
    os.unlink(probe)


def write_report(path: Path, result: EvaluationResult) -> None:
    """Write `result` to `path` in the format its extension names (parents are created).

    The text written passes the evaluation's redactor once more: the suite's prompts,
    vars and config hold the values of its `{{ env.X }}` references.
    """
    path = Path(path)
    content = Redactor(secrets=result.suite.secrets).text(renderer_for(path)(result))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
