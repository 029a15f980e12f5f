def make(context):
    return "two makes {{topic}}"
