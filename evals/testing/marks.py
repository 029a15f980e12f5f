"""The `evals` marker: which tests are cases, how often they run, and what the case is.

`@pytest.mark.evals(repeat=5, priority="P0", tags=["news"])` on a test function (or a
class, or a module's `pytestmark`) makes every test it covers a case of the evaluation.
A parameter's mark (`pytest.param(..., marks=pytest.mark.evals(description=...))`) adds
the details of that parameter's case; the nearest mark wins, and tags add up.

A case's id is the mark's `case=`, else the slug of its `description=` (as a YAML
suite's case id is the slug of its description), else the test's node id without the
run's agent and repeat. The id is what the run's seed is derived from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

KEYS = ("repeat", "case", "description", "priority", "tags", "why_it_exists", "metadata")
PRIORITIES = ("P0", "P1", "P2", "P3")


class MarkError(ValueError):
    """An `evals` mark that cannot be used; the message says which argument and why."""


@dataclass(frozen=True, slots=True)
class CaseMark:
    """The merged `evals` marks of one test."""

    repeat: int | None = None
    case: str | None = None
    description: str | None = None
    priority: str | None = None
    tags: tuple[str, ...] = ()
    why_it_exists: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def case_metadata(self) -> dict[str, Any]:
        """The case's metadata as a YAML suite holds it (tags, priority, why_it_exists)."""
        data = dict(self.metadata)
        if self.tags:
            data["tags"] = list(self.tags)
        if self.priority is not None:
            data["priority"] = self.priority
        if self.why_it_exists is not None:
            data["why_it_exists"] = self.why_it_exists
        return data


def _check(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    if args:
        raise MarkError("evals marks take keyword arguments only, e.g. evals(repeat=5)")
    unknown = sorted(set(kwargs) - set(KEYS))
    if unknown:
        raise MarkError(f"unknown evals mark argument(s) {unknown}; known: {', '.join(KEYS)}")
    repeat = kwargs.get("repeat")
    if repeat is not None and (
        isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1
    ):
        raise MarkError(f"evals(repeat={repeat!r}): repeat must be a positive integer")
    priority = kwargs.get("priority")
    if priority is not None and str(priority) not in PRIORITIES:
        raise MarkError(f"evals(priority={priority!r}): use one of {', '.join(PRIORITIES)}")
    tags = kwargs.get("tags")
    if tags is not None and not isinstance(tags, str | list | tuple):
        raise MarkError(f"evals(tags={tags!r}): tags are a string or a list of strings")
    for key in ("case", "description", "why_it_exists"):
        value = kwargs.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise MarkError(f"evals({key}={value!r}): {key} is a non-empty string")
    metadata = kwargs.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise MarkError(f"evals(metadata={metadata!r}): metadata is a mapping")


def merge(marks: Iterable[tuple[tuple[Any, ...], Mapping[str, Any]]]) -> CaseMark:
    """The merged mark from (args, kwargs) of each `evals` mark, nearest first."""
    merged: dict[str, Any] = {}
    tags: list[str] = []
    for args, kwargs in marks:
        _check(args, kwargs)
        for key, value in kwargs.items():
            if key == "tags":
                tags[:0] = [value] if isinstance(value, str) else [str(t) for t in value]
            elif key == "metadata":
                merged["metadata"] = {**value, **merged.get("metadata", {})}
            else:
                merged.setdefault(key, value)
    if merged.get("priority") is not None:
        merged["priority"] = str(merged["priority"])
    return CaseMark(tags=tuple(dict.fromkeys(tags)), **merged)


def case_id(mark: CaseMark, node_id: str) -> str:
    """The case's id: `case=`, else the slug of `description=`, else the node id."""
    if mark.case:
        return mark.case
    if mark.description:
        from evals.suite.loader import slug

        return slug(mark.description) or node_id
    return node_id


def without_slot(node_id: str, slot_id: str) -> str:
    """A parametrized test's node id without the run's `agent-repeat` id."""
    for old, new in ((f"[{slot_id}]", ""), (f"-{slot_id}]", "]"), (f"[{slot_id}-", "[")):
        head, found, tail = node_id.rpartition(old)
        if found:
            return head + new + tail
    return node_id.replace(f"-{slot_id}-", "-", 1)
