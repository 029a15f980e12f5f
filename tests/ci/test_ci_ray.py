"""The Ray executor gives the local executor's results (skipped without ray)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.run.ray_executor import batches
from evals.suite import load_suite

ray = pytest.importorskip("ray")

DEMO_SUITE = Path(__file__).resolve().parents[2] / "cases" / "trading-research"


def _outcomes(result) -> list:
    return sorted(
        (r.key.as_tuple(), r.status, r.seed, str(r.response.output), r.response.cost)
        for r in result.records
    )


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_executor_matches_the_local_executor_on_the_demo_suite(
    tmp_path: Path, local_ray: None
) -> None:
    def run(executor: str):
        options = RunOptions(
            environment="pr",
            repeat=1,
            executor=executor,
            progress=False,
            store_url=str(tmp_path / f"{executor}.db"),
        )
        return run_evaluation(load_suite(DEMO_SUITE), options)

    local, remote = run("local"), run("ray")
    assert _outcomes(remote) == _outcomes(local)
    assert remote.gates.to_dict()["verdict"] == local.gates.to_dict()["verdict"]
    assert [(s.case_id, s.agent, s.passes) for s in remote.summary.case_stats] == [
        (s.case_id, s.agent, s.passes) for s in local.summary.case_stats
    ]


def test_batches_cover_the_plan_once_in_order() -> None:
    items = list(range(23))
    for count in (1, 4, 23, 50):
        cut = batches(items, count)  # type: ignore[arg-type]
        assert [x for batch in cut for x in batch] == items
        assert len(cut) == min(count, len(items))
        assert max(map(len, cut)) - min(map(len, cut)) <= 1
