def call_api(prompt, options, context):
    v = context['vars']
    r = {"output": "hello " + prompt}
    if 'cost' in v: r['cost'] = v['cost']
    if 'latency' in v: r['latencyMs'] = v['latency']
    if 'finish' in v: r['finishReason'] = v['finish']
    if 'tokens' in v: r['tokenUsage'] = {"total": v['tokens'], "prompt": 1, "completion": v['tokens'] - 1}
    return r
