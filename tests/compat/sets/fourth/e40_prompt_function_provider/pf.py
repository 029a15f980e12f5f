import json
def make(context):
    return "P " + json.dumps(context.get("provider"), sort_keys=True)
