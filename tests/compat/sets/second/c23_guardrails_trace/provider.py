def call_api(prompt, options, context):
    mode = context["vars"]["mode"]
    if mode == "flag_in":
        return {"output": "blocked", "guardrails": {"flagged": True, "flaggedInput": True}}
    if mode == "flag_out":
        return {"output": "blocked", "guardrails": {"flagged": True, "flaggedOutput": True, "reason": "pii"}}
    if mode == "clean":
        return {"output": "fine", "guardrails": {"flagged": False}}
    if mode == "skills":
        return {"output": "used skills", "metadata": {"skillCalls": [{"name": "pdf"}, {"name": "excel"}]}}
    return {"output": "no guardrails"}
