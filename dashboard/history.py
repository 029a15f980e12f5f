"""Since when does a case or tag regress? A walk back over stored verdicts.

The verdicts are those each evaluation stored (`group_verdicts`, copied from its summary)
and the reasons of the gates that failed; nothing is estimated here. The walk follows a
case by its id and a tag by its name across suite versions and edits: the evaluations
of one suite in one environment, whatever their suite fingerprint.

Walking from the newest evaluation back, each evaluation is, for the change being
followed (a regression, or an improvement):

- *with* it: the group's stored verdict is that change, or (a regression of a P0 case)
  the evaluation's failing P0 gate names the case;
- *unclear*: the verdict is inconclusive or insufficient data: the evidence of that one
  night decides nothing, and the walk goes on through it;
- *without* it: any other verdict, or no verdict at all (the case was not in the suite,
  or the evaluation compared nothing): the walk stops there.

The change began at the oldest *with* evaluation of the span; the evaluation just
before it is the last one without it (possibly an unclear one). Unclear evaluations
inside the span are listed as such. Where the case's definition (its case fingerprint:
vars, assertions, options) differs from one evaluation to the next within the span, the
onset says from which evaluation on; where a tag's cases differ (a suite edit added a case
to the tag, removed one, or moved one to another tag), it says which cases joined and
which left, and from which evaluation on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

ABSENT = "absent"
UNCLEAR = frozenset({"inconclusive", "insufficient data"})
P0_GATE = "p0_regressions"


@dataclass(frozen=True, slots=True)
class Regrouping:
    """A tag's cases changed from `evaluation` on: `joined` are new to the tag there,
    `left` no longer in it (each in suite order)."""

    evaluation: dict[str, Any]
    joined: tuple[str, ...]
    left: tuple[str, ...]

    def text(self) -> str:
        """`from night-06 on, refund-card joined; refund-old left`."""
        return f"from {self.evaluation['id']} on, {moved_text(self.joined, self.left)}"


def moved_text(joined: Sequence[str], left: Sequence[str]) -> str:
    """`refund-card joined; refund-old left` (each part only when it has cases)."""
    parts = [f"{', '.join(joined)} joined"] if joined else []
    return "; ".join(parts + ([f"{', '.join(left)} left"] if left else []))


def regrouping(
    evaluation: dict[str, Any], now: Sequence[str] | None, then: Sequence[str] | None
) -> Regrouping | None:
    """How a tag's cases changed between the evaluation before and `evaluation` (None
    when they did not, or either side's cases are unknown)."""
    if now is None or then is None:
        return None
    joined = tuple(c for c in now if c not in then)
    left = tuple(c for c in then if c not in now)
    return Regrouping(evaluation, joined, left) if joined or left else None


@dataclass(frozen=True, slots=True)
class Onset:
    """When a group's current change began.

    `first` is the oldest evaluation of the span that shows the change, `streak` the
    number of evaluations from it to the newest, `unclear` those of them whose evidence
    alone was inconclusive. `last_good` is the evaluation just before `first`, with
    `last_good_verdict` (`absent` when it did not decide the group), or None when the span
    reaches back to the oldest evaluation of the window: the change is at least as old.
    `redefined` lists the evaluations (newest first) from which the case's definition
    differs from the evaluation before it, within the span and at its start; `regrouped`
    those from which a tag's cases differ, each with the cases that joined and that left.
    """

    verdict: str
    streak: int
    first: dict[str, Any]
    last_good: dict[str, Any] | None
    last_good_verdict: str | None
    unclear: tuple[dict[str, Any], ...] = ()
    redefined: tuple[dict[str, Any], ...] = field(default=())
    regrouped: tuple[Regrouping, ...] = field(default=())

    @property
    def open_ended(self) -> bool:
        """True when every evaluation in the window showed the change."""
        return self.last_good is None


