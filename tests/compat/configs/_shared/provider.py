import json


def call_api(prompt, options, context):
    config = options.get("config") or {}
    style = config.get("style", "plain")
    if style == "upper":
        return {"output": prompt.upper()}
    if style == "json":
        return {"output": json.dumps({"answer": prompt, "n": len(prompt)})}
    return {"output": prompt}


def shout(prompt, options, context):
    return {"output": prompt.upper() + "!"}
