"""Validate the issue-15 evaluation sets against the shipped notes and print their counts.

Run from anywhere: ``python3 bench/data/check_eval.py``. Plain Python, standard library only, so
it runs before the virtualenv exists. Exits 1 when any check fails, so a set that drifts from
the notes (a note edited, a key no longer stated) is caught before it skews a measurement.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NOTES_DIR = ROOT / "resources" / "kb" / "notes"
ANSWER_EVAL = HERE / "answer_eval.json"
SUPPORT_PAIRS = HERE / "support_pairs.json"

MIN_COVERED, MIN_COVERED_EN, MIN_COVERED_ES, MIN_COVERED_NOTES = 70, 60, 12, 40
MIN_UNCOVERED, MIN_UNCOVERED_ES, NEAR_MISS_RANGE = 20, 5, (3, 4)
MIN_SUPPORTED, MIN_UNSUPPORTED = 60, 80
MAX_KEY_WORDS = 4
# A "verbatim" sentence keeps at least this share of its word bigrams from the note.
MIN_VERBATIM_BIGRAMS = 0.8
LANGS = {"en", "es"}
SUPPORTED_KINDS = {"verbatim", "paraphrase"}
UNSUPPORTED_KINDS = {"swap", "number", "negation", "route", "fabricated", "offtopic"}
SPANISH_MARKS = set("¿¡áéíóúñü")


def norm(text: str) -> str:
    """Lower-case with whitespace runs collapsed: the notes are hard-wrapped Markdown."""
    text = text.replace("\u2019", "'").replace("\u00a0", " ")
    return re.sub(r"\s+", " ", text).strip().lower()


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", norm(text))


def numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.,]\d+)?", norm(text)))


def bigrams(tokens: list[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(tokens))


class Checker:
    """Collects failures instead of stopping at the first, so one run lists everything."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def fail(self, message: str) -> None:
        self.failures.append(message)

    def require(self, condition: bool, message: str) -> None:
        if not condition:
            self.fail(message)


def load_notes() -> dict[str, str]:
    return {f"kb/{p.stem}": norm(p.read_text(encoding="utf-8")) for p in NOTES_DIR.glob("*.md")}


def load(path: Path, check: Checker) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        check.fail(f"{path.name}: cannot load: {exc}")
        return {}
    if not isinstance(data, dict):
        check.fail(f"{path.name}: top level is not an object")
        return {}
    check.require(
        isinstance(data.get("description"), str) and bool(data["description"]),
        f"{path.name}: no description",
    )
    return data


def check_ids(items: list[dict[str, Any]], prefix: str, where: str, check: Checker) -> None:
    ids = [item.get("id") for item in items]
    for item_id, n in Counter(ids).items():
        check.require(n == 1, f"{where}: id {item_id!r} used {n} times")
    for item_id in ids:
        check.require(
            isinstance(item_id, str) and re.fullmatch(prefix + r"\d{3}", item_id) is not None,
            f"{where}: bad id {item_id!r}",
        )


def check_questions(items: list[dict[str, Any]], where: str, check: Checker) -> None:
    seen = Counter(norm(str(item.get("question", ""))) for item in items)
    for repeated, n in seen.items():
        check.require(n == 1, f"{where}: question repeated {n} times: {repeated!r}")
    for item in items:
        question, lang = item.get("question"), item.get("lang")
        check.require(isinstance(question, str) and bool(question), f"{item.get('id')}: no text")
        check.require(lang in LANGS, f"{item.get('id')}: lang {lang!r} not in {sorted(LANGS)}")
        if lang == "es" and isinstance(question, str):
            check.require(
                bool(SPANISH_MARKS & set(question.lower())),
                f"{item['id']}: Spanish question without ¿ or accents: {question!r}",
            )


def check_covered(items: list[dict[str, Any]], notes: dict[str, str], check: Checker) -> None:
    for item in items:
        item_id, note, key = item.get("id"), item.get("note"), item.get("key")
        if note not in notes:
            check.fail(f"{item_id}: note {note!r} does not exist")
            continue
        if not (isinstance(key, list) and key and all(isinstance(k, str) and k for k in key)):
            check.fail(f"{item_id}: key must be a non-empty list of phrases")
            continue
        for alt in key:
            n_words = len(alt.split())
            check.require(
                1 <= n_words <= MAX_KEY_WORDS, f"{item_id}: key {alt!r} has {n_words} words"
            )
            check.require(
                norm(alt) not in norm(str(item.get("question", ""))),
                f"{item_id}: key {alt!r} is given away by the question",
            )
        check.require(
            any(norm(alt) in notes[note] for alt in key),
            f"{item_id}: no key alternative {key} occurs verbatim in {note}",
        )


def check_uncovered(items: list[dict[str, Any]], notes: dict[str, str], check: Checker) -> None:
    for item in items:
        item_id, topic = item.get("id"), item.get("topic")
        if not (isinstance(topic, str) and topic):
            check.fail(f"{item_id}: no topic")
            continue
        holders = sorted(name for name, text in notes.items() if norm(topic) in text)
        if item.get("near_miss") is True:
            listed = item.get("notes")
            if not (isinstance(listed, list) and listed):
                check.fail(f"{item_id}: a near miss must list the notes it overlaps")
                continue
            for name in listed:
                check.require(name in notes, f"{item_id}: note {name!r} does not exist")
                check.require(
                    name in holders, f"{item_id}: near-miss topic {topic!r} is not in {name}"
                )
            check.require(bool(item.get("why")), f"{item_id}: a near miss must say why")
        else:
            check.require(not holders, f"{item_id}: topic {topic!r} occurs in {holders}")


