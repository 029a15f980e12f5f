import json
def call_api(prompt, options, context):
    return {"output": json.dumps(options.get("config"), sort_keys=True)}
