"""The knowledge base: the shipped corpus, chunking with overlap, entities, idempotent import."""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path

import pytest

from backends.tutor.kb import (
    SHARED,
    KnowledgeBase,
    KnowledgeBaseError,
    ScopeError,
    Term,
    Terms,
    chunk_paragraphs,
    collect_files,
    load_terms,
    read_document,
    scopes_for,
    shipped_documents,
    shipped_kb_dir,
    split_markdown,
    user_scope,
)
from backends.tutor.service import TutorService
from tests.backends.tutor.conftest import write_note

ROOT = Path(__file__).resolve().parents[3]


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


# -- the shipped corpus --------------------------------------------------------------------------


def test_the_shipped_corpus_has_forty_titled_notes_and_a_study_notice() -> None:
    kb = shipped_kb_dir()
    notice = (kb / "README.md").read_text(encoding="utf-8")
    assert "for study, not for clinical decisions" in notice.lower()
    docs = shipped_documents()
    assert len(docs) >= 40
    for doc in docs:
        raw = (kb / "notes" / f"{doc.doc_id.removeprefix('kb/')}.md").read_text("utf-8")
        assert raw.startswith("# "), doc.doc_id
        assert doc.title and doc.title != doc.doc_id
        assert len(doc.text.split("\n\n")) >= 3, f"{doc.doc_id}: a few paragraphs"
    assert len({d.title for d in docs}) == len(docs)


def test_every_term_of_the_curated_list_names_something_in_the_corpus() -> None:
    terms = load_terms()
    assert len(terms.terms) >= 100
    corpus = "\n".join(f"{d.title}\n{d.text}" for d in shipped_documents())
    found = set(terms.find(corpus))
    missing = [t.name for t in terms.terms if t.name not in found]
    assert not missing, f"terms never mentioned: {missing}"


def test_the_evaluation_set_answers_come_from_the_shipped_notes() -> None:
    data = json.loads((ROOT / "bench" / "tutor_eval.json").read_text(encoding="utf-8"))
    questions = data["questions"]
    assert len(questions) >= 60
    texts = {d.doc_id: norm(d.title + " " + d.text) for d in shipped_documents()}
    for q in questions:
        assert q["question"].endswith("?")
        assert q["answers"], q["id"]
        for answer in q["answers"]:
            assert norm(answer["evidence"]) in texts[answer["note"]], q["id"]
    assert len({q["id"] for q in questions}) == len(questions)


# -- scopes, terms, parsing, chunking -------------------------------------------------------------


def test_scopes() -> None:
    assert scopes_for(None) == (SHARED,)
    assert scopes_for("ana") == (SHARED, "user:ana")
    assert user_scope("  Dr O'Neil ") == "user:Dr O'Neil"
    for bad in ("", "   ", "a\nb", "x" * 65):
        with pytest.raises(ScopeError):
            user_scope(bad)


def test_terms_match_whole_words_acronyms_in_capitals_and_the_longest_alias() -> None:
    terms = Terms(
        [
            Term("atrial fibrillation", ("AF",)),
            Term("type 2 diabetes", ("diabetes",)),
            Term("type 1 diabetes", ()),
            Term("paracetamol", ()),
            Term("paracetamol overdose", ()),
        ]
    )
    assert terms.find("AF and type 1 diabetes") == ["atrial fibrillation", "type 1 diabetes"]
    assert terms.find("after a leaf fell") == []  # "af" in lower case is not the acronym
    assert terms.find("Diabetes.") == ["type 2 diabetes"]
    assert terms.find("diabetesx") == []
    assert terms.find("a paracetamol overdose") == ["paracetamol overdose"]
    assert terms.find("a paracetamol overdose", nested=True) == [
        "paracetamol overdose",
        "paracetamol",
    ]


def test_markdown_title_paragraphs_and_headings() -> None:
    title, paragraphs = split_markdown(
        "# Gout\n\nFirst line\ncontinues.\n\n## Treatment\n- NSAIDs first.\n", "fallback"
    )
    assert title == "Gout"
    assert paragraphs == ["First line continues.", "Treatment", "NSAIDs first."]
    assert split_markdown("no heading here", "Fallback")[0] == "Fallback"
    # a numbered item starts a line after a sentence; wrapped prose keeps its numbers
    _, items = split_markdown("1. First.\n2. Second.\n\nAn INR of 2.5 (range 2 to\n3) for AF.", "")
    assert items == ["First. Second.", "An INR of 2.5 (range 2 to 3) for AF."]


def test_chunks_pack_sentences_and_overlap_by_a_sentence() -> None:
    sentence = "Word " * 19 + "end."  # 20 words
    paragraph = " ".join(sentence.replace("end.", f"end{i}.") for i in range(9))  # 180 words
    pieces = chunk_paragraphs([paragraph], max_words=60, min_words=20, overlap_words=25)
    assert len(pieces) > 3
    for piece in pieces:
        assert len(piece.text.split()) <= 60
    for before, after in itertools.pairwise(pieces):
        last_sentence = re.findall(r"[^.]*end\d\.", before.text)[-1].strip()
        assert after.text.startswith(last_sentence)  # the overlap
    joined = " ".join(p.text for p in pieces)
    assert all(f"end{i}." in joined for i in range(9))


