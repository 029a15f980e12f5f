"""Conversations as the reports and the dashboard show them: turn by turn, both sides.

A simulated user's run holds the messages of both sides in its trajectory, each step
tagged with its turn (the number of the user message it answers). Here a run becomes its
turns (the user's message, the agent's tool calls and answer, the world changes of the
turn), and the turns a failed check names are marked: a per-turn assertion's or a policy
violation's turn, or a forbidden change's.

Everything an agent or a user wrote is escaped: a message cannot restyle or script the
page that shows it.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from evals.model.evaluation import FailedConversations
from evals.model.results import Grade, RunRecord
from evals.model.trajectory import Step

"""The stop reasons of a conversation: the user's stop signal, a hand-over, the turn limit."""
STOP_WORDS = {
    "user_ended": "the user ended the conversation",
    "handoff": "the agent handed the conversation over",
    "max_turns": "the turn limit was reached",
    "error": "a turn failed",
}
_TURN_IN_REASON = re.compile(r"\bturn (\d+):")


@dataclass(slots=True)
class Turn:
    """One turn: the user's message and the agent's answer, with the steps between."""

    number: int
    user: str | None = None
    agent: str | None = None
    steps: list[Step] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    initial: bool = False
    ends: bool = False
    failed: bool = False


def _grades(grade: Grade) -> list[Grade]:
    found = []
    for component in grade.component_results:
        found.append(component)
        found.extend(_grades(component))
    return found


def _named_turns(grade: Grade) -> set[int]:
    metadata = grade.metadata
    turns = {int(t) for t in _TURN_IN_REASON.findall(grade.reason or "")}
    if isinstance(metadata.get("turn"), int):
        turns.add(metadata["turn"])
    turns.update(t for t in metadata.get("turns") or () if isinstance(t, int))
    return turns


def failing_reasons(record: RunRecord) -> dict[int, list[str]]:
    """The reasons of the run's failed checks, by the turn they name."""
    if record.grade is None:
        return {}
    found: dict[int, list[str]] = {}
    components = _grades(record.grade) or [record.grade]
    for grade in components:
        if grade.passed:
            continue
        for turn in _named_turns(grade):
            kind = (grade.assertion or {}).get("type")
            reason = f"{kind}: {grade.reason}" if kind else grade.reason
            found.setdefault(turn, []).append(reason)
    return found


def failing_turns(record: RunRecord) -> list[int]:
    """The turns the run's failed checks name, in order."""
    if record.grade is None:
        return []
    turns: set[int] = set()
    for grade in [record.grade, *_grades(record.grade)]:
        if not grade.passed:
            turns |= _named_turns(grade)
    return sorted(turns)


def conversation_turns(record: RunRecord) -> list[Turn]:
    """The run's turns in order, those a failed check names marked."""
    failed = set(failing_turns(record))
    turns: dict[int, Turn] = {}
    for step in record.response.trajectory:
        number = step.metadata.get("turn")
        if not isinstance(number, int):
            continue
        turn = turns.setdefault(number, Turn(number))
        if step.kind == "message" and step.name == "user":
            turn.user = str(step.result or "")
            turn.initial = bool(step.metadata.get("initial"))
            turn.ends = bool(step.metadata.get("ends"))
        elif step.kind == "message":
            turn.agent = str(step.result or "")
            turn.changes = list(step.metadata.get("changes") or [])
        else:
            turn.steps.append(step)
    for number, turn in turns.items():
        turn.failed = number in failed
    return [turns[n] for n in sorted(turns)]


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _step_line(step: Step) -> str:
    if step.kind == "model":
        tokens = f"{step.input_tokens or 0}→{step.output_tokens or 0} tokens"
        return f"model {step.name} ({tokens})"
    arguments = _shown(step.arguments)
    outcome = f"error: {step.error}" if step.error is not None else _shown(step.result)
    label = f"{step.kind} {step.name}"
    if step.approval:
        label += f" [{step.approval}]"
    return f"{label}({arguments}) → {outcome[:400]}"


