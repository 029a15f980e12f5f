"""Calibration files, and the judge grading them: the running part of judge calibration.

A calibration file (YAML with an `items:` list, or JSONL with one item per line) holds
outputs a human has already judged. Each item has `output`, optional `vars` (the context a
judge reads, e.g. `query`, `context`), optional `prompt`, the assertion (`assert:`, or the
file's top-level `assert:`) and the human verdict `human` (true/false, pass/fail). The
judge grades every item here; evals.analysis.agreement measures its agreement with the
humans, and evals.pipeline.calibration puts the two together.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evals.grade.grading import AssertionRaised, grade_assertion_async
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import Assertion

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
    """Read a YAML or JSONL calibration file (a missing, unreadable or malformed file is a
    SuiteError naming it, with the line where the text is known)."""
    text = _read_text(path)
    if path.suffix == ".jsonl":
        header: dict[str, Any] = {}
        raw_items = [
            _json_line(line, path, number)
            for number, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
    else:
        try:
            header = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise SuiteError(
                f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                file=str(path),
                line=mark.line + 1 if mark is not None else None,
                fix="correct the YAML at that line",
            ) from None
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


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(
            f"calibration file {path} not found",
            fix="give the path of a .yaml file with items: or a .jsonl file of labelled items",
        ) from None
    except UnicodeDecodeError:
        raise SuiteError(
            "the calibration file is not UTF-8 text", file=str(path), fix="save it as UTF-8"
        ) from None
    except OSError as exc:
        raise SuiteError(
            f"calibration file {path} cannot be read ({exc.strerror})",
            fix="give the path of a readable calibration file",
        ) from None


def _json_line(line: str, path: Path, number: int) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise SuiteError(
            f"not valid JSON: {exc.msg}",
            file=str(path),
            line=number,
            fix="write one JSON object per line",
        ) from None


async def judge_calibration(
    calibration: CalibrationFile, concurrency: int
) -> list[tuple[CalibrationItem, bool | None]]:
    """The judge's verdict on every item (None where it could not grade), `concurrency` at once."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(item: CalibrationItem) -> tuple[CalibrationItem, bool | None]:
        async with gate:
            try:
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
            except AssertionRaised:
                return item, None
        return item, None if grade.errored else grade.passed

    return list(await asyncio.gather(*(one(item) for item in calibration.items)))
