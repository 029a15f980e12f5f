import json
def call_api(prompt, options, context):
    v = context["vars"]
    kind = v.get("kind")
    if kind == "tools":
        return {"output": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": v["city"]})}}]}
    if kind == "toolsobj":
        return {"output": {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": 5}"}}]}}
    if kind == "badargs":
        return {"output": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "not json"}}]}
    if kind == "unknown":
        return {"output": [{"id": "c1", "type": "function", "function": {"name": "nope", "arguments": "{}"}}]}
    if kind == "text":
        return {"output": "I would call get_weather"}
    if kind == "lp":
        return {"output": "abc", "logProbs": [-0.1, -0.5, -2.0]}
    if kind == "guard":
        return {"output": "x", "guardrails": {"flagged": True, "flaggedInput": False, "flaggedOutput": True, "reason": "bad"}}
    if kind == "lat":
        return {"output": "fast", "latencyMs": 1234, "tokenUsage": {"total": 100, "prompt": 60, "completion": 40}, "cost": 0.25}
    return {"output": prompt}
