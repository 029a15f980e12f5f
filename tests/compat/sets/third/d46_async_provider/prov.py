import asyncio
async def call_api(prompt, options, context):
    await asyncio.sleep(0)
    v = context['vars']
    r = {"output": prompt.strip()}
    if v.get('meta'):
        r['metadata'] = {"k": v['meta']}
    if v.get('cached'):
        r['cached'] = True
    if v.get('guard'):
        r['guardrails'] = {"flagged": True}
    return r
