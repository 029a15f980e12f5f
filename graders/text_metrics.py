"""Reference-similarity metrics: levenshtein, ROUGE-N, BLEU, GLEU and METEOR, as in promptfoo.

promptfoo implements these itself (BLEU, GLEU, METEOR, its clipped ROUGE-N over js-rouge's
Penn Treebank tokenizer, fastest-levenshtein over UTF-16 units); the ports below follow
those algorithms step by step so scores agree to floating-point precision.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Coroutine
from itertools import pairwise
from typing import Any

import regex

from evals.common.jsvalues import js_string, to_fixed, utf16_units
from evals.common.offload import now_or_off_loop
from evals.graders import porter_stemmer, wordnet
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import at_most, invariant
from evals.graders.output import output_string
from evals.graders.registry import register
from evals.graders.values import assertion_value
from evals.model.results import Grade

_WHITESPACE = re.compile(r"\s+")


def levenshtein_distance(a: str, b: str) -> int:
    """Edit distance over UTF-16 code units (insert, delete, substitute cost 1)."""
    left, right = utf16_units(a), utf16_units(b)
    if len(left) < len(right):
        left, right = right, left
    previous = list(range(len(right) + 1))
    for i, x in enumerate(left, 1):
        current = [i]
        for j, y in enumerate(right, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _ngrams(words: list[str], n: int) -> list[str]:
    if n <= 0 or n > len(words):
        return []
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def _words(text: str) -> list[str]:
    return _WHITESPACE.split(text.lower().strip())


def bleu_score(candidate: str, references: list[str]) -> float:
    """Sentence BLEU with 4-gram uniform weights, clipped counts and brevity penalty."""
    if not references:
        raise GraderError("Invalid inputs")
    if candidate.strip() == "":
        return 0.0
    cand = _words(candidate)
    refs = [_words(r) for r in references]
    closest = len(refs[0])
    for ref in refs[1:]:
        here, best = abs(len(ref) - len(cand)), abs(closest - len(cand))
        if here < best or (here == best and len(ref) < closest):
            closest = len(ref)
    orders: list[tuple[float, float]] = []
    for n in range(1, 5):
        grams = _ngrams(cand, n)
        if not grams:
            continue
        counts = Counter(grams)
        clipped = max(
            sum(min(c, Counter(_ngrams(ref, n)).get(g, 0)) for g, c in counts.items())
            for ref in refs
        )
        orders.append((clipped / len(grams), 0.25))
    penalty = 1.0 if len(cand) > closest else math.exp(1 - closest / len(cand))
    weight_sum = sum(w for _, w in orders)
    if weight_sum == 0:
        return 0.0
    log_sum = sum(w / weight_sum * math.log(p if p != 0 else 1e-7) for p, w in orders)
    return penalty * math.exp(log_sum)


def _gleu_words(text: str) -> list[str]:
    return [re.sub(r"\.+$", "", w) for w in _words(text)]


def gleu_score(candidate: str, references: list[str]) -> float:
    """Google-BLEU: min(precision, recall) over 1..4-grams, best reference wins."""
    if not candidate or not references:
        raise GraderError("Invalid inputs")
    cand = _gleu_words(candidate)
    scores = []
    for reference in references:
        ref = _gleu_words(reference)
        if cand == ref:
            scores.append(1.0)
            continue
        matches = cand_total = ref_total = 0
        for n in range(1, 5):
            cand_grams, ref_grams = _ngrams(cand, n), _ngrams(ref, n)
            ref_counts = Counter(ref_grams)
            matches += sum(min(c, ref_counts.get(g, 0)) for g, c in Counter(cand_grams).items())
            cand_total += len(cand_grams)
            ref_total += len(ref_grams)
        if cand_total == 0 or ref_total == 0:
            scores.append(0.0)
            continue
        scores.append(min(matches / cand_total, matches / ref_total))
    return max(scores)


_WORD_CHAR = r"[\p{ID_Continue}\u200c\u200d]"
_CONTRACTIONS = [
    regex.compile(rf"(?<!{_WORD_CHAR}){pattern}(?!{_WORD_CHAR})", regex.IGNORECASE)
    for pattern in (
        "(can)(not)",
        "(d)('ye)",
        "(gim)(me)",
        "(gon)(na)",
        "(got)(ta)",
        "(lem)(me)",
        "(more)('n)",
        "(wan)(na)(?= )",
        "('t)(is)",
        "('t)(was)",
    )
]


def _char_at(text: str, index: int) -> str:
    return text[index] if 0 <= index < len(text) else ""


def _is_alphabetic_footnote(text: str, index: int) -> bool:
    import unicodedata

    following = _char_at(text, index + 1)
    return following != unicodedata.normalize("NFKC", following) and bool(
        regex.match(r"^\p{Lm}(?:[\s.,;:!?\"'“‘”’\])}>]|$)", text[index + 1 : index + 5])
    )


def _follows_quoted_modifier(text: str, index: int) -> bool:
    found = regex.search(r"\p{Lm}$", text[max(0, index - 2) : index])
    if found is None or not _is_alphabetic_footnote(text, index - len(found.group(0)) - 1):
        return False
    start = index - len(found.group(0))
    while start > 0:
        number = regex.search(r"\p{N}$", text[max(0, start - 2) : start])
        if number is None:
            break
        start -= len(number.group(0))
    return bool(re.search(r"[.!?][\"'”’]$", text[max(0, start - 2) : start]))


def _opening_context(text: str, index: int) -> bool:
    return (
        index == 0
        or bool(regex.match(r"[\s\p{P}<]", _char_at(text, index - 1)))
        or text[max(0, index - 2) : index] == "``"
        or _follows_quoted_modifier(text, index)
    )


def treebank_tokenize(value: str) -> list[str]:
    """js-rouge's Penn Treebank tokenizer (quotes, punctuation, contractions split off)."""
    text = regex.sub(r"[\s\u0085]+", " ", value).strip()
    if not text:
        return []
    inside = False

    def quote(match: regex.Match[str]) -> str:
        nonlocal inside
        mark, index = match.group(0), match.start()
        following = text[index + 2 :]
        later = regex.search(r"``|''|\"", following)
        inside = mark == "``" or (
            (
                index + len(mark) < len(text)
                or index == 0
                or bool(regex.match(r"[\s\p{Ps}<]", _char_at(text, index - 1)))
            )
            and not inside
            and _opening_context(text, index)
            and not re.match(r"[.!?]", _char_at(text, index - 1))
            and (
                mark == '"'
                or (
                    index > 0
                    and bool(regex.match(r"^[\p{L}\p{N}\p{Sc}\p{Ps}]$", _char_at(text, index + 2)))
                    and later is not None
                    and later.group(0) == "''"
                )
            )
        )
        return " `` " if inside else " '' "

    parse = regex.sub(r"``|''|\"", quote, text)
    parse = parse.replace("...", " ... ")
    parse = regex.sub(r"[:,](?!\p{Nd})", lambda m: f" {m.group(0)} ", parse)
    parse = re.sub(r"[;@#$%&]", lambda m: f" {m.group(0)} ", parse)
    parse = regex.sub(
        r"([^.])(?<!\b[A-Za-z]\.[A-Za-z])(\.)([\])}>'\s]*)\Z", r"\1 \2\3 ", parse, flags=regex.A
    )
    parse = re.sub(r"[?!]", lambda m: f" {m.group(0)} ", parse)
    parse = re.sub(r"[\][(){}<>]", lambda m: f" {m.group(0)} ", parse)
    parse = parse.replace("--", " -- ")
    parse = f" {parse} "
    parse = re.sub(r"([^'])' ", r"\1 ' ", parse)
    parse = re.sub(r"'([sSmMdD]) ", r" '\1 ", parse)
    parse = re.sub(r"('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r" \1 ", parse)
    for contraction in _CONTRACTIONS:
        parse = contraction.sub(lambda m: f" {m.group(1)} {m.group(2)} ", parse)
    parse = re.sub(r" {2,}", " ", parse)
    parse = re.sub(r"^ | $", "", parse)
    return parse.split(" ")


def _f_measure(precision: float, recall: float) -> float:
    """js-rouge's fMeasure with beta = 1 (its overflow-safe form)."""
    if precision == recall:
        return precision
    if precision == 0 or recall == 0:
        return 0.0
    if precision > recall:
        return min(precision, recall * (2 / (1 + recall / precision)))
    return min(recall, precision * (2 / (1 + precision / recall)))


def rouge_n_score(candidate: str, reference: str, n: int = 1) -> float:
    """promptfoo's ROUGE-N: clipped n-gram overlap F1 over Treebank tokens."""
    cand, ref = treebank_tokenize(candidate), treebank_tokenize(reference)
    if len(cand) < n or len(ref) < n:
        return 0.0
    cand_grams, ref_grams = _ngrams(cand, n), _ngrams(ref, n)
    ref_counts = Counter(ref_grams)
    overlap = sum(min(c, ref_counts.get(g, 0)) for g, c in Counter(cand_grams).items())
    if overlap == 0:
        return 0.0
    return _f_measure(overlap / len(cand_grams), overlap / len(ref_grams))


def _references(ctx: GradeContext, message: str) -> list[str]:
    value = assertion_value(ctx)
    ok = isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )
    invariant(ok, message)
    return value if isinstance(value, list) else [value]


