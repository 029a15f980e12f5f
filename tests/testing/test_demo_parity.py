"""The demo suite run both ways, `evals run` on the YAML file and `pytest --evals` on its
pytest module, gives the same pass counts per case and agent and the same gate verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.pipeline.verdict import exit_code
from evals.suite import load_suite

DEMO = Path(__file__).resolve().parents[2] / "cases" / "trading-research"


@pytest.mark.slow
@pytest.mark.parametrize("environment", [None, "pr"])
def test_yaml_and_pytest_give_the_same_pass_counts_and_gate_verdicts(tmp_path, environment):
    options = RunOptions(use_store=False, progress=False, environment=environment)
    yaml_result = run_evaluation(load_suite(DEMO), options)
    report = tmp_path / "pytest.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "test_trading_research.py",
        "--evals",
        "--evals-no-store",
        "--evals-output",
        str(report),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:langsmith_plugin",  # (langchain's plugin: seconds of import, no use here)
        "-q",
        "--tb=no",
    ]
    if environment:
        command += ["--evals-env", environment]

    answer = subprocess.run(command, cwd=DEMO, capture_output=True, text=True)

    evaluation = json.loads(report.read_text(encoding="utf-8"))["evals"]
    pytest_counts = {
        (c["case_id"], c["agent"]): (c["passes"], c["fails"], c["errors"], c["policy_violations"])
        for c in evaluation["summary"]["case_stats"]
    }
    yaml_counts = {
        (c.case_id, c.agent): (c.passes, c.fails, c.errors, c.policy_violations)
        for c in yaml_result.summary.case_stats
    }
    assert pytest_counts == yaml_counts
    assert len(yaml_counts) == 2 * (8 if environment == "pr" else 29)
    assert {sum(counts[:3]) for counts in yaml_counts.values()} == {3 if environment else 5}
    assert [(g["name"], g["status"]) for g in evaluation["gates"]["gates"]] == [
        (g.name, g.status) for g in yaml_result.gates.gates
    ]
    assert evaluation["gates"]["verdict"] == yaml_result.gates.verdict
    assert answer.returncode == exit_code(yaml_result), answer.stdout[-2000:]
