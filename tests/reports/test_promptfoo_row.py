"""Rows built from encoded runs say what the run records they were encoded from say.

The JSON report builds each promptfoo row from a run's encoded form (what the results
store receives), not from a RunRecord; these properties hold that form against the
record itself, its grade tree against `Grade.to_dict` and its steps against
`Step.to_dict`, for any record the harness can produce.
"""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evals.model.results import RunRecord, promptfoo_components
from evals.pipeline.merge import record_from_row
from evals.reports.promptfoo_row import (
    ERROR_FAILURE,
    PASS,
    accumulate,
    empty_metrics,
    encoded_row,
    failure_code,
    grade_dicts,
    row_id,
)
from evals.store.codec import EncodedRun, RunRow, encode_run
from tests.store.test_store_properties import records

COLUMN = {"index": 1, "label": "p", "promptId": "abc", "provider": {"id": "echo", "label": "e"}}
TEST = {"description": None, "vars": {}, "assert": [], "options": {}, "metadata": {"m": 1}}


def _read(encoded: EncodedRun) -> tuple[RunRow, list[tuple[Any, ...]]]:
    """An encoded run as the report reads it: its row by name, and its grade rows."""
    values, grade_rows = encoded
    return RunRow._make(values), grade_rows


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records)
def test_the_grade_tree_is_the_records(record: RunRecord) -> None:
    run, grade_rows = _read(encode_run("ev", record))
    details = (run.extra or {}).get("grade_details")
    expected = record.grade.to_dict() if record.grade is not None else None
    assert grade_dicts(grade_rows, details) == expected


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records)
def test_the_row_says_what_the_record_says(record: RunRecord) -> None:
    row = encoded_row(*_read(encode_run("ev", record)), COLUMN, TEST, "ev")
    response = record.response
    reason = failure_code(record.status)
    assert row["failureReason"] == reason
    assert row["success"] == (record.status == "pass") == (reason == PASS)
    assert row["id"] == row_id("ev/" + "/".join(map(str, record.key.as_tuple())))
    # promptfoo's 0 for a cost it was not given; null for one the harness could not work out
    assert row["cost"] == (None if record.cost_unknown else record.cost or 0.0)
    # promptfoo's `response.latencyMs ?? wallTime`: the reported latency, else the wall time.
    reported = response.latency_ms
    assert row["latencyMs"] == (round(record.latency_ms) if reported is None else reported)
    assert row["metadata"]["evals"]["wallLatencyMs"] == record.latency_ms
    assert row["vars"] == record.vars
    assert row["prompt"] == {"raw": record.prompt, "label": "p", "config": {}}
    assert (row["promptIdx"], row["promptId"], row["provider"]) == (1, "abc", COLUMN["provider"])
    details = row["metadata"]["evals"]
    assert details["trajectory"] == [step.to_dict() for step in response.trajectory]
    assert (details["caseId"], details["agent"], details["repeat"]) == (
        record.key.case_id,
        record.key.agent,
        record.key.repeat,
    )
    assert details["policyViolation"] == bool(record.grade and record.grade.policy_violation)
    # The test's metadata, the response's over it.
    assert row["metadata"]["m"] == response.metadata.get("m", 1)
    assert row["metadata"]["repeatIndex"] == record.key.repeat
    if reason == ERROR_FAILURE:
        assert row["error"] == (record.error or response.error or "error")
        assert row["score"] == 0
    if record.status == "error" and response.output is None:
        assert row["response"] == {"error": record.error or response.error or "error"}
    else:
        assert row["response"]["output"] == response.output
        assert row["response"].get("tokenUsage", {}) == response.token_usage
        assert row["response"].get("metadata", {}) == response.metadata
        assert row["response"]["cached"] is response.cached
        assert row["response"].get("latencyMs") == reported
    if record.grade is None:
        assert row["gradingResult"] is None
        assert row["namedScores"] == {}
    else:
        assert row["gradingResult"]["pass"] == record.grade.passed
        if reason != ERROR_FAILURE:
            assert row["namedScores"] == record.grade.named_scores
            assert row["score"] == record.grade.score
        else:  # the checks graded beside the one that raised, but no scores, as promptfoo
            assert row["namedScores"] == {}


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records)
def test_a_merged_row_keeps_both_latencies(record: RunRecord) -> None:
    """A JSON shard's row gives back the harness's wall time and the reported latency,
    though its `latencyMs` is the reported one when there is one."""
    row = encoded_row(*_read(encode_run("ev", record)), COLUMN, TEST, "ev")
    merged = record_from_row(json.loads(json.dumps(row)))
    assert merged.latency_ms == record.latency_ms
    if not (record.status == "error" and record.response.output is None):
        assert merged.response.latency_ms == record.response.latency_ms


@given(name=st.text())
def test_a_row_id_is_the_name_based_uuid_of_its_run(name: str) -> None:
    assert row_id(name) == str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def _grade_tree(score: float) -> RunRecord:
    from evals.model.results import Grade
    from tests.store.records import make_record

    check = Grade(False, score, "Custom function returned false", {"type": "javascript"})
    grade = Grade(False, score, "Custom function returned false", component_results=[check])
    return dataclasses.replace(make_record(0, 0, 0), grade=grade, status="fail")


def test_a_nan_score_reaches_the_row_and_the_column_as_nan() -> None:
    """promptfoo's row carries NaN (its output file writes null); the column's score too."""
    row = encoded_row(*_read(encode_run("ev", _grade_tree(math.nan))), COLUMN, TEST, "ev")
    assert math.isnan(row["score"])
    assert math.isnan(row["gradingResult"]["score"])
    assert math.isnan(row["gradingResult"]["componentResults"][0]["score"])
    metrics = empty_metrics()
    accumulate(metrics, row)
    assert math.isnan(metrics["score"]) and metrics["assertFailCount"] == 1


def test_an_infinite_score_reaches_the_row() -> None:
    row = encoded_row(*_read(encode_run("ev", _grade_tree(math.inf))), COLUMN, TEST, "ev")
    assert row["score"] == math.inf == row["gradingResult"]["componentResults"][0]["score"]


def _component(kind: str | None, passed: bool, *subs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"pass": passed, "score": float(passed), "reason": kind or "set"}
    if kind is not None:
        out["assertion"] = {"type": kind}
    if subs:
        out["componentResults"] = list(subs)
    return out


def test_component_results_a_check_returned_follow_it_with_its_assertion() -> None:
    inner = _component(None, False)
    own = _component("contains", True)
    listed = promptfoo_components([_component("javascript", True, inner, own)])
    assert [(c["assertion"]["type"], c["pass"]) for c in listed] == [
        ("javascript", True),
        ("javascript", False),
        ("contains", True),
    ]


def test_an_assert_set_lists_its_components_as_its_own_result_lists_them() -> None:
    script = _component("python", True, _component(None, False))
    listed = promptfoo_components(
        [_component("assert-set", True, script, _component("equals", True))]
    )
    assert [((c.get("assertion") or {}).get("type"), c["pass"]) for c in listed] == [
        (None, True),
        ("python", True),
        ("python", False),
        ("equals", True),
    ]
    assert "assertion" not in listed[0] and len(listed[0]["componentResults"]) == 3


def test_results_without_components_are_listed_as_they_are() -> None:
    plain = [_component("contains", True), _component("equals", False)]
    assert promptfoo_components(plain) == plain
