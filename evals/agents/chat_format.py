"""Chat prompts, tool definitions and finish reasons across the OpenAI and Anthropic APIs.

Pure conversions with promptfoo's semantics: a prompt that is a JSON (or `- role:` YAML)
chat array is sent as messages; tools may be written in either vendor's format and are
converted to the one the API expects; finish reasons map to OpenAI's vocabulary.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from evals.common.yaml12 import load_yaml_text

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


class ChatPromptError(ValueError):
    """A prompt that looks like a JSON chat array but does not parse."""


def normalize_finish_reason(raw: Any) -> str | None:
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
    """Messages for a chat API: the prompt's own chat array, or one user message."""
    text = prompt.strip()
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


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}]


def parse_anthropic_prompt(prompt: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, system) for the Messages API, as promptfoo's parseMessages builds them.

    A JSON chat array keeps its turns and lifts the system message out; plain text is
    read line by line, where `system:`, `user:` and `assistant:` prefixes start turns.
    """
    try:
        parsed = json.loads(prompt)
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, list) and all(isinstance(m, dict) for m in parsed):
        system = next((m for m in parsed if m.get("role") == "system"), None)
        messages = [
            {"role": m["role"], "content": _text_blocks(m.get("content"))}
            for m in parsed
            if m.get("role") and m.get("role") != "system"
        ]
        return messages, None if system is None else _text_blocks(system.get("content"))
    return _parse_anthropic_lines(prompt)


def _parse_anthropic_lines(
    prompt: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    system = None
    messages: list[dict[str, Any]] = []
    role: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if role and lines:
            messages.append({"role": role, "content": [{"type": "text", "text": "\n".join(lines)}]})
            lines.clear()

    for line in (raw.strip() for raw in prompt.split("\n")):
        if not line:
            continue
        if line.startswith("system:"):
            system = [{"type": "text", "text": line[len("system:") :].strip()}]
        elif line.startswith(("user:", "assistant:")):
            flush()
            role = "user" if line.startswith("user:") else "assistant"
            lines.append(line.split(":", 1)[1].strip())
        else:
            role = role or "user"
            lines.append(line)
    flush()
    if not messages and system is None:
        messages.append({"role": "user", "content": [{"type": "text", "text": prompt.strip()}]})
    return messages, system


def function_definition(tool: Any) -> dict[str, Any] | None:
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


def chat_tools(tools: list[Any]) -> list[Any]:
    """Tools in the Chat Completions format; non-function tools pass through."""
    out = []
    for tool in tools:
        definition = function_definition(tool)
        out.append({"type": "function", "function": definition} if definition else tool)
    return out


def responses_tools(tools: list[Any]) -> list[Any]:
    """Tools in the Responses API format (flat function definitions)."""
    out = []
    for tool in tools:
        definition = function_definition(tool)
        out.append({"type": "function", **definition} if definition else tool)
    return out


def anthropic_tools(tools: list[Any]) -> list[Any]:
    """Tools in the Messages API format (`input_schema`)."""
    out = []
    for tool in tools:
        definition = function_definition(tool)
        if definition is None:
            out.append(tool)
            continue
        converted = {
            "name": definition["name"],
            "input_schema": definition.get("parameters") or {"type": "object", "properties": {}},
        }
        if definition.get("description"):
            converted["description"] = definition["description"]
        out.append(converted)
    return out


def _forced_tool_name(choice: Any) -> str | None:
    if not isinstance(choice, dict):
        return None
    if isinstance(choice.get("function"), dict):
        return choice["function"].get("name")
    if choice.get("type") in ("tool", "function"):
        return choice.get("name")
    return None


def _choice_mode(choice: Any) -> str | None:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict) and choice.get("type") in ("auto", "none", "any"):
        return {"any": "required"}.get(choice["type"], choice["type"])
    return None


def openai_tool_choice(choice: Any, api: str) -> Any:
    """tool_choice for the Chat (`api="chat"`) or Responses (`api="responses"`) API."""
    name = _forced_tool_name(choice)
    if name:
        if api == "chat":
            return {"type": "function", "function": {"name": name}}
        return {"type": "function", "name": name}
    return _choice_mode(choice) or choice


def anthropic_tool_choice(choice: Any) -> Any:
    """tool_choice for the Messages API: auto, any (required), none, or one named tool."""
    name = _forced_tool_name(choice)
    if name:
        return {"type": "tool", "name": name}
    mode = _choice_mode(choice)
    if mode is None:
        return choice
    return {"type": {"required": "any"}.get(mode, mode)}


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A tool call's arguments as a dict, or (None, reason) when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw, None
    if raw in (None, ""):
        return {}, None
    try:
        parsed = json.loads(raw)
    except (TypeError, json.JSONDecodeError) as exc:
        return None, f"arguments are not valid JSON: {exc}"
    if not isinstance(parsed, dict):
        return None, "arguments are not a JSON object"
    return parsed, None
