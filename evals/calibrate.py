"""Measure an LLM judge against human labels: accuracy and Cohen's kappa, per rubric.

A calibration file (YAML with an `items:` list, or JSONL with one item per line) holds
outputs a human has already judged. Each item has `output`, optional `vars` (the context a
judge reads, e.g. `query`, `context`), optional `prompt`, the assertion (`assert:`, or the
file's top-level `assert:`) and the human verdict `human` (true/false, pass/fail). The
judge grades every item; agreement is reported with a Wilson interval and Cohen's kappa
with its asymptotic interval (Fleiss, Cohen and Everitt 1969). Items the judge could not
grade are counted apart, never as agreement. `min_kappa` / `min_accuracy` in the file (or
on the command line) make the command fail when the judge agrees less than that.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from scipy.stats import norm

from evals.grading import grade_assertion_async
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import Assertion
from evals.stats import wilson_interval

_TRUE = {"true", "pass", "passed", "yes", "y", "1"}
_FALSE = {"false", "fail", "failed", "no", "n", "0"}


@dataclass(slots=True)
class CalibrationItem:
    """One human-labelled output and the assertion the judge applies to it."""

    output: Any
    assertion: Assertion
    human: bool
    rubric: str
    variables: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""


@dataclass(slots=True)
class Agreement:
    """Judge-versus-human agreement over a set of items (one rubric, or all of them)."""

    rubric: str
    both_pass: int = 0
    judge_only: int = 0
    human_only: int = 0
    both_fail: int = 0
    errors: int = 0

    def add(self, judge: bool, human: bool) -> None:
        """Count one graded item."""
        if judge and human:
            self.both_pass += 1
        elif judge:
            self.judge_only += 1
        elif human:
            self.human_only += 1
        else:
            self.both_fail += 1

    @property
    def n(self) -> int:
        """Items the judge graded."""
        return self.both_pass + self.judge_only + self.human_only + self.both_fail

    @property
    def agreed(self) -> int:
        """Items where judge and human gave the same verdict."""
        return self.both_pass + self.both_fail

    def accuracy(self, confidence: float = 0.95) -> tuple[float, float, float]:
        """Share of agreement with its Wilson interval: (estimate, low, high)."""
        if self.n == 0:
            return math.nan, math.nan, math.nan
        low, high = wilson_interval(self.agreed, self.n, confidence)
        return self.agreed / self.n, low, high

    def kappa(self, confidence: float = 0.95) -> tuple[float, float, float]:
        """Cohen's kappa with its asymptotic (non-null) interval: (estimate, low, high)."""
        return cohen_kappa(
            [[self.both_pass, self.judge_only], [self.human_only, self.both_fail]], confidence
        )


def cohen_kappa(table: list[list[int]], confidence: float = 0.95) -> tuple[float, float, float]:
    """Kappa of a square agreement table (rows: first rater, columns: second) and its interval.

    The standard error is Fleiss, Cohen and Everitt's (1969) large-sample one; with perfect
    chance agreement (one category only) kappa is undefined and NaN is returned.
    """
    n = sum(sum(row) for row in table)
    k = len(table)
    if n == 0:
        return math.nan, math.nan, math.nan
    p = [[cell / n for cell in row] for row in table]
    rows = [sum(p[i]) for i in range(k)]
    cols = [sum(p[i][j] for i in range(k)) for j in range(k)]
    observed = sum(p[i][i] for i in range(k))
    expected = sum(rows[i] * cols[i] for i in range(k))
    if expected >= 1.0:
        return math.nan, math.nan, math.nan
    kappa = (observed - expected) / (1 - expected)
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(k))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(k) for j in range(k) if i != j
    )
    c = (kappa - expected * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, a + b - c)) / ((1 - expected) * math.sqrt(n))
    z = float(norm.ppf(0.5 + confidence / 2))
    return kappa, kappa - z * se, kappa + z * se


