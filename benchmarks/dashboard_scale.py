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

from evals.common.encoding import dump_json
from evals.dashboard.comparison import Side, compare_sides
from evals.model.evaluation import EvaluationMeta
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Case, Suite
from evals.model.trajectory import Step
from evals.pipeline.evaluation import analyse
from evals.store import Store, open_store
from evals.store.codec import GRADE_COLUMNS, EncodedRun, RunRow, encode_run
from evals.store.dashboard_queries import DashboardQueries
from evals.store.jsontype import JsonDocument
from evals.store.schema import runs
from evals.suite import load_suite

SUITE = Path(__file__).resolve().parents[1] / "cases" / "trading-research"
AGENTS = ("baseline", "candidate")


Draw = tuple[bool, float, float, int]


def _record(case: int, agent: int, repeat: int, draw: Draw, started: float) -> RunRecord:
    """A full run as an agent and the graders would produce it, for a drawn outcome."""
    passed, cost, latency, seed = draw
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
        seed=seed,
        prompt="¿Cuánto cambió BUSI?",
        vars={"question": "¿Cuánto cambió BUSI?"},
        response=AgentResponse(
            output="6.45 %" if passed else "27.88 %",
            token_usage={"prompt": 700, "completion": 70, "total": 770},
            cost=cost,
            metadata={"model": f"sim-{agent + 1}"},
            trajectory=steps,
            stop_reason="final",
        ),
        status="pass" if passed else "fail",
        grade=grade,
        latency_ms=latency,
        started_at=started,
        ended_at=started + latency / 1000,
    )


def _outcome(case: int, agent: int, rng: random.Random) -> Draw:
    """One run's random draw: passed, cost, latency and seed."""
    passed = rng.random() < (0.7 + 0.1 * agent - 0.002 * (case % 50))
    return passed, 0.004 + 0.002 * rng.random(), rng.lognormvariate(5.0, 0.6), rng.randrange(2**31)


# Values no run draws, written into the template runs and replaced in their JSON per run.
_SENTINEL_STARTED = 9_000_000_001.0
_SENTINEL_COST = 0.5


class _RunTemplates:
    """The stored form of a passing and a failing run of each agent, and the cheap per-run
    edits of it.

    `_record` makes the template runs and `encode_run` encodes them, exactly as a real
    evaluation stores runs; each run then changes its key, outcome, seed, cost, latency
    and times (inside the trajectory document too) from the template of its agent and
    outcome, keyed `(passed, agent)`.
    """

    def __init__(self, paramstyle: str) -> None:
        self.columns = tuple(c.name for c in runs.columns)
        self.json_columns = {c.name for c in runs.columns if isinstance(c.type, JsonDocument)}
        self.encoded: dict[tuple[bool, int], EncodedRun] = {}
        self.records: dict[tuple[bool, int], RunRecord] = {}
        for passed in (True, False):
            for agent in range(len(AGENTS)):
                draw = (passed, _SENTINEL_COST, 100.0, 0)
                record = _record(0, agent, 0, draw, _SENTINEL_STARTED)
                self.records[passed, agent] = record
                self.encoded[passed, agent] = encode_run("", record)
        self.trajectory = {
            key: dump_json(RunRow._make(encoded[0]).trajectory)
            for key, encoded in self.encoded.items()
        }
        self.static = {
            key: {
                name: dump_json(value) if name in self.json_columns and value is not None else value
                for name, value in RunRow._make(encoded[0])._asdict().items()
            }
            for key, encoded in self.encoded.items()
        }
        mark = "?" if paramstyle == "qmark" else "%s"
        self.run_sql = (
            f"INSERT INTO runs ({', '.join(_quoted(c) for c in self.columns)}) "
            f"VALUES ({', '.join([mark] * len(self.columns))})"
        )
        self.grade_sql = (
            f"INSERT INTO grades ({', '.join(GRADE_COLUMNS)}) "
            f"VALUES ({', '.join([mark] * len(GRADE_COLUMNS))})"
        )

    def trajectory_json(self, key: tuple[bool, int], started: float, cost: float) -> str:
        """The template trajectory with this run's start time and cost."""
        text = self.trajectory[key]
        for offset in (0.1, 0.06, 0.05, 0.0):  # longest first: 1.0 prefixes 1.05
            text = text.replace(repr(_SENTINEL_STARTED + offset), repr(started + offset))
        return text.replace(repr(_SENTINEL_COST / 2), repr(cost / 2))

    def row(self, values: dict[str, Any], key: tuple[bool, int]) -> tuple[Any, ...]:
        """A `runs` row in column order: the template's values updated by `values`."""
        merged = {**self.static[key], **values}
        return tuple(merged[name] for name in self.columns)


