def call_api(prompt, options, context):
    v = context["vars"]
    m = v.get("mode")
    if m == "raise":
        raise ValueError("provider blew up")
    if m == "string":
        return "just a string"
    if m == "none":
        return None
    if m == "both":
        return {"output": "partial", "error": "also an error"}
    if m == "empty":
        return {"output": ""}
    if m == "zero":
        return {"output": 0}
    if m == "false":
        return {"output": False}
    if m == "nested":
        return {"output": {"a": {"b": [1, {"c": "deep"}]}}}
    if m == "unicode":
        return {"output": "emoji 🎉 and \u0000 nul"}
    return {"output": prompt}
