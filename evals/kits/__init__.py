"""Kits for building the agents a suite tests: a guarded tool loop and scripted model simulators.

The built-in suites (cases/) write their agents with these names:

- the tool loop (`evals.kits.toolloop`): `Tool`, `ToolRegistry`, `run_tool_loop` over the
  OpenAI Responses (`OpenAIResponsesAdapter`) and Anthropic Messages
  (`AnthropicMessagesAdapter`) SDKs, with `Price`, `Wording` (`ENGLISH`, `SPANISH`),
  `ToolCall` and `ModelTurn`;
- the simulators (`evals.kits.simulator`): seeded, scripted models behind the real SDKs,
  `run_simulated_agent`, `simulated_client`, `simulated_async_openai`, `simulated_adapter`,
  `Conversation`, `Script`, `Action`, `draw`, `choose`, `LatencyModel`, and
  `conversation_prompt` (a simulated user's transcript as the loop's messages);
- the run's world state (`evals.kits.world`): `world_path`, where a suite's
  `environment:` copy of the seed is for this run.

Names load their module on first use, so a tool file does not import the SDKs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as type checkers and editors see them
    from evals.kits.simulator import (
        Action,
        Conversation,
        LatencyModel,
        Script,
        choose,
        conversation_prompt,
        draw,
        provider_response,
        run_seed,
        run_simulated_agent,
        simulated_adapter,
        simulated_async_openai,
        simulated_client,
    )
    from evals.kits.toolloop import (
        ENGLISH,
        SPANISH,
        Adapter,
        AnthropicMessagesAdapter,
        MessagesClient,
        ModelTurn,
        OpenAIResponsesAdapter,
        Prompt,
        ResponsesClient,
        Tool,
        ToolRegistry,
        Wording,
        run_tool_loop,
    )
    from evals.kits.world import world_path
    from evals.vendors.messages import ToolCall
    from evals.vendors.prices import Price

__all__ = [
    "ENGLISH",
    "SPANISH",
    "Action",
    "Adapter",
    "AnthropicMessagesAdapter",
    "Conversation",
    "LatencyModel",
    "MessagesClient",
    "ModelTurn",
    "OpenAIResponsesAdapter",
    "Price",
    "Prompt",
    "ResponsesClient",
    "Script",
    "Tool",
    "ToolCall",
    "ToolRegistry",
    "Wording",
    "choose",
    "conversation_prompt",
    "draw",
    "provider_response",
    "run_seed",
    "run_simulated_agent",
    "run_tool_loop",
    "simulated_adapter",
    "simulated_async_openai",
    "simulated_client",
    "world_path",
]

_SIMULATOR = {
    "Action",
    "Conversation",
    "LatencyModel",
    "Script",
    "choose",
    "conversation_prompt",
    "draw",
    "provider_response",
    "run_seed",
    "run_simulated_agent",
    "simulated_adapter",
    "simulated_async_openai",
    "simulated_client",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = "simulator" if name in _SIMULATOR else "world" if name == "world_path" else "toolloop"
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
