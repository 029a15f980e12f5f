"""promptfoo's simulated user: a conversation between a user simulator and the agent under test.

A test (or `defaultTest`) whose `provider` is `promptfoo:simulated-user` runs as one
conversation per run, as promptfoo runs it: the simulated user, following its
`instructions` (by default the test's `instructions` var), writes a message; the agent
under test (the provider of the column) answers, given the rendered prompt as the system
message and the transcript so far; and so on until the user writes the stop signal
(`###STOP###`), the agent calls a hand-over tool, or `maxTurns` user messages were sent.
`initialMessages` (config or var, a list or `file://`) start the conversation from a given
state; `stateful: true` sends only the latest message once the agent returned a
`sessionId`. The output is promptfoo's transcript (`User: ...\\n---\\nAssistant: ...`) and
`metadata.messages` the messages.

Harness extensions: the user is played by any provider the harness knows (`config.provider`:
an LLM provider in real use, `evals:scripted-user` or a Python function offline), else by
promptfoo's hosted model as in promptfoo; `stopSignal` and `handoffTools` name the end of
a conversation; `userPrompt` is the system text a local user provider receives. The run's
trajectory holds every message of both sides as `message` steps and, between them, the
agent's own steps, each step tagged with its turn (`metadata.turn`: the number of the
user message it answers), so trajectory, policy and budget graders judge the whole
conversation. Both sides get the run's seed.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evals.agents.base import Agent, CallContext
from evals.agents.scripted_user import GIVEN_MESSAGES
from evals.common.jsvalues import js_stringify
from evals.model.errors import SuiteError
from evals.model.plan import SIMULATED_USER
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step

PROVIDER_ID = SIMULATED_USER
STOP_SIGNAL = "###STOP###"
DEFAULT_MAX_TURNS = 10
USER_LABEL = "simulated user"
DEFAULT_USER_PROMPT = (
    "You are playing a user who talks to an AI assistant. Stay in character and follow "
    "these instructions:\n\n{{instructions}}\n\nWrite only the user's next message, one "
    "short message at a time. Give only the information the assistant needs for the current "
    "step, and never invent facts the instructions do not give. When the goal of the "
    "instructions is reached, or the assistant cannot help any further, reply with "
    "{{stopSignal}} alone."
)
CONFIG_KEYS = (
    "maxTurns",
    "instructions",
    "initialMessages",
    "stateful",
    "provider",
    "stopSignal",
    "handoffTools",
    "userPrompt",
    "redteamGenerationContext",
    "targetId",
)
STOP_REASONS = ("user_ended", "handoff", "max_turns")
"""How a conversation ended: the user's stop signal, a hand-over tool, the turn limit."""
_ROLES = ("user", "assistant", "system")


def is_simulated_user(spec: ProviderSpec | None) -> bool:
    """True for a `promptfoo:simulated-user` provider entry."""
    return spec is not None and spec.id == PROVIDER_ID


@dataclass(frozen=True, slots=True)
class UserSimulation:
    """A simulated user's configuration, as promptfoo reads it plus the harness's keys."""

    max_turns: int = DEFAULT_MAX_TURNS
    instructions: str = "{{instructions}}"
    initial_messages: Any = None
    stateful: bool = False
    user: ProviderSpec | None = None
    stop_signal: str = STOP_SIGNAL
    handoff_tools: tuple[str, ...] = ()
    user_prompt: str = DEFAULT_USER_PROMPT


def _config_error(spec: ProviderSpec, message: str, fix: str) -> SuiteError:
    return SuiteError(f"{PROVIDER_ID}: {message}", line=spec.line, fix=fix)