def _verdict(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in _TRUE:
        return True
    if str(value).strip().lower() in _FALSE:
        return False
    raise SuiteError(f"{where}: human verdict must be pass/fail or true/false, got {value!r}")


def _assertion(raw: Any, where: str) -> Assertion:
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise SuiteError(f"{where}: needs an `assert:` mapping with a type")
    threshold = raw.get("threshold")
    return Assertion(
        type=raw["type"],
        value=raw.get("value"),
        threshold=None if threshold is None else float(threshold),
        provider=raw.get("provider"),
        config=dict(raw.get("config") or {}),
        raw=dict(raw),
    )


def _rubric_name(assertion: Assertion) -> str:
    value = assertion.value if isinstance(assertion.value, str) else json.dumps(assertion.value)
    return f"{assertion.type}: {value}" if assertion.value is not None else assertion.type


@dataclass(slots=True)
class CalibrationFile:
    """A loaded calibration file."""

    items: list[CalibrationItem]
    options: dict[str, Any]
    min_kappa: float | None
    min_accuracy: float | None
    root: Path


def load_calibration(path: Path) -> CalibrationFile:
    """Read a YAML or JSONL calibration file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        header: dict[str, Any] = {}
        raw_items = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        header = yaml.safe_load(text) or {}
        if not isinstance(header, dict) or not isinstance(header.get("items"), list):
            raise SuiteError(f"{path}: a calibration file needs an `items:` list")
        raw_items = header["items"]
    items = []
    for index, raw in enumerate(raw_items):
        where = f"{path} item {index + 1}"
        if not isinstance(raw, dict) or "human" not in raw or "output" not in raw:
            raise SuiteError(f"{where}: needs `output` and `human`")
        assertion = _assertion(raw.get("assert", header.get("assert")), where)
        items.append(
            CalibrationItem(
                output=raw["output"],
                assertion=assertion,
                human=_verdict(raw["human"], where),
                rubric=str(raw.get("rubric") or _rubric_name(assertion)),
                variables=dict(raw.get("vars") or {}),
                prompt=str(raw.get("prompt") or ""),
            )
        )
    options = dict(header.get("options") or {})
    if header.get("grader"):
        options["provider"] = header["grader"]
    return CalibrationFile(
        items,
        options,
        header.get("min_kappa"),
        header.get("min_accuracy"),
        path.parent,
    )


async def _judge_all(
    calibration: CalibrationFile, concurrency: int
) -> list[tuple[CalibrationItem, bool | None]]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(item: CalibrationItem) -> tuple[CalibrationItem, bool | None]:
        async with gate:
            grade = await grade_assertion_async(
                item.assertion,
                item.output,
                AgentResponse(output=item.output),
                prompt=item.prompt,
                variables=item.variables,
                latency_ms=0.0,
                suite_root=calibration.root,
                case_options=calibration.options,
            )
        return item, None if grade.errored else grade.passed

    return list(await asyncio.gather(*(one(item) for item in calibration.items)))


def tally(verdicts: Iterable[tuple[CalibrationItem, bool | None]]) -> list[Agreement]:
    """Agreement per rubric, then over all items (last)."""
    per_rubric: dict[str, Agreement] = {}
    overall = Agreement("all")
    for item, judge in verdicts:
        row = per_rubric.setdefault(item.rubric, Agreement(item.rubric))
        for target in (row, overall):
            if judge is None:
                target.errors += 1
            else:
                target.add(judge, item.human)
    return [*per_rubric.values(), overall]


def calibrate(
    path: Path, grader: str | None = None, concurrency: int = 4
) -> tuple[CalibrationFile, list[Agreement]]:
    """Grade every item of a calibration file with its judge and measure agreement."""
    calibration = load_calibration(path)
    if grader:
        calibration.options["provider"] = grader
    verdicts = asyncio.run(_judge_all(calibration, concurrency))
    return calibration, tally(verdicts)


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def render_table(rows: list[Agreement]) -> str:
    """The agreement table the `evals calibrate` command prints."""
    header = f"{'rubric':<40} {'n':>4} {'err':>4} {'accuracy [95% CI]':>24} {'kappa [95% CI]':>26}"
    lines = [header, "-" * len(header)]
    for row in rows:
        acc, acc_lo, acc_hi = row.accuracy()
        kap, kap_lo, kap_hi = row.kappa()
        name = row.rubric if len(row.rubric) <= 40 else row.rubric[:37] + "..."
        accuracy = f"{_fmt(acc)} [{_fmt(acc_lo)}, {_fmt(acc_hi)}]"
        kappa = f"{_fmt(kap)} [{_fmt(kap_lo)}, {_fmt(kap_hi)}]"
        lines.append(f"{name:<40} {row.n:>4} {row.errors:>4} {accuracy:>24} {kappa:>26}")
    return "\n".join(lines)


def below_minimum(
    overall: Agreement, min_kappa: float | None, min_accuracy: float | None
) -> list[str]:
    """Why the judge's overall agreement fails the minimums (empty when it passes)."""
    problems = []
    kappa = overall.kappa()[0]
    accuracy = overall.accuracy()[0]
    if min_kappa is not None and not kappa >= min_kappa:
        problems.append(f"kappa {_fmt(kappa)} < min_kappa {min_kappa}")
    if min_accuracy is not None and not accuracy >= min_accuracy:
        problems.append(f"accuracy {_fmt(accuracy)} < min_accuracy {min_accuracy}")
    return problems
