def get_assert_score(named_scores, context):
    total = sum(named_scores.values())
    return {"pass": total >= 1.5, "score": total / 3, "reason": f"sum {total}"}