def _quoted(name: str) -> str:
    return f'"{name}"'


def _light_record(
    templates: _RunTemplates, case: int, agent: int, repeat: int, draw: Draw
) -> RunRecord:
    """What the statistics read of a run (`analyse` reads no output or trajectory)."""
    passed, cost, latency, seed = draw
    template = templates.records[passed, agent]
    return RunRecord(
        key=RunKey("p0", f"case-{case:04d}", AGENTS[agent], repeat),
        case_index=case,
        prompt_index=0,
        agent_index=agent,
        seed=seed,
        prompt=template.prompt,
        vars=template.vars,
        response=AgentResponse(cost=cost, token_usage=template.response.token_usage),
        status="pass" if passed else "fail",
        grade=template.grade,
        latency_ms=latency,
    )


def _bulk_insert(store: Store, statements: list[tuple[str, list[tuple[Any, ...]]]]) -> None:
    """Run each statement over its rows with `executemany`, all in one transaction.

    On SQLite the connection skips fsync while it fills (`synchronous = OFF`): a crash
    mid-fill may corrupt the benchmark's store, which is then filled again.
    """
    raw = store.engine.raw_connection()
    try:
        cursor = raw.cursor()
        if store.dialect == "sqlite":
            cursor.execute("PRAGMA synchronous = OFF")
            cursor.execute("BEGIN")
        for sql, rows in statements:
            cursor.executemany(sql, rows)
        raw.commit() if store.dialect != "sqlite" else cursor.execute("COMMIT")
        cursor.close()
    finally:
        raw.close()


def scale_suite(cases: int) -> Suite:
    """The trading-research suite with `cases` synthetic cases, in 8 tags, every 25th P0."""
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
    return suite


def fill(store: Store, evaluations: int, cases: int, repeats: int) -> None:
    """Write the synthetic evaluations, each finished with its analysed summary and gates.

    Runs are written in bulk (`executemany`, one transaction per evaluation) from the
    stored form of a template run per outcome, then each evaluation is finished the way
    `evals run` finishes one: `analyse` over its runs, `finish_evaluation` storing the
    summary, gates and per-group rows.
    """
    suite = scale_suite(cases)
    config = suite.gates.for_environment("nightly")
    outline = suite.outline().to_dict()
    rng = random.Random(7)
    with store.engine.connect() as connection:
        next_id = (
            int(connection.exec_driver_sql("SELECT coalesce(max(id), 0) FROM runs").scalar_one())
            + 1
        )
        paramstyle = connection.dialect.paramstyle
    templates = _RunTemplates(paramstyle)
    grade_rows = {key: encoded[1] for key, encoded in templates.encoded.items()}
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
            outline=outline,
        )
        store.create_evaluation(meta)
        run_rows: list[tuple[Any, ...]] = []
        grades_of_runs: list[tuple[Any, ...]] = []
        records: list[RunRecord] = []
        for case in range(cases):
            for agent in range(len(AGENTS)):
                for repeat in range(repeats):
                    draw = _outcome(case, agent, rng)
                    passed, cost, latency, seed = draw
                    run_rows.append(
                        templates.row(
                            {
                                "id": next_id,
                                "evaluation_id": meta.id,
                                "case_id": f"case-{case:04d}",
                                "case_index": case,
                                "agent": AGENTS[agent],
                                "agent_index": agent,
                                "repeat": repeat,
                                "seed": seed,
                                "cost": cost,
                                "latency_ms": latency,
                                "trajectory": templates.trajectory_json(
                                    (passed, agent), started, cost
                                ),
                                "started_at": started,
                                "ended_at": started + latency / 1000,
                            },
                            (passed, agent),
                        )
                    )
                    grades_of_runs.extend((next_id, *row) for row in grade_rows[passed, agent])
                    records.append(_light_record(templates, case, agent, repeat, draw))
                    next_id += 1
        _bulk_insert(store, [(templates.run_sql, run_rows), (templates.grade_sql, grades_of_runs)])
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
