"""Kits for building the agents a suite tests: a guarded tool loop and scripted model simulators.

The built-in suites (cases/) write their agents with these names:

- the tool loop (`evals.kits.toolloop`): `Tool`, `ToolRegistry`, `run_tool_loop` over the
  OpenAI Responses (`OpenAIResponsesAdapter`) and Anthropic Messages
  (`AnthropicMessagesAdapter`) SDKs, with `Price`, `Wording` (`ENGLISH`, `SPANISH`),
  `ToolCall` and `ModelTurn`;
- the simulators (`evals.kits.simulator`): seeded, scripted models behind the real SDKs,
  `run_simulated_agent`, `simulated_client`, `simulated_async_openai`, `simulated_adapter`,
  `Conversation`, `Script`, `Action`, `draw`, `choose`, `LatencyModel`.

Names load their module on first use, so a tool file does not import the SDKs.
"""

from __future__ import annotations

import importlib
from typing import Any

_TOOLLOOP = (
    "ENGLISH",
    "SPANISH",
    "Adapter",
    "AnthropicMessagesAdapter",
    "ModelTurn",
    "OpenAIResponsesAdapter",
    "Price",
    "Tool",
    "ToolCall",
    "ToolRegistry",
    "Wording",
    "run_tool_loop",
)
_SIMULATOR = (
    "Action",
    "Conversation",
    "LatencyModel",
    "choose",
    "draw",
    "provider_response",
    "run_seed",
    "Script",
    "simulated_async_openai",
    "run_simulated_agent",
    "simulated_adapter",
    "simulated_client",
)
_MODULE_OF = {name: "toolloop" for name in _TOOLLOOP} | {name: "simulator" for name in _SIMULATOR}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
