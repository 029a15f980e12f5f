"""From `tests:`, `scenarios:` and `defaultTest` to the list of concrete test cases.

Merging follows promptfoo's evaluator: vars, options and metadata are merged key by key
(the test wins), defaultTest's assertions run first unless the test sets
`options.disableDefaultAsserts`, threshold, prompts and providers fall back to
defaultTest's, scenario tests merge defaultTest, the scenario's config entry and the test.
`transformVars` runs on the merged vars before array vars expand into combinations.
A `budget` assertion of the test overrides defaultTest's budget key by key: the case
keeps one budget, defaultTest's limits under its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals.common.jsvalues import js_truthy
from evals.model.errors import SuiteError
from evals.model.suite import Prompt
from evals.suite.vars import (
    Notice,
    check_data_globs,
    check_file_vars,
    expands,
    json_vars,
    var_combinations,
)
from evals.suite.yaml_lines import file_of, keep_lines, line_of


def _merged_scenario_test(
    default_test: dict[str, Any], data: dict[str, Any], test: dict[str, Any], index: int
) -> dict[str, Any]:
    metadata = {
        **(default_test.get("metadata") or {}),
        **(data.get("metadata") or {}),
        **(test.get("metadata") or {}),
    }
    metadata.setdefault("conversationId", f"__scenario_{index}__")
    return {
        **default_test,
        **data,
        **test,
        "vars": {
            **(default_test.get("vars") or {}),
            **(data.get("vars") or {}),
            **(test.get("vars") or {}),
        },
        "options": {
            **(default_test.get("options") or {}),
            **(data.get("options") or {}),
            **(test.get("options") or {}),
        },
        "assert": [*(data.get("assert") or []), *(test.get("assert") or [])],
        "metadata": metadata,
    }


def scenario_tests(scenarios: Any, default_test: dict[str, Any]) -> list[dict[str, Any]]:
    """The tests `scenarios:` stands for: every config entry crossed with every test."""
    out: list[dict[str, Any]] = []
    index = 0
    for scenario in scenarios or []:
        for data in scenario.get("config") or []:
            # promptfoo runs a scenario without tests for none of its config entries
            for test in scenario.get("tests") or []:
                out.append(_merged_scenario_test(default_test, data, test, index))
            index += 1
    return out


def _is_budget(assertion: Any) -> bool:
    return isinstance(assertion, dict) and assertion.get("type") == "budget"


def _merged_budgets(defaults: list[Any], own: list[Any]) -> tuple[list[Any], list[Any]]:
    """(defaultTest's assertions, the test's) with a test's `budget` taking defaultTest's
    budget limits under its own, key by key, and defaultTest's budget then dropped."""
    default_budgets = [a for a in defaults if _is_budget(a)]
    if not default_budgets or not any(_is_budget(a) for a in own):
        return defaults, own
    limits: dict[str, Any] = {}
    for assertion in default_budgets:
        if isinstance(assertion.get("value"), dict):
            limits.update(assertion["value"])
    merged = []
    for assertion in own:
        value = assertion.get("value") if _is_budget(assertion) else None
        if _is_budget(assertion) and isinstance(value or {}, dict):
            rebuilt = type(assertion)({**assertion, "value": {**limits, **(value or {})}})
            assertion = keep_lines(assertion, rebuilt)
        merged.append(assertion)
    return [a for a in defaults if not _is_budget(a)], merged


def _merged_options(test: dict[str, Any], default_test: dict[str, Any]) -> dict[str, Any]:
    """defaultTest's options under the test's, key by key; a falsy `prefix` or `suffix` of
    the test leaves defaultTest's, as promptfoo reads them with `||`."""
    defaults = default_test.get("options") or {}
    options = {**defaults, **(test.get("options") or {})}
    for key in ("prefix", "suffix"):
        if key in options and not js_truthy(options[key]) and key in defaults:
            options[key] = defaults[key]
    return options


def _coalesce(test: dict[str, Any], default_test: dict[str, Any], key: str) -> Any:
    """The test's value of `key` unless null or absent, then defaultTest's (JavaScript `??`)."""
    value = test.get(key)
    return default_test.get(key) if value is None else value


