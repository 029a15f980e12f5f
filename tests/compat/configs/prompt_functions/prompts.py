"""Prompt functions: each gets {vars, provider, config} and returns the prompt."""


def question(context):
    return f"Question about {context['vars']['topic']}: why?"


def chat(context):
    provider = context["provider"]
    return [
        {"role": "system", "content": f"You answer for {provider['id']} ({provider['label']})."},
        {"role": "user", "content": "Explain {{ topic }} in {{ words }} words."},
    ]


def configured(context):
    return {
        "prompt": "Configured {{ topic }} with " + ",".join(sorted(context["config"])),
        "config": {"temperature": 0.2},
    }


def raises(context):
    raise ValueError(f"no prompt for {context['vars']['topic']}")


def number(context):
    return 7


async def later(context):
    return "Async prompt on " + context["vars"]["topic"]
