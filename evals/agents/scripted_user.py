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
message; a rule without `when` always matches; a rule whose answer renders empty (a var
the test does not set) does not apply. When no rule applies, the next of `responses` is
said, then `otherwise`. Texts are templates over the test's vars (with `instructions` and
`stopSignal`). Where a text has alternatives, the run's seed and the turn pick one, so
repeats of a case may differ and a repeat replays exactly. The script is replayed over the
transcript it receives, so it keeps no state between calls; a conversation started from
`initialMessages` has no opening, and only the script's own messages count.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

PROVIDER_ID = "evals:scripted-user"
GIVEN_MESSAGES = "given_messages"
"""The key of a user's `CallContext.extra` holding how many messages the conversation was
given at its start (`initialMessages`), which a script did not write."""
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


@dataclass(slots=True)
class _Progress:
    """Where a script is: the user's message number, each rule's uses, the responses said."""

    turn: int = 0
    rule_uses: Counter[int] = field(default_factory=Counter)
    responses: int = 0


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
        """Replay the script over the user's earlier messages (which rule answered, how
        many responses were used), then decide this one."""
        state = _Progress()
        heard = ""
        text = ""
        given = int(context.extra.get(GIVEN_MESSAGES) or 0)
        if given:  # the conversation started from given messages: no opening, and
            state.turn = 1  # only the script's own messages count
        for message in [*messages[:1], *messages[1 + given :], {"role": "assistant"}]:
            if message.get("role") == "user":  # the agent's words, as the user sees them
                heard = str(message.get("content", ""))
            elif message.get("role") == "assistant":  # one of the user's own messages
                text = self._decide(state, heard, context)
                state.turn += 1
        return AgentResponse(output=text)

    def _decide(self, state: _Progress, heard: str, context: CallContext) -> str:
        """The user's message at `state.turn`, answering `heard`; `state` is advanced."""
        from evals.common.templating import render

        draw = random.Random(f"{context.seed}|{state.turn}")

        def pick(texts: tuple[str, ...]) -> str:
            return render(draw.choice(texts), context.vars)

        script = self.script
        if state.turn == 0 and script.opening:
            opening = pick(script.opening)
            if opening.strip():
                return opening
        for index, rule in enumerate(script.rules):
            if rule.when and not any(p.search(heard) for p in rule.when):
                continue
            if rule.times is not None and state.rule_uses[index] >= rule.times:
                continue
            said = pick(rule.say)
            if said.strip():  # a rule whose answer is empty for this test does not apply
                state.rule_uses[index] += 1
                return said
        while state.responses < len(script.responses):
            said = render(script.responses[state.responses], context.vars)
            state.responses += 1
            if said.strip():
                return said
        return pick(script.otherwise)

    async def aclose(self) -> None:
        """Nothing to release."""