def check_pairs(pairs: list[dict[str, Any]], notes: dict[str, str], check: Checker) -> None:
    seen = Counter(norm(str(p.get("sentence", ""))) for p in pairs)
    for repeated, n in seen.items():
        check.require(n == 1, f"pairs: sentence repeated {n} times: {repeated!r}")
    for pair in pairs:
        pair_id, note, sentence = pair.get("id"), pair.get("note"), pair.get("sentence")
        label, kind = pair.get("label"), pair.get("kind")
        if note not in notes:
            check.fail(f"{pair_id}: note {note!r} does not exist")
            continue
        if not (isinstance(sentence, str) and sentence):
            check.fail(f"{pair_id}: no sentence")
            continue
        text = notes[note]
        if label == "supported":
            check.require(kind in SUPPORTED_KINDS, f"{pair_id}: kind {kind!r} for supported")
            extra = numbers(sentence) - numbers(text)
            check.require(not extra, f"{pair_id}: numbers {sorted(extra)} are not in {note}")
            if kind == "verbatim":
                grams = bigrams(words(sentence))
                share = len(grams & bigrams(words(text))) / max(len(grams), 1)
                check.require(
                    share >= MIN_VERBATIM_BIGRAMS,
                    f"{pair_id}: only {share:.0%} of its bigrams are in {note}; not verbatim",
                )
        elif label == "unsupported":
            check.require(kind in UNSUPPORTED_KINDS, f"{pair_id}: kind {kind!r} for unsupported")
            check.require(
                norm(sentence).rstrip(".") not in text,
                f"{pair_id}: unsupported sentence occurs verbatim in {note}",
            )
            if kind == "number":
                check.require(
                    bool(numbers(sentence) - numbers(text)),
                    f"{pair_id}: every number in it also occurs in {note}",
                )
        else:
            check.fail(f"{pair_id}: label {label!r}")


def main() -> int:
    check = Checker()
    notes = load_notes()
    check.require(bool(notes), f"no notes found in {NOTES_DIR}")

    answer = load(ANSWER_EVAL, check)
    covered: list[dict[str, Any]] = answer.get("covered", [])
    uncovered: list[dict[str, Any]] = answer.get("uncovered", [])
    check_ids(covered, "c", "covered", check)
    check_ids(uncovered, "u", "uncovered", check)
    check_questions(covered + uncovered, ANSWER_EVAL.name, check)
    check_covered(covered, notes, check)
    check_uncovered(uncovered, notes, check)

    support = load(SUPPORT_PAIRS, check)
    pairs: list[dict[str, Any]] = support.get("pairs", [])
    check_ids(pairs, "p", "pairs", check)
    check_pairs(pairs, notes, check)

    cov_lang = Counter(str(i.get("lang")) for i in covered)
    cov_notes = {i.get("note") for i in covered}
    near = [i for i in uncovered if i.get("near_miss") is True]
    unc_lang = Counter(str(i.get("lang")) for i in uncovered)
    labels = Counter(str(p.get("label")) for p in pairs)
    kinds = Counter((str(p.get("label")), str(p.get("kind"))) for p in pairs)
    pair_notes = {p.get("note") for p in pairs}

    def counts(counter: Counter[str]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))

    print(f"notes: {len(notes)}")
    print(
        f"covered: {len(covered)} ({counts(cov_lang)}) over {len(cov_notes)} notes;"
        f" notes without a question: {sorted(set(notes) - cov_notes) or 'none'}"
    )
    print(f"uncovered: {len(uncovered)} ({counts(unc_lang)}), of which near misses {len(near)}")
    print(f"pairs: {len(pairs)} ({counts(labels)}) over {len(pair_notes)} notes")
    for (label, kind), n in sorted(kinds.items()):
        print(f"  {label:<12} {kind:<11} {n}")

    check.require(len(covered) >= MIN_COVERED, f"covered: {len(covered)} < {MIN_COVERED}")
    check.require(cov_lang["en"] >= MIN_COVERED_EN, f"covered en: < {MIN_COVERED_EN}")
    check.require(cov_lang["es"] >= MIN_COVERED_ES, f"covered es: < {MIN_COVERED_ES}")
    check.require(len(cov_notes) >= MIN_COVERED_NOTES, f"covered notes: < {MIN_COVERED_NOTES}")
    check.require(len(uncovered) >= MIN_UNCOVERED, f"uncovered: < {MIN_UNCOVERED}")
    check.require(unc_lang["es"] >= MIN_UNCOVERED_ES, f"uncovered es: < {MIN_UNCOVERED_ES}")
    low, high = NEAR_MISS_RANGE
    check.require(low <= len(near) <= high, f"near misses: {len(near)} not in {low}..{high}")
    check.require(labels["supported"] >= MIN_SUPPORTED, f"supported: < {MIN_SUPPORTED}")
    check.require(labels["unsupported"] >= MIN_UNSUPPORTED, f"unsupported: < {MIN_UNSUPPORTED}")
    for kind in sorted(UNSUPPORTED_KINDS | SUPPORTED_KINDS):
        label = "supported" if kind in SUPPORTED_KINDS else "unsupported"
        check.require(kinds[(label, kind)] > 0, f"pairs: no {label} pair of kind {kind!r}")

    for message in check.failures:
        print(f"FAIL {message}", file=sys.stderr)
    print("OK" if not check.failures else f"{len(check.failures)} failure(s)")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
