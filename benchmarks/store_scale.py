"""How fast the results store answers the dashboard's questions at a million runs.

Generates a store of `--evaluations` evaluations x 2 agents x `--cases` cases x
`--repeats` repeats (1,000,000 runs by default) with bulk inserts, then times the
queries behind the Overview page (recent evaluations with per-agent counts, and the
suite's trend) and the Compare page (per-case counts of two evaluations, one case's runs).

    python benchmarks/store_scale.py                       # SQLite file in a temp dir
    python benchmarks/store_scale.py --url postgresql://user@host:5432/db
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from evals.model.evaluation import EvaluationMeta
from evals.store import Store, open_store
from evals.store.schema import evaluations

AGENTS = ("baseline", "candidate")
SUITE = "bench"
RUN_COLUMNS = (
    "evaluation_id",
    "prompt_id",
    "case_id",
    "case_index",
    "prompt_index",
    "agent",
    "agent_index",
    "repeat",
    "seed",
    "prompt",
    "status",
    "score",
    "passed",
    "total_tokens",
    "cost",
    "latency_ms",
    "steps",
    "started_at",
    "ended_at",
)


def _evaluation_rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"bench-{index:04d}",
            "suite_id": SUITE,
            "suite_version": "1",
            "fingerprint": "fp",
            "description": "scale benchmark",
            "git_commit": f"{index:040x}",
            "git_branch": "main",
            "environment": "nightly" if index % 2 == 0 else "pr",
            "started_at": 1_700_000_000.0 + index * 86_400,
            "ended_at": 1_700_000_000.0 + index * 86_400 + 3_600,
            "status": "complete",
            "agents": list(AGENTS),
            "config": {"repeat": 5},
            "verdict": "pass",
        }
        for index in range(count)
    ]


def _runs(evaluation_id: str, cases: int, repeats: int, rng: random.Random) -> Iterator[tuple]:
    started = 1_700_000_000.0
    for case_index in range(cases):
        difficulty = rng.random()
        for agent_index, agent in enumerate(AGENTS):
            for repeat in range(repeats):
                draw = rng.random()
                status = "error" if draw < 0.02 else "pass" if draw > difficulty else "fail"
                score = None if status == "error" else float(status == "pass")
                yield (
                    evaluation_id,
                    "p0",
                    f"case-{case_index:05d}",
                    case_index,
                    0,
                    agent,
                    agent_index,
                    repeat,
                    rng.getrandbits(31),
                    "prompt",
                    status,
                    score,
                    None if score is None else score == 1.0,
                    rng.randint(100, 5_000),
                    rng.random() / 100,
                    rng.uniform(200, 20_000),
                    rng.randint(1, 12),
                    started,
                    started + 1.0,
                )


def _insert_sqlite(store: Store, rows: Iterator[tuple]) -> None:
    placeholders = ", ".join("?" * len(RUN_COLUMNS))
    sql = f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({placeholders})"
    with store.engine.begin() as connection:
        connection.exec_driver_sql(sql, list(rows))


def _insert_postgresql(store: Store, rows: Iterator[tuple]) -> None:
    raw = store.engine.raw_connection()
    try:
        columns = ", ".join(RUN_COLUMNS)
        cursor = raw.cursor()
        with cursor.copy(f"COPY runs ({columns}) FROM STDIN") as copy:  # type: ignore[attr-defined]
            for row in rows:
                copy.write_row(row)
        raw.commit()
    finally:
        raw.close()


def generate(store: Store, evaluation_count: int, cases: int, repeats: int) -> int:
    """Fill an empty store with complete evaluations; returns the number of runs."""
    rng = random.Random(7)
    rows = _evaluation_rows(evaluation_count)
    with store.engine.begin() as connection:
        connection.execute(insert(evaluations), rows)
    bulk = _insert_postgresql if store.dialect == "postgresql" else _insert_sqlite
    for row in rows:
        bulk(store, _runs(row["id"], cases, repeats, rng))
    if store.dialect == "postgresql":
        with store.engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE")
    return evaluation_count * cases * repeats * len(AGENTS)


def timed(label: str, query: Callable[[], Any], repeat: int = 3) -> float:
    """Best wall time of `query` over `repeat` calls, printed with the size of its answer."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        answer = query()
        best = min(best, time.perf_counter() - start)
    print(f"  {label:<52} {best * 1000:9.1f} ms  ({len(answer)} rows)")
    return best


def overview(store: Store) -> list[dict[str, Any]]:
    """The Overview page: the 50 newest evaluations of the suite with per-agent totals."""
    recent: list[EvaluationMeta] = store.list_evaluations(suite_id=SUITE, limit=50)
    return store.aggregates.agent_totals([e.id for e in recent])


def main() -> None:
    """Generate the store (unless it exists) and print query timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="store URL (default: a new SQLite file in a temp dir)")
    parser.add_argument("--evaluations", type=int, default=100)
    parser.add_argument("--cases", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    workdir = tempfile.TemporaryDirectory(prefix="evals-store-scale-")
    url = args.url or f"sqlite:///{Path(workdir.name) / 'results.db'}"
    store = open_store(url)
    if not store.list_evaluations(suite_id=SUITE, limit=1):
        start = time.perf_counter()
        total = generate(store, args.evaluations, args.cases, args.repeats)
        print(f"generated {total:,} runs in {time.perf_counter() - start:.1f} s ({store.dialect})")
    newest, previous = (e.id for e in store.list_evaluations(suite_id=SUITE, limit=2))
    print("Overview")
    timed("50 newest evaluations + per-agent totals", lambda: overview(store))
    timed("trend: 100 evaluations x agents", lambda: store.aggregates.trend(SUITE))
    timed("trend: nightly only", lambda: store.aggregates.trend(SUITE, environment="nightly"))
    print("Compare")
    timed(
        "per-case per-agent counts of two evaluations",
        lambda: store.aggregates.case_agent_counts([previous, newest]),
    )
    timed("one case's runs (both agents)", lambda: store.load_runs(newest, case_id="case-00042"))
    timed("per-run metrics of one evaluation", lambda: store.aggregates.run_metrics(newest))
    timed("latest nightly baseline", lambda: [store.latest_baseline(SUITE)])
    store.close()
    workdir.cleanup()


if __name__ == "__main__":
    main()