def test_short_paragraphs_are_kept_together_and_a_long_one_closes_at_its_end() -> None:
    pieces = chunk_paragraphs(["One two three.", "Four five six.", "Seven."], min_words=5)
    assert [p.text for p in pieces] == ["One two three. Four five six.", "Four five six. Seven."]


def test_reading_files(tmp_path: Path) -> None:
    note = write_note(tmp_path, "n.md", "My note", "Alpha beta.", "Gamma.")
    doc = read_document(note, "user:ana")
    assert (doc.title, doc.scope, doc.path) == ("My note", "user:ana", str(note))
    assert doc.doc_id.startswith("doc-") and "ana" not in doc.doc_id  # opaque: no user name
    assert read_document(note, "user:bob").doc_id != doc.doc_id
    text = tmp_path / "plain_notes.txt"
    text.write_text("Just text.\n", encoding="utf-8")
    assert read_document(text, SHARED).title == "Plain notes"
    binary = tmp_path / "bad.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(KnowledgeBaseError, match="not UTF-8"):
        read_document(binary, SHARED)
    with pytest.raises(KnowledgeBaseError, match="no such file"):
        collect_files(tmp_path / "missing")
    (tmp_path / "x.pdf").touch()
    with pytest.raises(KnowledgeBaseError, match="only Markdown"):
        collect_files(tmp_path / "x.pdf")
    (tmp_path / ".hidden").mkdir()
    write_note(tmp_path / ".hidden", "secret.md", "Hidden", "x.")
    assert [p.name for p in collect_files(tmp_path)] == ["bad.md", "n.md", "plain_notes.txt"]


# -- the store ----------------------------------------------------------------------------------


def test_import_is_idempotent_and_a_changed_note_replaces_its_chunks(
    tmp_path: Path, small_kb: Path
) -> None:
    kb = KnowledgeBase(tmp_path / "tutor.sqlite3", load_terms(small_kb))
    try:
        docs = shipped_documents(small_kb)
        first = kb.import_documents(docs, prune_source="shipped")
        assert first.added == len(docs) and first.chunks_added
        ids = kb.chunk_ids()
        again = kb.import_documents(docs, prune_source="shipped")
        assert (again.added, again.updated, again.unchanged) == (0, 0, len(docs))
        assert not again.changed and kb.chunk_ids() == ids

        path = small_kb / "notes" / "inr.md"
        path.write_text(path.read_text("utf-8") + "\nA new closing paragraph.\n", "utf-8")
        changed = kb.import_documents(shipped_documents(small_kb), prune_source="shipped")
        assert (changed.updated, changed.unchanged) == (1, len(docs) - 1)
        assert all(c.startswith("kb/inr#") for c in changed.chunks_removed + changed.chunks_added)
        assert kb.chunk_ids() == (ids - set(changed.chunks_removed)) | set(changed.chunks_added)

        (small_kb / "notes" / "asthma.md").unlink()
        pruned = kb.import_documents(shipped_documents(small_kb), prune_source="shipped")
        assert pruned.removed == 1
        assert not any(c.startswith("kb/asthma#") for c in kb.chunk_ids())
        hits = kb.conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'montelukast'"
        )
        assert hits.fetchone()[0] == 0  # the keyword index followed
    finally:
        kb.close()


def test_entities_and_their_co_occurrences_per_scope(tmp_path: Path, small_kb: Path) -> None:
    kb = KnowledgeBase(tmp_path / "tutor.sqlite3", load_terms(small_kb))
    try:
        kb.import_documents(shipped_documents(small_kb))
        mine = read_document(
            write_note(tmp_path / "n", "a.md", "Ward", "Warfarin and gout together."), "user:ana"
        )
        kb.import_documents([mine], scope="user:ana")
        shared = {(e.a, e.b): e for e in kb.co_occurrences(SHARED)}
        pair = shared[("INR", "warfarin")]
        assert pair.weight >= 3 and all(
            s.startswith(("kb/inr#", "kb/warfarin#")) for s in pair.sources
        )
        assert ("gout", "warfarin") not in shared
        ana = kb.co_occurrences("user:ana")
        assert [(e.a, e.b, e.weight) for e in ana] == [("gout", "warfarin", 1)]
        assert kb.users() == ["ana"]
        stats = kb.stats()
        assert stats.by_scope["user:ana"] == (1, 1)
        assert stats.documents == len(shipped_documents(small_kb)) + 1
    finally:
        kb.close()


