"""Record promptfoo's verdicts for assertions that read more than the output text.

Trace, tool-call, skill and guardrail assertions need spans, provider tools or response
metadata that the echo provider cannot produce, so this script calls promptfoo's own
`assertions.runAssertion` through node for each (response, assertion) pair and writes
tests/graders/golden/promptfoo_handlers.json:

    python tests/graders/promptfoo_handler_oracle.py [path/to/node_modules/promptfoo]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "promptfoo_handlers.json"
DEFAULT_PACKAGE = Path("/work/peers/node_modules/promptfoo")

RUNNER = """
const pf = require(process.argv[2]);
const cases = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));
(async () => {
  const rows = [];
  for (const c of cases) {
    const args = {
      assertion: c.assertion,
      test: {vars: {}},
      providerResponse: {output: c.output, metadata: c.metadata, guardrails: c.guardrails},
    };
    if (c.tools !== undefined) args.provider = {id: () => 'echo', config: {tools: c.tools}};
    if (c.spans !== undefined) {
      args.traceId = 'trace';
      args.traceData = {traceId: 'trace', spans: c.spans};
    }
    try {
      const r = await pf.assertions.runAssertion(args);
      rows.push({pass_: r.pass, score: r.score, reason: r.reason});
    } catch (err) {
      rows.push({error: err.message});
    }
  }
  require('fs').writeFileSync(process.argv[4], JSON.stringify(rows));
})();
"""

SPANS: list[dict[str, Any]] = [
    {"name": "llm.call", "startTime": 0, "endTime": 12.5, "statusCode": 1},
    {
        "name": "llm.call",
        "startTime": 20,
        "endTime": 45,
        "statusCode": 2,
        "statusMessage": "rate limit error",
    },
    {"name": "tool.search", "startTime": 50, "endTime": 51, "statusCode": 0},
    {"name": "tool.fetch", "startTime": 52, "endTime": 152, "attributes": {"error": True}},
    {"name": "Tool.Search", "startTime": 200, "endTime": 210},
    {
        "name": "http GET",
        "startTime": 300,
        "endTime": 1300,
        "attributes": {"http.status_code": "503"},
    },
    {"name": "retry", "startTime": 1400, "statusMessage": "timeout while waiting"},
    {"name": "cache(hit)", "startTime": 1500, "endTime": 1500.25, "statusCode": 404},
]


def _trace_cases() -> list[dict[str, Any]]:
    counts: list[Any] = [
        {"pattern": "llm*"},
        {"pattern": "llm*", "min": 1},
        {"pattern": "llm*", "min": 3},
        {"pattern": "tool.*", "max": 1},
        {"pattern": "tool.*", "min": 1, "max": 5},
        {"pattern": "*"},
        {"pattern": "tool.s?arch"},
        {"pattern": "nothing"},
        {"pattern": "cache(hit)", "max": 0},
        {"min": 1},
        None,
    ]
    durations: list[Any] = [
        {"max": 100},
        {"max": 1000},
        {"max": 1000.5},
        {"max": 50, "percentile": 50},
        {"max": 50, "percentile": 95},
        {"max": 50, "percentile": 0},
        {"pattern": "llm*", "max": 20},
        {"pattern": "LLM.*", "max": 30},
        {"pattern": "nothing", "max": 1},
        {"pattern": "retry", "max": 1},
        {"max": "x"},
    ]
    errors: list[Any] = [
        0,
        1,
        5,
        {"max_count": 1},
        {"max_percentage": 10},
        {"max_percentage": 80},
        {"pattern": "llm*"},
        {"pattern": "tool*", "max_count": 0},
        {"pattern": "tool.search"},
        {"pattern": "zzz"},
        {},
        None,
    ]
    cases: list[dict[str, Any]] = []
    for kind, values in (
        ("trace-span-count", counts),
        ("trace-span-duration", durations),
        ("trace-error-spans", errors),
    ):
        for value in values:
            assertion = {"type": kind} if value is None else {"type": kind, "value": value}
            cases.append({"assertion": assertion, "output": "x", "spans": SPANS})
        cases.append({"assertion": {"type": f"not-{kind}", "value": values[0]}, "output": "x"})
        cases.append(
            {
                "assertion": {"type": f"not-{kind}", "value": values[1]},
                "output": "x",
                "spans": SPANS,
            }
        )
    return cases


TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "minLength": 2},
                    "unit": {"type": "string", "enum": ["c", "f"]},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                },
                "required": ["location"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "no_params"}},
]


def _call(name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}


def _tools_cases() -> list[dict[str, Any]]:
    outputs: list[Any] = [
        [_call("get_weather", {"location": "Paris"})],
        {"tool_calls": [_call("get_weather", {"location": "Paris", "unit": "c", "days": 3})]},
        [_call("get_weather", {"location": 5})],
        [_call("get_weather", {"unit": "c"})],
        [_call("get_weather", {"location": "Paris", "unit": "k"})],
        [_call("get_weather", {"location": "Paris", "days": 0})],
        [_call("get_weather", {"location": "Paris", "days": 1.5})],
        [_call("get_weather", {"location": "P"})],
        [_call("get_weather", {"location": "Paris", "extra": 1})],
        [_call("get_weather", {"location": "Paris", "tags": ["a", 2]})],
        [_call("get_weather", {"location": "Paris", "tags": ["a", "b", "c"]})],
        [_call("get_weather", {"location": "Paris"}), _call("lookup", {})],
        [_call("no_params", {})],
        "hello",
        [],
        [{"function": {"name": "get_weather"}}],
        {"tool_calls": "nope"},
        "MCP Tool Result (search): 3 hits",
        "MCP Tool Error (search): backend down",
        "MCP Tool Error without detail",
    ]
    cases = [
        {"assertion": {"type": "is-valid-openai-tools-call"}, "output": o, "tools": TOOLS}
        for o in outputs
    ]
    cases.append(
        {
            "assertion": {"type": "not-is-valid-openai-tools-call"},
            "output": outputs[0],
            "tools": TOOLS,
        }
    )
    cases.append(
        {"assertion": {"type": "is-valid-openai-tools-call"}, "output": outputs[0], "tools": None}
    )
    return cases


SKILLS = [
    {"name": "pdf", "source": "project", "path": "/skills/pdf"},
    {"name": "pdf"},
    {"name": "web-search", "is_error": True},
    {"name": "Excel", "source": "user"},
]


def _skill_cases() -> list[dict[str, Any]]:
    values: list[Any] = [
        "pdf",
        " pdf ",
        ["pdf", "excel"],
        ["pdf", "Excel"],
        ["web-search"],
        {"name": "pdf"},
        {"name": "pdf", "min": 2},
        {"name": "pdf", "min": 3},
        {"name": "pdf", "max": 1},
        {"pattern": "*"},
        {"pattern": "e*", "min": 1, "max": 1},
        {"pattern": "web*"},
        {"name": "pdf", "max": 0},
        {},
        {"name": "pdf", "min": -1},
        {"name": "pdf", "min": 1.5},
        {"name": "pdf", "min": 3, "max": 2},
        5,
        [],
    ]
    cases: list[dict[str, Any]] = []
    for value in values:
        for prefix in ("", "not-"):
            cases.append(
                {
                    "assertion": {"type": f"{prefix}skill-used", "value": value},
                    "output": "x",
                    "metadata": {"skillCalls": SKILLS},
                }
            )
    cases.append({"assertion": {"type": "skill-used", "value": "pdf"}, "output": "x"})
    cases.append({"assertion": {"type": "not-skill-used", "value": "pdf"}, "output": "x"})
    return cases


def _guardrail_cases() -> list[dict[str, Any]]:
    verdicts: list[dict[str, Any]] = [
        {},
        {"guardrails": {"flagged": False}},
        {"guardrails": {"flagged": True}},
        {"guardrails": {"flagged": True, "flaggedInput": True}},
        {"guardrails": {"flagged": True, "flaggedOutput": True}},
        {"guardrails": {"flagged": True, "flaggedOutput": True, "reason": "PII detected"}},
        {
            "metadata": {
                "redteamHistory": [
                    {"guardrails": {"flagged": False}},
                    {"guardrails": {"flagged": True}},
                ]
            }
        },
        {"guardrails": {}, "metadata": {"redteamHistory": [{"guardrails": {"flagged": True}}]}},
    ]
    return [
        {"assertion": {"type": f"{prefix}guardrails"}, "output": "x", **verdict}
        for verdict in verdicts
        for prefix in ("", "not-")
    ]


def all_cases() -> list[dict[str, Any]]:
    """Every (response, assertion) pair the handler golden file records."""
    return _trace_cases() + _tools_cases() + _skill_cases() + _guardrail_cases()


def main(package: Path) -> None:
    """Run promptfoo's runAssertion on every case and write the golden rows."""
    cases = all_cases()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
        (root / "run.cjs").write_text(RUNNER, encoding="utf-8")
        env = {
            **os.environ,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "HOME": str(root),
            "PROMPTFOO_CONFIG_DIR": str(root / ".promptfoo"),
        }
        entry = package / "dist" / "src" / "index.cjs"
        command = ["node", str(root / "run.cjs"), str(entry), str(root / "cases.json")]
        subprocess.run([*command, str(root / "out.json")], env=env, cwd=root, check=True)
        results = json.loads((root / "out.json").read_text(encoding="utf-8"))
    version = json.loads((package / "package.json").read_text(encoding="utf-8"))["version"]
    rows = [{**case, **result} for case, result in zip(cases, results, strict=True)]
    GOLDEN.write_text(
        json.dumps({"promptfoo": version, "rows": rows}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"{len(rows)} rows written to {GOLDEN}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_PACKAGE)
