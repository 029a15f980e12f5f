"""Property: any record the harness can produce comes back from the store unchanged."""

from __future__ import annotations

import math
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.trajectory import Step
from evals.store import Store
from evals.store.codec import RunRow, encode_run
from tests.store.records import make_meta

pytestmark = pytest.mark.slow

# Text columns hold UTF-8: no lone surrogates, and on PostgreSQL no NUL characters.
text = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | finite | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(text, json_values, max_size=3)

steps = st.builds(
    Step,
    kind=st.sampled_from(["model", "tool", "approval", "message"]),
    name=text,
    arguments=st.none() | json_objects,
    result=json_values,
    error=st.none() | text,
    started_at=st.none() | finite,
    input_tokens=st.none() | st.integers(0, 10**6),
    cost=st.none() | finite,
    effect=st.none() | st.sampled_from(["read", "write"]),
    metadata=json_objects,
)

assertions = st.none() | st.fixed_dictionaries(
    {"type": text},
    optional={"metric": text, "weight": st.integers(0, 5) | finite, "value": json_values},
)

grades = st.recursive(
    st.builds(
        Grade,
        passed=st.booleans(),
        score=finite,
        reason=text,
        assertion=assertions,
        named_scores=st.dictionaries(text, finite, max_size=2),
        tokens_used=st.dictionaries(text, st.integers(0, 1000), max_size=2),
        policy_violation=st.booleans(),
        errored=st.booleans(),
        metadata=json_objects,
    ),
    lambda inner: st.builds(
        Grade,
        passed=st.booleans(),
        score=finite,
        reason=text,
        assertion=assertions,
        component_results=st.lists(inner, max_size=3),
    ),
    max_leaves=6,
)

responses = st.builds(
    AgentResponse,
    output=json_values,
    error=st.none() | text,
    token_usage=st.dictionaries(
        st.sampled_from(["total", "prompt", "completion", "cached"]), st.integers(0, 10**6)
    ),
    cost=st.none() | finite,
    metadata=json_objects,
    trajectory=st.lists(steps, max_size=3),
    stop_reason=st.none() | text,
    finish_reason=st.none() | text,
    latency_ms=st.none() | finite,
    cached=st.booleans(),
    trace=st.lists(json_objects, max_size=2),
)

