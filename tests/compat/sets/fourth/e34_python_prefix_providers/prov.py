def call_api(prompt, options, context):
    return {"output": "A:" + prompt, "cached": True, "tokenUsage": {"total": 5, "prompt": 2, "completion": 3}}

def other(prompt, options, context):
    return {"output": "B:" + prompt + ":" + str(options.get("config", {}).get("x"))}