@register("levenshtein", layer="final", promptfoo=True)
def levenshtein(ctx: GradeContext) -> Grade | Coroutine[Any, Any, Grade]:
    """Edit distance to the value is at most `threshold` (default 5); between long texts
    (quadratic work) off the event loop."""
    value = assertion_value(ctx)
    invariant(isinstance(value, str), '"levenshtein" assertion type must have a string value')
    text = output_string(ctx)
    return now_or_off_loop(_levenshtein, len(text) * len(value), ctx, text, value)


def _levenshtein(ctx: GradeContext, text: str, value: str) -> Grade:
    distance = levenshtein_distance(text, value)
    threshold = 5 if ctx.assertion.threshold is None else ctx.assertion.threshold
    return at_most(ctx, distance, threshold, f"Levenshtein distance {distance}")


def _scored(ctx: GradeContext, name: str, score: float, default: float) -> Grade:
    threshold = default if ctx.assertion.threshold is None else ctx.assertion.threshold
    passed = (score >= threshold) != ctx.inverse
    direction = "greater" if ctx.inverse else "less"
    reason = (
        "Assertion passed"
        if passed
        else f"{name} score {to_fixed(score, 4)} is {direction} than threshold "
        f"{js_string(threshold)}"
    )
    return Grade(passed, 1 - score if ctx.inverse else score, reason, ctx.assertion.raw)


