"""The model vendors' wire formats, read and written in one place.

Everything that knows what an OpenAI or Anthropic message looks like lives here, as pure
functions over plain data (SDK objects are read through their `model_dump`):

- `messages`: what both vendors share: a tool call's arguments (`read_arguments`, the one
  parser), a requested call (`ToolCall`), a model reply (`Reply`), tool results as
  `(result, error)`, chat prompts, finish reasons, and the `Step`s of a model call and of a
  tool call (`model_step`, `tool_step`);
- `openai`: Chat Completions and Responses: request tools and tool choice, replies,
  transcripts → `Step`s, tool outputs sent back, reply bodies for simulators;
- `anthropic`: Messages: prompts, tools, tool choice, replies, transcripts → `Step`s,
  `tool_result` blocks, reply bodies for simulators;
- `prices`: the one table of list prices per model and the one function pricing a call.

The SDK providers (`evals.agents.sdk_providers`), the tool loop and the simulators
(`evals.kits`), the framework adapters and the trace normalizer all go through these.
"""
