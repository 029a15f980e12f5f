"""Report writers: promptfoo-format JSON/YAML/JSONL/CSV, JUnit XML, Markdown, HTML, terminal."""

from evals.reports.terminal import render_terminal
from evals.reports.writers import FORMATS, write_report

__all__ = ["FORMATS", "render_terminal", "write_report"]
