def call_api(prompt, options, context):
    cfg = options.get("config", {})
    v = context.get("vars", {})
    mode = v.get("mode", "plain")
    if mode == "json":
        return {"output": {"answer": prompt, "n": 3}, "finishReason": "stop", "cost": 0.002,
                "tokenUsage": {"total": 30, "prompt": 10, "completion": 20}}
    if mode == "length":
        return {"output": prompt[:10], "finishReason": "length", "cost": 0.5}
    if mode == "error":
        return {"error": "upstream exploded"}
    if mode == "none":
        return {"output": None}
    if mode == "list":
        return {"output": ["a", "b", prompt]}
    if mode == "num":
        return {"output": 42}
    return {"output": cfg.get("prefix", "") + prompt, "metadata": {"k": 1}}
