"""Slim records keep every statistic and gate of an evaluation, and drop the bulky parts."""

from __future__ import annotations

from pathlib import Path

import yaml

from evals.model.options import RunOptions
from evals.pipeline.evaluation import analyse, run_evaluation
from evals.suite import load_suite


def _suite(tmp_path: Path) -> Path:
    tests = [
        {
            "vars": {"text": f"item {i}"},
            "assert": [
                {"type": "equals", "value": f"item {i}" if i % 3 else "other"},
                {"type": "contains", "value": str(i), "weight": 2},
            ],
        }
        for i in range(6)
    ]
    config = {
        "description": "slim",
        "prompts": ["{{text}}"],
        "providers": [{"id": "echo", "label": "baseline"}, {"id": "echo", "label": "candidate"}],
        "gates": {"baseline": "baseline", "candidate": "candidate"},
        "tests": tests,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_statistics_of_slim_records_equal_those_of_full_records(tmp_path):
    suite = load_suite(_suite(tmp_path))
    result = run_evaluation(suite, RunOptions(repeat=3, use_store=False, progress=False))
    slim = [record.slimmed() for record in result.records]
    decided_at = result.gates.decided_at
    summary, gates = analyse(suite, slim, result.gate_config, None, now=decided_at)
    assert summary.to_dict() == result.summary.to_dict()
    assert gates == result.gates
    assert {r.status for r in slim} == {"pass", "fail"}
    for full, small in zip(result.records, slim, strict=True):
        assert (small.key, small.status, small.seed) == (full.key, full.status, full.seed)
        assert small.grade.score == full.grade.score and small.grade.reason == full.grade.reason
        assert small.prompt == "" and small.vars == {} and small.response.output is None
        assert small.grade.component_results == [] and full.grade.component_results


def test_run_keeps_slim_records_when_asked(tmp_path):
    suite = load_suite(_suite(tmp_path))
    options = RunOptions(repeat=2, use_store=False, progress=False, keep_records=False)
    result = run_evaluation(suite, options)
    assert len(result.records) == 6 * 2 * 2
    assert all(r.prompt == "" and r.response.output is None for r in result.records)
    assert sum(r.passed for r in result.records) == 2 * 2 * 4
