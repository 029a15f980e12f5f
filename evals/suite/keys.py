"""The keys a suite, its tests, assertions, scenarios and providers may have.

promptfoo (0.121) validates a config against its zod schema but only warns, and its zod
objects drop what they do not know: a misspelled `asert:` there grades nothing and
passes. evals refuses a key neither promptfoo's schema nor the harness knows, at its line
and with the closest known key, before any run (exit 2). Every key of promptfoo's schema
is accepted, so no valid promptfoo config is refused; the few that evals reads but does
not act on are listed in `IGNORED` and warned about once, at load.

Sources, promptfoo 0.121's `src/validators` (`UnifiedConfigSchema`, `TestCaseSchema`,
`AssertionSchema`, `AssertionSetSchema`, `ScenarioSchema`, `ProviderOptionsSchema`,
`EvaluateOptionsSchema`, `TestGeneratorConfigSchema`); test `options` and `metadata` take
any key there, and here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from evals.model.errors import SuiteError

# promptfoo's UnifiedConfigSchema.
PROMPTFOO_TOP_LEVEL = frozenset(
    {
        "tags",
        "description",
        "providers",
        "targets",
        "prompts",
        "tests",
        "scenarios",
        "defaultTest",
        "outputPath",
        "sharing",
        "nunjucksFilters",
        "env",
        "derivedMetrics",
        "extensions",
        "metadata",
        "redteam",
        "writeLatestResults",
        "tracing",
        "evaluateOptions",
        "commandLineOptions",
    }
)
# The harness's own top-level blocks, the suite's identity, and promptfoo's conventional
# home of `$ref` targets (any other key a local `$ref` points into is accepted as well).
EVALS_TOP_LEVEL = frozenset(
    {
        "gates",
        "tools",
        "policy",
        "budget",
        "scorecard",
        "permissions",
        "prices",
        "trace",
        "limits",
        "pass_env",
        "reports",
        "environment",
        "id",
        "name",
        "version",
        "assertionTemplates",
        "$schema",
    }
)
TOP_LEVEL = PROMPTFOO_TOP_LEVEL | EVALS_TOP_LEVEL

TEST = frozenset(
    {
        "description",
        "vars",
        "provider",
        "providers",
        "prompts",
        "providerOutput",
        "assert",
        "assertScoringFunction",
        "options",
        "threshold",
        "metadata",
        "id",  # promptfoo reads it as the test's id (a conversation's session)
    }
)
# A `tests:` entry that names a Python generator and its arguments.
TEST_GENERATOR = frozenset({"path", "config"})
SCENARIO = frozenset({"description", "config", "tests"})
ASSERTION = frozenset(
    {
        "type",
        "value",
        "config",
        "threshold",
        "weight",
        "provider",
        "rubricPrompt",
        "metric",
        "transform",
        "contextTransform",
        "turn",  # the harness's: which answer of a conversation the assertion grades
    }
)
ASSERT_SET = frozenset({"type", "assert", "weight", "metric", "threshold", "config", "turn"})
# Keys a promptfoo handler reads off its assertion beyond the schema's.
ASSERTION_EXTRAS: dict[str, frozenset[str]] = {"meteor": frozenset({"alpha", "beta", "gamma"})}
PROVIDER = frozenset({"id", "label", "config", "prompts", "transform", "delay", "env", "inputs"})
EVALUATE_OPTIONS = frozenset(
    {
        "repeat",
        "maxConcurrency",
        "timeoutMs",
        "delay",
        "cache",
        "generateSuggestions",
        "suggestionsCount",
        "interactiveProviders",
        "progressCallback",
        "showProgressBar",
        "maxEvalTimeMs",
        "isRedteam",
        "silent",
        "filterRange",
    }
)

# promptfoo keys evals accepts and does not act on, with what to do instead (docs/promptfoo.md).
IGNORED: dict[str, str] = {
    "outputPath": "write reports with evals run -o FILE",
    "sharing": "evals shares nothing; serve the store with evals dashboard",
    "writeLatestResults": "every evaluation is stored (--no-store to skip)",
    "commandLineOptions": "give options on the evals run command line",
    "redteam": "evals runs no red-team generation",
    "tracing": "the harness's own OTLP receiver and trace: block trace every run",
    "extensions": "evals runs no extension hooks",
    "tags": "tag cases with metadata.tags",
    "metadata": "evaluations carry their suite, git commit and environment",
    "evaluateOptions.cache": "the response cache is opt-in: evals run --cache",
    "evaluateOptions.generateSuggestions": "not supported",
    "evaluateOptions.suggestionsCount": "not supported",
    "evaluateOptions.interactiveProviders": "runs are never interactive",
    "evaluateOptions.progressCallback": "evals run shows its own progress",
    "evaluateOptions.showProgressBar": "evals run --no-progress turns it off",
    "evaluateOptions.maxEvalTimeMs": "bound each run with evaluateOptions.timeoutMs",
    "evaluateOptions.isRedteam": "evals runs no red-team generation",
    "evaluateOptions.silent": "evals run --quiet",
    "evaluateOptions.filterRange": "select cases with evals run --case or --tag",
    "provider env": "set the variables in the environment (or the suite's env:)",
    "provider inputs": "not supported",
}


def refuse_unknown(
    block: Mapping[Any, Any],
    known: Iterable[str],
    where: str,
    *,
    file: str | None,
    line: int | None,
) -> None:
    """Refuse the first key of `block` not in `known`: a SuiteError naming `where`, the
    key's line (a YAML mapping's `key_lines`, else `line`), the closest known key and
    the known ones."""
    allowed = sorted(known)
    lines = getattr(block, "key_lines", None) or {}
    for key in block:
        if key in known or (where == "the suite" and definition_key(key)):
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SuiteError(
            f"unknown key {key!r} in {where}",
            file,
            lines.get(str(key), line),
            f"{hint}known keys: {', '.join(allowed)}",
        )


def assertion_keys(kind: str) -> frozenset[str]:
    """The keys an assertion of type `kind` may have."""
    from evals.graders.registry import COMBINATORS

    base = kind.removeprefix("not-")
    if base == "assert-set" or base in COMBINATORS:
        return ASSERT_SET
    return ASSERTION | ASSERTION_EXTRAS.get(base, frozenset())


_ANCHORED = re.compile(r"^([^\s#'\"-][^:#]*?|'[^']*'|\"[^\"]*\")[ \t]*:[ \t]*&\S+", re.MULTILINE)


def definition_keys(text: str) -> set[str]:
    """Top-level keys that only hold definitions other parts of the file reuse: those whose
    value is a YAML anchor (`common: &checks [...]`), and `x-` keys (the convention for
    such blocks). promptfoo ignores them."""
    found = {match.group(1).strip().strip("'\"") for match in _ANCHORED.finditer(text)}
    return found


def definition_key(key: Any) -> bool:
    """An `x-` key: a block of definitions by convention."""
    return isinstance(key, str) and key.startswith("x-")


def ref_targets(raw: Any) -> set[str]:
    """The top-level keys a local `$ref` (`#/name/...`) of the document points into."""
    found: set[str] = set()
    stack = [raw]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                found.add(ref[2:].split("/", 1)[0].replace("~1", "/").replace("~0", "~"))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def ignored_keys(raw: Mapping[str, Any], provider_keys: Iterable[str]) -> list[str]:
    """One warning per promptfoo key in `raw` (the suite) that evals accepts and does not
    act on, and per one of `provider_keys` (`provider env`, `provider inputs`, the ignored
    keys the provider entries had), with what to do instead."""
    found = [key for key in raw if key in IGNORED]
    options = raw.get("evaluateOptions")
    if isinstance(options, Mapping):
        found += [
            f"evaluateOptions.{key}" for key in options if f"evaluateOptions.{key}" in IGNORED
        ]
    found += [key for key in provider_keys if key in IGNORED]
    return [
        f"{key} is a promptfoo setting evals ignores: {IGNORED[key]}"
        for key in dict.fromkeys(found)
    ]