def test_an_import_racing_another_process_decides_under_the_write_lock(
    tmp_path: Path, small_kb: Path
) -> None:
    """Two processes seeding a fresh base: the second one's first read saw no document, the
    other imported it meanwhile; the second must then skip it, not fail on the unique id."""
    path = tmp_path / "tutor.sqlite3"
    terms = load_terms(small_kb)
    other = KnowledgeBase(path, terms)
    docs = shipped_documents(small_kb)

    class Overtaken(KnowledgeBase):
        """A real knowledge base that the other one overtakes right after each first read."""

        def _query(self, sql: str, params: object = ()) -> list:  # type: ignore[override]
            rows = super()._query(sql, params)  # type: ignore[arg-type]
            if sql.startswith("SELECT content_hash FROM documents"):
                other.import_documents([d for d in docs if d.doc_id == params[0]])  # type: ignore[index]
            return rows

    slow = Overtaken(path, terms)
    try:
        report = slow.import_documents(docs)
        assert (report.added, report.unchanged) == (0, len(docs))
        assert slow.stats().documents == len(docs)
        assert len(slow.chunk_ids()) == len(other.chunk_ids()) > 0
    finally:
        slow.close()
        other.close()


def test_deleting_a_users_notes_leaves_nothing_of_them_in_the_file(
    tmp_path: Path, small_kb: Path
) -> None:
    path = tmp_path / "tutor.sqlite3"
    kb = KnowledgeBase(path, load_terms(small_kb))
    try:
        kb.import_documents(shipped_documents(small_kb))
        folder = tmp_path / "Quetzalcoatl-private"
        mine = [
            read_document(
                write_note(folder, f"n{i}.md", f"Xylophonist rota {i}", "Zanzibarian clinic."),
                "user:quetzalcoatl",
            )
            for i in range(3)
        ]
        kb.import_documents(mine, scope="user:quetzalcoatl")
        shared_ids = {c for c in kb.chunk_ids() if c.startswith("kb/")}
        assert kb.stats().by_scope["user:quetzalcoatl"] == (3, 3)

        documents, chunks = kb.delete_scope("user:quetzalcoatl")
        assert (documents, len(chunks)) == (3, 3)
        assert kb.users() == [] and kb.chunk_ids() == shared_ids
        assert kb.delete_scope("user:quetzalcoatl") == (0, [])  # again: nothing, no error
        raw = b"".join(
            p.read_bytes() for p in tmp_path.glob("tutor.sqlite3*") if p.is_file()
        ).lower()
        for secret in (b"quetzalcoatl", b"xylophonist", b"zanzibarian"):
            assert secret not in raw, secret
    finally:
        kb.close()


# -- names that are not UTF-8 (issue 14 item 7) ---------------------------------------------------


def _bad_name(folder: Path, raw: bytes, text: str) -> Path:
    """A file whose name holds bytes that are not UTF-8 (Linux allows any), as Python sees it."""
    path = Path(os.fsdecode(os.path.join(os.fsencode(folder), raw)))
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_name_that_is_not_utf8_is_reported_and_the_rest_imported(
    tutor: TutorService, tmp_path: Path
) -> None:
    """One ``caf\\xe9.md`` in a folder: it imported nothing, with a traceback in the hashing
    of names; now the others are imported and the bad one is reported by name, escaped."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write_note(folder, "a.md", "Ward A", "Apixaban for AF on ward A.")
    bad = _bad_name(folder, b"caf\xe9.md", "# Cafe\n\nCaffeine and sleep.\n")
    assert bad in collect_files(folder)
    with pytest.raises(KnowledgeBaseError, match=r"caf\\xe9\.md: the file name is not valid UTF-8"):
        read_document(bad, "user:ana")
    report = tutor.import_path(folder, "ana")
    assert report.added == 1 and len(report.unreadable) == 1
    assert "caf\\xe9.md" in report.unreadable[0] and "0xE9" in report.unreadable[0]
    report.unreadable[0].encode("utf-8")  # printable and storable as it is
    # a folder whose own name is not UTF-8: each file is reported, nothing crashes
    odd = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"d\xffr")))
    odd.mkdir()
    write_note(odd, "b.md", "Ward B", "Gout clinic on Tuesdays.")
    report = tutor.import_path(odd, "ana")
    assert report.added == 0 and len(report.unreadable) == 1
    with pytest.raises(KnowledgeBaseError, match=r"d\\xffr"):
        collect_files(odd / "missing.md")


def test_a_user_name_that_is_not_utf8_cannot_name_a_scope() -> None:
    with pytest.raises(ScopeError, match="0xE9"):
        user_scope("caf\udce9")
    with pytest.raises(ScopeError, match="U\\+D800"):
        scopes_for("\ud800")


def test_a_question_or_user_that_is_not_unicode_is_a_clear_error(tutor: TutorService) -> None:
    """Issue 14 item 6: the window passes text too; nothing is asked nor audited."""
    from backends.text import InvalidTextError

    with pytest.raises(InvalidTextError, match="the question is not valid text"):
        tutor.ask("What is gout \udce9?", "ana")
    with pytest.raises(ScopeError, match="0xE9"):
        tutor.ask("What is gout?", "caf\udce9")
    with pytest.raises(ScopeError, match="0xE9"):
        tutor.retrieve("What is gout?", "caf\udce9")