records = st.builds(
    RunRecord,
    key=st.builds(RunKey, text, text, text, st.integers(0, 50)),
    case_index=st.integers(0, 1000),
    prompt_index=st.integers(0, 5),
    agent_index=st.integers(0, 5),
    seed=st.integers(0, 2**31 - 1),
    prompt=text,
    vars=json_objects,
    response=responses,
    status=st.sampled_from(["pass", "fail", "error"]),
    grade=st.none() | grades,
    error=st.none() | text,
    error_kind=st.none() | st.sampled_from(["agent_error", "timeout", "infra"]),
    latency_ms=finite,
    started_at=finite,
    ended_at=finite,
    metadata=json_objects,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(record=records)
def test_any_record_round_trips(store: Store, record: RunRecord) -> None:
    evaluation_id = uuid.uuid4().hex
    store.create_evaluation(make_meta(evaluation_id))
    assert store.add_runs(evaluation_id, [record]) == 1

    assert store.load_runs(evaluation_id) == [record]


@settings(max_examples=200, deadline=None)
@given(record=records)
def test_each_value_of_the_run_row_is_the_field_it_is_named_after(record: RunRecord) -> None:
    """`encode_run` builds the row's values in place order; read by name, each is the
    record's own (the columns the round trip does not read back included)."""
    values, _ = encode_run("ev", record)
    row = RunRow._make(values)
    response, grade = record.response, record.grade
    usage = response.token_usage

    def tokens(name: str) -> int | None:
        value = usage.get(name)
        return int(value) if isinstance(value, int | float) else None

    assert row.evaluation_id == "ev"
    assert (row.prompt_id, row.case_id, row.agent, row.repeat) == record.key.as_tuple()
    assert (row.case_index, row.prompt_index, row.agent_index, row.seed) == (
        record.case_index,
        record.prompt_index,
        record.agent_index,
        record.seed,
    )
    assert (row.prompt, row.vars, row.status) == (record.prompt, record.vars or None, record.status)
    assert (row.error, row.error_kind) == (record.error, record.error_kind)
    assert row.output is response.output
    assert row.passed == (None if grade is None else grade.passed)
    assert row.score == (None if grade is None or math.isnan(grade.score) else grade.score)
    assert (row.input_tokens, row.output_tokens) == (tokens("prompt"), tokens("completion"))
    assert (row.total_tokens, row.cost) == (record.total_tokens, response.cost)
    assert (row.latency_ms, row.started_at, row.ended_at) == (
        record.latency_ms,
        record.started_at,
        record.ended_at,
    )
    assert (row.steps, row.stop_reason) == (len(response.trajectory), response.stop_reason)
    assert row.trace == (response.trace or None)


def _preorder(grade: Grade | None) -> list[tuple[Grade, int | None]]:
    """A grade tree's nodes in pre-order with their parents' positions, by recursion."""
    nodes: list[tuple[Grade, int | None]] = []

    def visit(node: Grade, parent: int | None) -> None:
        position = len(nodes)
        nodes.append((node, parent))
        for child in node.component_results:
            visit(child, position)

    if grade is not None:
        visit(grade, None)
    return nodes


def _detail(node: Grade) -> dict[str, object]:
    detail: dict[str, object] = {} if node.assertion is None else {"assertion": node.assertion}
    for name in ("named_scores", "tokens_used", "metadata"):
        if getattr(node, name):
            detail[name] = getattr(node, name)
    return detail


@settings(max_examples=200, deadline=None)
@given(record=records)
def test_grade_rows_and_details_follow_the_tree_in_preorder(record: RunRecord) -> None:
    row, grade_rows = encode_run("ev", record)
    nodes = _preorder(record.grade)
    assert [values[:2] for values in grade_rows] == [
        (position, parent) for position, (_, parent) in enumerate(nodes)
    ]
    verdicts = [(node.passed, node.score, node.reason) for node, _ in nodes]
    assert [values[3:6] for values in grade_rows] == verdicts
    details = [_detail(node) for node, _ in nodes]
    stored = (RunRow._make(row).extra or {}).get("grade_details")
    assert stored == (details if any(details) else None)


def _scores(grade: Grade | None) -> list[float]:
    return [node.score for node, _ in _preorder(grade)]


def test_non_finite_scores_round_trip_and_leave_the_score_columns_valid(store: Store) -> None:
    """A check may score NaN or an infinity (a javascript check returning NaN): the grade
    tree reads back with them, and the run's score column holds no NaN."""
    import dataclasses

    from tests.store.records import make_record

    nan, inf = float("nan"), float("inf")
    children = [
        Grade(False, nan, "Custom function returned false\nNaN", {"type": "javascript"}),
        Grade(True, inf, "Assertion passed", {"type": "javascript"}),
        Grade(True, 1.0, "Assertion passed", {"type": "contains"}, named_scores={"m": 1.0}),
    ]
    grade = Grade(False, nan, "Custom function returned false\nNaN", component_results=children)
    record = dataclasses.replace(make_record(0, 0, 0), grade=grade, status="fail")
    row, grade_rows = encode_run("ev", record)
    assert RunRow._make(row).score is None
    assert all(math.isfinite(values[4]) or values[4] == inf for values in grade_rows)

    evaluation_id = uuid.uuid4().hex
    store.create_evaluation(make_meta(evaluation_id))
    store.add_runs(evaluation_id, [record])
    (loaded,) = store.load_runs(evaluation_id)
    scores = _scores(loaded.grade)
    assert math.isnan(scores[0]) and math.isnan(scores[1])
    assert scores[2:] == [inf, 1.0]
    assert loaded.grade is not None and loaded.grade.component_results[2].named_scores == {"m": 1.0}
