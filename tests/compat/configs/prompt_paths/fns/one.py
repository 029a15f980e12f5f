def make(context):
    return "one makes {{topic}}"
