def call_api(prompt, options, context):
    return {"output": "hi", "latencyMs": 5000}
