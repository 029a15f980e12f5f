"""The report formats: one table says which file names choose which format and renderer.

`evals run -o`, `evals merge`, the pytest plugin's `--evals-output` and their help text
all read this table; importing it loads nothing else, so the command line can show the
suffixes without importing a renderer. A plugin adds a format through the entry-point
group `evals.reports` (docs/extending.md): the entry point's name is its suffix, its
value the renderer, loaded when a report of that format is written.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReportFormat:
    """One report format: its name, the file-name suffixes that choose it (the first is the
    usual one), the renderer (`module:function`, taking an `EvaluationResult` and returning
    the file's text, or its parts in order) and whether `evals run` writes it while the
    runs complete."""

    name: str
    suffixes: tuple[str, ...]
    renderer: str
    streamed: bool = False


FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat(
        "promptfoo JSON", (".json",), "evals.reports.data_files:json_parts", streamed=True
    ),
    ReportFormat("JSON Lines", (".jsonl",), "evals.reports.data_files:render_jsonl"),
    ReportFormat("CSV", (".csv",), "evals.reports.data_files:render_csv"),
    ReportFormat("YAML", (".yaml", ".yml"), "evals.reports.data_files:render_yaml"),
    ReportFormat("Markdown", (".md", ".markdown"), "evals.reports.markdown:render_markdown"),
    ReportFormat("JUnit XML", (".xml", ".junit.xml"), "evals.reports.junit:render_junit"),
    ReportFormat("HTML", (".html", ".htm"), "evals.reports.html:render_html"),
)


def builtin_suffixes() -> list[str]:
    """Every suffix of the built-in formats, in the table's order."""
    return [suffix for fmt in FORMATS for suffix in fmt.suffixes]


def output_help(lead: str = "report file") -> str:
    """The help text of an option naming a report file: the format goes by its suffix."""
    return f"{lead}; format by extension: {' '.join(builtin_suffixes())} (docs/reports.md)"
