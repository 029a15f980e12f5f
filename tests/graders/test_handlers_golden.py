"""Trace, tool-call, skill and guardrail assertions grade as promptfoo 0.121 does.

The rows come from tests/graders/promptfoo_handler_oracle.py, which calls promptfoo's own
runAssertion with the same response, provider tools and spans. Each row's verdict, score
and reason must match; a row where promptfoo threw must be an errored grade with the same
message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from assertion_kit import graded, make_assertion

from evals.agents.base import normalize_response
from evals.model.results import Grade

ROWS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "golden" / "promptfoo_handlers.json").read_text(encoding="utf-8")
)["rows"]


def _grade(row: dict[str, Any]) -> Grade:
    raw = {"output": row["output"], "metadata": row.get("metadata"), "trace": row.get("spans")}
    if "guardrails" in row:
        raw["guardrails"] = row["guardrails"]
    assertion = row["assertion"]
    return graded(
        make_assertion(assertion["type"], assertion.get("value")),
        row["output"],
        normalize_response(raw),
        prompt="the prompt",
        variables={},
        latency_ms=1.0,
        suite_root=Path("."),
        agent="echo",
        provider_config={"tools": row["tools"]} if row.get("tools") else {},
    )


def _label(index: int, row: dict[str, Any]) -> str:
    return f"{index}-{row['assertion']['type']}"


@pytest.mark.parametrize("row", ROWS, ids=[_label(i, r) for i, r in enumerate(ROWS)])
def test_matches_promptfoo(row: dict[str, Any]) -> None:
    grade = _grade(row)
    if "error" in row:
        assert grade.errored
        assert row["error"] in grade.reason
        return
    assert (grade.passed, grade.score, grade.reason) == (row["pass_"], row["score"], row["reason"])


def test_every_new_type_is_recorded() -> None:
    kinds = {r["assertion"]["type"].removeprefix("not-") for r in ROWS}
    assert kinds == {
        "trace-span-count",
        "trace-span-duration",
        "trace-error-spans",
        "is-valid-openai-tools-call",
        "skill-used",
        "guardrails",
    }
