"""The benchmark's bulk fill stores the same runs and statistics as the ordinary path."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchmarks.dashboard_scale import AGENTS, _outcome, _record, fill, scale_suite
from evals.common.encoding import dump_json
from evals.model.results import RunRecord
from evals.pipeline.evaluation import analyse
from evals.store import open_store


def _key(record: RunRecord) -> tuple[str, str, int]:
    return record.key.case_id, record.key.agent, record.key.repeat


@pytest.mark.slow
def test_bulk_filled_runs_equal_the_records_they_stand_for(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'scale.db'}")
    fill(store, evaluations=2, cases=6, repeats=3)
    rng = random.Random(7)
    suite = scale_suite(6)
    for number in range(2):
        started = 1_700_000_000.0 + number * 86_400
        expected = [
            _record(case, agent, repeat, _outcome(case, agent, rng), started)
            for case in range(6)
            for agent in range(len(AGENTS))
            for repeat in range(3)
        ]
        stored = store.load_runs(f"scale-{number:04d}")
        assert sorted(stored, key=_key) == sorted(expected, key=_key)
        evaluation = store.get_evaluation(f"scale-{number:04d}")
        assert evaluation is not None and evaluation.status == "complete"
        environment = evaluation.environment
        summary, gates = analyse(
            suite, expected, suite.gates.for_environment("nightly"), environment
        )
        assert evaluation.summary == json.loads(dump_json(summary.to_dict()))
        assert evaluation.gates == json.loads(dump_json(gates.to_dict()))
    store.close()
