"""The `gates:` block of a suite, parsed and validated at load time into a `GateConfig`."""

from __future__ import annotations

from typing import Any

from evals.common import plugins
from evals.model.defaults import GATE_ENVIRONMENTS
from evals.model.errors import SuiteError
from evals.model.gates import SUITE_WIDE_KEYS, GateConfig, KeyRule, key_rules
from evals.suite import checks
from evals.suite.yaml_lines import line_of


def _parse_values(
    raw: dict[str, Any], agents: list[str], file: str | None, where: str
) -> dict[str, Any]:
    """The keys `raw` sets, validated and converted: a whole block or an environment's
    overrides."""
    rules = key_rules()
    known = set(rules)
    plugin_keys = _plugin_keys(raw, known)
    lines = getattr(raw, "key_lines", None)
    checks.known_keys(
        raw, known | set(plugin_keys), where, file=file, lines=lines, line=line_of(raw)
    )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        line = line_of(raw, key) or line_of(raw)
        if key in rules:
            values[key] = _value(rules[key], key, value, agents, file, line, where)
        else:
            values[key] = _plugin_value(plugin_keys[key], key, value, file, line, f"{where}.{key}")
    return values


def _value(
    rule: KeyRule,
    key: str,
    value: Any,
    agents: list[str],
    file: str | None,
    line: int | None,
    where: str,
) -> Any:
    """One harness key's value checked against its field's rule and converted."""
    name = f"{where}.{key}"
    if value is None and rule.nullable:
        return None
    if rule.kind == "number":
        assert rule.bounds is not None
        number = checks.number(value, name, rule.bounds, file=file, line=line, example=rule.example)
        return int(number) if rule.bounds.integer else number
    if rule.kind == "flag":
        return checks.flag(value, name, file=file, line=line)
    if rule.kind == "choice":
        if value not in rule.choices:
            raise SuiteError(
                f"{name} must be one of {', '.join(rule.choices)}, not {value!r}",
                file,
                line,
                f"write {key}: {rule.choices[0]}",
            )
        return value
    if rule.kind == "names":
        return _names(rule, value, name, file, line)
    if rule.kind == "agent":
        if str(value) not in agents:
            raise SuiteError(
                f"{name} names agent {value!r}, which is not among the providers",
                file,
                line,
                f"use one of the provider labels: {', '.join(agents)}",
            )
        return str(value)
    if rule.kind == "file":
        if not isinstance(value, str) or not value.strip():
            raise SuiteError(
                f"{name} must name {rule.what}", file, line, f"write {key}: {rule.example}"
            )
        return value
    if rule.kind == "environments":
        return _environments(value, agents, file, line, where)
    return _per_tag(value, agents, file, line, where)


def _names(rule: KeyRule, value: Any, name: str, file: str | None, line: int | None) -> list[str]:
    """A name or a list of names (numbers count as names), each among the rule's choices
    when it has any."""
    names = checks.names(value, name, file=file, line=line, numbers=True)
    unknown = [n for n in names if rule.choices and n not in rule.choices]
    if unknown:
        raise SuiteError(
            f"{name} names unknown {rule.what} {', '.join(unknown)}",
            file,
            line,
            f"use {', '.join(rule.choices)}",
        )
    return names


def _plugin_keys(raw: dict[str, Any], known: set[str]) -> dict[str, Any]:
    """The keys installed plugins' gates read, each with its gate, when `raw` sets a key
    that is not the harness's own (the gate plugins are imported only then)."""
    if all(key in known for key in raw):
        return {}
    keys = {}
    for plugin, gate in plugins.load_all(plugins.GATES):
        if not isinstance(getattr(gate, "keys", None), tuple):
            raise plugins.wrong_kind(plugin, "a Gate (evals.gates.Gate)")
        keys.update({key: gate for key in gate.keys if key not in known})
    return keys


def _plugin_value(
    gate: Any, key: str, value: Any, file: str | None, line: int | None, name: str
) -> Any:
    """A plugin gate's key read by the gate's own `parse` (any value without one)."""
    if gate.parse is None or value is None:
        return value
    try:
        return gate.parse(key, value)
    except ValueError as exc:
        raise SuiteError(f"{name}: {exc}", file, line, f"see the {gate.name} gate's docs") from None


def _per_tag(
    value: Any, agents: list[str], file: str | None, line: int | None, where: str
) -> dict[str, dict[str, Any]]:
    """Each tag's thresholds, validated as the top level's."""
    example = "per_tag: {news: {min_pass_rate: 0.9, max_regression: 0.05}}"
    block = checks.mapping(value, f"{where}.per_tag", file=file, line=line, example=example)
    out = {}
    for tag, thresholds in block.items():
        scope = f"{where}.per_tag.{tag}"
        tag_line = line_of(block, str(tag)) or line
        overrides = checks.mapping(
            {} if thresholds is None else thresholds,
            scope,
            file=file,
            line=tag_line,
            example=example,
        )
        for nested in ("environments", "per_tag"):
            if nested in overrides:
                raise SuiteError(
                    f"{scope} cannot set {nested}",
                    file,
                    line_of(overrides, nested) or tag_line,
                    "set thresholds only, e.g. " + example,
                )
        out[str(tag)] = _parse_values(overrides, agents, file, scope)
    return out


def _environments(
    value: Any, agents: list[str], file: str | None, line: int | None, where: str
) -> dict[str, dict[str, Any]]:
    """Each environment's overrides: only the keys it sets, validated."""
    example = "environments: {pr: {repeat: 3}, release: {repeat: 20}}"
    checks.mapping(value, f"{where}.environments", file=file, line=line, example=example)
    environments = {}
    for name, block in value.items():
        env_line = line_of(value, str(name)) or line
        if name not in GATE_ENVIRONMENTS:
            raise SuiteError(
                f"unknown environment {name!r} in {where}.environments",
                file,
                env_line,
                f"use {', '.join(GATE_ENVIRONMENTS)}",
            )
        scope = f"{where}.environments.{name}"
        block = checks.mapping(
            {} if block is None else block, scope, file=file, line=env_line, example=example
        )
        for key in ("environments", *SUITE_WIDE_KEYS):
            if key in block:
                raise SuiteError(
                    f"{scope} cannot set {key}",
                    file,
                    line_of(block, key),
                    f"set {key} once at the top of gates:"
                    if key != "environments"
                    else "environments do not nest",
                )
        environments[name] = _parse_values(block, agents, file, scope)
    return environments


def parse_gates(
    raw: Any, agents: list[str], file: str | None = None, line: int | None = None
) -> GateConfig:
    """Validate a suite's `gates:` block against its agents; absent means defaults.

    With two agents and no explicit baseline/candidate, the first is the baseline and the
    second the candidate.
    """
    if raw is None:
        raw = {}
    checks.mapping(raw, "gates", file=file, line=line, example="gates: {min_pass_rate: 0.8}")
    config = GateConfig().with_overrides(_parse_values(raw, agents, file, "gates"))
    for environment in (None, *config.environments):
        scoped = config.for_environment(environment)
        wants_judge = scoped.min_judge_kappa is not None or scoped.min_judge_accuracy is not None
        if wants_judge and not scoped.judge_calibration:
            raise SuiteError(
                "min_judge_kappa / min_judge_accuracy need gates.judge_calibration",
                file,
                line_of(raw),
                "add judge_calibration: file://calibration.yaml (human-labelled outputs)",
            )
    if config.baseline is None and config.candidate is None and len(agents) == 2:
        config.baseline, config.candidate = agents
    if config.candidate is None and len(agents) == 1:
        config.candidate = agents[0]
    return config
