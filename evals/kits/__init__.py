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

Names (`__init__.pyi`) load their module on first use, so a tool file does not import the
SDKs.
"""

from evals.common.stubs import public_names

__getattr__, __dir__ = public_names(__name__, __file__)
