def call_api(prompt, options, context):
    mode = context["vars"]["mode"]
    if mode == "raise":
        raise ValueError("boom from provider")
    if mode == "error":
        return {"error": "rate limited"}
    if mode == "error_and_output":
        return {"output": "partial", "error": "also an error"}
    if mode == "empty":
        return {"output": ""}
    if mode == "none":
        return {"output": None}
    if mode == "nooutput":
        return {}
    if mode == "zero":
        return {"output": 0}
    if mode == "false":
        return {"output": False}
    if mode == "emptylist":
        return {"output": []}
    if mode == "notdict":
        return "just a string"
    if mode == "cost":
        return {"output": "priced", "cost": 0.25, "tokenUsage": {"total": 10, "prompt": 4, "completion": 6}}
    if mode == "finish":
        return {"output": "done", "finishReason": "length"}
    return {"output": prompt}