@register("bleu", layer="final", promptfoo=True)
def bleu(ctx: GradeContext) -> Grade:
    """BLEU against one or more references reaches `threshold` (default 0.5)."""
    refs = _references(ctx, '"bleu" assertion type must have a string or array of strings value')
    return _scored(ctx, "BLEU", bleu_score(output_string(ctx), refs), 0.5)


@register("gleu", layer="final", promptfoo=True)
def gleu(ctx: GradeContext) -> Grade:
    """GLEU against one or more references reaches `threshold` (default 0.5)."""
    refs = _references(ctx, '"gleu" assertion must have a string or array of strings value')
    return _scored(ctx, "GLEU", gleu_score(output_string(ctx), refs), 0.5)


@register("rouge-n", layer="final", promptfoo=True)
def rouge_n(ctx: GradeContext) -> Grade:
    """ROUGE-N (unigram F1, case-insensitive) reaches `threshold` (default 0.75)."""
    value = assertion_value(ctx)
    invariant(isinstance(value, str), '"rouge" assertion type must be a string value')
    score = rouge_n_score(output_string(ctx).lower(), value.lower())
    threshold = 0.75 if ctx.assertion.threshold is None else ctx.assertion.threshold
    relation = "greater than or equal to" if score >= threshold else "less than"
    return Grade(
        passed=(score >= threshold) != ctx.inverse,
        score=1 - score if ctx.inverse else score,
        reason=f"ROUGE-N score {to_fixed(score, 2)} is {relation} threshold {js_string(threshold)}",
        assertion=ctx.assertion.raw,
    )


def _meteor_words(text: str) -> list[str]:
    return [re.sub(r"\.+$", "", w) for w in _WHITESPACE.split(text)]


