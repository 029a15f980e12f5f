"""Every golden row recorded from real promptfoo must grade the same here.

The rows come from tests/graders/promptfoo_oracle.py (see golden/README.md). For each
row the verdict and the score (to 4 decimals) must match; the reason must match exactly,
except where the tail is the regex engine's own words (REASON_PREFIX_ONLY).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from assertion_kit import run

from evals.graders.registry import get_grader

ROWS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "golden" / "promptfoo_outputs.json").read_text(encoding="utf-8")
)["rows"]

# Messages whose tail is a parser's own error text (regex engine, XML parser, SQL parser).
REASON_PREFIX_ONLY = (
    "Invalid regex pattern: ",
    "XML parsing failed: ",
    "SQL statement does not conform to the provided MySQL database syntax. SQL validation failed: ",
)


def _grade(row: dict[str, Any]) -> Any:
    assertion = dict(row["assertion"])
    kind = assertion.pop("type")
    value = assertion.pop("value", None)
    return run(kind, row["output"], value, **assertion)


def _reason_matches(expected: str, actual: str) -> bool:
    for prefix in REASON_PREFIX_ONLY:
        if expected.startswith(prefix):
            return actual.startswith(prefix)
    return expected == actual


def _label(row: dict[str, Any]) -> str:
    return f"{row['assertion']['type']}:{json.dumps(row['output'])[:40]}"


@pytest.mark.parametrize("row", ROWS, ids=[_label(r) for r in ROWS])
def test_matches_promptfoo(row: dict[str, Any]) -> None:
    kind = row["assertion"]["type"].removeprefix("not-")
    if get_grader(kind) is None:
        pytest.skip(f"no {kind} grader")
    grade = _grade(row)
    if "error" in row:
        assert grade.errored, row["error"]
        return
    assert grade.passed == row["pass_"], grade.reason
    assert round(grade.score, 4) == round(row["score"], 4)
    assert _reason_matches(row["reason"], grade.reason), (row["reason"], grade.reason)
