def func(named_scores, context):
    return {"pass": True, "score": 1.0, "reason": "scored"}
