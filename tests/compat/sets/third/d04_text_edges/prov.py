import unicodedata
def call_api(prompt, options, context):
    k = context['vars']['kind']
    outs = {
        'crlf': 'line one\r\nline two\r\n',
        'trail': 'answer\n\n',
        'nfd': unicodedata.normalize('NFD', 'café'),
        'nfc': 'café',
        'lead': '   leading spaces',
        'long': 'word ' * 5000 + 'END',
        'tabs': '\tTabbed\ttext\t',
        'emoji': 'ok 👍🏽 done',
        'dotless': 'İstanbul ıı',
        'sharp': 'Straße',
        'empty': '',
        'ws': '   \n  ',
    }
    return {"output": outs[k]}
