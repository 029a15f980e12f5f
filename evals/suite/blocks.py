"""The harness's own top-level blocks, validated at load: budget, prices, tools, policy, trace.

Graders read these blocks when they grade a run; a mistake in one would otherwise surface
only then, as a grader error on every run, or never. Each block is checked here for its
shape, its keys (an unknown key is refused with the closest known one) and its numbers
(finite, not negative, whole where a count is meant), with the graders' own parsers where
they exist, so a suite that loads grades without a configuration error.
"""

from __future__ import annotations

import re
from typing import Any

from evals.graders.base import GraderError
from evals.graders.budget import LIMITS
from evals.graders.contracts import parse_contracts
from evals.graders.policy import BUILTIN_PATTERNS, OPTIONS
from evals.model.bounds import COUNT, NON_NEGATIVE, WHOLE
from evals.model.errors import SuiteError
from evals.suite import checks
from evals.suite.yaml_lines import line_of

BUDGET_KEYS = (*LIMITS, "stop_reason", "model")
PRICE_KEYS = ("input", "output", "prompt", "completion")
TRACE_KEYS = ("enabled", "redact")
_COUNTED = {"max_steps", "max_tool_calls", "max_input_tokens", "max_output_tokens", "max_tokens"}


def check_budget(block: Any, name: str, file: str, line: int | None) -> None:
    """A budget's limits (`{max_steps: 6, max_cost: 0.08, stop_reason: done}`): known keys,
    counts whole and not negative, cost and latency finite and not negative."""
    budget = checks.mapping(
        block, name, file=file, line=line, example=f"{name}: {{max_steps: 8, max_cost: 0.10}}"
    )
    lines = getattr(budget, "key_lines", None)
    checks.known_keys(budget, BUDGET_KEYS, name, file=file, lines=lines, line=line)
    for key in LIMITS:
        checks.optional_number(
            budget.get(key),
            f"{name}.{key}",
            WHOLE if key in _COUNTED else NON_NEGATIVE,
            file=file,
            line=line_of(budget, key) or line,
        )
    stop = budget.get("stop_reason")
    if stop is not None and not (
        isinstance(stop, str) or (isinstance(stop, list) and all(isinstance(s, str) for s in stop))
    ):
        raise SuiteError(
            f"{name}.stop_reason must be a reason or a list of reasons",
            file,
            line_of(budget, "stop_reason") or line,
            "write stop_reason: done, or stop_reason: [done, approval_required]",
        )
    if budget.get("model") is not None:
        checks.text(
            budget["model"],
            f"{name}.model",
            file=file,
            line=line_of(budget, "model") or line,
            example="model: gpt-4o-mini",
        )


def _check_prices(block: Any, file: str, line: int | None) -> None:
    table = checks.mapping(
        block, "prices", file=file, line=line, example="prices: {gpt-x: {input: 2.5, output: 10}}"
    )
    for model, entry in table.items():
        name = f"prices.{model}"
        entry_line = line_of(table, str(model)) or line
        rates = checks.mapping(
            entry, name, file=file, line=entry_line, example=f"{model}: {{input: 2.5, output: 10}}"
        )
        lines = getattr(rates, "key_lines", None)
        checks.known_keys(rates, PRICE_KEYS, name, file=file, lines=lines, line=entry_line)
        for key in PRICE_KEYS:
            checks.optional_number(
                rates.get(key),
                f"{name}.{key}",
                NON_NEGATIVE,
                file=file,
                line=line_of(rates, key) or entry_line,
                example="2.5 (per million tokens)",
            )
        for wanted, alias in (("input", "prompt"), ("output", "completion")):
            if rates.get(wanted) is None and rates.get(alias) is None:
                raise SuiteError(
                    f"{name} has no {wanted} rate",
                    file,
                    entry_line,
                    f"write {model}: {{input: 2.5, output: 10}} (per million tokens)",
                )


