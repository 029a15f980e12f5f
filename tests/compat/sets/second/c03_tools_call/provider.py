import json

def call_api(prompt, options, context):
    kind = context["vars"]["kind"]
    call = lambda name, args: {"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}
    if kind == "good":
        return {"output": [call("get_weather", json.dumps({"city": "Paris", "unit": "c"}))]}
    if kind == "wrapped":
        return {"output": {"role": "assistant", "tool_calls": [call("get_weather", '{"city": "Rome"}')]}}
    if kind == "badargs":
        return {"output": [call("get_weather", json.dumps({"unit": "k"}))]}
    if kind == "unknown":
        return {"output": [call("launch_rocket", "{}")]}
    if kind == "dictargs":
        return {"output": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}
    if kind == "empty":
        return {"output": []}
    if kind == "mcp":
        return {"output": "MCP Tool Result (search): found 3 items"}
    if kind == "mcperr":
        return {"output": "MCP Tool Error (search): timeout after 3s"}
    if kind == "text":
        return {"output": "I cannot call tools"}
    if kind == "jsonstring":
        return {"output": json.dumps([call("get_weather", '{"city": "Lima"}')])}
    if kind == "notjson":
        return {"output": [call("get_weather", "{city: Lima}")]}
    return {"output": prompt}
