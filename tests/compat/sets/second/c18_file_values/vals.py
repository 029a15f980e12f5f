def get_assert(output, context):
    return output.startswith("expected")

def scored(output, context):
    return {"pass": True, "score": len(output) / 100, "reason": "len", "namedScores": {"len": len(output)}}
