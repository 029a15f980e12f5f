"""A rule-based simulated user for offline suites and tests: `evals:scripted-user`.

It plays the user of a `promptfoo:simulated-user` conversation without a model, so a
multi-turn suite runs offline and every run of it is reproducible:

```yaml
provider:
  id: promptfoo:simulated-user
  config:
    maxTurns: 6
    provider:
      id: evals:scripted-user
      config:
        opening: "I want a refund for order {{order}}."      # the first message
        rules:                                                # first match wins
          - when: "(?i)confirm|shall I"                        # the agent's last message
            say: ["Yes, go ahead.", "Yes please."]             # alternatives: the seed picks
          - when: "(?i)which order"
            say: "It's {{order}}."
            times: 1                                           # at most once
        responses: ["Anything else I should know?"]          # then these, in order
        otherwise: "Thanks, that's all. {{stopSignal}}"      # default: the stop signal
```

`when` is a regular expression (or a list: any of them) searched in the agent's last
message; a rule without `when` always matches. Texts are templates over the test's vars
(with `instructions` and `stopSignal`). Where a text has alternatives, the run's seed and
the turn pick one, so repeats of a case may differ and a repeat replays exactly.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

PROVIDER_ID = "evals:scripted-user"
CONFIG_KEYS = ("opening", "rules", "responses", "otherwise")
RULE_KEYS = ("when", "say", "times")
DEFAULT_OTHERWISE = "{{stopSignal}}"
_EXAMPLE = "rules: [{when: '(?i)confirm', say: 'Yes, go ahead.'}]"


@dataclass(frozen=True, slots=True)
class Rule:
    """Say one of `say` when the agent's last message matches `when` (at most `times`)."""

    when: tuple[re.Pattern[str], ...]
    say: tuple[str, ...]
    times: int | None = None


@dataclass(frozen=True, slots=True)
class Script:
    """A scripted user's whole behaviour."""

    opening: tuple[str, ...]
    rules: tuple[Rule, ...]
    responses: tuple[str, ...]
    otherwise: tuple[str, ...]


def _error(spec: ProviderSpec, message: str, fix: str) -> SuiteError:
    return SuiteError(f"{PROVIDER_ID}: {message}", line=spec.line, fix=fix)


def _texts(value: Any, key: str, spec: ProviderSpec) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise _error(spec, f"{key} must be a text or a list of alternative texts", f"write {key}: ...")


def _rule(item: Any, spec: ProviderSpec) -> Rule:
    if not isinstance(item, Mapping):
        raise _error(spec, "each rule must be a mapping {when, say}", _EXAMPLE)
    unknown = sorted(set(item) - set(RULE_KEYS))
    if unknown:
        raise _error(spec, f"unknown rule key(s) {unknown}", f"a rule has {', '.join(RULE_KEYS)}")
    if item.get("say") is None:
        raise _error(spec, "a rule needs say: (what the user answers)", _EXAMPLE)
    patterns = []
    for source in _texts(item.get("when"), "when", spec):
        try:
            patterns.append(re.compile(source))
        except re.error as exc:
            raise _error(
                spec, f"invalid regular expression {source!r}: {exc}", "fix the pattern"
            ) from None
    times = item.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise _error(spec, f"times must be a whole number >= 1, not {times!r}", "write times: 1")
    return Rule(tuple(patterns), _texts(item["say"], "say", spec), times)


def parse_script(spec: ProviderSpec) -> Script:
    """A scripted user's configuration; SuiteError when invalid."""
    config = spec.config
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise _error(spec, f"unknown config key(s) {unknown}", f"known: {', '.join(CONFIG_KEYS)}")
    rules = config.get("rules") or []
    if not isinstance(rules, list):
        raise _error(spec, "rules must be a list", _EXAMPLE)
    return Script(
        opening=_texts(config.get("opening"), "opening", spec),
        rules=tuple(_rule(item, spec) for item in rules),
        responses=_texts(config.get("responses"), "responses", spec),
        otherwise=_texts(config.get("otherwise"), "otherwise", spec) or (DEFAULT_OTHERWISE,),
    )


class ScriptedUser:
    """The user of a conversation, answering the agent by the rules of its script."""

    provider_id = PROVIDER_ID

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label
        self.script = parse_script(spec)

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """The user's next message; the prompt is the transcript as the user sees it."""
        messages = [m for m in json.loads(prompt) if isinstance(m, Mapping)]
        return await asyncio.to_thread(self._reply, messages, context)

    def _reply(self, messages: list[Mapping[str, Any]], context: CallContext) -> AgentResponse:
        from evals.common.templating import render

        said = [str(m.get("content", "")) for m in messages if m.get("role") == "assistant"]
        heard = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
        variables = context.vars
        draw = random.Random(f"{context.seed}|{len(said)}")

        def pick(texts: tuple[str, ...]) -> str:
            return render(draw.choice(texts), variables)

        def used(texts: tuple[str, ...]) -> int:
            rendered = {render(text, variables) for text in texts}
            return sum(text in rendered for text in said)

        if not said and self.script.opening:
            return AgentResponse(output=pick(self.script.opening))
        last = heard[-1] if heard else ""
        for rule in self.script.rules:
            if rule.when and not any(p.search(last) for p in rule.when):
                continue
            if rule.times is not None and used(rule.say) >= rule.times:
                continue
            return AgentResponse(output=pick(rule.say))
        for text in self.script.responses:
            if not used((text,)):
                return AgentResponse(output=render(text, variables))
        return AgentResponse(output=pick(self.script.otherwise))

    async def aclose(self) -> None:
        """Nothing to release."""
