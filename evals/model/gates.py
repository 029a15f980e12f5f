"""The gate thresholds of a suite (its `gates:` block), per environment.

Parsed and validated from YAML by `evals.suite.gates`; read by statistics and gates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(slots=True)
class GateConfig:
    """Thresholds for one environment (the top level, or pr/nightly/release overrides).

    Rates are fractions in [0, 1]; `margin` is the practical regression margin (smaller
    losses are tolerated); `equivalence_margin` is how close two agents must provably be
    to be called equivalent; ratios compare candidate to baseline (1.2 = at most 20 % more).
    `judge_calibration` names a calibration file of human-labelled outputs (`file://x.yaml`,
    relative to the suite) on which `min_judge_kappa` / `min_judge_accuracy` gate the suite's
    judge.
    """

    baseline: str | None = None
    candidate: str | None = None
    confidence: float = 0.95
    min_pass_rate: float | None = None
    margin: float = 0.0
    equivalence_margin: float = 0.05
    max_regression: float | None = None
    block_p0_regressions: bool = True
    zero_policy_violations: bool = True
    max_flake_rate: float | None = None
    max_cost_ratio: float | None = None
    max_latency_ratio: float | None = None
    max_cost_per_accepted: float | None = None
    min_repeats: int = 1
    tags: list[str] | None = None
    repeat: int | None = None
    allow_fingerprint_mismatch: bool = False
    paired: bool = False
    judge_calibration: str | None = None
    min_judge_kappa: float | None = None
    min_judge_accuracy: float | None = None
    per_tag: dict[str, dict[str, Any]] = field(default_factory=dict)
    environments: dict[str, GateConfig] = field(default_factory=dict)

    def for_environment(self, name: str | None) -> GateConfig:
        """This config with an environment's overrides applied (unknown names keep it)."""
        if not name or name not in self.environments:
            return self
        override = self.environments[name]
        merged = GateConfig(**{f.name: getattr(self, f.name) for f in fields(self)})
        defaults = GateConfig()
        for f in fields(self):
            value = getattr(override, f.name)
            if f.name != "environments" and value != getattr(defaults, f.name):
                setattr(merged, f.name, value)
        merged.environments = {}
        return merged

    def to_dict(self) -> dict[str, Any]:
        """The thresholds as JSON (environments nested), as stored with an evaluation."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateConfig:
        """Rebuild thresholds from `to_dict` output, ignoring unknown keys."""
        known = {f.name for f in fields(cls)} - {"environments"}
        environments = {
            str(name): cls.from_dict(block)
            for name, block in (data.get("environments") or {}).items()
        }
        return cls(**{k: v for k, v in data.items() if k in known}, environments=environments)
