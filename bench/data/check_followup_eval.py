"""Validate the follow-up evaluation set (``followup_eval.json``) against the shipped notes.

Run with the virtualenv: ``.venv/bin/python bench/data/check_followup_eval.py``. Unlike
``check_eval.py`` (standard library only) it needs the project: whether a follow-up names an
entity is decided by the tutor's own terms matcher (``backends.tutor.kb.load_terms``, nested
matches, as the tutor searches a question), a Spanish question through the glossary's English
words too. Exits 1 when any check fails, so a set that drifts from the notes or the terms (a
note edited, a term added that a follow-up now names) is caught before it skews a measurement.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for path in (str(ROOT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from check_eval import (  # noqa: E402
    LANGS,
    MAX_KEY_WORDS,
    SPANISH_MARKS,
    Checker,
    check_ids,
    load,
    load_notes,
    norm,
)

from backends import grounding  # noqa: E402
from backends.tutor import translation  # noqa: E402
from backends.tutor.kb import Terms, load_terms, shipped_kb_dir  # noqa: E402

FOLLOWUP_EVAL = HERE / "followup_eval.json"
MIN_COVERED, MIN_THREE_TURN, MIN_SPANISH = 40, 8, 8
MIN_UNCOVERED, MIN_NEW_TOPIC = 12, 8


class Spanish:
    """A Spanish question's English words, as the tutor translates it (the glossary, then the
    cognates the notes use), plus every other English word the glossary gives its words."""

    def __init__(self) -> None:
        kb_dir = shipped_kb_dir()
        self.glossary = translation.load_glossary((kb_dir / "glossary_es.tsv").read_text("utf-8"))
        notes = sorted((kb_dir / "notes").glob("*.md"))
        self.vocabulary = grounding.Vocabulary.of(p.read_text("utf-8") for p in notes)

    def english(self, text: str) -> str:
        translated = translation.translate(text, self.glossary, self.vocabulary)
        every = [self.glossary[w] for w in grounding.words(text) if w in self.glossary]
        return " ".join([*translated.values(), *every])


def named(text: str, lang: str, terms: Terms, spanish: Spanish) -> list[str]:
    """The entities of the notes ``text`` names, as the tutor would find them."""
    search = f"{text} {spanish.english(text)}" if lang == "es" else text
    return terms.find(search, nested=True)


def check_thread(item: dict[str, Any], terms: Terms, spanish: Spanish, check: Checker) -> None:
    item_id, earlier, question, lang = (
        item.get("id"),
        item.get("earlier"),
        item.get("question"),
        item.get("lang"),
    )
    if not (
        isinstance(earlier, list) and earlier and all(isinstance(e, str) and e for e in earlier)
    ):
        check.fail(f"{item_id}: 'earlier' must be a non-empty list of questions")
        return
    if not (isinstance(question, str) and question):
        check.fail(f"{item_id}: no question")
        return
    check.require(lang in LANGS, f"{item_id}: lang {lang!r} not in {sorted(LANGS)}")
    if lang == "es":
        check.require(
            bool(SPANISH_MARKS & set(question.lower())),
            f"{item_id}: Spanish question without ¿ or accents: {question!r}",
        )
    first_lang = grounding.language(earlier[0])
    check.require(
        bool(named(earlier[0], first_lang, terms, spanish)),
        f"{item_id}: the first earlier question names no entity: {earlier[0]!r}",
    )
    for middle in earlier[1:]:  # a three-turn thread's middle turn is a follow-up itself
        entities = named(middle, grounding.language(middle), terms, spanish)
        check.require(not entities, f"{item_id}: middle turn {middle!r} names {entities}")


def check_key(item: dict[str, Any], notes: dict[str, str], check: Checker) -> None:
    item_id, note, key = item.get("id"), item.get("note"), item.get("key")
    if note not in notes:
        check.fail(f"{item_id}: note {note!r} does not exist")
        return
    if not (isinstance(key, list) and key and all(isinstance(k, str) and k for k in key)):
        check.fail(f"{item_id}: key must be a non-empty list of phrases")
        return
    for alt in key:
        n_words = len(alt.split())
        check.require(1 <= n_words <= MAX_KEY_WORDS, f"{item_id}: key {alt!r} has {n_words} words")
        check.require(
            norm(alt) not in norm(str(item.get("question", ""))),
            f"{item_id}: key {alt!r} is given away by the question",
        )
    check.require(
        any(norm(alt) in notes[note] for alt in key),
        f"{item_id}: no key alternative {key} occurs verbatim in {note}",
    )


def main() -> int:
    check = Checker()
    notes = load_notes()
    terms = load_terms()
    spanish = Spanish()
    data = load(FOLLOWUP_EVAL, check)
    covered: list[dict[str, Any]] = data.get("covered", [])
    uncovered: list[dict[str, Any]] = data.get("uncovered", [])
    new_topic: list[dict[str, Any]] = data.get("new_topic", [])
    check_ids(covered, "f", "covered", check)
    check_ids(uncovered, "g", "uncovered", check)
    check_ids(new_topic, "n", "new_topic", check)
    threads = Counter(
        (tuple(norm(e) for e in i.get("earlier", [])), norm(str(i.get("question", ""))))
        for i in covered + uncovered + new_topic
    )
    for thread, n in threads.items():
        check.require(n == 1, f"thread repeated {n} times: {thread}")
    for item in covered + uncovered + new_topic:
        check_thread(item, terms, spanish, check)
    for item in covered + uncovered:  # a follow-up names nothing: that is what makes it one
        entities = named(str(item.get("question", "")), str(item.get("lang")), terms, spanish)
        check.require(not entities, f"{item.get('id')}: the follow-up names {entities}")
    for item in covered + new_topic:
        check_key(item, notes, check)
    for item in uncovered:
        item_id = item.get("id")
        check.require(item.get("note") in notes, f"{item_id}: note {item.get('note')!r} missing")
        check.require(bool(item.get("why")), f"{item_id}: an uncovered follow-up must say why")
        check.require("key" not in item, f"{item_id}: an uncovered follow-up has no key")

    three = [i for i in covered if len(i.get("earlier", [])) > 1]
    langs = Counter(str(i.get("lang")) for i in covered + uncovered + new_topic)
    cov_notes = {i.get("note") for i in covered}
    print(f"notes: {len(notes)}, terms: {len(terms.terms)}")
    print(
        f"covered follow-ups: {len(covered)} ({len(covered) - len(three)} two-turn,"
        f" {len(three)} three-turn) over {len(cov_notes)} notes"
    )
    print(f"uncovered follow-ups: {len(uncovered)}; new-topic questions: {len(new_topic)}")
    by_lang = ", ".join(f"{k} {v}" for k, v in sorted(langs.items()))
    print(f"languages of the last question: {by_lang}")
    check.require(len(covered) >= MIN_COVERED, f"covered: {len(covered)} < {MIN_COVERED}")
    check.require(len(three) >= MIN_THREE_TURN, f"three-turn: {len(three)} < {MIN_THREE_TURN}")
    check.require(langs["es"] >= MIN_SPANISH, f"Spanish: {langs['es']} < {MIN_SPANISH}")
    check.require(len(uncovered) >= MIN_UNCOVERED, f"uncovered: < {MIN_UNCOVERED}")
    check.require(len(new_topic) >= MIN_NEW_TOPIC, f"new topic: < {MIN_NEW_TOPIC}")

    for message in check.failures:
        print(f"FAIL {message}", file=sys.stderr)
    print("OK" if not check.failures else f"{len(check.failures)} failure(s)")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
