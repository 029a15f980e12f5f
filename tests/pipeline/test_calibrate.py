"""Judge calibration: agreement statistics cross-checked, and the command against a local judge."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graders"))
from judge_server import base_url, judge_server

from evals.analysis.agreement import Agreement, below_minimum, cohen_kappa
from evals.cli import main
from evals.pipeline.calibration import calibrate

pytestmark = pytest.mark.slow


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning:statsmodels")
@settings(deadline=None, max_examples=80)
@given(st.lists(st.integers(0, 30), min_size=4, max_size=4))
def test_kappa_and_its_standard_error_match_statsmodels(cells: list[int]) -> None:
    table = [[cells[0], cells[1]], [cells[2], cells[3]]]
    kappa, low, high = cohen_kappa(table)
    rows = np.array(table, dtype=float)
    n = rows.sum()
    expected = (rows.sum(1) * rows.sum(0)).sum() / n**2 if n else 1.0
    if n == 0 or expected >= 1.0:
        assert np.isnan(kappa)
        return
    reference = cohens_kappa(rows)
    assert kappa == pytest.approx(reference.kappa, abs=1e-12)
    if np.isnan(reference.std_kappa):  # a rater used one category: statsmodels divides 0 by 0
        assert kappa == 0.0 and low == high
        return
    assert (high - low) / 2 == pytest.approx(1.959963984540054 * reference.std_kappa, rel=1e-9)


def test_accuracy_uses_the_wilson_interval() -> None:
    row = Agreement("r", both_pass=8, both_fail=8, judge_only=2, human_only=2)
    accuracy, low, high = row.accuracy()
    assert accuracy == 0.8
    reference = proportion_confint(16, 20, method="wilson")
    assert (low, high) == pytest.approx(reference, abs=1e-12)
    assert below_minimum(row, min_kappa=0.7, min_accuracy=None) == ["kappa 0.600 < min_kappa 0.7"]
    assert below_minimum(row, min_kappa=0.5, min_accuracy=0.75) == []


def _calibration_file(tmp: Path, url: str) -> Path:
    items = [
        {"output": "Paris is lovely", "human": "pass"},
        {"output": "I like Paris", "human": True},
        {"output": "Lyon", "human": "fail"},
        {"output": "Berlin", "human": False},
        {"output": "Not paris at all", "human": "fail"},
        {"output": "Rome", "human": "pass", "rubric": "second"},
    ]
    data = {
        "grader": {"id": "openai:chat:judge", "config": {"apiBaseUrl": url, "apiKey": "k"}},
        "assert": {"type": "llm-rubric", "value": "mentions Paris"},
        "min_kappa": 0.5,
        "items": items,
    }
    path = tmp / "calibration.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_calibrate_measures_the_judge_per_rubric(tmp_path: Path) -> None:
    with judge_server() as server:
        _, rows = calibrate(_calibration_file(tmp_path, base_url(server)))
    by_name = {row.rubric: row for row in rows}
    main_rubric = by_name["llm-rubric: mentions Paris"]
    assert (main_rubric.both_pass, main_rubric.judge_only) == (2, 1)
    assert (main_rubric.human_only, main_rubric.both_fail) == (0, 2)
    assert by_name["second"].human_only == 1
    assert by_name["all"].n == 6 and by_name["all"].agreed == 4


def test_calibrate_command_prints_the_table_and_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with judge_server() as server:
        path = _calibration_file(tmp_path, base_url(server))
        code = main(["calibrate", str(path)])
        strict = main(["calibrate", str(path), "--min-kappa", "0.9"])
    out = capsys.readouterr()
    assert "llm-rubric: mentions Paris" in out.out and "kappa [95% CI]" in out.out
    assert code == 1  # overall kappa 0.333 < min_kappa 0.5 from the file
    assert strict == 1
    assert "judge below minimum: kappa" in out.err


def test_jsonl_items_and_judge_errors_are_counted_apart(tmp_path: Path) -> None:
    with judge_server() as server:
        provider = {"id": "openai:chat:down", "config": {"apiBaseUrl": base_url(server)}}
        line = {
            "output": "x",
            "human": "pass",
            "assert": {"type": "llm-rubric", "value": "v", "provider": provider},
        }
        path = tmp_path / "items.jsonl"
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        _, rows = calibrate(path)
    assert rows[-1].errors == 1 and rows[-1].n == 0


def test_a_missing_or_malformed_calibration_file_is_an_input_error(tmp_path: Path) -> None:
    from evals.grade.calibration import load_calibration
    from evals.model.errors import SuiteError

    with pytest.raises(SuiteError, match="not found"):
        load_calibration(tmp_path / "absent.yaml")
    lines = tmp_path / "labels.jsonl"
    lines.write_text('{"output": "a", "human": "pass"}\n\n{broken\n')
    with pytest.raises(SuiteError) as broken:
        load_calibration(lines)
    assert (broken.value.file, broken.value.line) == (str(lines), 3)
    unclosed = tmp_path / "labels.yaml"
    unclosed.write_text("items:\n  - [unclosed\n")
    with pytest.raises(SuiteError) as refused:
        load_calibration(unclosed)
    assert refused.value.file == str(unclosed) and refused.value.line is not None
