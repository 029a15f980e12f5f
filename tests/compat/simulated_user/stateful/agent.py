import json


def call_api(prompt, options, context):
    messages = json.loads(prompt)
    roles = ",".join(m["role"] for m in messages)
    return {"output": f"[{roles}] noted: {messages[-1]['content']}", "sessionId": "table-7"}