def user_spec(value: Any, spec: ProviderSpec) -> ProviderSpec:
    """The provider that plays the user, from `config.provider` (an id or a mapping)."""
    if isinstance(value, str) and value.strip():
        return ProviderSpec(id=value.strip(), label=USER_LABEL, line=spec.line)
    if isinstance(value, Mapping) and isinstance(value.get("id"), str):
        config = value.get("config") or {}
        if not isinstance(config, Mapping):
            raise _config_error(
                spec, "provider.config must be a mapping", "write provider: {id: ..., config: {}}"
            )
        return ProviderSpec(
            id=str(value["id"]),
            label=str(value.get("label") or USER_LABEL),
            config=dict(config),
            line=spec.line,
        )
    raise _config_error(
        spec,
        "config.provider must be a provider id or a mapping with an id",
        "write provider: openai:chat:gpt-4o-mini, or provider: {id: file://user.py}",
    )


def parse_simulation(spec: ProviderSpec) -> UserSimulation:
    """The configuration of a `promptfoo:simulated-user` entry; SuiteError when invalid."""
    config = spec.config
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], CONFIG_KEYS, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(CONFIG_KEYS)}"
        raise _config_error(spec, f"unknown config key(s) {unknown}", hint)
    turns = config.get("maxTurns", DEFAULT_MAX_TURNS)
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 0:
        raise _config_error(
            spec, f"maxTurns must be a whole number >= 0, not {turns!r}", "write maxTurns: 10"
        )
    texts = {"instructions": "{{instructions}}", "stopSignal": STOP_SIGNAL}
    texts["userPrompt"] = DEFAULT_USER_PROMPT
    for key in texts:
        value = config.get(key)
        if value is not None and not (isinstance(value, str) and value):
            raise _config_error(spec, f"{key} must be text", f"write {key}: ...")
    stateful = config.get("stateful", False)
    if not isinstance(stateful, bool):
        raise _config_error(spec, "stateful must be true or false", "write stateful: true")
    handoff = config.get("handoffTools") or ()
    handoff = (handoff,) if isinstance(handoff, str) else handoff
    if not isinstance(handoff, Sequence) or not all(isinstance(h, str) for h in handoff):
        raise _config_error(
            spec,
            "handoffTools must be a tool name or a list of tool names",
            "write handoffTools: [transfer_to_human]",
        )
    initial = config.get("initialMessages")
    if initial is not None and not isinstance(initial, (str, list)):
        raise _config_error(
            spec,
            "initialMessages must be a list of messages or a file:// path",
            "write initialMessages: [{role: user, content: Hello}]",
        )
    user = None if config.get("provider") is None else user_spec(config["provider"], spec)
    return UserSimulation(
        max_turns=turns,
        instructions=config.get("instructions") or texts["instructions"],
        initial_messages=initial,
        stateful=stateful,
        user=user,
        stop_signal=config.get("stopSignal") or STOP_SIGNAL,
        handoff_tools=tuple(handoff),
        user_prompt=config.get("userPrompt") or DEFAULT_USER_PROMPT,
    )


def output_text(output: Any) -> str:
    """An agent's output as a transcript shows it (promptfoo's providerOutputToString)."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    return js_stringify(output)


def transcript(messages: Sequence[Mapping[str, str]]) -> str:
    """promptfoo's output of a conversation: `User: ...` and `Assistant: ...` by `---`."""
    return "\n---\n".join(
        f"{'Assistant' if m['role'] == 'assistant' else 'User'}: {m['content']}" for m in messages
    )


def compact(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it: what promptfoo sends between the two."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def agent_prompt(
    system: str, messages: Sequence[Mapping[str, str]], stateful: bool, session: Any
) -> str:
    """What the agent receives for its next turn: the rendered prompt as the system message
    and the transcript, or with `stateful`, the latest message alone (without the system
    message once a session exists)."""
    if not stateful:
        return compact([{"role": "system", "content": system}, *messages])
    latest = {"role": "user", "content": messages[-1]["content"]}
    if session:
        return compact([latest])
    return compact([{"role": "system", "content": system}, latest])


