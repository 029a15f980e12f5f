"""`error_rate`: the share of each compared agent's runs that errored, at most
`max_error_rate`, with Clopper-Pearson limits on the pooled runs (Holm between the
candidate and the baseline). An errored run counts here whatever its kind; the reason names
the most frequent kind and the one line of its first message that says what happened (a
traceback's exception line), never the whole traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evals import stats
from evals.gates.families import (
    Hypothesis,
    Levels,
    family_status,
    gate_result,
    judge_family,
    limits_sentence,
)
from evals.gates.pass_rate import share_text
from evals.gates.registry import Design, Evidence, Gate, Reach, Scope
from evals.model.summary import AgentStats, GateResult


def _error_limit(agent: AgentStats, level: float, side: str) -> float:
    return stats.clopper_pearson_limit(agent.errors, agent.runs, level, side)


# The most of an error message a gate's reason quotes.
_QUOTED_CHARS = 200
_TRACEBACK = "Traceback (most recent call last):"


def first_line(message: str) -> str:
    """An error message as a one-line reason quotes it: a traceback is left out but for its
    last line (the exception), lines are joined, and the whole is cut at _QUOTED_CHARS;
    the full message stays with the run."""
    head, traceback, rest = message.partition(_TRACEBACK)
    if traceback:
        lines = [line.strip() for line in rest.splitlines() if line.strip()]
        message = f"{head.strip()} {lines[-1] if lines else ''}"
    line = " ".join(part.strip() for part in message.split("\n") if part.strip())
    return line if len(line) <= _QUOTED_CHARS else line[: _QUOTED_CHARS - 1] + "…"


def _error_words(agent: AgentStats) -> str:
    if not agent.errors:
        return f"{agent.agent}: no errored run of {agent.runs}"
    kind, count = max(agent.error_kinds.items(), key=lambda item: (item[1], item[0]))
    first = first_line(agent.first_errors.get(kind, ""))
    text = (
        f"{agent.agent}: {agent.errors} of {agent.runs} runs errored "
        f"({agent.errors / agent.runs:.0%}), most often {kind} ({count}): {first!r}"
    )
    if agent.excluded:
        text += f"; {agent.excluded} excluded from the pass rates"
    return text


def error_rate_gate(agents: Sequence[AgentStats], threshold: float, levels: Levels) -> GateResult:
    """The `error_rate` row over `agents`, each at most `threshold`."""
    ran = [a for a in agents if a.runs]
    hypotheses = [
        Hypothesis(
            label=a.agent,
            measured=a.errors / a.runs,
            limit=partial(_error_limit, a),
            threshold=threshold,
            higher_is_better=False,
            fail_p=partial(stats.binomial_p_value, a.errors, a.runs, threshold, "greater"),
        )
        for a in ran
    ]
    judged = judge_family(hypotheses, levels)
    if not judged:
        return GateResult("error_rate", "undetermined", threshold, None, None, "no runs")
    worst = max(judged, key=lambda j: (j.status == "fail", j.fail_limit))
    reason = "; ".join(
        f"{_error_words(a)}: {limits_sentence(j, share_text, len(judged))}"
        for a, j in zip(ran, judged, strict=True)
    )
    result = gate_result("error_rate", worst, levels, reason)
    result.status = family_status(judged)
    return result


def _family(scope: Scope) -> tuple[str, ...] | None:
    if not scope.subject or scope.config.max_error_rate is None:
        return None
    return scope.agents


def _decide(evidence: Evidence, levels: Levels) -> list[GateResult]:
    subject, config = evidence.subject, evidence.config
    assert subject is not None and config.max_error_rate is not None
    compared = [subject]
    baseline = next(
        (a for a in evidence.summary.agents if a.agent == config.baseline and a is not subject),
        None,
    )
    if evidence.summary.comparison is not None and baseline is not None:
        compared.append(baseline)
    return [error_rate_gate(compared, config.max_error_rate, levels)]


def _reach(design: Design) -> list[Reach]:
    """Over all runs of an agent: with every run errored the lower limit at Holm's first
    step must exceed the maximum to fail; with none, the upper limit at the pass level
    must be within it to pass."""
    maximum = design.scope.config.max_error_rate
    runs = design.runs * len(design.cases)
    if maximum is None or not runs:
        return []
    levels = design.levels
    return [
        Reach(
            GATE.name,
            can_fail=stats.clopper_pearson_limit(runs, runs, levels.fail_level, "lower") > maximum,
            can_pass=stats.clopper_pearson_limit(0, runs, levels.pass_level, "upper") <= maximum,
        )
    ]


GATE = Gate(
    name="error_rate",
    keys=("max_error_rate",),
    statistical=True,
    family=_family,
    decide=_decide,
    reach=_reach,
)
