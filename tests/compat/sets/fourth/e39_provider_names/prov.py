import json
def call_api(prompt, options, context):
    o = dict(options)
    o.pop("config", None)
    return {"output": json.dumps(o, sort_keys=True)}
