"""Judge agreement gates: a suite's gates measure its judge on human-labelled outputs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from judge_server import base_url, judge_server

from evals.analysis.agreement import Agreement
from evals.gates.decide import decide
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.summary import Summary
from evals.pipeline.calibration import measure_judge
from evals.suite.gates import parse_gates

EMPTY = Summary("s", None, "f", 0.95, [], [], [], None)


def _gates(judge: Agreement, **config: Any) -> dict[str, Any]:
    report = decide(EMPTY, GateConfig(judge_calibration="file://c.yaml", **config), None, judge)
    return {g.name: g for g in report.gates}


def test_thresholds_need_a_calibration_file_and_valid_ranges() -> None:
    with pytest.raises(SuiteError, match=r"need gates\.judge_calibration"):
        parse_gates({"min_judge_kappa": 0.6}, ["a"])
    with pytest.raises(SuiteError, match="between -1 and 1"):
        parse_gates({"judge_calibration": "file://c.yaml", "min_judge_kappa": 2}, ["a"])
    with pytest.raises(SuiteError, match=r"need gates\.judge_calibration"):
        parse_gates({"environments": {"release": {"min_judge_accuracy": 0.9}}}, ["a"])
    config = parse_gates({"judge_calibration": "file://c.yaml", "min_judge_accuracy": 0.8}, ["a"])
    assert (config.judge_calibration, config.min_judge_accuracy) == ("file://c.yaml", 0.8)


def test_gates_pass_fail_or_stay_undetermined_on_the_interval() -> None:
    strong = Agreement("all", both_pass=40, both_fail=40, judge_only=1, human_only=1)
    weak = Agreement("all", both_pass=10, both_fail=10, judge_only=10, human_only=10)
    few = Agreement("all", both_pass=4, both_fail=4, judge_only=1, human_only=0)
    assert _gates(strong, min_judge_kappa=0.8)["judge_kappa"].status == "pass"
    assert _gates(weak, min_judge_kappa=0.5)["judge_kappa"].status == "fail"
    assert _gates(few, min_judge_accuracy=0.8)["judge_accuracy"].status == "undetermined"
    gate = _gates(weak, min_judge_accuracy=0.3)["judge_accuracy"]
    assert gate.status == "pass" and gate.interval[0] >= 0.3
    assert "20 of 40 calibration items agreed" in gate.reason


def test_one_sided_labels_leave_kappa_undetermined() -> None:
    gate = _gates(Agreement("all", both_pass=10), min_judge_kappa=0.5)["judge_kappa"]
    assert gate.status == "undetermined" and gate.measured is None


def test_without_a_measurement_no_judge_gate_is_decided() -> None:
    config = GateConfig(judge_calibration="x", min_judge_kappa=0.5)
    report = decide(EMPTY, config, None)
    assert not [g for g in report.gates if g.name.startswith("judge_")]
    measured = decide(EMPTY, config, None, Agreement("all", both_pass=20, both_fail=20))
    assert [g.name for g in measured.gates if g.name.startswith("judge_")] == ["judge_kappa"]


def _calibration(tmp: Path) -> None:
    items = [{"output": f"Paris {i}", "human": "pass"} for i in range(12)]
    items += [{"output": f"Lyon {i}", "human": "fail"} for i in range(12)]
    items += [{"output": "not Paris", "human": "fail"}, {"output": "Rome", "human": "pass"}]
    data = {"assert": {"type": "llm-rubric", "value": "mentions Paris"}, "items": items}
    (tmp / "calibration.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


@pytest.mark.slow
def test_measure_runs_the_suites_grader_on_the_calibration_file(tmp_path: Path) -> None:
    _calibration(tmp_path)
    config = GateConfig(
        judge_calibration="file://calibration.yaml", min_judge_kappa=0.5, min_judge_accuracy=0.99
    )
    with judge_server() as server:
        grader = {"id": "openai:chat:judge", "config": {"apiBaseUrl": base_url(server)}}
        judged = measure_judge(config, tmp_path, grader)
        assert len(server.requests) == 26
    assert judged is not None
    assert (judged.both_pass, judged.judge_only, judged.human_only, judged.both_fail) == (
        12,
        1,
        1,
        12,
    )
    gates = {g.name: g for g in decide(EMPTY, config, None, judged).gates}
    assert gates["judge_kappa"].status == "pass"
    assert math.isclose(gates["judge_accuracy"].measured, 24 / 26)
    assert gates["judge_accuracy"].status == "fail"


def test_no_threshold_means_no_measurement(tmp_path: Path) -> None:
    assert measure_judge(GateConfig(judge_calibration="file://missing.yaml"), tmp_path) is None


@pytest.mark.slow
def test_the_judge_is_measured_once_per_file_and_judge(tmp_path: Path) -> None:
    """Every look of an adaptive run decides the judge gates on one measurement; a changed
    calibration file or another judge is measured again."""
    _calibration(tmp_path)
    config = GateConfig(judge_calibration="file://calibration.yaml", min_judge_kappa=0.5)
    with judge_server() as server:
        grader = {"id": "openai:chat:judge", "config": {"apiBaseUrl": base_url(server)}}
        first = measure_judge(config, tmp_path, grader)
        assert measure_judge(config, tmp_path, dict(grader)) == first
        assert len(server.requests) == 26
        other = {**grader, "config": {**grader["config"], "temperature": 0}}
        assert measure_judge(config, tmp_path, other) == first
        assert len(server.requests) == 52
        data = yaml.safe_load((tmp_path / "calibration.yaml").read_text(encoding="utf-8"))
        data["items"] = data["items"][:-2]
        (tmp_path / "calibration.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        changed = measure_judge(config, tmp_path, grader)
        assert len(server.requests) == 76
    assert changed is not None and changed != first
