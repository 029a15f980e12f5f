def get_assert(output, context):
    return {"pass": "ok" in output, "score": 0.75 if "ok" in output else 0.1, "reason": "checked"}


def length_score(output, context):
    return len(output) / 10
