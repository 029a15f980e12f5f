def call_api(prompt, options, context):
    k = context['vars']['k']
    return {"output": {'int': 42, 'float': 3.10, 'zero': 0, 'neg': -1.5, 'big': 12345678901234567890, 'bool': False, 'list': [1, 2], 'str': '042'}[k]}
