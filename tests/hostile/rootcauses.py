"""Why corpus cases fail today: one entry per root cause, with where it lives and the fix.

A case that fails carries `xfail=cause(KEY)`; the reason then names the root cause, so
`python -m tests.hostile.report` groups the failing cases by cause. When a fix lands,
its cases pass, strict xfail turns them into failures, and the marks (and, once none
uses it, the entry here) are removed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RootCause:
    """A defect: a short name, what goes wrong, the code responsible, the fix recommended."""

    short: str
    what: str
    where: str
    fix: str


CAUSES: dict[str, RootCause] = {
    "numbers": RootCause(
        "numeric settings not type/range-checked",
        "numeric settings are not type- and range-checked; 0, negatives, fractions, "
        "booleans, NaN and infinities are accepted or crash later",
        "evals/suite/loader.py (_Loader.evaluate_options, case, assertion, provider_spec), "
        "evals/suite/gates.py (_parse_block)",
        "one validator (integer or finite float, with a range) used by every key, raising "
        "SuiteError at the key's line with the accepted range as the fix",
    ),
    "shapes": RootCause(
        "wrong section types reach code: tracebacks",
        "a section of the wrong type (list for a mapping, text for a number) reaches code "
        "that assumes its type: AttributeError/TypeError/ValueError tracebacks, exit 3",
        "evals/suite/loader.py (load: env; provider_spec: config, delay; case: metadata, "
        "options, threshold; assertion: weight, threshold), evals/suite/test_cases.py "
        "(expand_tests: vars, scenarios, defaultTest.vars), evals/suite/gates.py (per_tag, "
        "min_repeats)",
        "check each section's shape where it is read (mapping / list / string / number) "
        "and raise SuiteError with the line and an example of the right form",
    ),
    "lines": RootCause(
        "error without line or fix",
        "the error is right but names no line (or the suite's first line) or gives no fix",
        "evals/suite/loader.py (prompts, defaultTest, evaluateOptions, duplicate labels, "
        "non-mapping suite), evals/suite/prompts.py, evals/suite/test_cases.py "
        "(check_templates), evals/suite/gates.py (parse_gates, number keys), "
        "evals/suite/tests_files.py (JSON, JSONL)",
        "give every SuiteError the offending node's line (lists and scalars too: keep "
        "their marks in yaml_lines) and a fix; JSON errors carry exc.lineno",
    ),
    "extension-blocks": RootCause(
        "budget/prices/tools/policy/trace not validated at load",
        "the harness's own top-level blocks (budget, prices, tools, policy, trace) are "
        "not validated at load: wrong types and values are ignored until an assertion "
        "reads them, or refused without file, line or fix",
        "evals/suite/loader.py (KNOWN_TOP_LEVEL only names them), graders/budget.py, "
        "graders/policy.py, graders/contracts.py, evals/tracing/options.py",
        "parse every block at load with the graders' own option parsers; SuiteError at the "
        "key's line",
    ),
}


def cause(key: str) -> str:
    """The xfail reason of a case failing because of root cause `key`."""
    return f"[{key}] {CAUSES[key].short}"
