"""What one run of one agent on one case produced, and how it was graded."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from evals.model.trajectory import Step

RunStatus = Literal["pass", "fail", "error"]
ErrorKind = Literal[
    "agent_error",
    "agent_exit",
    "timeout",
    "malformed",
    "template_error",
    "infra",
    "grader_error",
    "cancelled",
]


CONVERSATION_STOPS = ("user_ended", "handoff", "max_turns")
"""Stop reasons only a conversation with a simulated user ends with."""


def pick_latency(wall_ms: float, reported_ms: float | None, source: str) -> float:
    """The one latency of a run: the harness's wall time (source "wall"), or the agent's
    own report (source "agent"), which is the wall time when the agent reported none."""
    if source == "agent" and reported_ms is not None:
        return reported_ms
    return wall_ms


def no_price(model: str) -> str:
    """Why a run priced with `model` has no known cost, and the fix."""
    return (
        f"no price for model {model!r}: add it to the suite's prices: "
        f"({{{model}: {{input: 0.15, output: 0.6}}}}, per million tokens)"
    )


NO_MODEL = (
    "the agent reported no cost and names no model to price its tokens with: give the suite "
    "a prices: entry for its model (a table of one entry prices every run; with several, "
    "the budget's model names one), or the provider a config.price"
)


def unknown_cost_reason(unpriced: str) -> str:
    """Why a run's cost is unknown, with the fix, from the model no price was found for
    (`unpriced`; "" when the run named no model)."""
    return no_price(unpriced) if unpriced else NO_MODEL


@dataclass(slots=True)
class AgentResponse:
    """An agent's answer normalized from any provider contract.

    promptfoo's provider shape (`output`, `error`, `tokenUsage`, `cost`, `metadata`) maps
    onto the first fields; native agents also fill `trajectory`, `stop_reason` and
    per-call usage inside the steps. `latency_ms` is the latency the agent reported
    (`latencyMs`), None when it reported none; the harness's own clock is the record's.
    `log_probs` are the output tokens' log-probabilities (`logProbs`), which the
    perplexity assertions read.
    """

    output: Any = None
    error: str | None = None
    token_usage: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    trajectory: list[Step] = field(default_factory=list)
    stop_reason: str | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None
    cached: bool = False
    trace: list[dict[str, Any]] = field(default_factory=list)
    log_probs: list[float] | None = None


# What a test's reason starts with when a policy violation failed it, whatever else did.
VIOLATION_PREFIX = "Policy violation: "


@dataclass(slots=True)
class Grade:
    """The verdict of one assertion (or of a whole test when it aggregates components).

    Mirrors promptfoo's GradingResult. `policy_violation` marks a failure no weight or
    threshold may compensate; `errored` marks a grader that could not decide.
    """

    passed: bool
    score: float
    reason: str
    assertion: dict[str, Any] | None = None
    named_scores: dict[str, float] = field(default_factory=dict)
    component_results: list[Grade] = field(default_factory=list)
    tokens_used: dict[str, int] = field(default_factory=dict)
    policy_violation: bool = False
    errored: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """promptfoo's GradingResult JSON shape, plus the harness's own flags when set."""
        data: dict[str, Any] = {
            "pass": self.passed,
            "score": self.score,
            "reason": self.reason,
        }
        if self.named_scores:
            data["namedScores"] = dict(self.named_scores)
        if self.tokens_used:
            data["tokensUsed"] = dict(self.tokens_used)
        if self.assertion is not None:
            data["assertion"] = self.assertion
        if self.component_results:
            data["componentResults"] = [c.to_dict() for c in self.component_results]
        if self.policy_violation:
            data["policyViolation"] = True
        if self.errored:
            data["errored"] = True
        if self.metadata:
            data["metadata"] = self.metadata
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grade:
        """Rebuild a grade from `to_dict` output (a null score, how JSON writes NaN, is NaN)."""
        score = data.get("score", 0.0)
        return cls(
            passed=bool(data.get("pass")),
            score=math.nan if score is None else float(score),
            reason=str(data.get("reason", "")),
            assertion=data.get("assertion"),
            named_scores=dict(data.get("namedScores") or {}),
            component_results=[cls.from_dict(c) for c in data.get("componentResults") or []],
            tokens_used=dict(data.get("tokensUsed") or {}),
            policy_violation=bool(data.get("policyViolation")),
            errored=bool(data.get("errored")),
            metadata=dict(data.get("metadata") or {}),
        )


def promptfoo_components(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A test's component results as promptfoo's AssertionsResult lists them: a result
    with component results of its own (an assert-set's, or those a javascript or python
    check returned) is followed by them, each with its parent's assertion when it has
    none. An assert-set's own result has no assertion, and its components are listed as
    the set's own AssertionsResult lists them."""
    out: list[dict[str, Any]] = []
    for component in components:
        assertion = component.get("assertion") or {}
        subs = component.get("componentResults") or []
        if assertion.get("type") == "assert-set":
            subs = promptfoo_components(subs)
            component = {k: v for k, v in component.items() if k != "assertion"}
            if subs:
                component["componentResults"] = subs
        out.append(component)
        if subs:
            out.extend({**sub, "assertion": sub.get("assertion") or assertion} for sub in subs)
    return out


@dataclass(slots=True)
class RunKey:
    """Identity of one run inside an evaluation: unique, stable across resumes and shards."""

    prompt_id: str
    case_id: str
    agent: str
    repeat: int

    def as_tuple(self) -> tuple[str, str, str, int]:
        """Hashable form used for de-duplication and resume."""
        return (self.prompt_id, self.case_id, self.agent, self.repeat)


@dataclass(slots=True)
class RunRecord:
    """One executed and graded run: the row every store, statistic and report reads.

    `status` is pass, fail or error. An error row (agent raised, timed out, returned
    garbage, or the harness failed around it) carries `error_kind` and `error`; the
    statistics count it as a failed run unless the suite excludes its kind. `latency_ms`
    is the harness's wall time around the agent call; the agent's own report, when it
    made one, is `response.latency_ms`.
    """

    key: RunKey
    case_index: int
    prompt_index: int
    agent_index: int
    seed: int
    prompt: str
    vars: dict[str, Any]
    response: AgentResponse
    status: RunStatus
    grade: Grade | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    latency_ms: float = 0.0
    started_at: float = 0.0
    ended_at: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when the run was graded and passed."""
        return self.status == "pass"

    def latency(self, source: str) -> float:
        """The run's latency from `source` (wall or agent, see `pick_latency`)."""
        return pick_latency(self.latency_ms, self.response.latency_ms, source)

    @property
    def is_conversation(self) -> bool:
        """True for a simulated user's run."""
        response = self.response
        return "conversation" in response.metadata or response.stop_reason in CONVERSATION_STOPS

    @property
    def cost(self) -> float | None:
        """Cost of the run in currency units; None when unknown (see `cost_unknown`) or
        when the agent never answered."""
        return self.response.cost

    @property
    def cost_unknown(self) -> str | None:
        """Why an answered run's cost is unknown (the model without a price and the fix),
        None when it is known or the agent never answered. The record keeps only the
        model (`metadata.cost_unknown`, "" when the run named none)."""
        unpriced = self.metadata.get("cost_unknown")
        return None if unpriced is None else unknown_cost_reason(str(unpriced))

    @property
    def total_tokens(self) -> int:
        """Total tokens the agent reported or the harness counted."""
        usage = self.response.token_usage
        return int(usage.get("total") or (usage.get("prompt", 0) + usage.get("completion", 0)))
