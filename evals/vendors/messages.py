"""What the OpenAI and Anthropic formats share: arguments, tool calls, replies and steps.

A model asks for tools with a name, an id and arguments (JSON text for OpenAI, an object
for Anthropic); `read_arguments` is the one reader of those arguments, `ToolCall` the one
requested call, `Reply` the one reading of a model's answer, and `model_step`/`tool_step`
the one way a model call and a tool call become `Step`s. Chat prompts (a JSON or YAML chat
array in the prompt text) and finish reasons are read here too, with promptfoo's rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from evals.common.yaml12 import load_yaml_text
from evals.model.trajectory import Step

DEFAULT_MODEL = "assistant"
"""The model name of a transcript's model steps when the transcript names none."""

FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "pause_turn": "pause_turn",
}

_JSON_ARRAY_START = re.compile(r'^(["{\[\d-]|true|false|null)')
_TEXT_PARTS = ("text", "input_text", "output_text")


class ChatPromptError(ValueError):
    """A prompt that looks like a JSON chat array but does not parse."""


def plain(obj: object) -> Any:
    """An SDK object as plain data (its `model_dump`); plain data is returned as it is."""
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


def compact(value: object) -> str:
    """JSON without spaces, as promptfoo prints tool calls in an output."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Arguments:
    """A tool call's arguments as read from the wire.

    `value` is the arguments object (None when there were none, or when they did not
    parse); `raw` the text as sent when it did not parse; `problem` why the arguments
    are not an object.
    """

    value: dict[str, Any] | None
    raw: str | None = None
    problem: str | None = None


def read_arguments(raw: object, *, plain_text: bool = False) -> Arguments:
    """The arguments of a tool call in any format: the one parser of arguments.

    A mapping is the arguments; text is parsed as JSON, and blank text is an empty object;
    None is no arguments. A value that is not an object becomes `{"input": value}`, with a
    problem saying so. Text that is not JSON is a broken call (no value, the text kept),
    unless `plain_text`: frameworks and instrumentations record a tool's one string input
    as it is, and there it is the value itself.
    """
    if raw is None:
        return Arguments(None)
    if isinstance(raw, Mapping):
        return Arguments(dict(raw))
    if not isinstance(raw, str):
        return Arguments({"input": raw}, problem="arguments are not a JSON object")
    if not raw.strip():
        return Arguments({})
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        if plain_text:
            return Arguments({"input": raw})
        return Arguments(None, raw=raw, problem=f"arguments are not valid JSON: {exc}")
    if isinstance(parsed, dict):
        return Arguments(parsed)
    return Arguments({"input": parsed}, problem="arguments are not a JSON object")


def read_value(raw: object) -> Any:
    """A tool's output or a span value as data: JSON text parsed, blank text None,
    other text and other values kept (promptfoo's normalizeStructuredAttribute)."""
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text
    return raw


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call a model asked for.

    `arguments` is None when they do not parse into an object; `raw_arguments` is the
    arguments as sent (JSON text), `problem` why they could not be used.
    """

    call_id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str | None = None
    problem: str | None = None

    @classmethod
    def read(cls, call_id: object, name: object, raw: object) -> ToolCall:
        """A requested call from its wire fields; arguments that are not an object are
        unusable (the model must send an object)."""
        parsed = read_arguments(raw)
        text = raw if isinstance(raw, str) or raw is None else json.dumps(raw)
        usable = parsed.value if parsed.problem is None else None
        return cls(
            "" if call_id is None else str(call_id), str(name or ""), usable, text, parsed.problem
        )

    def step(self, **fields: Any) -> Step:
        """The tool step of this call, requested and not (yet) run."""
        metadata = {"requested": True, **fields.pop("metadata", {})}
        if self.arguments is None and self.raw_arguments is not None:
            metadata["raw_arguments"] = self.raw_arguments
        return Step(
            kind="tool",
            name=self.name,
            arguments=self.arguments,
            error=self.problem,
            call_id=self.call_id or None,
            metadata=metadata,
            **fields,
        )


ToolResult = tuple[ToolCall, Any]
"""A call and the output its tool returned, as a tool loop sends it back to the model."""


@dataclass(frozen=True, slots=True)
class RequestView:
    """What a request asks a model: the model, the user's texts, the tools offered and the
    tool outputs sent back so far; `messages` are the conversation's text messages of both
    sides in order, as (role, text)."""

    model: str
    user_texts: list[str]
    tools: list[str]
    outputs: list[Any]
    messages: list[tuple[str, str]] = field(default_factory=list)


def text_messages(messages: Iterable[Any]) -> list[tuple[str, str]]:
    """(role, text) of every user or assistant message with text, in order (tool calls and
    tool results, which carry no text, are left out)."""
    found = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        text = content_text(message.get("content"))
        if isinstance(text, str) and text:
            found.append((str(message["role"]), text))
    return found


@dataclass(slots=True)
class Reply:
    """What one model response says, in the harness's terms.

    `output` follows promptfoo's output rules for the vendor (text, or the tool calls
    when the model only called tools); `text` is what the model wrote, alone.
    """

    output: Any
    text: str | None
    calls: list[ToolCall]
    finish_reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None = None
    cached_tokens: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def usage_number(usage: Mapping[str, Any] | None, key: str) -> int | None:
    """A token count of a usage record, None when it is absent or not a number."""
    value = (usage or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def content_text(content: object) -> Any:
    """The text of message content given as parts; other content as it is."""
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in map(plain, content)
            if isinstance(part, dict) and part.get("type") in _TEXT_PARTS
        ]
        return "".join(texts) if texts else content
    return content


def tool_outcome(content: object, is_error: bool = False) -> tuple[Any, str | None]:
    """(result, error) of a tool result sent back to a model.

    Tools return errors as data: an object with a non-empty `error` field is an error,
    as is a result the vendor flags (`is_error`).
    """
    value = read_value(content_text(content))
    if is_error:
        return None, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict) and value.get("error"):
        error = value["error"]
        return None, error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    return value, None


def model_step(
    name: str,
    input_tokens: int | None,
    output_tokens: int | None,
    text: object = None,
    **metadata: Any,
) -> Step:
    """The step of one model call, with the text it wrote in `metadata["text"]`."""
    extra = {k: v for k, v in metadata.items() if v is not None}
    if isinstance(text, str) and text:
        extra["text"] = text
    return Step(
        kind="model",
        name=name,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        metadata=extra,
    )


def tool_step(
    name: str,
    raw_arguments: object,
    call_id: object = None,
    *,
    plain_text: bool = False,
    **metadata: Any,
) -> Step:
    """The step of one tool call seen in a transcript or a trace.

    Arguments that do not parse leave `arguments` None and keep the text in
    `metadata["raw_arguments"]`.
    """
    arguments = read_arguments(raw_arguments, plain_text=plain_text)
    extra = dict(metadata)
    if arguments.value is None and arguments.raw is not None:
        extra["raw_arguments"] = arguments.raw
    return Step(
        kind="tool",
        name=name,
        arguments=arguments.value,
        call_id=None if call_id is None else str(call_id),
        metadata=extra,
    )


def normalize_finish_reason(raw: object) -> str | None:
    """promptfoo's normalizeFinishReason: vendor stop reasons in OpenAI's words."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    key = raw.strip().lower()
    return FINISH_REASONS.get(key, key)


