"""The pure parts of the What changed, Compare and Case pages: ranking changes, finding
when a verdict began, and diffing two texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.dashboard import changes, diffs, frames, history


def _case(case_id: str, verdict: str, priority: str | None, q: float | None) -> dict:
    return {
        "case_id": case_id,
        "description": case_id,
        "priority": priority,
        "tags": [],
        "verdict": verdict,
        "baseline": {"pass_rate": 0.9, "runs": 8},
        "candidate": {"pass_rate": 0.2, "runs": 8},
        "difference": -0.7,
        "interval": [-0.9, -0.4],
        "p_value": q,
        "p_adjusted": q,
        "level": 0.99,
        "reason": "",
    }


def test_case_table_puts_regressions_first_by_priority_then_evidence() -> None:
    comparison = {
        "cases": [
            _case("inconclusive-p0", "inconclusive", "P0", 0.5),
            _case("better", "improvement", "P0", 0.001),
            _case("worse-p1-strong", "regression", "P1", 0.0001),
            _case("worse-p0-weak", "regression", "P0", 0.04),
            _case("worse-p0-strong", "regression", "P0", 0.001),
            _case("worse-p10", "regression", "P10", 0.0001),
        ]
    }
    table = frames.case_table(comparison, [], {"worse-p0-weak": "contains ×3: no 6.45 %"})
    assert list(table["case"]) == [
        "worse-p0-strong",
        "worse-p0-weak",
        "worse-p1-strong",
        "worse-p10",
        "better",
        "inconclusive-p0",
    ]
    assert table.set_index("case").loc["worse-p0-weak", "failing_assertion"].startswith("contains")


def test_changes_rank_tags_before_cases_and_carry_their_onset() -> None:
    comparison = {
        "tags": [
            {
                "group": "noticias",
                "verdict": "regression",
                "p_adjusted": 0.01,
                "baseline_rate": 0.8,
                "candidate_rate": 0.1,
                "difference": -0.7,
                "interval": [-0.9, -0.5],
                "level": 0.99,
            }
        ],
        "cases": [
            _case("worse", "regression", "P0", 0.02),
            _case("same", "inconclusive", None, 0.6),
        ],
    }
    listed = [
        {"id": f"e{n}", "started_at": float(n), "git_commit": f"{n:040x}"} for n in (4, 3, 2, 1)
    ]
    stored = {"e4": "regression", "e3": "regression", "e2": "equivalent", "e1": "regression"}
    found = history.onsets(
        {
            "evaluations": listed,
            "verdicts": [
                {"evaluation_id": e, "kind": "case", "name": "worse", "verdict": v}
                for e, v in stored.items()
            ],
        }
    )
    onset = found[("case", "worse")]
    assert (onset.streak, onset.first["id"], onset.last_good["id"]) == (2, "e3", "e2")
    assert onset.last_good_verdict == "equivalent"
    failing = {"worse": "contains failed in 6 runs: no"}
    frame = changes.changes(comparison, "regression", found, failing)
    assert list(frame["name"]) == ["noticias", "worse"]
    row = frame.iloc[1].to_dict()
    assert row["since_evaluation"] == "e3" and row["last_good_evaluation"] == "e2"
    assert row["since_commit"] == f"{3:040x}"[:10]
    assert "since" in changes.since_text(row) and "e2" in changes.since_text(row)


def test_an_onset_reaching_the_oldest_evaluation_is_open_ended() -> None:
    listed = [{"id": "b", "started_at": 2.0}, {"id": "a", "started_at": 1.0}]
    verdicts = [
        {"evaluation_id": e, "kind": "tag", "name": "t", "verdict": "regression"} for e in "ab"
    ]
    onset = history.onsets({"evaluations": listed, "verdicts": verdicts})[("tag", "t")]
    assert onset.open_ended and onset.streak == 2 and onset.first["id"] == "a"


def test_failing_gates_lists_failed_then_undetermined_with_full_reasons() -> None:
    reason = "loss shown on x " * 40
    gates = {
        "gates": [
            {"name": "a", "status": "pass", "reason": "ok"},
            {"name": "b", "status": "undetermined", "reason": "unsure"},
            {"name": "c", "status": "fail", "reason": reason},
        ]
    }
    assert [(g["name"], g["reason"]) for g in changes.failing_gates(gates)] == [
        ("c", reason),
        ("b", "unsure"),
    ]


texts = st.text(alphabet=st.sampled_from(list("ab c\n%é<>&")), max_size=60)


@given(texts, texts)
def test_a_word_diff_gives_back_both_texts(left: str, right: str) -> None:
    left_pieces, right_pieces = diffs.word_diff(left, right)
    assert "".join(text for _, text in left_pieces) == left
    assert "".join(text for _, text in right_pieces) == right
    assert {kind for kind, _ in left_pieces} <= {"same", "removed"}
    assert {kind for kind, _ in right_pieces} <= {"same", "added"}
    same_left = [t for k, t in left_pieces if k == "same"]
    assert same_left == [t for k, t in right_pieces if k == "same"]


@given(texts, texts)
def test_similarity_is_one_exactly_for_equal_texts(left: str, right: str) -> None:
    ratio = diffs.similarity(left, right)
    assert 0.0 <= ratio <= 1.0
    assert (ratio == 1.0) == (left == right)


def test_the_diff_escapes_what_the_agent_wrote() -> None:
    rendered = diffs.side_by_side_html("<b>6.45 %</b>", "<script>x</script>", "a", "b")
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered
    assert "<b>6.45" not in rendered


@pytest.mark.slow
@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=200), st.floats(0.5, 1.0))
def test_clipping_keeps_the_runs_up_to_the_quantile(values: list[float], quantile: float) -> None:
    frame = pd.DataFrame({"latency_ms": values})
    kept, cut = frames.clip_upper(frame, "latency_ms", quantile)
    assert len(kept) + cut == len(values)
    limit = float(np.quantile(values, quantile))
    assert sorted(kept["latency_ms"]) == sorted(v for v in values if v <= limit)


@pytest.mark.slow
@given(
    digits=st.integers(0, 4),
    percent=st.booleans(),
    start=st.integers(-10_000, 10_000),
    gaps=st.lists(st.integers(1, 50), min_size=1, max_size=20),
)
def test_ticks_a_label_step_apart_never_share_a_label(
    digits: int, percent: bool, start: int, gaps: list[int]
) -> None:
    """Ticks at multiples of `label_step` print differently (Python's formatter, which
    rounds like d3's for these formats)."""
    from evals.dashboard.charts import label_step

    axis_format = f".{digits}{'%' if percent else 'f'}"
    step = label_step(axis_format)
    assert step == 10.0 ** -(digits + (2 if percent else 0))
    positions = [start]
    for gap in gaps:
        positions.append(positions[-1] + gap)
    labels = [format(p * step, axis_format) for p in positions]
    assert len(set(labels)) == len(labels)
