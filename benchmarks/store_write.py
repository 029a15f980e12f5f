"""How long the results store takes to write an evaluation's runs as they complete.

Builds `--runs` graded records shaped like the runner's (three assertions, a four-step
trajectory with tool results, token usage and cost), then stores them through
`Store.writer` exactly as `evals run` does, and prints wall and CPU time.

    python benchmarks/store_write.py                  # 5000 runs into a temp SQLite file
    python benchmarks/store_write.py --url postgresql://user@host:5432/db
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from evals.evaluation import EvaluationMeta
from evals.results import AgentResponse, Grade, RunKey, RunRecord
from evals.store import open_store
from evals.trajectory import Step


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
    """Write the runs of one evaluation through the store writer and print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="store URL (default: a new SQLite file in a temp dir)")
    parser.add_argument("--runs", type=int, default=5_000)
    args = parser.parse_args()
    records = [_record(i) for i in range(args.runs)]
    with tempfile.TemporaryDirectory(prefix="evals-store-write-") as workdir:
        start = time.perf_counter()
        store = open_store(args.url or f"sqlite:///{Path(workdir) / 'results.db'}")
        opened = time.perf_counter() - start
        evaluation_id = uuid.uuid4().hex[:12]
        store.create_evaluation(
            EvaluationMeta(evaluation_id, "bench", None, "fp", "", None, None, None, time.time())
        )
        wall, cpu = time.perf_counter(), time.process_time()
        writer = store.writer(evaluation_id)
        for record in records:
            writer.add(record)
        writer.close()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"open store: {opened * 1000:.0f} ms ({store.dialect})")
        print(f"write {writer.written} runs: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU")
        store.close()


if __name__ == "__main__":
    main()
