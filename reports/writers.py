"""Pick a report format from the output file's name, as promptfoo's `-o` does."""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

from evals.common import plugins
from evals.common.plugins import Plugin
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationResult
from evals.reports.formats import FORMATS, ReportFormat, builtin_suffixes
from evals.tracing.redact import Redactor

Renderer = Callable[[EvaluationResult], str | Iterable[str]]
"""A format's renderer: the whole text, or its parts in order (a row or a line each),
written as they come so a report of a million runs is never held whole."""


def _plugin_formats() -> list[tuple[ReportFormat, Plugin]]:
    """The report formats installed plugins add (entry-point group `evals.reports`: the
    name is the suffix, the value the renderer), none of them imported."""
    found = []
    taken = set(builtin_suffixes())
    for suffix in plugins.names(plugins.REPORTS):
        plugin = plugins.find(plugins.REPORTS, suffix)
        assert plugin is not None
        if not suffix.startswith(".") or suffix.lower() in taken:
            raise plugins.PluginError(
                f"plugin {plugin.describe()} names a report suffix that "
                + ("does not start with '.'" if not suffix.startswith(".") else "is built in"),
                fix="name the entry point after a suffix of its own, such as .acme.txt",
            )
        fmt = ReportFormat(f"{suffix} ({plugin.distribution})", (suffix.lower(),), plugin.value)
        found.append((fmt, plugin))
    return found


def find_format(path: Path | str) -> ReportFormat | None:
    """The format a file name chooses: the longest suffix it ends with among the built-in
    formats and those of installed plugins (`.junit.xml` wins over `.xml`); None when no
    suffix matches."""
    return _choose(path, [*FORMATS, *(fmt for fmt, _ in _plugin_formats())])


def _choose(path: Path | str, formats: list[ReportFormat]) -> ReportFormat | None:
    name = Path(path).name.lower()
    matches = [(len(s), fmt) for fmt in formats for s in fmt.suffixes if name.endswith(s)]
    return max(matches, key=lambda match: match[0])[1] if matches else None


def is_report_path(text: str) -> bool:
    """True when `text` names a report file (a known suffix, not a URL)."""
    return "://" not in text and find_format(text) is not None


def renderer_for(path: Path) -> Renderer:
    """The renderer for a file name; unknown extensions are an input error."""
    installed = _plugin_formats()
    fmt = _choose(path, [*FORMATS, *(fmt for fmt, _ in installed)])
    if fmt is None:
        known = sorted([*builtin_suffixes(), *(f.suffixes[0] for f, _ in installed)])
        raise SuiteError(
            f"unknown report format for {path.name!r}", fix=f"use one of: {', '.join(known)}"
        )
    plugin = next((p for f, p in installed if f is fmt), None)
    if plugin is None:
        module, function = fmt.renderer.split(":")
        return cast(Renderer, getattr(importlib.import_module(module), function))
    renderer = plugins.load(plugin)
    if not callable(renderer):
        raise plugins.wrong_kind(plugin, "a function of an EvaluationResult returning text")
    return cast(Renderer, plugins.guarded(plugin, renderer, "rendering its report"))


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
    vars and config hold the values of its `{{ env.X }}` references. The file appears
    whole or not at all.
    """
    path = Path(path)
    if path.is_symlink():  # the file it points to is the report
        path = path.resolve()
    redactor = Redactor(secrets=result.suite.secrets)
    content = renderer_for(path)(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    # written beside it and moved into place once whole, so a report that fails halfway
    # leaves the previous file as it was, not a truncated one
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # the umask applies
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for part in [content] if isinstance(content, str) else content:
                out.write(redactor.text(part))
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
