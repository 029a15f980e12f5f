"""A hand-built evaluation: two agents, two repeats, passes, failures, errors and an
output that looks like markup, with statistics and gates written out directly."""

from __future__ import annotations

from pathlib import Path

from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.gates import GateConfig
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Assertion, Case, EvaluateOptions, Prompt, ProviderSpec, Suite
from evals.model.summary import (
    AgentStats,
    CaseAgentStats,
    CaseComparison,
    Comparison,
    GateReport,
    GateResult,
    GroupComparison,
    Summary,
)
from evals.model.trajectory import Step

XSS = "<script>alert(1)</script>"
AGENTS = ("baseline", "candidate")


def _assertion(raw: dict) -> Assertion:
    return Assertion(type=raw["type"], value=raw.get("value"), metric=raw.get("metric"), raw=raw)


CASES = [
    Case(
        0,
        "greets",
        "contains word",
        {"word": "hello"},
        [
            _assertion({"type": "contains", "value": "hello"}),
            _assertion({"type": "not-contains", "value": "goodbye", "metric": "politeness"}),
        ],
        metadata={"tags": ["smoke"], "priority": "P1"},
    ),
    Case(
        1,
        "fruit",
        "names the fruit",
        {"word": "apple"},
        [
            _assertion({"type": "equals", "value": "Say apple"}),
            _assertion({"type": "not-icontains", "value": "BANANA"}),
        ],
        metadata={"tags": ["fruit"], "priority": "P0", "why_it_exists": "an old bug"},
    ),
    Case(
        2,
        "boom",
        "survives a crash",
        {"word": "boom"},
        [_assertion({"type": "contains", "value": "boom"})],
        metadata={"tags": ["smoke"]},
    ),
    Case(
        3,
        "markup",
        "echoes markup",
        {"word": XSS},
        [_assertion({"type": "contains", "value": "script"})],
    ),
]

# (case index, agent) -> statuses of repeats 0 and 1
OUTCOMES = {
    (0, "baseline"): ("pass", "pass"),
    (0, "candidate"): ("pass", "fail"),
    (1, "baseline"): ("pass", "pass"),
    (1, "candidate"): ("fail", "fail"),
    (2, "baseline"): ("pass", "pass"),
    (2, "candidate"): ("error", "pass"),
    (3, "baseline"): ("pass", "pass"),
    (3, "candidate"): ("pass", "pass"),
}


def _grade(case: Case, passed: bool) -> Grade:
    components = []
    for assertion in case.asserts:
        ok = passed or assertion is not case.asserts[0]
        components.append(
            Grade(ok, 1.0 if ok else 0.0, "Assertion passed" if ok else "nope", assertion.raw)
        )
    named = {a.metric: 1.0 if passed else 0.0 for a in case.asserts if a.metric}
    score = sum(c.score for c in components) / len(components)
    reason = "All assertions passed" if passed else components[0].reason
    return Grade(passed, score, reason, named_scores=named, component_results=components)


def _record(case: Case, agent_index: int, repeat: int) -> RunRecord:
    agent = AGENTS[agent_index]
    status = OUTCOMES[(case.index, agent)][repeat]
    started = 1_700_000_000.0 + case.index * 10 + repeat
    key = RunKey("", case.id, agent, repeat)
    common = dict(
        key=key,
        case_index=case.index,
        prompt_index=0,
        agent_index=agent_index,
        seed=1000 + case.index,
        prompt=f"Say {case.vars['word']}",
        vars=case.vars,
        latency_ms=100.0 + 10 * agent_index + repeat,
        started_at=started,
        ended_at=started + 0.1,
    )
    if status == "error":
        return RunRecord(
            **common,
            response=AgentResponse(error="agent crashed: boom"),
            status="error",
            error="agent crashed: boom",
            error_kind="agent_error",
        )
    output = f"Say {case.vars['word']}" if status == "pass" else "Say goodbye"
    response = AgentResponse(
        output=output,
        token_usage={"total": 10, "prompt": 6, "completion": 4},
        cost=0.001 * (1 + agent_index),
        trajectory=[
            Step("model", "echo-model", input_tokens=6, output_tokens=4),
            Step("tool", "lookup", arguments={"q": case.vars["word"]}, result={"hits": 1}),
        ],
        stop_reason="final_answer",
    )
    return RunRecord(
        **common, response=response, status=status, grade=_grade(case, status == "pass")
    )


def _case_stats(case: Case, agent: str) -> CaseAgentStats:
    statuses = OUTCOMES[(case.index, agent)]
    passes = statuses.count("pass")
    errors = statuses.count("error")
    rate = passes / len(statuses)
    return CaseAgentStats(
        case.id,
        agent,
        runs=len(statuses),
        passes=passes,
        fails=statuses.count("fail"),
        errors=errors,
        pass_rate=rate,
        interval=(max(0.0, rate - 0.4), min(1.0, rate + 0.3)),
        mean_cost=0.001,
        mean_latency_ms=100.0,
    )


