"""`-o summary.acme.txt`: the verdict and the gates in the plain text Acme's chat bot posts."""

from __future__ import annotations

from evals import EvaluationResult


def render_summary(result: EvaluationResult) -> str:
    """One line for the verdict, one per gate, one per agent's pass rate."""
    lines = [f"acme verdict: {result.gates.verdict.upper()}"]
    lines += [f"gate {g.name}: {g.status} ({g.reason})" for g in result.gates.gates]
    for agent in result.summary.agents:
        if agent.group == "suite" and agent.pass_rate is not None:
            lines.append(f"agent {agent.agent}: {agent.pass_rate:.0%} of cases passed")
    return "\n".join(lines) + "\n"
