import asyncio


def call_api(prompt, options, context):
    v = context["vars"]
    r = {"output": prompt}
    if "latency" in v:
        r["latencyMs"] = v["latency"]
    if v.get("cached"):
        r["cached"] = True
    return r


async def call_api_async(prompt, options, context):
    await asyncio.sleep(0)
    return call_api(prompt, options, context)