def named_in(text: str, names: Iterable[str]) -> list[str]:
    """The names (case ids, tags) that appear in `text` as whole words: not as part of a
    longer id (`case-1` is not named by `case-10`)."""
    found = []
    for name in names:
        if name and re.search(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", text):
            found.append(name)
    return found


def gate_subjects(gate: dict[str, Any], cases: Iterable[str]) -> list[str]:
    """The cases a gate's reason names (the P0 gate names the cases that failed it)."""
    return named_in(str(gate.get("reason") or ""), cases)


def _state(verdict: str, wanted: str, named_by_gate: bool) -> str:
    if verdict == wanted or named_by_gate:
        return "with"
    if verdict in UNCLEAR:
        return "unclear"
    return "without"


def onset(
    kind: str,
    name: str,
    wanted: str,
    listed: list[dict[str, Any]],
    verdicts: dict[tuple[str, str, str], str],
    p0_named: set[tuple[str, str]],
    fingerprints: dict[tuple[str, str], str],
    members: dict[tuple[str, str], tuple[str, ...]] | None = None,
) -> Onset | None:
    """The onset of change `wanted` (regression or improvement) for one group, walking
    `listed` (newest first); None when the newest evaluation does not show it.

    `verdicts` maps (evaluation, kind, name) to the stored verdict; `p0_named` holds the
    (evaluation, case) pairs a failing P0 gate named (regressions only); `fingerprints`
    maps (suite fingerprint, case) to the case's fingerprint where it is known, and
    `members` (suite fingerprint, tag) to the tag's cases."""
    states = []
    for row in listed:
        verdict = verdicts.get((row["id"], kind, name), ABSENT)
        named = wanted == "regression" and kind == "case" and (row["id"], name) in p0_named
        states.append((row, verdict, _state(verdict, wanted, named)))
    if not states or states[0][2] != "with":
        return None
    end = next((i for i, (_, _, s) in enumerate(states) if s == "without"), len(states))
    span = states[:end]
    oldest_with = max(i for i, (_, _, s) in enumerate(span) if s == "with")
    kept = span[: oldest_with + 1]
    before = states[oldest_with + 1] if oldest_with + 1 < len(states) else None
    redefined = []
    regrouped = []
    cases_of = members or {}
    for (newer, _, _), older in zip(kept, [*states[1 : oldest_with + 2], None], strict=False):
        if older is None:
            break
        now_fp = fingerprints.get((newer.get("fingerprint", ""), name))
        then_fp = fingerprints.get((older[0].get("fingerprint", ""), name))
        if kind == "case" and now_fp and then_fp and now_fp != then_fp:
            redefined.append(newer)
        if kind == "tag":
            change = regrouping(
                newer,
                cases_of.get((newer.get("fingerprint", ""), name)),
                cases_of.get((older[0].get("fingerprint", ""), name)),
            )
            if change is not None:
                regrouped.append(change)
    return Onset(
        verdict=wanted,
        streak=len(kept),
        first=kept[-1][0],
        last_good=before[0] if before else None,
        last_good_verdict=before[1] if before else None,
        unclear=tuple(row for row, _, state in kept if state == "unclear"),
        redefined=tuple(redefined),
        regrouped=tuple(regrouped),
    )


def onsets(history: dict[str, Any], p0_cases: Iterable[str] = ()) -> dict[tuple[str, str], Onset]:
    """The onset of the current change of every (kind, name) the newest evaluation of
    `history` (as `DashboardQueries.history` returns it) shows as a regression or an
    improvement, and of each of `p0_cases` (cases the newest failing P0 gate names) as a
    regression."""
    listed = history["evaluations"]
    if not listed:
        return {}
    verdicts: dict[tuple[str, str, str], str] = {
        (row["evaluation_id"], row["kind"], row["name"]): row["verdict"]
        for row in history["verdicts"]
    }
    case_names = {name for (_, kind, name) in verdicts if kind == "case"} | set(p0_cases)
    p0_named = {
        (gate["evaluation_id"], case)
        for gate in history.get("gates", [])
        if gate["name"] == P0_GATE and gate["status"] == "fail"
        for case in gate_subjects(gate, case_names)
    }
    fingerprints = {
        (suite, case): case_fingerprint
        for suite, cases in history.get("case_fingerprints", {}).items()
        for case, case_fingerprint in cases.items()
    }
    # a tag's cases where its suite version's outline is known; a version whose outline
    # lists no case of the tag has none of them
    members = {
        (suite, tag): tuple(tags.get(tag, ()))
        for suite, tags in history.get("tag_members", {}).items()
        for tag in {name for (_, kind, name) in verdicts if kind == "tag"}
    }
    newest = listed[0]["id"]
    wanted_groups = {
        (kind, name, verdict)
        for (evaluation_id, kind, name), verdict in verdicts.items()
        if evaluation_id == newest and verdict in ("regression", "improvement")
    } | {("case", name, "regression") for name in p0_cases}
    found: dict[tuple[str, str], Onset] = {}
    for kind, name, wanted in sorted(wanted_groups):
        result = onset(kind, name, wanted, listed, verdicts, p0_named, fingerprints, members)
        if result is not None:
            found[(kind, name)] = result
    return found