def looks_like_json(prompt: str) -> bool:
    """True when a prompt is evidently meant as JSON (promptfoo's looksLikeJson)."""
    text = prompt.strip()
    if text.startswith("{") and text.endswith("}"):
        return True
    if text.startswith("[") and text.endswith("]"):
        after = text[1:].lstrip()
        return not after or bool(_JSON_ARRAY_START.match(after))
    return False


def parse_chat_prompt(prompt: str) -> list[dict[str, Any]]:
    """Messages for a chat API: the prompt's own chat array, or one user message.

    A prompt that looks like JSON but does not parse raises ChatPromptError.
    """
    text = prompt.strip()
    parsed: object
    if text.startswith("- role:"):
        try:
            parsed = load_yaml_text(prompt)
        except yaml.YAMLError as exc:
            raise ChatPromptError(f"chat prompt is not valid YAML: {exc}") from None
    else:
        try:
            parsed = json.loads(prompt)
        except json.JSONDecodeError as exc:
            if looks_like_json(text):
                raise ChatPromptError(f"chat prompt is not valid JSON: {exc}") from None
            parsed = None
    if isinstance(parsed, list) and all(isinstance(m, dict) for m in parsed):
        return parsed
    return [{"role": "user", "content": prompt}]


def function_definition(tool: object) -> dict[str, Any] | None:
    """{name, description, parameters} of a function tool in any vendor format, else None."""
    if not isinstance(tool, dict):
        return None
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        return dict(tool["function"])
    if tool.get("type") == "function" and "name" in tool:
        return {k: v for k, v in tool.items() if k != "type"}
    if "input_schema" in tool and "name" in tool:
        definition = {"name": tool["name"], "parameters": tool["input_schema"]}
        if "description" in tool:
            definition["description"] = tool["description"]
        return definition
    return None


def forced_tool_name(choice: object) -> str | None:
    """The tool a tool_choice forces, in either vendor's format; None for a mode."""
    if not isinstance(choice, dict):
        return None
    if isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        return name if isinstance(name, str) else None
    if choice.get("type") in ("tool", "function"):
        name = choice.get("name")
        return name if isinstance(name, str) else None
    return None


def choice_mode(choice: object) -> str | None:
    """auto, none or required (any) of a tool_choice in either vendor's format."""
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict) and choice.get("type") in ("auto", "none", "any"):
        return {"any": "required"}.get(choice["type"], choice["type"])
    return None
