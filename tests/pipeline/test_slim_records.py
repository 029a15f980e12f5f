"""An evaluation that keeps no run has every statistic, gate and fact of one that keeps them."""

from __future__ import annotations

from pathlib import Path

import yaml

from evals.analysis.cells import run_facts
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


def test_run_without_records_has_the_statistics_and_facts_of_one_with_them(tmp_path):
    suite = load_suite(_suite(tmp_path))
    kept = run_evaluation(suite, RunOptions(repeat=2, use_store=False, progress=False))
    counted = run_evaluation(
        suite, RunOptions(repeat=2, use_store=False, progress=False, keep_records=False)
    )
    assert counted.records == [] and len(kept.records) == 6 * 2 * 2
    assert counted.facts is not None
    assert (counted.facts.runs, counted.facts.passed) == (6 * 2 * 2, 2 * 2 * 4)
    assert run_facts(kept) == counted.facts
    again, _ = analyse(suite, kept.records, kept.gate_config, None)
    for summary in (counted.summary, again):
        assert [(s.agent, s.case_id, s.passes, s.fails) for s in summary.case_stats] == [
            (s.agent, s.case_id, s.passes, s.fails) for s in kept.summary.case_stats
        ]
        assert summary.comparison is not None and kept.summary.comparison is not None
        assert summary.comparison.overall.interval == kept.summary.comparison.overall.interval
