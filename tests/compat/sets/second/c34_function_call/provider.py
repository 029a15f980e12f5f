def call_api(prompt, options, context):
    return {"output": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