def user_prompt(system: str, messages: Sequence[Mapping[str, str]]) -> str:
    """What the user provider receives: its instructions as the system message, then the
    transcript with the roles flipped (the agent's messages are the user's input)."""
    flipped = [
        {"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
        for m in messages
    ]
    return compact([{"role": "system", "content": system}, *flipped])


def _load_messages(value: Any, root: Path) -> Any:
    if isinstance(value, str) and value.startswith("file://"):
        from evals.common.files import read_text, ref_body
        from evals.common.yaml12 import load_yaml_text

        path = root / ref_body(value)
        return load_yaml_text(read_text(path, "initialMessages"))
    if isinstance(value, str) and value.strip().startswith("["):
        return json.loads(value)
    return value


def initial_messages(value: Any, variables: Mapping[str, Any], root: Path) -> list[dict[str, str]]:
    """`initialMessages` (a var's, else the config's) templated with the vars; entries that
    are not `{role: user|assistant|system, content: text}` are left out, as promptfoo does."""
    from evals.common.templating import render

    loaded = _load_messages(value, root) if value else []
    if not isinstance(loaded, list):
        return []
    messages = []
    for item in loaded:
        if not isinstance(item, Mapping):
            continue
        role, content = item.get("role"), item.get("content")
        role = render(role, variables) if isinstance(role, str) else role
        content = render(content, variables) if isinstance(content, str) else content
        if role in _ROLES and isinstance(content, str):
            messages.append({"role": role, "content": content})
    return messages


def _detail(exc: Exception) -> str:
    """The class and message of an exception, as an error row quotes it."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def _add_usage(total: dict[str, int], usage: Mapping[str, int]) -> None:
    for key, value in usage.items():
        total[key] = total.get(key, 0) + int(value)


@dataclass(slots=True)
class _Conversation:
    """What one conversation has gathered so far."""

    messages: list[dict[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    user_usage: dict[str, int] = field(default_factory=dict)
    costs: list[float | None] = field(default_factory=list)
    user_costs: list[float | None] = field(default_factory=list)
    latencies: list[float | None] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    turn: int = 0
    session: Any = None
    last: AgentResponse | None = None
    state: Any = None
    cached: list[bool] = field(default_factory=list)
    instructions: str | None = None
    user_system: str | None = None
    given: int = 0

    def said(self, role: str, text: str, **metadata: Any) -> None:
        """A message of either side, as a message step and in the transcript."""
        if role == "user":
            self.turn += 1
        self.messages.append({"role": role, "content": text})
        self.steps.append(
            Step(
                kind="message",
                name=role,
                result=text,
                metadata={"turn": self.turn, **metadata},
            )
        )


def _total_cost(costs: list[float | None]) -> float | None:
    """The sum of the turns' costs; unknown when any turn's is."""
    if not costs or any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None)


class SimulatedUserAgent:
    """A conversation between a simulated user and the agent under test, as one run."""

    def __init__(
        self,
        spec: ProviderSpec,
        root: Path,
        target: Agent,
        user: Agent | None = None,
        user_spec: ProviderSpec | None = None,
    ) -> None:
        """`user` plays the user (None: promptfoo's hosted model); `user_spec`, its provider
        entry with its agent fingerprint, is recorded so stored turns can prime a cache."""
        self.spec = spec
        self.root = root
        self.simulation = parse_simulation(spec)
        self.target = target
        self.user = user if user is not None else PromptfooRemoteUser()
        self.user_spec = user_spec
        self.label = target.label

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Hold the conversation; the response is its transcript and its trajectory."""
        simulation = self.simulation
        variables = dict(context.vars)
        instructions, system = await asyncio.to_thread(self._user_texts, variables)
        talk = _Conversation(instructions=instructions, user_system=system)
        talk.state = await self._state(context)
        given = variables.get("initialMessages") or simulation.initial_messages
        for message in await asyncio.to_thread(initial_messages, given, variables, self.root):
            talk.said(message["role"], message["content"], initial=True)
            talk.given += 1
        stop = "max_turns"
        if talk.messages and talk.messages[-1]["role"] == "user":
            failed = await self._agent_turn(prompt, context, talk)
            if failed is not None:
                return failed
            if self._handed_over(talk):
                return self._finish(talk, "handoff")
        for _ in range(simulation.max_turns):
            try:
                reply = await self.user.call(
                    user_prompt(system, talk.messages),
                    # the user does not act on the world: its calls never depend on its state
                    replace(
                        context,
                        vars=self._user_vars(variables, instructions),
                        environment=None,
                        extra={**context.extra, GIVEN_MESSAGES: talk.given},
                    ),
                )
            except Exception as exc:  # the user's code may raise anything
                return self._failed(talk, f"simulated user raised {_detail(exc)}")
            _add_usage(talk.user_usage, reply.token_usage)
            talk.user_costs.append(reply.cost)
            talk.cached.append(reply.cached)
            if reply.error is not None:
                return self._failed(talk, f"simulated user: {reply.error}")
            text = output_text(reply.output)
            if simulation.stop_signal in text:
                talk.steps.append(
                    Step(
                        kind="message",
                        name="user",
                        result=text,
                        metadata={"turn": talk.turn + 1, "ends": True},
                    )
                )
                stop = "user_ended"
                break
            talk.said("user", text)
            failed = await self._agent_turn(prompt, context, talk)
            if failed is not None:
                return failed
            if self._handed_over(talk):
                stop = "handoff"
                break
        return self._finish(talk, stop)

    def _user_vars(self, variables: Mapping[str, Any], instructions: str) -> dict[str, Any]:
        """The vars the user's provider sees: the test's, its instructions and stop signal."""
        return {
            **variables,
            "instructions": instructions,
            "stopSignal": self.simulation.stop_signal,
        }

    def _user_texts(self, variables: Mapping[str, Any]) -> tuple[str, str]:
        """The rendered instructions, and the system text a local user provider receives."""
        from evals.common.templating import render

        instructions = render(self.simulation.instructions, variables)
        scope = {**variables, "instructions": instructions}
        scope["stopSignal"] = self.simulation.stop_signal
        return instructions, render(self.simulation.user_prompt, scope)

    async def _state(self, context: CallContext) -> Any:
        """The world state now, when the suite declares one."""
        if not context.environment:
            return None
        from evals.common.world import read_state

        return await asyncio.to_thread(read_state, Path(context.environment))

    async def _agent_turn(
        self, system: str, context: CallContext, talk: _Conversation
    ) -> AgentResponse | None:
        """One answer of the agent under test; an error response ends the conversation."""
        variables = dict(context.vars)
        if self.simulation.stateful and talk.session:
            variables["sessionId"] = talk.session
        payload = agent_prompt(system, talk.messages, self.simulation.stateful, talk.session)
        started = time.time()
        try:
            response = await self.target.call(payload, replace(context, vars=variables))
        except Exception as exc:  # the agent may raise anything: what it did so far is kept
            return self._failed(talk, f"turn {talk.turn}: agent raised {_detail(exc)}")
        took = (time.time() - started) * 1000.0
        talk.last = response
        talk.cached.append(response.cached)
        for step in response.trajectory:
            step.metadata = {**step.metadata, "turn": talk.turn}
        talk.steps.extend(response.trajectory)
        _add_usage(talk.usage, response.token_usage)
        talk.costs.append(response.cost)
        talk.latencies.append(response.latency_ms if response.latency_ms is not None else took)
        talk.trace.extend(response.trace)
        session = response.metadata.get("sessionId")
        if session is not None:
            talk.session = session
        if response.error is not None:
            return self._failed(talk, response.error)
        facts: dict[str, Any] = {
            "tokenUsage": dict(response.token_usage),
            "cost": response.cost,
            "latencyMs": response.latency_ms,
            "stopReason": response.stop_reason,
            "finishReason": response.finish_reason,
            "metadata": response.metadata,
        }
        if not isinstance(response.output, str):
            facts["output"] = response.output
        if context.environment:
            from evals.common.world import diff, digest

            after = await self._state(context)
            facts["state_before"] = digest(talk.state)
            facts["state_after"] = digest(after)
            facts["changes"] = diff(talk.state, after)
            talk.state = after
        talk.said("assistant", output_text(response.output), **facts)
        return None

    def _handed_over(self, talk: _Conversation) -> bool:
        """True when the agent's last turn called one of the hand-over tools."""
        tools = self.simulation.handoff_tools
        if not tools:
            return False
        return any(
            step.kind == "tool"
            and step.metadata.get("turn") == talk.turn
            and any(fnmatch.fnmatchcase(step.name, pattern) for pattern in tools)
            for step in talk.steps
        )

    def _summary(self, talk: _Conversation, stop: str) -> dict[str, Any]:
        spec = self.user_spec
        user = {
            "id": spec.id if spec else getattr(self.user, "provider_id", USER_LABEL),
            "label": spec.label if spec else USER_LABEL,
            "fingerprint": spec.fingerprint if spec else None,
            "tokenUsage": dict(talk.user_usage),
            "cost": _total_cost(talk.user_costs),
        }
        return {
            "turns": talk.turn,
            "stop": stop,
            "maxTurns": self.simulation.max_turns,
            "stateful": self.simulation.stateful,
            "instructions": talk.instructions,
            "stopSignal": self.simulation.stop_signal,
            "userPrompt": talk.user_system,
            "user": user,
        }

    def _metadata(self, talk: _Conversation, stop: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"messages": list(talk.messages)}
        if talk.session is not None:
            metadata["sessionId"] = talk.session
        if talk.last is not None and "guardrails" in talk.last.metadata:
            metadata["guardrails"] = talk.last.metadata["guardrails"]
        metadata["conversation"] = self._summary(talk, stop)
        return metadata

    def _latency(self, talk: _Conversation) -> float | None:
        known = [value for value in talk.latencies if value is not None]
        return sum(known) if known and len(known) == len(talk.latencies) else None

    def _finish(self, talk: _Conversation, stop: str) -> AgentResponse:
        return AgentResponse(
            output=transcript(talk.messages),
            token_usage=talk.usage,
            cost=_total_cost(talk.costs),
            metadata=self._metadata(talk, stop),
            trajectory=talk.steps,
            stop_reason=stop,
            finish_reason=None if talk.last is None else talk.last.finish_reason,
            latency_ms=self._latency(talk),
            trace=talk.trace,
            cached=bool(talk.cached) and all(talk.cached),
        )

    def _failed(self, talk: _Conversation, error: str) -> AgentResponse:
        """promptfoo's answer to a failed turn: the error, with what was gathered so far."""
        return AgentResponse(
            error=error,
            token_usage=talk.usage,
            cost=_total_cost(talk.costs),
            metadata=self._metadata(talk, "error"),
            trajectory=talk.steps,
            stop_reason="error",
            trace=talk.trace,
        )

    async def aclose(self) -> None:
        """Close the user's provider; the agent under test is closed by its owner."""
        await self.user.aclose()


REMOTE_URL = "https://api.promptfoo.app/api/v1/task"
REMOTE_DISABLED = (
    "Remote generation is disabled. SimulatedUser requires Promptfoo's conversation "
    "simulation models. To enable, remove PROMPTFOO_DISABLE_REMOTE_GENERATION, or give the "
    "simulated user a provider of its own (config.provider)."
)


class PromptfooRemoteUser:
    """The user played by promptfoo's hosted conversation model, as promptfoo does when the
    configuration names no user provider: the transcript and the instructions are posted to
    `PROMPTFOO_REMOTE_GENERATION_URL` (promptfoo's task endpoint by default)."""

    label = USER_LABEL
    provider_id = "promptfoo:remote-generation"

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """The user's next message from the remote task `tau`."""
        disabled = os.environ.get("PROMPTFOO_DISABLE_REMOTE_GENERATION", "").lower()
        if disabled in ("1", "true", "yes"):
            return AgentResponse(error=REMOTE_DISABLED)
        import httpx

        history = json.loads(prompt)[1:]
        body = {
            "task": "tau",
            "instructions": context.vars.get("instructions"),
            "history": history,
            "email": None,
            "version": "evals",
        }
        url = os.environ.get("PROMPTFOO_REMOTE_GENERATION_URL") or REMOTE_URL
        try:
            async with httpx.AsyncClient(timeout=context.timeout_s or 300.0) as client:
                reply = await client.post(url, json=body)
            if reply.status_code >= 400:
                return AgentResponse(
                    error=f"API call error: status {reply.status_code}: {reply.text[:500]}"
                )
            data = reply.json()
        except (httpx.HTTPError, ValueError) as exc:
            return AgentResponse(error=f"API call error: {exc}")
        from evals.agents.base import normalize_response

        return normalize_response(
            {"output": data.get("result"), "tokenUsage": data.get("tokenUsage")}
        )

    async def aclose(self) -> None:
        """Nothing to release."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One call a stored conversation made: to the agent under test (`side` "agent") or to
    the user's provider ("user"), with what it was sent and what it answered, so the
    response cache can be primed with every turn of a stored run."""

    side: str
    prompt: str
    variables: dict[str, Any]
    state: str | None
    response: AgentResponse


def _turn_response(step: Step, steps: Sequence[Step]) -> AgentResponse:
    facts = step.metadata
    turn = facts.get("turn")
    metadata = dict(facts.get("metadata") or {})
    if "changes" in facts:
        metadata["evals_world_changes"] = facts["changes"]
    return AgentResponse(
        output=facts.get("output", step.result),
        token_usage=dict(facts.get("tokenUsage") or {}),
        cost=facts.get("cost"),
        metadata=metadata,
        trajectory=[s for s in steps if s.kind != "message" and s.metadata.get("turn") == turn],
        stop_reason=facts.get("stopReason"),
        finish_reason=facts.get("finishReason"),
        latency_ms=facts.get("latencyMs"),
    )


def recorded_calls(
    system: str, variables: Mapping[str, Any], response: AgentResponse
) -> list[RecordedCall]:
    """The calls of both sides a stored conversation made, as the simulated user made them
    (`system` is the run's rendered prompt, `variables` its vars). A stateful conversation's
    agent turns depend on the agent's session and are left out."""
    summary = response.metadata.get("conversation")
    messages = response.metadata.get("messages")
    if not isinstance(summary, dict) or not isinstance(messages, list):
        return []
    initial = (response.metadata.get("environment") or {}).get("initial_digest")
    state = initial
    user_vars = {
        **variables,
        "instructions": summary.get("instructions"),
        "stopSignal": summary.get("stopSignal"),
    }
    calls: list[RecordedCall] = []
    shown = 0
    for step in response.trajectory:
        if step.kind != "message":
            continue
        if step.name == "user" and not step.metadata.get("initial"):
            reply = AgentResponse(output=step.result)
            prompt = user_prompt(str(summary.get("userPrompt") or ""), messages[:shown])
            calls.append(RecordedCall("user", prompt, user_vars, None, reply))
        elif step.name == "assistant" and not step.metadata.get("initial"):
            if not summary.get("stateful"):
                prompt = agent_prompt(system, messages[:shown], False, None)
                before = step.metadata.get("state_before", state)
                turn = _turn_response(step, response.trajectory)
                calls.append(RecordedCall("agent", prompt, dict(variables), before, turn))
            state = step.metadata.get("state_after", state)
        if not step.metadata.get("ends"):
            shown += 1
    return calls
