"""How long the results store takes to write an evaluation's runs as they complete.

Builds `--runs` graded records shaped like the runner's (three assertions, a four-step
trajectory with tool results, token usage and cost), then hands them to a store process
exactly as `evals run` does, and prints the harness's share (wall and CPU time to hand
the runs over), when the last run is stored, and the database's own share measured in
one process.

    python benchmarks/store_write.py                  # 5000 runs into a temp SQLite file
    python benchmarks/store_write.py --url postgresql://user@host:5432/db
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from evals.model.evaluation import EvaluationMeta
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.trajectory import Step
from evals.store import open_store
from evals.store.process import StoreProcess


def _record(index: int) -> RunRecord:
    passed = index % 4 != 0
    assertions = [
        Grade(passed, float(passed), "answer", {"type": "icontains", "value": "ACME"}),
        Grade(True, 1.0, "tool order", {"type": "trajectory:tool-sequence", "weight": 2}),
        Grade(True, 1.0, "grounded", {"type": "verifier", "metric": "grounded"}),
    ]
    trajectory = [
        Step("model", "gpt-4o-mini", input_tokens=420, output_tokens=35, cost=0.0004),
        Step("tool", "precio", {"ticker": "ACME", "fecha": "2024-01-02"}, {"precio": 101.5}),
        Step("tool", "calculadora", {"expresion": "101.5/100-1"}, {"resultado": 0.015}),
        Step("model", "gpt-4o-mini", input_tokens=610, output_tokens=48, cost=0.0006),
    ]
    started = 1_700_000_000.0 + index
    return RunRecord(
        key=RunKey(
            "p0", f"case-{index // 10:04d}", ("baseline", "candidate")[index % 2], index % 5
        ),
        case_index=index // 10,
        prompt_index=0,
        agent_index=index % 2,
        seed=index * 7919,
        prompt="¿Cuánto subió ACME el 2 de enero?",
        vars={"ticker": "ACME", "fecha": "2024-01-02"},
        response=AgentResponse(
            output="ACME subió un 1,5 % (101,5).",
            token_usage={"total": 1113, "prompt": 1030, "completion": 83},
            cost=0.001,
            trajectory=trajectory,
            stop_reason="final_answer",
            latency_ms=850.0,
        ),
        status="pass" if passed else "fail",
        grade=Grade(passed, 0.75 + 0.25 * passed, "", None, component_results=assertions),
        latency_ms=850.0,
        started_at=started,
        ended_at=started + 0.85,
    )


def main() -> None:
    """Store the runs of one evaluation as `evals run` does and print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="store URL (default: a new SQLite file in a temp dir)")
    parser.add_argument("--runs", type=int, default=5_000)
    args = parser.parse_args()
    records = [_record(i) for i in range(args.runs)]
    with tempfile.TemporaryDirectory(prefix="evals-store-write-") as workdir:
        url = args.url or f"sqlite:///{Path(workdir) / 'results.db'}"
        meta = EvaluationMeta(uuid.uuid4().hex[:12], "bench", None, "fp", "", None, None, None, 0)
        start = time.perf_counter()
        store = StoreProcess(url)
        store.begin(meta, create=True)
        opened = time.perf_counter() - start
        wall, cpu = time.perf_counter(), time.process_time()
        for record in records:
            store.add(record)
        handed = time.perf_counter() - wall, time.process_time() - cpu
        written = store.flush()
        stored = time.perf_counter() - wall
        store.close()
        print(f"start the store process and open the store: {opened * 1000:.0f} ms")
        print(
            f"hand over {args.runs} runs: {handed[0] * 1000:.0f} ms wall, "
            f"{handed[1] * 1000:.0f} ms CPU in the harness's process"
        )
        print(f"all {written} runs stored after {stored * 1000:.0f} ms")
        reader = open_store(url)
        meta.id = uuid.uuid4().hex[:12]
        reader.create_evaluation(meta)
        wall, cpu = time.perf_counter(), time.process_time()
        for start_index in range(0, len(records), 256):
            reader.add_runs(meta.id, records[start_index : start_index + 256])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"the database's share, in one process, 256 runs a batch: "
            f"{wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU ({reader.dialect})"
        )
        reader.close()


if __name__ == "__main__":
    main()
