"""Tests built from the generator's config."""


def make_tests(config=None):
    """One test per configured word; without a config, one test for 'none'."""
    if not config:
        return [{"vars": {"word": "none"}, "assert": [{"type": "contains", "value": "none"}]}]
    return [
        {"vars": {"word": w + config["suffix"]}, "assert": [{"type": "contains", "value": w}]}
        for w in config["words"]
    ]