def _check_tools(block: Any, file: str, line: int | None) -> None:
    if not isinstance(block, (list, dict)):
        raise SuiteError(
            "tools must be a list of tool contracts or a mapping by name, "
            f"not {checks.describe(block)}",
            file,
            line,
            "write tools: [{name: send_email, effect: send, requires_approval: true}]",
        )
    entries = (
        [({name: entry}, line_of(block, str(name))) for name, entry in block.items()]
        if isinstance(block, dict)
        else [([entry], line_of(entry)) for entry in block]
    )
    for entry, entry_line in entries:
        try:
            parse_contracts(entry)
        except GraderError as exc:
            raise SuiteError(
                str(exc),
                file,
                entry_line or line,
                "write tools: [{name: send_email, effect: send, requires_approval: true}] "
                "(effects: read, compute, draft, write, send, publish, delete)",
            ) from None


def _check_policy(block: Any, file: str, line: int | None) -> None:
    policy = checks.mapping(
        block,
        "policy",
        file=file,
        line=line,
        example="policy: {deny: [delete_file], max_identical_calls: 2}",
    )
    lines = getattr(policy, "key_lines", None)
    checks.known_keys(policy, OPTIONS, "policy", file=file, lines=lines, line=line)
    for key in ("allow", "deny", "require", "require_approval"):
        if policy.get(key) is not None:
            checks.names(policy[key], f"policy.{key}", file=file, line=line_of(policy, key) or line)
    if policy.get("forbidden_patterns") is not None:
        key_line = line_of(policy, "forbidden_patterns") or line
        for pattern_set in checks.names(
            policy["forbidden_patterns"], "policy.forbidden_patterns", file=file, line=key_line
        ):
            if pattern_set not in BUILTIN_PATTERNS:
                raise SuiteError(
                    f"policy.forbidden_patterns names an unknown pattern set {pattern_set!r}",
                    file,
                    key_line,
                    f"use {', '.join(BUILTIN_PATTERNS)}; own patterns go under patterns:",
                )
    if policy.get("patterns") is not None:
        key_line = line_of(policy, "patterns") or line
        patterns = policy["patterns"]
        sources = (
            [str(v) for v in patterns.values()]
            if isinstance(patterns, dict)
            else checks.names(patterns, "policy.patterns", file=file, line=key_line)
        )
        for source in sources:
            try:
                re.compile(source)
            except re.error as exc:
                raise SuiteError(
                    f"policy.patterns holds an invalid regular expression {source!r:.60}: {exc}",
                    file,
                    key_line,
                    "fix the regular expression (Python syntax)",
                ) from None
    checks.optional_number(
        policy.get("max_identical_calls"),
        "policy.max_identical_calls",
        COUNT,
        file=file,
        line=line_of(policy, "max_identical_calls") or line,
        example="2, or null for no limit",
    )
    if policy.get("injection") is not None:
        checks.mapping(
            policy["injection"],
            "policy.injection",
            file=file,
            line=line_of(policy, "injection") or line,
            example="injection: {instruction: ..., action: send_email}",
        )
    if policy.get("tools") is not None:
        _check_tools(policy["tools"], file, line_of(policy, "tools") or line)


def _check_trace(block: Any, file: str, line: int | None) -> None:
    if isinstance(block, bool):
        return
    trace = checks.mapping(
        block, "trace", file=file, line=line, example="trace: {enabled: true, redact: ['*.email']}"
    )
    lines = getattr(trace, "key_lines", None)
    checks.known_keys(trace, TRACE_KEYS, "trace", file=file, lines=lines, line=line)
    if trace.get("enabled") is not None:
        checks.flag(trace["enabled"], "trace.enabled", file=file, line=line_of(trace, "enabled"))
    redact = trace.get("redact")
    if redact is not None and not (
        isinstance(redact, list) and all(isinstance(p, str) for p in redact)
    ):
        raise SuiteError(
            f"trace.redact must be a list of attribute-key patterns, not {checks.describe(redact)}",
            file,
            line_of(trace, "redact") or line,
            "write redact: ['gen_ai.input.messages', '*.email']",
        )


def check_blocks(raw: dict[str, Any], file: str) -> None:
    """Validate the suite's `budget:`, `prices:`, `tools:`, `policy:` and `trace:` blocks."""
    if raw.get("budget") is not None:
        check_budget(raw["budget"], "budget", file, line_of(raw, "budget"))
    for key, check in (
        ("prices", _check_prices),
        ("tools", _check_tools),
        ("policy", _check_policy),
        ("trace", _check_trace),
    ):
        if raw.get(key) is not None:
            check(raw[key], file, line_of(raw, key))
