"""Report writers: promptfoo-format JSON/YAML/JSONL/CSV, JUnit XML, Markdown, HTML, terminal.

`render_terminal`, `write_report` and `FORMATS` are imported on first use, so a process
that needs one report module (the JSON report process) does not load the others.
"""

from typing import Any

__all__ = ["FORMATS", "STORE_WITH_REPORT", "render_terminal", "write_report"]

STORE_WITH_REPORT = "evals.reports.json_spool"
"""The entry module of a store process with the JSON report on board: start the
`StoreProcess` with `module=STORE_WITH_REPORT` and hand it to `ReportProcess`
(`json_stream`). Defined here, where importing it loads nothing, so the store process
can start before the report's modules are imported."""


def __getattr__(name: str) -> Any:
    if name == "render_terminal":
        from evals.reports.terminal import render_terminal

        return render_terminal
    if name in ("FORMATS", "write_report"):
        from evals.reports import writers

        return getattr(writers, name)
    raise AttributeError(f"module 'evals.reports' has no attribute {name!r}")
