"""The `gates:` block of a suite, parsed and validated at load time into a `GateConfig`."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from evals.common import plugins
from evals.model.defaults import GATE_ENVIRONMENTS
from evals.model.errors import SuiteError
from evals.model.gates import (
    ERROR_KINDS,
    ESTIMANDS,
    LATENCY_SOURCES,
    SUITE_WIDE_KEYS,
    UNDETERMINED_ACTIONS,
    GateConfig,
)
from evals.suite import checks
from evals.suite.checks import CONFIDENCE, COUNT, FRACTION, NON_NEGATIVE, POSITIVE, Bounds
from evals.suite.yaml_lines import line_of

# Each numeric key, the numbers it accepts and an example shown in the fix.
_NUMBERS: dict[str, tuple[Bounds, str]] = {
    "confidence": (CONFIDENCE, "0.95"),
    "min_pass_rate": (FRACTION, "0.8 (80 %)"),
    "margin": (FRACTION, "0.05"),
    "equivalence_margin": (FRACTION, "0.05"),
    "max_regression": (FRACTION, "0.05"),
    "p0_margin": (FRACTION, "0.2"),
    "max_error_rate": (FRACTION, "0.05"),
    "max_flake_rate": (FRACTION, "0.2"),
    "max_cost_ratio": (NON_NEGATIVE, "1.2 (at most 20 % more than the baseline)"),
    "max_latency_ratio": (NON_NEGATIVE, "1.2 (at most 20 % slower than the baseline)"),
    "max_cost_per_accepted": (NON_NEGATIVE, "0.25"),
    "min_judge_kappa": (Bounds(low=-1, high=1), "0.6"),
    "min_judge_accuracy": (FRACTION, "0.9"),
    "budget_cost": (POSITIVE, "5.0, or null for no cap"),
}
# Whole-number keys: at least 1.
_COUNTS = {
    "min_repeats": "3",
    "repeat": "5, or null for the suite's evaluateOptions.repeat",
    "budget_runs": "400, or null for no cap",
}
_FLAGS = (
    "block_p0_regressions",
    "zero_policy_violations",
    "allow_fingerprint_mismatch",
    "paired",
    "reuse_baseline",
)
# Keys that may be null: thresholds an environment switches off, caps and repeats left unset.
_OPTIONAL_KEYS = {
    f.name for f in fields(GateConfig) if f.name in {*_NUMBERS, *_COUNTS} and f.default is None
} | {"max_error_rate"}
_CHOICES = {
    "on_undetermined": UNDETERMINED_ACTIONS,
    "latency": LATENCY_SOURCES,
    "estimand": ESTIMANDS,
}


def _parse_values(
    raw: dict[str, Any], agents: list[str], file: str | None, where: str
) -> dict[str, Any]:
    """The keys `raw` sets, validated and converted: a whole block or an environment's
    overrides."""
    known = {f.name for f in fields(GateConfig)} - {"extra"}
    plugin_keys = _plugin_keys(raw, known)
    lines = getattr(raw, "key_lines", None)
    checks.known_keys(
        raw, known | set(plugin_keys), where, file=file, lines=lines, line=line_of(raw)
    )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        line = line_of(raw, key) or line_of(raw)
        name = f"{where}.{key}"
        if key in ("baseline", "candidate"):
            if str(value) not in agents:
                raise SuiteError(
                    f"{where}.{key} names agent {value!r}, which is not among the providers",
                    file,
                    line,
                    f"use one of the provider labels: {', '.join(agents)}",
                )
            value = str(value)
        elif key in _NUMBERS or key in _COUNTS:
            value = _number(key, value, file, line, name)
        elif key in _FLAGS:
            value = checks.flag(value, name, file=file, line=line)
        elif key in _CHOICES:
            if value not in _CHOICES[key]:
                raise SuiteError(
                    f"{name} must be one of {', '.join(_CHOICES[key])}, not {value!r}",
                    file,
                    line,
                    f"write {key}: {_CHOICES[key][0]}",
                )
        elif key == "exclude_errors":
            value = checks.names(value, name, file=file, line=line, numbers=True)
            unknown = [kind for kind in value if kind not in ERROR_KINDS]
            if unknown:
                raise SuiteError(
                    f"{where}.exclude_errors names unknown error kind(s) {', '.join(unknown)}",
                    file,
                    line,
                    f"use {', '.join(ERROR_KINDS)}",
                )
        elif key == "judge_calibration":
            if not isinstance(value, str) or not value.strip():
                raise SuiteError(
                    f"{where}.judge_calibration must name a calibration file",
                    file,
                    line,
                    "write judge_calibration: file://calibration.yaml",
                )
        elif key == "tags":
            value = (
                None
                if value is None
                else checks.names(value, name, file=file, line=line, numbers=True)
            )
        elif key == "environments":
            value = _environments(value, agents, file, line, where)
        elif key == "per_tag":
            value = _per_tag(value, agents, file, line, where)
        elif key in plugin_keys:
            value = _plugin_value(plugin_keys[key], key, value, file, line, name)
        values[key] = value
    return values


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


def _number(key: str, value: Any, file: str | None, line: int | None, name: str) -> Any:
    if value is None and key in _OPTIONAL_KEYS:
        return None
    if key in _COUNTS:
        return int(checks.number(value, name, COUNT, file=file, line=line, example=_COUNTS[key]))
    bounds, example = _NUMBERS[key]
    return checks.number(value, name, bounds, file=file, line=line, example=example)


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