def _comparison_verdict(case: Case) -> str:
    return {0: "inconclusive", 1: "regression", 2: "inconclusive", 3: "equivalent"}[case.index]


def _summary() -> Summary:
    case_stats = [_case_stats(c, a) for c in CASES for a in AGENTS]
    by_key = {(s.case_id, s.agent): s for s in case_stats}
    cases = []
    for case in CASES:
        base, cand = by_key[(case.id, "baseline")], by_key[(case.id, "candidate")]
        diff = cand.pass_rate - base.pass_rate
        cases.append(
            CaseComparison(
                case.id,
                case.description,
                case.tags,
                case.priority,
                base,
                cand,
                diff,
                (max(-1.0, diff - 0.5), min(1.0, diff + 0.3)),
                0.04 if case.index == 1 else 0.6,
                0.08 if case.index == 1 else 1.0,
                _comparison_verdict(case),  # type: ignore[arg-type]
                why_it_exists=case.why_it_exists,
                level=0.9875,
                reason="significant after correcting for 4 cases (q = 0.08); the interval at "
                "98.75 % lies wholly below -0"
                if case.index == 1
                else "interval too wide to tell (p = 0.6): more repeats would narrow it",
            )
        )
    agents = [
        AgentStats(
            "baseline",
            "all",
            4,
            8,
            8,
            0,
            1.0,
            (0.68, 1.0),
            total_cost=0.008,
            cost_per_accepted=0.001,
            p95_latency_ms=101.0,
            mean_latency_ms=100.5,
        ),
        AgentStats(
            "candidate",
            "all",
            4,
            8,
            4,
            1,
            0.5,
            (0.22, 0.78),
            total_cost=0.014,
            cost_per_accepted=0.0035,
            p95_latency_ms=111.0,
            mean_latency_ms=110.5,
        ),
    ]
    tags = [
        AgentStats("baseline", "smoke", 2, 4, 4, 0, 1.0, (0.51, 1.0)),
        AgentStats("candidate", "smoke", 2, 4, 2, 1, 0.5, (0.15, 0.85)),
    ]
    overall = GroupComparison(
        "all",
        4,
        1.0,
        0.5,
        -0.5,
        (-0.78, -0.12),
        "regression",
        explanation="candidate lower on 2 of 4 cases",
    )
    tag_cmp = [GroupComparison("smoke", 2, 1.0, 0.5, -0.5, (-0.85, 0.1), "inconclusive")]
    comparison = Comparison(
        "baseline",
        "candidate",
        overall,
        tag_cmp,
        cases,
        warnings=["1 run errored and is excluded from pass rates"],
    )
    return Summary("demo", "1.0", "abc123", 0.95, case_stats, agents, tags, comparison)


def _gates() -> GateReport:
    return GateReport(
        [
            GateResult(
                "min_pass_rate",
                "fail",
                0.8,
                0.5,
                (0.22, 0.78),
                "candidate pass rate 50.0% [22.0%, 78.0%] is below 80.0%",
            ),
            GateResult(
                "p0_regressions",
                "fail",
                None,
                1.0,
                None,
                "P0 case fruit regressed: -100.0 pp [-100.0, -20.0] pp",
            ),
            GateResult("max_cost_ratio", "pass", 2.0, 1.75, None, "cost ratio 1.75 ≤ 2.0"),
            GateResult(
                "max_flake_rate", "undetermined", 0.1, None, None, "too few repeats", blocking=False
            ),
        ],
        environment="pr",
    )


def sample_result(tmp: Path | None = None) -> EvaluationResult:
    """The hand-built evaluation every report test reads."""
    root = tmp or Path("/tmp")
    providers = [ProviderSpec("file://agent.py", label) for label in AGENTS]
    suite = Suite(
        path=root / "suite.yaml",
        suite_id="demo",
        description="demo suite",
        version="1.0",
        prompts=[Prompt("p0", "Say {{word}}", "Say {{word}}")],
        providers=providers,
        cases=CASES,
        evaluate_options=EvaluateOptions(repeat=2),
        gates=GateConfig(baseline="baseline", candidate="candidate"),
        env={},
        raw={"description": "demo suite", "prompts": ["Say {{word}}"]},
        files=[],
        fingerprint="abc123",
    )
    meta = EvaluationMeta(
        id="e0123456789a",
        suite_id="demo",
        suite_version="1.0",
        fingerprint="abc123",
        description="demo suite",
        environment="pr",
        git_commit="deadbeef",
        git_branch="feature",
        started_at=1_700_000_000.0,
        ended_at=1_700_000_042.5,
        agents=list(AGENTS),
        status="complete",
    )
    records = [
        _record(case, agent_index, repeat)
        for repeat in (0, 1)
        for case in CASES
        for agent_index in (0, 1)
    ]
    config = GateConfig(baseline="baseline", candidate="candidate", min_pass_rate=0.8)
    return EvaluationResult(suite, meta, records, _summary(), _gates(), config, repeat=2)
