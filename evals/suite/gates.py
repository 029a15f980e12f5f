"""The `gates:` block of a suite, parsed and validated at load time into a `GateConfig`."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from evals.model.errors import SuiteError
from evals.model.gates import (
    ERROR_KINDS,
    LATENCY_SOURCES,
    SUITE_WIDE_KEYS,
    UNDETERMINED_ACTIONS,
    GateConfig,
)
from evals.suite.yaml_lines import line_of

_NUMBER_KEYS = {
    "confidence",
    "min_pass_rate",
    "margin",
    "equivalence_margin",
    "max_regression",
    "p0_margin",
    "max_error_rate",
    "max_flake_rate",
    "max_cost_ratio",
    "max_latency_ratio",
    "max_cost_per_accepted",
    "min_judge_kappa",
    "min_judge_accuracy",
    "budget_cost",
}
_FRACTION_KEYS = {
    "confidence",
    "min_pass_rate",
    "margin",
    "equivalence_margin",
    "max_regression",
    "p0_margin",
    "max_error_rate",
    "max_flake_rate",
    "min_judge_accuracy",
}
# Thresholds an environment may switch off with null.
_OPTIONAL_KEYS = {
    f.name for f in fields(GateConfig) if f.name in _NUMBER_KEYS and f.default is None
} | {"max_error_rate"}
_CHOICES = {"on_undetermined": UNDETERMINED_ACTIONS, "latency": LATENCY_SOURCES}
_ENVIRONMENTS = ("pr", "nightly", "release")


def _parse_values(
    raw: dict[str, Any], agents: list[str], file: str | None, where: str
) -> dict[str, Any]:
    """The keys `raw` sets, validated and converted: a whole block or an environment's
    overrides."""
    known = {f.name for f in fields(GateConfig)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        line = line_of(raw, key)
        if key not in known:
            import difflib

            close = difflib.get_close_matches(key, sorted(known), n=1)
            raise SuiteError(
                f"unknown key {key!r} in {where}",
                file,
                line,
                f"did you mean {close[0]!r}?" if close else "see docs/gates.md for the keys",
            )
        if key in ("baseline", "candidate"):
            if str(value) not in agents:
                raise SuiteError(
                    f"{where}.{key} names agent {value!r}, which is not among the providers",
                    file,
                    line,
                    f"use one of the provider labels: {', '.join(agents)}",
                )
            value = str(value)
        elif key in _NUMBER_KEYS:
            value = _number(key, value, file, line, where)
        elif key in _CHOICES:
            if value not in _CHOICES[key]:
                raise SuiteError(
                    f"{where}.{key} must be one of {', '.join(_CHOICES[key])}, not {value!r}",
                    file,
                    line,
                )
        elif key == "exclude_errors":
            value = [str(v) for v in value] if isinstance(value, list) else [str(value)]
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
        elif key == "budget_runs":
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                raise SuiteError(
                    f"{where}.budget_runs must be a whole number of runs, at least 1",
                    file,
                    line,
                    "write budget_runs: 400, or null for no cap",
                )
        elif key == "tags":
            value = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        elif key == "environments":
            value = _environments(value, agents, file, line, where)
        elif key == "per_tag":
            if not isinstance(value, dict):
                raise SuiteError(f"{where}.per_tag must map tag names to thresholds", file, line)
            value = {str(k): dict(v or {}) for k, v in value.items()}
        values[key] = value
    return values


def _number(key: str, value: Any, file: str | None, line: int | None, where: str) -> float | None:
    if value is None and key in _OPTIONAL_KEYS:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SuiteError(f"{where}.{key} must be a number", file, line)
    value = float(value)
    if key == "budget_cost" and value <= 0:
        raise SuiteError(f"{where}.{key} must be positive", file, line, "or null for no cap")
    if key == "min_judge_kappa" and not -1 <= value <= 1:
        raise SuiteError(f"{where}.{key} must be between -1 and 1", file, line)
    if key in _FRACTION_KEYS and not 0 <= value <= 1:
        raise SuiteError(
            f"{where}.{key} must be between 0 and 1 (a fraction)", file, line, "write 0.8 for 80 %"
        )
    return value


def _environments(
    value: Any, agents: list[str], file: str | None, line: int | None, where: str
) -> dict[str, dict[str, Any]]:
    """Each environment's overrides: only the keys it sets, validated."""
    if not isinstance(value, dict):
        raise SuiteError(f"{where}.environments must be a mapping", file, line)
    environments = {}
    for name, block in value.items():
        if name not in _ENVIRONMENTS:
            raise SuiteError(
                f"unknown environment {name!r} in {where}.environments",
                file,
                line_of(value),
                f"use {', '.join(_ENVIRONMENTS)}",
            )
        scope = f"{where}.environments.{name}"
        block = block or {}
        if not isinstance(block, dict):
            raise SuiteError(f"{scope} must be a mapping of overrides", file, line_of(value))
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
    if not isinstance(raw, dict):
        raise SuiteError("gates must be a mapping", file, line, "write gates: {min_pass_rate: 0.8}")
    config = GateConfig(**_parse_values(raw, agents, file, "gates"))
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