_Words = list[tuple[int, str]]


def _match(cand: _Words, ref: _Words) -> tuple[list[tuple[int, int]], _Words, _Words]:
    """Pair equal words, scanning both lists from the end as promptfoo does."""
    cand, ref = list(cand), list(ref)
    pairs = []
    for i in range(len(cand) - 1, -1, -1):
        for j in range(len(ref) - 1, -1, -1):
            if cand[i][1] == ref[j][1]:
                pairs.append((cand[i][0], ref[j][0]))
                del cand[i]
                del ref[j]
                break
    return pairs, cand, ref


def _match_synonyms(cand: _Words, ref: _Words) -> list[tuple[int, int]]:
    """Pair a word with a WordNet synonym of it, scanning from the end as promptfoo does."""
    ref = list(ref)
    pairs = []
    for i in range(len(cand) - 1, -1, -1):
        synonyms = wordnet.synonyms(cand[i][1])
        for j in range(len(ref) - 1, -1, -1):
            if ref[j][1] in synonyms:
                pairs.append((cand[i][0], ref[j][0]))
                del ref[j]
                break
    return pairs


def _single_meteor(
    ref_words: list[str], cand_words: list[str], params: tuple[float, float, float]
) -> float:
    alpha, beta, gamma = params
    cand = [(i, w.lower()) for i, w in enumerate(cand_words)]
    ref = [(i, w.lower()) for i, w in enumerate(ref_words)]
    exact, cand_left, ref_left = _match(cand, ref)
    stems, cand_left, ref_left = _match(
        [(i, porter_stemmer.stem(w)) for i, w in cand_left],
        [(i, porter_stemmer.stem(w)) for i, w in ref_left],
    )
    synonyms = _match_synonyms(cand_left, ref_left)
    matches = sorted(exact + stems + synonyms, key=lambda m: m[0])
    if not matches or not cand or not ref:
        return 0.0
    precision, recall = len(matches) / len(cand), len(matches) / len(ref)
    denominator = alpha * precision + (1 - alpha) * recall
    if denominator == 0:
        return 0.0
    chunks = 1 + sum(1 for a, b in pairwise(matches) if b[0] != a[0] + 1 or b[1] != a[1] + 1)
    fmean = precision * recall / denominator
    return (1 - gamma * (chunks / len(matches)) ** beta) * fmean


def meteor_score(
    candidate: str, references: list[str], params: tuple[float, float, float] = (0.9, 3, 0.5)
) -> float:
    """METEOR with exact, Porter-stem and WordNet-synonym matching; the best reference wins.

    promptfoo's stages: words equal after lower-casing, then stems equal (natural's Porter
    stemmer), then a remaining stem that WordNet lists as a synonym of a remaining stem.
    """
    if not candidate or not references:
        raise GraderError("Invalid inputs")
    cand = _meteor_words(candidate)
    return max(_single_meteor(_meteor_words(r), cand, params) for r in references)


@register("meteor", layer="final", promptfoo=True)
def meteor(ctx: GradeContext) -> Grade | Coroutine[Any, Any, Grade]:
    """METEOR against one or more references reaches `threshold` (default 0.5); over long
    texts (word matching is quadratic) off the event loop."""
    refs = _references(ctx, '"meteor" assertion must have a string or array of strings value')
    text = output_string(ctx)
    steps = len(text) * sum(len(ref) for ref in refs) // 16
    return now_or_off_loop(_meteor, steps, ctx, text, refs)


def _meteor(ctx: GradeContext, text: str, refs: list[str]) -> Grade:
    raw: dict[str, Any] = ctx.assertion.raw
    params = (raw.get("alpha", 0.9), raw.get("beta", 3), raw.get("gamma", 0.5))
    score = meteor_score(text, refs, params)
    threshold = 0.5 if ctx.assertion.threshold is None else ctx.assertion.threshold
    passed = score < threshold if ctx.inverse else score >= threshold
    reason = (
        "METEOR assertion passed"
        if passed
        else f"METEOR score {to_fixed(score, 4)} did not meet threshold {js_string(threshold)}"
    )
    return Grade(passed, 1 - score if ctx.inverse else score, reason, ctx.assertion.raw)
