"""The last block of an evaluation's terminal output, made for CI logs: the verdict, each
gate that did not pass in one line, the evaluation and the store it is in, and the
commands to go on with (`evals compare`, `evals dashboard`).

The caller says what the summary cannot know from the result alone (`Closing`): where the
evaluation was stored and how the store was named, and, for a suite without a `gates:`
block, the promptfoo rule that decided the exit code.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import NamedTuple

from evals.model.evaluation import EvaluationResult
from evals.model.summary import GateResult
from evals.reports import text


@dataclass(frozen=True)
class Closing:
    """What the last block says beyond the gates.

    `store`: the results store, printable (None: no store was used); `stored`: whether
    this result is an evaluation of its own there (a comparison of two stored evaluations
    is not); `store_option`: the `--store` value that names that store again in the
    commands shown (None when $EVALS_STORE_URL or the default store is found without it);
    `rule`: for a suite without gates, the sentence of promptfoo's pass-rate rule that
    decided the exit code; `preface`: a paragraph printed just before the block (an
    adaptive or staged run's account of its looks)."""

    store: str | None = None
    stored: bool = True
    store_option: str | None = None
    rule: str | None = None
    preface: str | None = None


def _short_reason(reason: str) -> str:
    """A gate's reason in one line: its first clause (the gate table above has it all)."""
    first = reason.split("; ", 1)[0]
    return " ".join(first.split())


class Line(NamedTuple):
    """One line of the block: its text, its style, and whether a narrow output may cut it
    (a gate's line: the gate table above holds the whole reason). The other lines (the
    verdict, the evaluation, the commands) are never cut or wrapped, so they copy whole."""

    text: str
    style: str = ""
    cut: bool = False


def _gate_line(gate: GateResult) -> Line:
    icon = text.GATE_ICONS.get(gate.status, "")
    name = gate.name if gate.blocking else f"{gate.name} (advisory)"
    style = "red" if gate.status == "fail" and gate.blocking else "yellow"
    return Line(f"  {icon} {name} {gate.status}: {_short_reason(gate.reason)}", style, cut=True)


def _store_flag(store_option: str | None) -> str:
    return f" --store {shlex.quote(store_option)}" if store_option else ""


def closing_lines(result: EvaluationResult, closing: Closing) -> list[Line]:
    """The block's lines: the verdict, the gates that did not pass (failing blocking gates
    first), the evaluation and store, then the next commands."""
    gates = result.gates
    verdict_style = {"pass": "bold green", "fail": "bold red"}.get(gates.outcome, "bold yellow")
    lines = [Line("")]
    if closing.rule is not None:
        lines.append(Line(closing.rule, "bold"))
    else:
        lines.append(Line(text.verdict_line(gates), verdict_style))
        unsettled = [g for g in gates.gates if g.status != "pass"]
        unsettled.sort(key=lambda g: (not g.blocking, g.status != "fail"))
        lines += [_gate_line(g) for g in unsettled]
    evaluation = result.meta.id
    if closing.store is None:
        return [*lines, Line(f"evaluation {evaluation} (not stored)", "dim")]
    flag = _store_flag(closing.store_option)
    if not closing.stored:
        return [
            *lines,
            Line(f"comparison {evaluation} of evaluations in {closing.store}"),
            Line(f"next: evals dashboard{flag}"),
        ]
    return [
        *lines,
        Line(f"evaluation {evaluation} in {closing.store}"),
        Line(
            f"next: evals compare {shlex.quote(evaluation)}{flag}"
            "   (after the next run: compares it with this one)"
        ),
        Line(f"      evals dashboard{flag}"),
    ]
