def get_assert(output, context):
    return output.startswith("A:")

def named(output, context):
    return {"pass_": True, "score": 0.5, "reason": "half", "named_scores": {"n": 0.5}}
