"""The `_conversation` var: earlier turns of a thread, as promptfoo's evaluator keeps them.

A prompt that reads `_conversation` sees, as a list of `{prompt, input, output, metadata}`,
every earlier run of the same thread: the same provider (its label), the same prompt and
the same `metadata.conversationId` (scenarios give each config entry its own). Repeats and
var combinations of a test share their thread. Each turn is recorded right after the
provider answers, before any transform, even when the answer is an error (its output is
then empty); a run that fails before an answer (a template error, an exception, a timeout)
adds nothing. promptfoo runs such suites one run at a time, in test order, so each turn
sees every earlier one.
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any

from evals.common.jsvalues import js_stringify, js_truthy, json_parse
from evals.model.plan import PlannedRun
from evals.model.suite import Suite

CONVERSATION_VAR = "_conversation"
DISABLE_ENV = "PROMPTFOO_DISABLE_CONVERSATION_VAR"

_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", re.S)
_REFERENCE = re.compile(r"(?<![\w.$])_conversation(?![\w$])")


@functools.lru_cache(maxsize=1024)
def uses_conversation(template: str) -> bool:
    """Whether a prompt template reads `_conversation` inside a `{{ }}` or `{% %}` tag
    (outside string literals): the text around tags, and attributes of that name, do not."""
    if CONVERSATION_VAR not in template:
        return False
    return any(_REFERENCE.search(_STRING.sub("", tag.group(0))) for tag in _TAG.finditer(template))


def suite_uses_conversation(suite: Suite) -> bool:
    """Whether a prompt of the suite reads `_conversation`: promptfoo then runs the
    evaluation one run at a time, in order."""
    return any(
        uses_conversation(p.raw if isinstance(p.raw, str) else js_stringify(p.raw))
        for p in suite.prompts
    )


def may_use_conversation(suite: Suite) -> bool:
    """Whether any run of the suite can read `_conversation` (through a prompt, or a test's
    `prefix`/`suffix` around one) or an output a test stored. Suites that cannot keep no
    history at all."""
    if suite_runs_in_order(suite):
        return True
    return any(
        isinstance(case.options.get(key), str) and CONVERSATION_VAR in case.options[key]
        for case in suite.cases
        for key in ("prefix", "suffix")
    )


def promptfoo_order(runs: list[PlannedRun]) -> list[PlannedRun]:
    """The runs in promptfoo's order for a conversation: test by test, each test's repeats
    one after another (the plan itself runs repeat by repeat)."""
    return sorted(runs, key=lambda run: (run.case.index, run.key.repeat))


def _last_input(parsed: Any) -> Any:
    """The last message of a chat prompt (its `content` when it has one), as promptfoo's
    getConversationLastInput; None for any other prompt."""
    if not isinstance(parsed, list):
        return None
    last = parsed[-1] if parsed else None
    content = last.get("content") if isinstance(last, dict) else None
    return content if js_truthy(content) else last


_UNPARSED = object()


def _parsed(prompt: str) -> Any:
    try:
        return json_parse(prompt)
    except ValueError:
        return _UNPARSED


def suite_stores_outputs(suite: Suite) -> bool:
    """Whether a test of the suite stores its output for later tests (`storeOutputAs`):
    promptfoo then runs the evaluation one run at a time, in order, too."""
    return any(case.options.get("storeOutputAs") for case in suite.cases)


def suite_runs_in_order(suite: Suite) -> bool:
    """Whether the suite's runs must run one at a time in promptfoo's order: a prompt reads
    `_conversation`, or a test stores its output for later ones."""
    return suite_uses_conversation(suite) or suite_stores_outputs(suite)


class Conversations:
    """The threads of one evaluation, keyed by (provider, prompt, conversationId), and the
    outputs tests stored for later ones (`storeOutputAs`), by name (`registers`)."""

    def __init__(self) -> None:
        self._threads: dict[tuple[str, str, int, str], list[dict[str, Any]]] = {}
        self.registers: dict[str, Any] = {}

    @staticmethod
    def _key(run: PlannedRun) -> tuple[str, str, int, str]:
        conversation_id = run.case.metadata.get("conversationId")
        return (
            run.provider.label,
            run.prompt.id,
            run.prompt_index,
            json.dumps(conversation_id, sort_keys=True, default=str),
        )

    def vars_for(self, run: PlannedRun, source: str) -> dict[str, Any]:
        """The vars the run renders with: its own, plus `_conversation` (the thread so far)
        when the run's prompt `source` (with the test's prefix and suffix) reads it, unless
        `options.disableConversationVar` or PROMPTFOO_DISABLE_CONVERSATION_VAR turns it off.

        As in promptfoo, a thread that already has turns is the list itself, not a copy:
        the run's assertions see its own turn in it too (the first run's list stays empty).
        """
        variables = run.case.vars
        if self.registers:  # stored outputs win over the test's own vars, as in promptfoo
            variables = {**variables, **self.registers}
        if not uses_conversation(source):
            return variables
        if js_truthy(run.case.options.get("disableConversationVar")) or _env_disables():
            return variables
        thread = self._threads.get(self._key(run))
        return {**variables, CONVERSATION_VAR: [] if thread is None else thread}

    def store(self, run: PlannedRun, output: Any) -> None:
        """Keep a run's output (after transforms) under its test's `storeOutputAs` name, for
        the runs after it; an empty output is not kept."""
        name = run.case.options.get("storeOutputAs")
        if name and js_truthy(output):
            self.registers[str(name)] = output

    def record(self, run: PlannedRun, prompt: str, output: Any, metadata: Any) -> None:
        """Add a turn to the run's thread: the rendered prompt, its input (the last chat
        message for a chat prompt), and the provider's output ("" when it gave none)."""
        parsed = _parsed(prompt)
        shown = parsed if parsed is not _UNPARSED and js_truthy(parsed) else prompt
        last = _last_input(parsed)
        turn: dict[str, Any] = {
            "prompt": shown,
            "input": last if js_truthy(last) else shown,
            "output": output if js_truthy(output) else "",
        }
        if metadata is not None:
            turn["metadata"] = metadata
        self._threads.setdefault(self._key(run), []).append(turn)


def _env_disables() -> bool:
    return os.environ.get(DISABLE_ENV, "").lower() in ("1", "true", "yes", "yup", "yeppers")