def merge_default(test: dict[str, Any], default_test: dict[str, Any]) -> dict[str, Any]:
    """A test with defaultTest merged in, as promptfoo's evaluator merges it."""
    options = _merged_options(test, default_test)
    default_asserts = (
        [] if options.get("disableDefaultAsserts") is True else default_test.get("assert") or []
    )
    default_asserts, own_asserts = _merged_budgets(default_asserts, test.get("assert") or [])
    threshold = test.get("threshold")
    merged = type(test)(test)
    merged.update(
        {
            "vars": {**(default_test.get("vars") or {}), **(test.get("vars") or {})},
            "assert": [*default_asserts, *own_asserts],
            "threshold": default_test.get("threshold") if threshold is None else threshold,
            "options": options,
            "metadata": {**(default_test.get("metadata") or {}), **(test.get("metadata") or {})},
            "prompts": _coalesce(test, default_test, "prompts"),
            "providers": _coalesce(test, default_test, "providers"),
            "provider": test.get("provider") or default_test.get("provider"),
            "assertScoringFunction": test.get("assertScoringFunction")
            or default_test.get("assertScoringFunction"),
        }
    )
    return keep_lines(test, merged)


def _with_json_vars(test: dict[str, Any], where: str) -> dict[str, Any]:
    """The test with its vars checked as JSON values (`json_vars`), rebuilt if they changed."""
    variables = test.get("vars")
    checked = json_vars(variables, file_of(test) or where)
    if checked is variables:
        return test
    return keep_lines(test, type(test)({**test, "vars": checked}))


def expand_tests(
    tests: list[dict[str, Any]],
    scenarios: Any,
    default_test: dict[str, Any],
    root: Path,
    where: str = "",
    notice: Notice | None = None,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(merged test, vars) for every concrete case, in promptfoo's order.

    Vars are checked on the way (`json_vars`, `check_file_vars`); errors name the file
    each test came from, `where` (the suite) for its own tests. A missing file one item of
    a list var names is given `notice` (promptfoo errors those rows, not the config).
    """
    from evals.common.transforms import apply_vars_transform

    default_test = _with_json_vars(default_test, where)
    default_transform = (default_test.get("options") or {}).get("transformVars")
    expanded: list[tuple[dict[str, Any], dict[str, Any]]] = []
    checked_files: set[Path] = set()
    for test in [*tests, *scenario_tests(scenarios, default_test)]:
        test = _with_json_vars(test, where)
        merged = merge_default(test, default_test)
        variables = merged["vars"]
        transform = (test.get("options") or {}).get("transformVars") or default_transform
        if transform:
            variables = apply_vars_transform(transform, variables, root)
        listed: frozenset[str] = frozenset()
        if merged["options"].get("disableVarExpansion"):
            combinations = [variables]
        else:
            check_data_globs(variables, root, test)
            try:
                combinations = var_combinations(variables, root)
            except SuiteError as exc:  # a glob matching nothing: named at its test
                if exc.file == str(root):
                    exc.file, exc.line = file_of(test) or where, line_of(test)
                raise
            listed = frozenset(k for k, v in variables.items() if expands(v))
        for combination in combinations:
            check_file_vars(combination, root, test, where, checked_files, listed, notice)
        expanded.extend((merged, combo) for combo in combinations)
    return expanded


def _template_sources(prompt: Prompt) -> list[str]:
    try:
        parsed = json.loads(prompt.raw)
    except (TypeError, ValueError):
        return [prompt.raw] if isinstance(prompt.raw, str) else []
    sources: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            sources.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(parsed)
    return sources


def check_templates(prompts: list[Prompt], where: str) -> None:
    """Compile every prompt template so a syntax error names its prompt before any run."""
    from evals.common.templating import TemplateError, check_template
    from evals.suite.vars import auto_wrap_raw

    for prompt in prompts:
        for source in _template_sources(prompt):
            try:
                check_template(auto_wrap_raw(source))
            except TemplateError as exc:
                raise SuiteError(
                    f"template error in prompt {prompt.label!r:.80}: {exc}",
                    file=prompt.path or where,
                    line=exc.line if prompt.path else None,
                    fix="close every {{ }} and {% %} tag and check filter names",
                ) from None
