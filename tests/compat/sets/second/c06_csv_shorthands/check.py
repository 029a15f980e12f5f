def get_assert(output, context):
    return {"pass": "a" in output, "score": 0.7, "reason": "py file"}
