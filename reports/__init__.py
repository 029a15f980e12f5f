"""Report writers: promptfoo-format JSON/YAML/JSONL/CSV, JUnit XML, Markdown, HTML, terminal.

The names of `__init__.pyi` are imported on first use, so a process that needs one report
module (the JSON report process) does not load the others.
"""

from evals.common.stubs import public_names

STORE_WITH_REPORT = "evals.reports.json_spool"
"""The entry module of a store process with the JSON report on board: start the
`StoreProcess` with `module=STORE_WITH_REPORT` and hand it to `ReportProcess`
(`json_stream`). Defined here, where importing it loads nothing, so the store process
can start before the report's modules are imported."""

__getattr__, __dir__ = public_names(__name__, __file__, "STORE_WITH_REPORT")
