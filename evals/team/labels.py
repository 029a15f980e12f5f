"""People's annotations of runs as a calibration file: the human side of `evals calibrate`.

`evals triage labels --suite S --assertion llm-rubric -o labels.jsonl` reads the suite's
annotations in force (verdict overrides and thumbs, newest per run; an override outranks a
thumb) and writes one calibration item per annotated run: the run's output, vars and
prompt, the run's own assertion of the chosen type (what the judge applied), and the
person's verdict (`pass` for an override to pass or a thumb up). `evals calibrate
labels.jsonl` then measures the judge against those people.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.model.results import Grade
from evals.model.triage import TriageAction

if TYPE_CHECKING:
    from evals.store import Store

HUMAN = {("override", "pass"): True, ("override", "fail"): False, ("rate", "up"): True}
HUMAN[("rate", "down")] = False
_RANK = {"override": 0, "rate": 1}


@dataclass(frozen=True, slots=True)
class Labels:
    """The calibration items made, and the annotated runs left out (with why)."""

    items: list[dict[str, Any]]
    left_out: list[str]


def _run_key(action: TriageAction) -> tuple[Any, ...]:
    return (action.evaluation_id, action.case_id, action.agent, action.prompt_id, action.repeat)


def deciding(actions: list[TriageAction]) -> list[TriageAction]:
    """Per annotated run, the annotation that gives its human verdict: an override before a
    thumb, the newest of a kind (actions come newest first)."""
    chosen: dict[tuple[Any, ...], TriageAction] = {}
    for action in actions:
        if action.kind not in _RANK or (action.kind, action.label or "") not in HUMAN:
            continue
        held = chosen.get(_run_key(action))
        if held is None or _RANK[action.kind] < _RANK[held.kind]:
            chosen[_run_key(action)] = action
    return list(chosen.values())


def _assertions(grade: Grade | None, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for child in grade.component_results if grade is not None else []:
        if (child.assertion or {}).get("type") == kind:
            found.append(dict(child.assertion or {}))
        found += _assertions(child, kind)
    return found


def human_labels(store: Store, suite_id: str, assertion_type: str) -> Labels:
    """Calibration items from the suite's annotations in force (see the module)."""
    items: list[dict[str, Any]] = []
    left_out: list[str] = []
    for action in deciding(store.triage.current(suite_id, now=time.time())):
        runs = store.load_runs(
            action.evaluation_id or "", action.case_id, action.agent, action.repeat
        )
        run = next((r for r in runs if r.key.prompt_id == action.prompt_id), None)
        where = f"{action.evaluation_id} {action.case_id} {action.agent} repeat {action.repeat}"
        if run is None:
            left_out.append(f"{where}: the run is no longer stored")
            continue
        applied = _assertions(run.grade, assertion_type)
        if not applied:
            left_out.append(f"{where}: its grade has no {assertion_type} assertion")
        human = HUMAN[(action.kind, action.label or "")]
        for assertion in applied:
            items.append(
                {
                    "output": run.response.output,
                    "vars": run.vars,
                    "prompt": run.prompt,
                    "assert": assertion,
                    "human": "pass" if human else "fail",
                    "rubric": assertion_type,
                    "source": {
                        "evaluation": action.evaluation_id,
                        "case": action.case_id,
                        "agent": action.agent,
                        "prompt": action.prompt_id,
                        "repeat": action.repeat,
                        "by": action.actor,
                        "annotation": action.id,
                        "reason": action.reason,
                    },
                }
            )
    return Labels(items, left_out)


def write_labels(path: Path, labels: Labels) -> None:
    """The items as a JSONL calibration file (one item per line)."""
    path.write_text(
        "".join(json.dumps(item, ensure_ascii=False, default=str) + "\n" for item in labels.items),
        encoding="utf-8",
    )