def _change_line(change: dict[str, Any]) -> str:
    before = _shown(change["before"]) if "before" in change else "(absent)"
    after = _shown(change["after"]) if "after" in change else "(removed)"
    return f"{change['path']}: {before} → {after}"


CONVERSATION_CSS = (
    "<style>.evals-chat{font-size:.9rem}.evals-chat .turn{border-left:3px solid #ddd;"
    "padding:.2rem .6rem;margin:.4rem 0}.evals-chat .turn.failed{border-left-color:#c62828;"
    "background:#fff5f5}.evals-chat .who{font-weight:bold;margin-right:.4rem}"
    ".evals-chat .msg{white-space:pre-wrap;margin:.15rem 0}.evals-chat .agent{color:#0d47a1}"
    ".evals-chat details{margin:.15rem 0 .15rem 1rem;color:#555}.evals-chat .flag{color:#c62828;"
    "font-weight:bold}.evals-chat pre{white-space:pre-wrap;margin:.2rem 0;font-size:.85em}"
    ".evals-chat .muted{color:#777}</style>"
)


def conversation_html(record: RunRecord, *, styled: bool = True) -> str:
    """The run's conversation as an HTML block: each turn's messages, its tool calls folded,
    its world changes, and the turns of failed checks highlighted. Without `styled`, the
    page includes `CONVERSATION_CSS` once itself."""
    parts = [CONVERSATION_CSS if styled else "", "<div class='evals-chat'>"]
    reasons = failing_reasons(record)
    for turn in conversation_turns(record):
        classes = "turn failed" if turn.failed else "turn"
        parts.append(f"<div class='{classes}'>")
        why = "; ".join(reasons.get(turn.number, []))
        flag = f" <span class='flag'>✗ {html.escape(why) or 'a check failed here'}</span>"
        flag = flag if turn.failed else ""
        given = " (given)" if turn.initial else ""
        parts.append(f"<div class='muted'>turn {turn.number}{given}{flag}</div>")
        if turn.user is not None:
            parts.append(
                f"<div class='msg'><span class='who'>User</span>{html.escape(turn.user)}</div>"
            )
        if turn.steps:
            calls = [s.name for s in turn.steps if s.kind == "tool"]
            models = sum(s.kind == "model" for s in turn.steps)
            summary = html.escape(
                f"tools: {', '.join(calls)} · {models} model call(s)"
                if calls
                else f"no tool call · {models} model call(s)"
            )
            lines = "\n".join(_step_line(s) for s in turn.steps)
            parts.append(
                f"<details><summary>{summary}</summary><pre>{html.escape(lines)}</pre></details>"
            )
        if turn.changes:
            lines = "\n".join(_change_line(c) for c in turn.changes)
            parts.append(
                f"<details open><summary>world changes ({len(turn.changes)})</summary>"
                f"<pre>{html.escape(lines)}</pre></details>"
            )
        if turn.agent is not None:
            parts.append(
                "<div class='msg agent'><span class='who'>Assistant</span>"
                f"{html.escape(turn.agent)}</div>"
            )
        parts.append("</div>")
    stop = record.response.stop_reason or ""
    ending = STOP_WORDS.get(stop, stop)
    if ending:
        parts.append(f"<div class='muted'>{html.escape(ending)}</div>")
    parts.append("</div>")
    return "".join(parts)


def failure_line(record: RunRecord) -> str:
    """Why a conversation failed, in one line, with the turn it failed in."""
    turns = failing_turns(record)
    reason = record.grade.reason if record.grade else (record.error or "")
    if turns and not _TURN_IN_REASON.search(reason):
        reason = f"turn {turns[0]}: {reason}"
    return reason


def failed_conversations(
    found: list[FailedConversations], agents: list[str]
) -> list[FailedConversations]:
    """Per agent (in `agents`' order) and case, the conversations that failed a check,
    the agents' most failing cases first.

    Errored runs are left out (the error rate reports them)."""
    rank = {agent: index for index, agent in enumerate(agents)}
    return sorted(found, key=lambda f: (rank.get(f.agent, len(rank)), -f.failed / f.conversations))
