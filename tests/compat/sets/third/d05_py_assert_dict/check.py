def get_assert(output, context):
    v = context['vars']
    mode = v.get('mode')
    if mode == 'dict':
        return {"pass": True, "score": 0.7, "reason": "ok", "namedScores": {"style": 0.7, "len": len(output)}}
    if mode == 'components':
        return {"pass": False, "score": 0.4, "reason": "mixed",
                "componentResults": [{"pass": True, "score": 1, "reason": "a"}, {"pass": False, "score": 0, "reason": "b"}]}
    if mode == 'bool':
        return 'x' in output
    if mode == 'float':
        return 0.25
    if mode == 'nopass':
        return {"score": 0.9, "reason": "no pass key"}
    if mode == 'zero':
        return {"pass": True, "score": 0}
    return None

def custom(output, context):
    return {"pass": context['test']['vars'].get('mode') == 'dict', "score": 1.0, "reason": str(context.get('prompt'))[:20]}
