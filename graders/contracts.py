"""Tool contracts declared by a suite: effect class, approval and argument constraints.

A suite declares its tools under a top-level ``tools:`` key, as a list of entries with a
``name`` or as a mapping from name to entry. An entry carries an ``effect`` (one of
read/compute/draft/write/send/publish/delete), ``requires_approval`` (by default true for
write, send, publish and delete), a JSON schema of its arguments (``parameters`` or
``input_schema``), optionally the ``forbidden_patterns`` sets checked on its arguments and
whether its effect can be undone (``reversible``, read by the permission grader's risk
score) and the tools that may stand in for it when it fails (``fallbacks``, read by the
robustness metrics).
OpenAI-style entries (``{type: function, function: {...}}``) are accepted too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.graders.base import GraderError
from evals.model.trajectory import EFFECT_CLASSES

EFFECTFUL = frozenset({"write", "send", "publish", "delete"})


@dataclass(frozen=True, slots=True)
class ToolContract:
    """What a suite promises about one tool."""

    name: str
    effect: str | None = None
    requires_approval: bool = False
    parameters: dict[str, Any] | None = None
    forbidden_patterns: tuple[str, ...] | None = None
    reversible: bool | None = None
    fallbacks: tuple[str, ...] = ()

    def parameter_type(self, argument: str) -> str | list[str] | None:
        """The JSON-schema type declared for an argument, when the contract declares one."""
        properties = (self.parameters or {}).get("properties") or {}
        spec = properties.get(argument)
        return spec.get("type") if isinstance(spec, dict) else None


def _contract(name: str, entry: dict[str, Any]) -> ToolContract:
    if isinstance(entry.get("function"), dict):
        entry = {**entry["function"], **{k: v for k, v in entry.items() if k != "function"}}
    effect = entry.get("effect", entry.get("effect_class"))
    if effect is not None and effect not in EFFECT_CLASSES:
        raise GraderError(
            f"tool {name!r}: effect {effect!r} is not one of {', '.join(EFFECT_CLASSES)}"
        )
    approval = entry.get("requires_approval", entry.get("approval_required"))
    parameters = entry.get("parameters", entry.get("input_schema"))
    if parameters is not None and not isinstance(parameters, dict):
        raise GraderError(f"tool {name!r}: parameters must be a JSON schema object")
    patterns = entry.get("forbidden_patterns")
    if isinstance(patterns, str):
        patterns = [patterns]
    reversible = entry.get("reversible")
    if reversible is not None and not isinstance(reversible, bool):
        raise GraderError(f"tool {name!r}: reversible must be true or false")
    fallbacks = entry.get("fallbacks", entry.get("fallback")) or []
    if isinstance(fallbacks, str):
        fallbacks = [fallbacks]
    if not isinstance(fallbacks, list) or not all(isinstance(f, str) for f in fallbacks):
        raise GraderError(f"tool {name!r}: fallbacks must be a tool name or a list of names")
    return ToolContract(
        name=name,
        reversible=reversible,
        fallbacks=tuple(fallbacks),
        effect=effect,
        requires_approval=bool(effect in EFFECTFUL if approval is None else approval),
        parameters=parameters,
        forbidden_patterns=None if patterns is None else tuple(str(p) for p in patterns),
    )


def parse_contracts(raw: Any) -> dict[str, ToolContract]:
    """Contracts by tool name from a ``tools:`` declaration (list or mapping); empty when absent."""
    if raw is None:
        return {}
    entries: list[tuple[str, dict[str, Any]]] = []
    if isinstance(raw, dict):
        for name, entry in raw.items():
            if entry is not None and not isinstance(entry, dict):
                raise GraderError(f"tool {name!r}: contract must be a mapping")
            entries.append((str(name), entry or {}))
    elif isinstance(raw, list):
        for entry in raw:
            if isinstance(entry, str):
                entries.append((entry, {}))
                continue
            if not isinstance(entry, dict):
                raise GraderError("tools: each entry must be a mapping with a name")
            name = entry.get("name") or (entry.get("function") or {}).get("name")
            if not name:
                raise GraderError("tools: an entry has no name")
            entries.append((str(name), entry))
    else:
        raise GraderError("tools: expected a list of tool contracts or a mapping by name")
    return {name: _contract(name, entry) for name, entry in entries}


def suite_contracts(suite_config: dict[str, Any], override: Any = None) -> dict[str, ToolContract]:
    """The suite's contracts with an assertion's own ``tools`` merged over them, by name."""
    return {**parse_contracts(suite_config.get("tools")), **parse_contracts(override)}
