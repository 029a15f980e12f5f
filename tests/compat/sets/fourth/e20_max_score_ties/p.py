def call_api(prompt, options, context):
    return {"output": options["config"]["reply"] + " " + prompt}
