"""The suite's `reports:` block: how much of an evaluation's runs the reports hold.

    reports:
      html_run_details: 500     # the most runs the HTML report details (default 2000)
      runs_in_memory: 20000     # below this, the reports read runs kept in memory (5000)

Neither changes what a suite measures, so neither enters the suite fingerprint.
"""

from __future__ import annotations

from typing import Any

from evals.model.bounds import COUNT, WHOLE, Bounds
from evals.model.suite import ReportSettings
from evals.suite import checks
from evals.suite.yaml_lines import line_of

_BOUNDS: dict[str, Bounds] = {"html_run_details": COUNT, "runs_in_memory": WHOLE}
_EXAMPLE = "reports: {html_run_details: 2000, runs_in_memory: 5000}"


def parse_report_settings(suite: dict[str, Any], file: str) -> ReportSettings:
    """The suite's `reports:` settings, the defaults for those it leaves out; a value that
    is not a whole number in range is a SuiteError naming its line."""
    raw = suite.get("reports")
    if raw is None:
        return ReportSettings()
    line = line_of(suite, "reports")
    checks.mapping(raw, "reports", file=file, line=line, example=_EXAMPLE)
    lines = getattr(raw, "key_lines", None)
    checks.known_keys(raw, _BOUNDS, "reports", file=file, lines=lines, line=line)
    defaults = ReportSettings()
    values = {
        key: checks.optional_number(
            raw.get(key),
            f"reports.{key}",
            bounds,
            file=file,
            line=line_of(raw, key) or line,
            example=_EXAMPLE,
        )
        for key, bounds in _BOUNDS.items()
    }
    return ReportSettings(
        **{
            key: getattr(defaults, key) if value is None else int(value)
            for key, value in values.items()
        }
    )
