"""The `gates:` block of a suite, parsed and validated at load time into a `GateConfig`."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.suite.yaml_lines import line_of

_NUMBER_KEYS = {
    "confidence",
    "min_pass_rate",
    "margin",
    "equivalence_margin",
    "max_regression",
    "max_flake_rate",
    "max_cost_ratio",
    "max_latency_ratio",
    "max_cost_per_accepted",
    "min_judge_kappa",
    "min_judge_accuracy",
}
_FRACTION_KEYS = {
    "confidence",
    "min_pass_rate",
    "margin",
    "equivalence_margin",
    "max_regression",
    "max_flake_rate",
    "min_judge_accuracy",
}
_ENVIRONMENTS = ("pr", "nightly", "release")


def _parse_block(
    raw: dict[str, Any], agents: list[str], file: str | None, where: str
) -> GateConfig:
    known = {f.name for f in fields(GateConfig)}
    config = GateConfig()
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
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise SuiteError(f"{where}.{key} must be a number", file, line)
            value = float(value)
            if key == "min_judge_kappa" and not -1 <= value <= 1:
                raise SuiteError(f"{where}.{key} must be between -1 and 1", file, line)
            if key in _FRACTION_KEYS and not 0 <= value <= 1:
                raise SuiteError(
                    f"{where}.{key} must be between 0 and 1 (a fraction)",
                    file,
                    line,
                    "write 0.8 for 80 %",
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
            value = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        elif key == "environments":
            if not isinstance(value, dict):
                raise SuiteError(f"{where}.environments must be a mapping", file, line)
            envs = {}
            for name, block in value.items():
                if name not in _ENVIRONMENTS:
                    raise SuiteError(
                        f"unknown environment {name!r} in {where}.environments",
                        file,
                        line_of(value),
                        f"use {', '.join(_ENVIRONMENTS)}",
                    )
                envs[name] = _parse_block(block or {}, agents, file, f"{where}.environments.{name}")
            value = envs
        elif key == "per_tag":
            if not isinstance(value, dict):
                raise SuiteError(f"{where}.per_tag must map tag names to thresholds", file, line)
            value = {str(k): dict(v or {}) for k, v in value.items()}
        setattr(config, key, value)
    return config


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
    config = _parse_block(raw, agents, file, "gates")
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
