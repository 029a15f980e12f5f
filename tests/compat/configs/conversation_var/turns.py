def call_api(prompt, options, context):
    last = prompt.splitlines()[-1]
    if "fail" in last:
        return {"error": "refused: " + last}
    return {"output": "<" + prompt.replace("\n", " | ") + ">"}
