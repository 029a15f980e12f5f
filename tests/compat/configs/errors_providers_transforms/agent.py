def call_api(prompt, options, context):
    return {"output": "agent says " + prompt}
