"""The final-state grader: what the run left behind in the suite's world (`environment:`).

The runner hands each run a fresh copy of the seed state and records, once the agent has
answered, every change from the seed and the digest of the final state
(`metadata.environment`). This grader judges them, as tau-bench judges a task by its
final database:

```yaml
- type: final-state
  value:
    changes:                              # each must have happened (pattern: final value)
      orders.A100.status: refunded
      refunds.*: {order_id: A100, amount: 40}   # a mapping matches the fields it names
    forbid: [customers.*, orders.*.amount]      # must not change
    only: true                            # nothing but the expected changes happened
    unchanged: false                      # true: nothing changed at all
    digest: 3f9c2a1b7d4e5f60              # the final state's digest
```

`changes` may also list paths without values (`[orders.A100.status]`: it must change).
Paths are dotted (`table.key.column` in a database); patterns take `*`, `?` and `**`.
A failure names the change and, in a conversation, the turn it happened in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from evals.common.world import parse_path, path_matches
from evals.graders.base import GradeContext, GraderError, scored
from evals.graders.registry import register, value_check
from evals.graders.trajectory_match import value_matches
from evals.model.results import Grade

OPTIONS = ("changes", "forbid", "only", "unchanged", "digest")
_EXAMPLE = "value: {changes: {orders.A100.status: refunded}, forbid: [customers.*]}"


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _expected_changes(value: Any) -> list[tuple[str, Any, bool]]:
    """(pattern, expected final value, whether a value is expected)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [(str(k), v, True) for k, v in value.items()]
    if isinstance(value, str):
        return [(value, None, False)]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [(v, None, False) for v in value]
    raise GraderError(
        "final-state: changes must map paths to final values, or list paths that must change"
    )


def _patterns(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise GraderError(f"final-state: {key} must be a path pattern or a list of them")


def _options(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise GraderError(f"final-state: the value must be a mapping ({_EXAMPLE})")
    unknown = sorted(set(value) - set(OPTIONS))
    if unknown:
        raise GraderError(f"final-state: unknown option(s) {unknown}; known: {list(OPTIONS)}")
    for key in ("only", "unchanged"):
        if value.get(key) is not None and not isinstance(value[key], bool):
            raise GraderError(f"final-state: {key} must be true or false")
    if value.get("digest") is not None and not isinstance(value["digest"], str):
        raise GraderError("final-state: digest must be the hex digest of a state, as text")
    _expected_changes(value.get("changes"))
    _patterns(value.get("forbid"), "forbid")
    return value


@value_check("final-state")
def check_value(value: Any) -> None:
    """Refuse a malformed value when the suite loads."""
    _options(value)


def _covers(actual: Any, expected: Any) -> bool:
    """A final value against the expected one: a mapping names the fields it requires."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _covers(actual[key], item) for key, item in expected.items()
        )
    if expected is None:
        return actual is None
    return value_matches(actual, expected)


def _turns(ctx: GradeContext) -> dict[str, int]:
    """The conversation turn each changed path changed in (the last time), when known."""
    found: dict[str, int] = {}
    for step in ctx.trajectory:
        turn = step.metadata.get("turn")
        for change in step.metadata.get("changes") or ():
            if isinstance(turn, int):
                found[change["path"]] = turn
    return found


def _describe(change: dict[str, Any], turns: dict[str, int]) -> str:
    before = _shown(change["before"]) if "before" in change else "(absent)"
    after = _shown(change["after"]) if "after" in change else "(removed)"
    turn = turns.get(change["path"])
    where = f" (turn {turn})" if turn is not None else ""
    return f"{change['path']}: {before} → {after}{where}"


def _checks(
    options: dict[str, Any], changes: list[dict[str, Any]], final: str | None, turns: dict[str, int]
) -> Iterator[tuple[bool, str, str | None]]:
    """(passed, what was checked, the path of the change it failed on) per check."""
    paths = [(c, parse_path(c["path"])) for c in changes]
    expected = _expected_changes(options.get("changes"))
    for pattern, value, has_value in expected:
        parts = parse_path(pattern)
        hits = [c for c, p in paths if path_matches(parts, p)]
        if not hits:
            yield False, f"expected {pattern} to change, it did not", None
        elif has_value and not any(_covers(c.get("after"), value) for c in hits):
            seen = "; ".join(_describe(c, turns) for c in hits)
            yield (
                False,
                f"expected {pattern} to become {_shown(value)}, got {seen}",
                hits[0]["path"],
            )
        else:
            yield True, f"{pattern} changed", None
    for pattern in _patterns(options.get("forbid"), "forbid"):
        parts = parse_path(pattern)
        for change, path in paths:
            if path_matches(parts, path):
                yield False, f"forbidden change {_describe(change, turns)}", change["path"]
    if options.get("only"):
        allowed = [parse_path(p) for p, _, _ in expected]
        for change, path in paths:
            if not any(path_matches(a, path) for a in allowed):
                yield False, f"unexpected change {_describe(change, turns)}", change["path"]
    if options.get("unchanged"):
        for change, _ in paths:
            yield False, f"the state changed: {_describe(change, turns)}", change["path"]
        if not changes:
            yield True, "the state did not change", None
    wanted = options.get("digest")
    if wanted is not None:
        same = final is not None and final.lower() == wanted.strip().lower()
        yield same, f"final state digest {final}" + ("" if same else f", expected {wanted}"), None


@register("final-state", layer="final")
def final_state(ctx: GradeContext) -> Grade:
    """Pass when the world the run left behind has the expected changes, no forbidden ones,
    and (when given) the expected digest."""
    options = _options(ctx.value)
    outcome = ctx.response.metadata.get("environment")
    if not isinstance(outcome, dict):
        raise GraderError(
            "final-state: the run has no world state; declare the suite's environment "
            "(environment: {state: file://seed.sql})"
        )
    changes = list(outcome.get("changes") or [])
    final = outcome.get("digest")
    turns = _turns(ctx)
    results = list(_checks(options, changes, final, turns))
    failed = [text for ok, text, _ in results if not ok]
    failed_turns = sorted({turns[p] for ok, _, p in results if not ok and p in turns})
    score = (len(results) - len(failed)) / len(results) if results else 1.0
    if failed:
        reason = "; ".join(failed)
    else:
        summary = f"{len(changes)} change(s)" if changes else "no change"
        reason = f"final state as expected ({summary}, digest {final})"
    grade = scored(ctx, score, not failed, reason)
    grade.metadata = {"changes": len(changes), "digest": final}
    if failed_turns:
        grade.metadata["turn"] = failed_turns[0]
    return grade
