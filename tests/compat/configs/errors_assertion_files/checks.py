def get_assert(output, context):
    return {"pass": "tea" in output, "score": 0.5, "reason": "python looked"}


def broken(output, context):
    raise RuntimeError("python check broke")
