"""Attribute names of the OpenTelemetry GenAI semantic conventions, and the harness's own.

Model calls are spans with `gen_ai.operation.name = chat` and tool calls spans with
`gen_ai.operation.name = execute_tool`; arguments and results are JSON strings because
span attributes cannot hold objects.
"""

from __future__ import annotations

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"

CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})

STEP_COST = "evals.step.cost"
STEP_EFFECT = "evals.step.effect"
STEP_APPROVAL = "evals.step.approval"

RUN_SPAN = "evals.run"
GRADE_SPAN = "evals.grade"
GATES_SPAN = "evals.gates"
STEP_KIND = "evals.step.kind"
STEP_NAME = "evals.step.name"
