def get_assert(output, context):
    provider = context["provider"]
    return (
        "id" not in provider
        and context["test"]["description"] == "files"
        and [a["type"] for a in context["test"]["assert"]] == ["contains", "javascript", "python"]
    )
