"""Time the dashboard's page queries on a large store (default: 1,000,000 runs).

    python benchmarks/dashboard_scale.py --store sqlite:///.evals/scale.db

Fills the store once (evaluations x cases x 2 agents x repeats synthetic runs, each with
a grade tree and a three-step trajectory, finished with the harness's own summary and
gates), then times, cold and without Streamlit's cache, what Overview and Compare read,
and finally renders both pages whole with Streamlit's AppTest.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.dashboard.comparison import Side, compare_sides
from evals.model.evaluation import EvaluationMeta
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Case
from evals.model.trajectory import Step
from evals.pipeline.evaluation import analyse
from evals.store import Store, open_store
from evals.store.dashboard_queries import DashboardQueries
from evals.suite import load_suite

SUITE = Path(__file__).resolve().parents[1] / "cases" / "trading-research"
AGENTS = ("baseline", "candidate")


def _record(case: int, agent: int, repeat: int, rng: random.Random, started: float) -> RunRecord:
    passed = rng.random() < (0.7 + 0.1 * agent - 0.002 * (case % 50))
    cost = 0.004 + 0.002 * rng.random()
    latency = rng.lognormvariate(5.0, 0.6)
    grade = Grade(
        passed,
        1.0 if passed else 0.0,
        "All assertions passed" if passed else "expected 6.45 %",
        component_results=[
            Grade(passed, float(passed), "contains", {"type": "contains", "value": "6.45 %"}),
            Grade(True, 1.0, "sourced", {"type": "verifier"}),
        ],
    )
    steps = [
        Step(
            "model",
            "sim",
            started_at=started,
            ended_at=started + 0.05,
            input_tokens=300,
            output_tokens=40,
            cost=cost / 2,
        ),
        Step(
            "tool",
            "precio",
            arguments={"ticker": "BUSI", "fecha": "2024-03-15"},
            result={"cierre": 27.88},
            started_at=started + 0.05,
            ended_at=started + 0.06,
        ),
        Step(
            "model",
            "sim",
            result="6.45 %",
            started_at=started + 0.06,
            ended_at=started + 0.1,
            input_tokens=400,
            output_tokens=30,
            cost=cost / 2,
        ),
    ]
    return RunRecord(
        key=RunKey("p0", f"case-{case:04d}", AGENTS[agent], repeat),
        case_index=case,
        prompt_index=0,
        agent_index=agent,
        seed=rng.randrange(2**31),
        prompt="¿Cuánto cambió BUSI?",
        vars={"question": "¿Cuánto cambió BUSI?"},
        response=AgentResponse(
            output="6.45 %" if passed else "27.88 %",
            token_usage={"prompt": 700, "completion": 70, "total": 770},
            cost=cost,
            trajectory=steps,
            stop_reason="final",
        ),
        status="pass" if passed else "fail",
        grade=grade,
        latency_ms=latency,
        started_at=started,
        ended_at=started + latency / 1000,
    )


def fill(store: Store, evaluations: int, cases: int, repeats: int) -> None:
    """Write the synthetic evaluations, each finished with its analysed summary and gates."""
    suite = load_suite(str(SUITE))
    suite.cases = [
        Case(
            index=i,
            id=f"case-{i:04d}",
            description=f"case {i}",
            vars={},
            asserts=[],
            metadata={"tags": [f"tag-{i % 8}"], "priority": "P0" if i % 25 == 0 else "P1"},
        )
        for i in range(cases)
    ]
    config = suite.gates.for_environment("nightly")
    rng = random.Random(7)
    for number in range(evaluations):
        started = 1_700_000_000.0 + number * 86_400
        meta = EvaluationMeta(
            id=f"scale-{number:04d}",
            suite_id="scale",
            suite_version="1",
            fingerprint="scale",
            description="synthetic scale suite",
            environment="nightly" if number % 3 else "pr",
            git_commit=f"{number:040x}",
            git_branch="main",
            started_at=started,
            agents=list(AGENTS),
            config={"repeat": repeats, "suite_path": str(SUITE / "promptfooconfig.yaml")},
        )
        store.create_evaluation(meta)
        records = [
            _record(case, agent, repeat, rng, started)
            for case in range(cases)
            for agent in range(len(AGENTS))
            for repeat in range(repeats)
        ]
        for start in range(0, len(records), 5000):
            store.add_runs(meta.id, records[start : start + 5000])
        summary, gates = analyse(suite, records, config, meta.environment)
        meta.status, meta.ended_at = "complete", started + 3600
        store.finish_evaluation(meta, summary, gates)
        print(f"  evaluation {number + 1}/{evaluations} written", flush=True)


def timed(label: str, call: Callable[[], Any]) -> Any:
    """Run `call` once, print its wall time, return its result."""
    began = time.perf_counter()
    result = call()
    print(f"{label:<48} {time.perf_counter() - began:7.3f} s")
    return result


def main() -> None:
    """Fill the store if it is empty, then time the pages' queries."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", default="sqlite:///.evals/dashboard-scale.db")
    parser.add_argument("--evaluations", type=int, default=100)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    store = open_store(args.store)
    queries = DashboardQueries(store.engine)
    if not queries.suites():
        total = args.evaluations * args.cases * len(AGENTS) * args.repeats
        print(f"filling {args.store} with {total:,} runs")
        fill(store, args.evaluations, args.cases, args.repeats)
    print("Overview")
    overview = time.perf_counter()
    timed("  suites", queries.suites)
    timed("  latest verdict per suite and environment", queries.latest_verdicts)
    listed = timed("  evaluations of the suite", lambda: queries.evaluations("scale"))
    timed("  trend of the last 60 nightlies", lambda: queries.trend("scale", "nightly"))
    print(f"{'  Overview total':<48} {time.perf_counter() - overview:7.3f} s")
    print("Compare")
    newest, older = listed[0]["id"], listed[1]["id"]
    compare = time.perf_counter()
    timed(
        "  two agents of one evaluation (stored)",
        lambda: compare_sides(store, Side(newest, "baseline"), Side(newest, "candidate")),
    )
    timed("  assertion types per case", lambda: queries.case_assertion_types(newest))
    print(f"{'  Compare total (default view)':<48} {time.perf_counter() - compare:7.3f} s")
    timed(
        "  two evaluations (recomputed from light rows)",
        lambda: compare_sides(store, Side(older, "candidate"), Side(newest, "candidate")),
    )
    store.close()
    time_pages(args.store)


def time_pages(store_url: str) -> None:
    """Render Overview and Compare whole, as a browser's first visit would, with AppTest."""
    import os

    from streamlit.testing.v1 import AppTest

    os.environ["EVALS_STORE_URL"] = store_url
    app_file = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
    print("Whole pages (first visit, empty cache)")
    app = AppTest.from_file(str(app_file), default_timeout=120)
    timed("  Overview", app.run)
    timed("  Compare", lambda: app.switch_page("views/compare.py").run())
    if app.exception:
        raise SystemExit(f"a page raised: {app.exception}")


if __name__ == "__main__":
    main()
