"""Run records and evaluation metadata for the store tests, built like the runner builds them."""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

from evals.model.evaluation import EvaluationMeta
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.trajectory import Step

AGENTS = ("baseline", "candidate")


def make_meta(
    evaluation_id: str,
    *,
    suite_id: str = "trading",
    fingerprint: str = "fp1",
    environment: str | None = "nightly",
    branch: str | None = "main",
    started_at: float = 1_700_000_000.0,
    status: str = "running",
    shard: str | None = None,
    agent_fingerprints: dict[str, str] | None = None,
    ci_event: str | None = None,
    config: dict | None = None,
) -> EvaluationMeta:
    """Metadata of an evaluation as `new_meta` fills it."""
    return EvaluationMeta(
        id=evaluation_id,
        suite_id=suite_id,
        suite_version="1.2",
        fingerprint=fingerprint,
        description="trading research agent",
        environment=environment,
        git_commit="abc123",
        git_branch=branch,
        started_at=started_at,
        agents=list(AGENTS),
        config=config or {"repeat": 3, "tags": None},
        status=status,
        shard=shard,
        agent_fingerprints=agent_fingerprints or {a: f"{a}-v1" for a in AGENTS},
        ci_event=ci_event,
    )


def _grade(passed: bool, index: int) -> Grade:
    tool_order = Grade(
        passed,
        1.0 if passed else 0.0,
        "tools in order" if passed else "expected precio before calculadora",
        {"type": "trajectory:tool-sequence", "value": ["precio", "calculadora"], "weight": 2},
        named_scores={"order": 1.0 if passed else 0.0},
    )
    number = Grade(
        True,
        1.0,
        "every number sourced",
        {"type": "verifier", "metric": "grounded"},
        metadata={"checked": [index, 12.5]},
    )
    nested = Grade(
        True,
        0.75,
        "assert-set",
        {"type": "assert-set", "threshold": 0.5},
        component_results=[number, Grade(True, 0.5, "contains", {"type": "icontains"})],
    )
    policy = Grade(True, 1.0, "no forbidden tool", {"type": "policy:forbidden-tools"})
    return Grade(
        passed,
        0.8 if passed else 0.4,
        "All assertions passed" if passed else "tool order",
        None,
        component_results=[tool_order, nested, policy],
        tokens_used={"total": 30, "prompt": 20, "completion": 10},
    )


def _trajectory(index: int) -> list[Step]:
    return [
        Step("model", "gpt-4o-mini", input_tokens=100 + index, output_tokens=20, cost=0.001),
        Step(
            "tool",
            "precio",
            arguments={"ticker": "ACME", "fecha": "2024-01-02"},
            result={"precio": 101.5},
            started_at=10.0,
            ended_at=10.25,
            effect="read",
            call_id=f"call-{index}",
        ),
        Step("tool", "calculadora", arguments={}, result={}, error="division by zero"),
        Step("message", "assistant", result="ACME subió 1,5 %", metadata={"lang": "es"}),
    ]


def make_record(case_index: int, agent_index: int, repeat: int) -> RunRecord:
    """A graded run; every seventh is an agent error without a grade."""
    agent = AGENTS[agent_index]
    index = case_index * 100 + agent_index * 10 + repeat
    started = 1_700_000_000.0 + index * 0.125
    planned_run = partial(
        RunRecord,
        key=RunKey("p0", f"case-{case_index:03d}", agent, repeat),
        case_index=case_index,
        prompt_index=0,
        agent_index=agent_index,
        seed=1_000_003 * index % 2_147_483_647,
        prompt=f"¿Cuánto subió ACME? ({case_index})",
    )
    if index % 7 == 3:
        return planned_run(
            vars={"ticker": "ACME"},
            response=AgentResponse(error="boom"),
            status="error",
            error="boom",
            error_kind="timeout",
            latency_ms=30_000.0,
            started_at=started,
            ended_at=started + 30.0,
        )
    passed = (index % 3) != 0
    return planned_run(
        vars={"ticker": "ACME", "n": case_index, "nested": {"dates": ["2024-01-02"]}},
        response=AgentResponse(
            output={"answer": "1,5 %", "numbers": [101.5, 0.015]} if passed else "no sé",
            token_usage={"total": 240, "prompt": 200, "completion": 40, "cached": 0},
            cost=0.0021 * (agent_index + 1),
            metadata={"model": "gpt-4o-mini"},
            trajectory=_trajectory(index),
            stop_reason="final_answer",
            finish_reason="stop",
            latency_ms=812.5,
            trace=[{"name": "agent.run", "attributes": {"gen_ai.system": "openai"}}],
        ),
        status="pass" if passed else "fail",
        grade=_grade(passed, index),
        latency_ms=812.5 + index,
        started_at=started,
        ended_at=started + 0.8125,
        metadata={"shard": None, "attempt": 1},
    )


def make_records(cases: int, repeats: int) -> list[RunRecord]:
    """Every (case, agent, repeat) run of a small plan, in plan order."""
    return [
        make_record(case_index, agent_index, repeat)
        for case_index in range(cases)
        for agent_index in range(len(AGENTS))
        for repeat in range(repeats)
    ]


def wait_until_gone(pid: int, timeout_s: float = 30.0) -> None:
    """Wait for a process that is not our child (an orphaned store process) to exit."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _running(pid):
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still runs after {timeout_s} s")


def _running(pid: int) -> bool:
    """Whether `pid` runs; a zombie nobody reaped yet (as under a container's init) does not."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
