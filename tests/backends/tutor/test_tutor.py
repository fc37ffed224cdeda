"""Turns: citations, retrieval-only mode, exactly one audit record each, degraded graph."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.errors import StoreUnavailableError
from backends.models.chat import RetrievalOnlyChat, ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.progress import Progress
from backends.stores.audit_log import Filter
from backends.stores.graph.bolt import BoltGraph
from backends.tutor.kb import ScopeError, shipped_documents
from backends.tutor.service import (
    AUDIT_EVENT,
    EXTRACTIVE,
    GENERATED,
    NOT_COVERED,
    EmptyQuestionError,
    TurnInterrupted,
    TutorService,
)
from tests.backends.tutor.conftest import SMALL_NOTES, TutorFactory, make_small_kb
from tests.harness.servers import free_port

QUESTION = "Which blood test is used to monitor warfarin therapy?"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def with_paracetamol(tmp_path: Path) -> Path:
    return make_small_kb(tmp_path / "with-paracetamol", (*SMALL_NOTES, "paracetamol"))


def turns(audit: AuditService) -> list:
    return list(audit.entries(Filter(event_type=AUDIT_EVENT)))


def test_an_answer_every_sentence_of_which_is_supported_is_shown_with_its_citations(
    make_tutor: TutorFactory,
) -> None:
    # the model cites [2] and [9]; the shown answer cites the passage that states it
    chat = ScriptedChat(replies=["The INR is mainly used for monitoring warfarin [2] [9]."])
    tutor = make_tutor(chat)
    turn = tutor.ask(QUESTION, "ana")
    assert turn.grounding is not None and turn.grounding.mode == GENERATED
    inr = next(p.number for p in turn.passages if p.doc_id == "kb/inr")
    assert turn.answer == f"The INR is mainly used for monitoring warfarin [{inr}]."
    assert turn.cited == (inr,)
    assert len(turn.passages) == 5
    assert {p.doc_id for p in turn.passages[:2]} <= {"kb/inr", "kb/warfarin"}
    for passage in turn.passages:
        assert passage.reasons and passage.why()
    prompt = chat.calls[0]
    assert prompt.user == QUESTION
    assert "square brackets" in prompt.system and "not for clinical decisions" in prompt.system
    assert prompt.stop and prompt.temperature is None  # the tutor's settings give it (0.1)
    assert prompt.context[0].startswith("[1] ")
    assert turn.passages[0].text.split()[0] in prompt.context[0]


def test_an_answer_its_passages_contradict_is_never_shown_the_quoted_one_is(
    make_tutor: TutorFactory, audit: AuditService, tmp_path: Path
) -> None:
    """The reproduction of issue 15: the right note is found, the model names the wrong
    antidote; the shown answer quotes the note (acetylcysteine, cited) and the model's
    sentence is recorded as unsupported."""
    wrong = "The antidote for paracetamol overdose is NAPQI. It was found in 2014 in Moscow."
    tutor = make_tutor(ScriptedChat(replies=[wrong]), kb_dir=with_paracetamol(tmp_path))
    turn = tutor.ask("What is the antidote for paracetamol overdose?", "ana")
    g = turn.grounding
    assert g is not None and g.mode == EXTRACTIVE and g.generated == wrong
    assert "acetylcysteine" in turn.answer and "NAPQI" not in turn.answer
    para = next(p.number for p in turn.passages if p.doc_id == "kb/paracetamol")
    assert f"[{para}]" in turn.answer and para in turn.cited
    assert [s.supported for s in g.sentences] == [False, False]
    assert "not found in the passages" in g.reason
    (record,) = turns(audit)
    personal = audit.reveal(record).personal
    assert personal is not None and personal["answer"] == turn.answer
    assert personal["unsupported"] == [s.text for s in g.sentences]
    assert personal["generated"] == wrong
    assert record.data["grounding"]["mode"] == EXTRACTIVE
    assert record.data["grounding"]["unsupported"] == 2
    assert "NAPQI" not in record.record and "acetylcysteine" not in record.record


def test_a_question_the_notes_do_not_cover_is_refused_without_asking_the_model(
    make_tutor: TutorFactory, audit: AuditService
) -> None:
    chat = ScriptedChat(replies=["Appendicitis is treated by appendicectomy [1]."])
    tutor = make_tutor(chat)
    turn = tutor.ask("How is acute appendicitis treated?", "ana")
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED
    assert "do not cover" in turn.answer and turn.cited == ()
    assert chat.calls == []  # the model was not asked for an answer
    (record,) = turns(audit)
    assert record.data["cited"] == [] and record.data["grounding"]["covered"] is False
    spanish = tutor.ask("¿Cómo se trata la apendicitis aguda?", "ana")
    assert spanish.grounding is not None and spanish.grounding.language == "es"
    assert spanish.grounding.mode == NOT_COVERED and "no tratan" in spanish.answer


def test_a_spanish_question_finds_the_english_note_and_says_the_quotes_are_english(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    tutor = make_tutor(
        ScriptedChat(replies=["El antídoto es el NAPQI."]), kb_dir=with_paracetamol(tmp_path)
    )
    turn = tutor.ask("¿Cuál es el antídoto de la sobredosis de paracetamol?", "ana")
    g = turn.grounding
    assert g is not None and g.language == "es" and g.mode == EXTRACTIVE
    assert "acetylcysteine" in turn.answer and "inglés" in g.heading
    assert turn.passages[0].doc_id == "kb/paracetamol"


def test_a_true_answer_to_another_question_is_not_shown_as_the_answer(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    """Every sentence stands in the note, but none says what was asked: the quotes that do
    answer are shown instead."""
    aside = "The plasma paracetamol level is measured four hours or more after a single ingestion."
    tutor = make_tutor(ScriptedChat(replies=[aside]), kb_dir=with_paracetamol(tmp_path))
    turn = tutor.ask("What is the antidote for paracetamol overdose?", "ana")
    g = turn.grounding
    assert g is not None and g.mode == EXTRACTIVE and all(s.supported for s in g.sentences)
    assert "does not come from the passage" in g.reason and "acetylcysteine" in turn.answer


def test_an_answer_that_only_repeats_the_question_is_not_shown_under_the_checked_heading(
    make_tutor: TutorFactory,
) -> None:
    """Found by a QA pass: "sepsis signs" answered "Sepsis signs [1]." under the green
    heading. Words the question already holds state nothing."""
    tutor = make_tutor(ScriptedChat(replies=["The effect of warfarin is monitored with the INR."]))
    turn = tutor.ask("Is the effect of warfarin monitored with the INR?", "ana")
    g = turn.grounding
    assert g is not None and g.mode == EXTRACTIVE and "repeats the question" in g.reason
    assert [s.reason for s in g.sentences] == ["it only repeats the question"]


def test_a_users_own_note_is_never_named_in_clear_in_the_audit_log(
    make_tutor: TutorFactory, audit: AuditService, tmp_path: Path
) -> None:
    """Found by a QA pass: own-note chunk ids are sha256(scope + path), unsalted, so after
    erasure a guessed name and path linked the turns to the person."""
    note = tmp_path / "mine.md"
    note.write_text("# Ward rota\n\nZebrafish rota on ward seven.\n", encoding="utf-8")
    tutor = make_tutor()
    tutor.prepare()
    tutor.import_path(note, "erin")
    turn = tutor.ask("zebrafish rota on ward seven", "erin")
    own = [p.chunk_id for p in turn.passages if p.scope != "shared"]
    assert own
    (record,) = turns(audit)
    assert all(chunk not in record.record for chunk in own)
    assert "own" in record.data["chunks"]
    personal = audit.reveal(record).personal
    assert personal is not None and personal["own_chunks"] == own
    audit.forget("erin")
    assert all(chunk not in line for chunk in own for line in export_lines(audit))


def test_a_quote_about_the_subject_but_not_what_was_asked_is_no_answer(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    """Found by a QA pass: "the half-life of amoxicillin" was answered by levothyroxine's
    "long half-life of about a week", then by amoxicillin's definition."""
    kb = make_small_kb(tmp_path / "kb2", ("amoxicillin", "levothyroxine", "asthma"))
    tutor = make_tutor(ScriptedChat(replies=["It is about a week."]), kb_dir=kb)
    turn = tutor.ask("What is the half-life of amoxicillin?", "ana")
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED
    assert "week" not in turn.answer


def test_a_lay_name_of_an_entity_is_searched_by_the_notes_name(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    kb = make_small_kb(tmp_path / "kb3", ("acute-coronary-syndrome", "asthma", "gout"))
    tutor = make_tutor(kb_dir=kb)
    retrieval = tutor.retrieve("what do u give for a heart attack", "ana")
    assert retrieval.passages[0].doc_id == "kb/acute-coronary-syndrome"
    assert "acute coronary syndrome" in retrieval.graph.seeds


def export_lines(audit: AuditService) -> list[str]:
    import io

    buffer = io.StringIO()
    audit.export(buffer, "jsonl")
    return buffer.getvalue().splitlines()


def test_a_checked_english_answer_to_a_spanish_question_says_it_is_english(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    reply = "The antidote, intravenous acetylcysteine, replenishes glutathione [1]."
    tutor = make_tutor(ScriptedChat(replies=[reply]), kb_dir=with_paracetamol(tmp_path))
    turn = tutor.ask("¿Cuál es el antídoto de la sobredosis de paracetamol?", "ana")
    g = turn.grounding
    assert g is not None and g.mode == GENERATED and g.language == "es"
    assert g.heading.startswith("Respuesta en inglés") and "acetylcysteine" in turn.answer


def test_retrieval_only_mode_shows_the_quoted_answer(make_tutor: TutorFactory) -> None:
    tutor = make_tutor(RetrievalOnlyChat("no model in the test"))
    turn = tutor.ask(QUESTION, "ana")
    assert turn.retrieval_only and turn.grounding is not None
    assert turn.grounding.mode == EXTRACTIVE and "no chat model" in turn.grounding.heading
    assert "warfarin" in turn.answer.lower() and turn.cited
    quoted = {q.text for q in turn.grounding.quotes}
    for number in turn.cited:
        passage = turn.passages[number - 1]
        assert any(" ".join(q.split()) in " ".join(passage.text.split()) for q in quoted)


def test_every_turn_leaves_exactly_one_audit_record_and_the_chain_verifies(
    tutor: TutorService, audit: AuditService
) -> None:
    questions = [
        QUESTION,
        "What is the first treatment of anaphylaxis?",
        "Side effects of metformin?",
    ]
    done = [tutor.ask(q, "ana") for q in questions]
    tokens: list[str] = []
    stopping = tutor.ask(
        "What is asthma?", "bob", on_token=tokens.append, should_stop=lambda: bool(tokens)
    )
    assert stopping.stopped and len(tokens) == 1
    records = turns(audit)
    assert len(records) == 4 == len(list(audit.entries()))  # one per turn, nothing else
    assert [r.seq for r in records] == [t.audit_seq for t in [*done, stopping]]
    assert audit.verify().ok
    first, turn = records[0], done[0]
    data = first.data
    # nothing that identifies the question stands in clear (a hash of it could be confirmed
    # by hashing a guess, after erasure too): it is all sealed
    assert "question_sha256" not in data and "answer_sha256" not in data
    assert sha(QUESTION) not in first.record and sha(turn.answer) not in first.record
    assert data["chunks"] == [p.chunk_id for p in turn.passages]
    assert data["model"] == "scripted" and data["retrieval_only"] is False
    assert data["degraded"] == [] and data["stopped"] is False
    assert records[3].data["stopped"] is True
    # the user is a pseudonym; the question itself is sealed with their key
    assert first.pseudonym and "ana" not in first.record and QUESTION not in first.record
    assert records[0].pseudonym == records[1].pseudonym != records[3].pseudonym
    personal = audit.reveal(first).personal
    assert personal is not None and personal["question"] == QUESTION
    assert personal["answer"] == turn.answer and turn.generated == personal["generated"]
    # erasing the user makes their questions unreadable; the chain still verifies
    audit.forget("ana")
    assert audit.reveal(turns(audit)[0]).status == "erased"
    assert audit.verify().ok


def test_a_failed_retrieval_appends_nothing(tutor: TutorService, audit: AuditService) -> None:
    with pytest.raises(ScopeError):
        tutor.ask(QUESTION, "   ")
    with pytest.raises(EmptyQuestionError):  # an environment error, not a ValueError
        tutor.ask("   ", "ana")
    assert turns(audit) == []


def test_graph_server_down_the_tutor_still_answers_and_says_so(
    make_tutor: TutorFactory, audit: AuditService
) -> None:
    down = BoltGraph(f"bolt://127.0.0.1:{free_port()}", namespace="down", timeout=0.5)
    tutor = make_tutor(graph=down)
    started = time.perf_counter()
    status = tutor.prepare()
    assert not status.graph_ok and "not reachable" in status.graph_message
    turn = tutor.ask(QUESTION, "ana")
    assert time.perf_counter() - started < 30
    assert turn.generated.startswith("Scripted answer to:") and turn.passages
    assert turn.grounding is not None and turn.grounding.mode == EXTRACTIVE
    assert any(line.startswith("graph:") and "unavailable" in line for line in turn.degraded)
    assert turn.retrieval.methods["graph"] == []
    assert all(set(p.methods) <= {"vector", "keyword"} for p in turn.passages)
    assert {p.doc_id for p in turn.passages[:2]} & {"kb/inr", "kb/warfarin"}
    assert turns(audit)[-1].data["degraded"] == ["graph"]
    assert audit.verify().ok


def test_prepare_is_idempotent_and_reports_progress(make_tutor: TutorFactory) -> None:
    tutor = make_tutor()
    seen: list[tuple[int, int, str]] = []
    status = tutor.prepare(Progress(callback=lambda d, t, m: seen.append((d, t, m))))
    assert status.imported is not None and status.imported.added == status.documents
    assert status.vectors == status.chunks and status.graph_ok and status.graph_relations > 0
    assert any(m == "embedding the knowledge base" and d == t for d, t, m in seen)
    again = tutor.prepare()
    assert again.imported is not None and again.imported.unchanged == again.documents
    assert (again.chunks, again.vectors, again.graph_relations) == (
        status.chunks,
        status.vectors,
        status.graph_relations,
    )


def test_the_derived_stores_are_rebuilt_for_a_new_embedder_or_a_lost_graph(
    make_tutor: TutorFactory, config: Config, small_kb: Path, audit: AuditService
) -> None:
    first = make_tutor()
    chunks = first.prepare().chunks
    first.close()

    class OtherHashing(HashingEmbedder):  # same dimension, another model: must not be mixed
        def __init__(self) -> None:
            super().__init__(384)
            self.name = "other-hashing-384"

    for embedder in (HashingEmbedder(256), OtherHashing()):
        tutor = TutorService(
            config, embedder=embedder, chat=ScriptedChat(), audit=audit, kb_dir=small_kb
        )
        try:
            status = tutor.prepare()
            assert (status.vectors, status.embedder) == (chunks, embedder.name)
            assert tutor.retrieve(QUESTION, "ana").passages
        finally:
            tutor.close()
    (config.home / "tutor-graph.sqlite3").unlink()
    tutor = make_tutor()
    assert tutor.prepare().graph_relations > 0


def test_importing_a_users_folder(tutor: TutorService, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Ward A\n\nApixaban for AF on ward A.\n", encoding="utf-8")
    (folder / "b.txt").write_text("Gout clinic on Tuesdays.\n", encoding="utf-8")
    (folder / "bad.md").write_bytes(b"\xff\xfe\x00")
    report = tutor.import_path(folder, "ana")
    assert (report.added, len(report.unreadable)) == (2, 1) and "not UTF-8" in report.unreadable[0]
    assert report.skipped == []
    assert tutor.import_path(folder, "ana").unchanged == 2
    assert tutor.users() == ["ana"]
    status = tutor.status()
    assert status.by_scope["user:ana"] == (2, 2) and status.users == ("ana",)


def test_the_whole_shipped_corpus_imports_and_answers(config: Config, audit: AuditService) -> None:
    tutor = TutorService(config, embedder=HashingEmbedder(384), chat=ScriptedChat(), audit=audit)
    try:
        status = tutor.prepare()
        assert status.documents == len(shipped_documents()) >= 40
        assert status.vectors == status.chunks >= 3 * status.documents
        assert status.graph_ok and status.entities >= 100
        turn = tutor.ask("What is the antidote for paracetamol overdose?", "ana")
        assert turn.passages[0].doc_id == "kb/paracetamol"
        assert "acetylcysteine" in turn.passages[0].text
        assert json.dumps(turns(audit)[0].data)
    finally:
        tutor.close()


class CountingEmbedder(HashingEmbedder):
    def __init__(self, name: str = "") -> None:
        super().__init__(384)
        self.name = name or self.name
        self.texts = 0

    def embed_batch(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed_batch(texts)


def test_precomputed_vectors_are_used_only_for_the_embedder_that_made_them(
    config: Config, audit: AuditService, small_kb: Path
) -> None:
    from backends.tutor import shipped_vectors

    shipped_vectors.write(small_kb, HashingEmbedder(384))
    chunks = len(shipped_vectors.load(small_kb, HashingEmbedder(384)))
    assert chunks > 10

    def prepare(embedder: CountingEmbedder, home: str) -> int:
        cfg = Config(home=config.home / home, embedder="hashing", chat_model="scripted")
        tutor = TutorService(
            cfg, embedder=embedder, chat=ScriptedChat(), audit=audit, kb_dir=small_kb
        )
        try:
            status = tutor.prepare()
            embedded = embedder.texts
            assert status.vectors == chunks
            assert tutor.retrieve(QUESTION, "ana").passages[0].doc_id in {"kb/inr", "kb/warfarin"}
        finally:
            tutor.close()
        return embedded

    assert prepare(CountingEmbedder(), "same") == 1  # only the probe sentence
    # same name, another model (different vectors): the probe disagrees, everything is embedded
    impostor = CountingEmbedder()
    impostor.dimension = 384
    impostor.embed_batch = lambda texts: -HashingEmbedder(384).embed_batch(texts)  # type: ignore[method-assign]
    assert shipped_vectors.load(small_kb, impostor) == {}
    assert prepare(CountingEmbedder("other-model"), "other") == chunks
    (small_kb / shipped_vectors.FILE).write_bytes(b"not a zip file")
    assert shipped_vectors.load(small_kb, HashingEmbedder(384)) == {}


# -- interrupted turns, degraded vectors, bad input, a user's notes deleted --------------------


class InterruptedChat(ScriptedChat):
    """Streams a few words, then the user presses Ctrl+C (what SIGINT raises mid-stream)."""

    def stream(self, prompt, should_stop=lambda: False):  # type: ignore[no-untyped-def]
        yield "Warfarin is "
        yield "monitored "
        raise KeyboardInterrupt


def test_ctrl_c_while_the_answer_streams_is_audited_as_a_stopped_turn(
    make_tutor: TutorFactory, audit: AuditService
) -> None:
    tutor = make_tutor(InterruptedChat())
    tokens: list[str] = []
    with pytest.raises(TurnInterrupted) as raised:
        tutor.ask(QUESTION, "ana", on_token=tokens.append)
    assert isinstance(raised.value, KeyboardInterrupt)  # still ends the program as Ctrl+C does
    turn = raised.value.turn
    assert turn.stopped and turn.generated == "Warfarin is monitored " == "".join(tokens)
    assert turn.grounding is not None and turn.grounding.mode == EXTRACTIVE
    assert "stopped" in turn.grounding.heading
    (record,) = turns(audit)
    assert record.seq == turn.audit_seq
    assert record.data["stopped"] is True
    assert record.data["chunks"] == [p.chunk_id for p in turn.passages]
    personal = audit.reveal(record).personal
    assert personal is not None and personal["question"] == QUESTION
    assert personal["generated"] == "Warfarin is monitored " and personal["answer"] == turn.answer
    assert audit.verify().ok


def test_a_reader_that_leaves_the_pipe_stops_the_turn_and_it_is_audited(
    make_tutor: TutorFactory, audit: AuditService
) -> None:
    tutor = make_tutor(ScriptedChat(replies=["one two three four"]))
    seen: list[str] = []

    def on_token(piece: str) -> None:  # `ask tutor | head -c 5`: the second write fails
        if seen:
            raise BrokenPipeError(32, "Broken pipe")
        seen.append(piece)

    with pytest.raises(BrokenPipeError):
        tutor.ask(QUESTION, "ana", on_token=on_token)
    (record,) = turns(audit)
    assert record.data["stopped"] is True
    personal = audit.reveal(record).personal
    assert personal is not None and personal["generated"] == "one two "


def test_an_interrupt_before_the_model_is_asked_writes_nothing(
    make_tutor: TutorFactory, audit: AuditService
) -> None:
    class Interrupting(HashingEmbedder):
        def embed(self, text):  # type: ignore[no-untyped-def]
            raise KeyboardInterrupt

    tutor = make_tutor()
    tutor.prepare()
    tutor.index._embedder = lambda: Interrupting(384)  # the question's embedding is interrupted
    with pytest.raises(KeyboardInterrupt) as raised:
        tutor.ask(QUESTION, "ana")
    assert not isinstance(raised.value, TurnInterrupted)
    assert turns(audit) == []


def test_vector_store_down_the_tutor_still_answers_and_says_so(
    tmp_path: Path, audit: AuditService, small_kb: Path
) -> None:
    """A Chroma server on a closed loopback port (connection refused, short timeouts)."""
    config = Config(
        home=tmp_path / "down",
        embedder="hashing",
        chat_model="scripted",
        chroma_url=f"http://127.0.0.1:{free_port()}",
        network_timeout=0.5,
    ).validated()
    tutor = TutorService(
        config, embedder=HashingEmbedder(384), chat=ScriptedChat(), audit=audit, kb_dir=small_kb
    )
    try:
        started = time.perf_counter()
        status = tutor.prepare()
        assert not status.vector_ok and "not reachable" in status.vector_message
        assert status.vectors == 0 and status.chunks > 0 and status.graph_ok
        turn = tutor.ask(QUESTION, "ana")
        assert time.perf_counter() - started < 30
        assert turn.passages and turn.retrieval.methods["vector"] == []
        (line,) = turn.degraded
        assert line.startswith("vector: vector search is unavailable")
        assert "answered from keyword and graph retrieval only" in line
        assert all(set(p.methods) <= {"keyword", "graph"} for p in turn.passages)
        assert {p.doc_id for p in turn.passages[:2]} & {"kb/inr", "kb/warfarin"}
        assert turns(audit)[-1].data["degraded"] == ["vector"]

        # the graph down as well: keyword retrieval alone still answers
        down = BoltGraph(f"bolt://127.0.0.1:{free_port()}", namespace="down", timeout=0.5)
        tutor.index._graph = down
        tutor.index._graph_synced = False
        tutor.index._retry_at["graph"] = 0.0
        turn = tutor.ask(QUESTION, "ana")
        assert sorted(turn.retrieval.degraded_methods) == ["graph", "vector"]
        assert all(line.endswith("answered from keyword retrieval only") for line in turn.degraded)
        assert turn.passages and turns(audit)[-1].data["degraded"] == ["vector", "graph"]
        # an import goes on: the knowledge base is the source of truth, vectors follow later
        note = tmp_path / "mine.md"
        note.write_text("# Mine\n\nZebrafish rota.\n", encoding="utf-8")
        assert tutor.import_path(note, "ana").added == 1
        assert tutor.retrieve("zebrafish", "ana").passages[0].title == "Mine"
        assert audit.verify().ok
    finally:
        tutor.close()


def test_the_vector_store_is_tried_again_on_a_later_turn(
    make_tutor: TutorFactory, config: Config, audit: AuditService
) -> None:
    """Local Chroma made unusable (its folder is a file), then usable again: the next turn
    after the retry delay resynchronises it and vector search comes back."""
    config.chroma_path.write_text("not a folder", encoding="utf-8")
    tutor = make_tutor()
    status = tutor.prepare()
    assert not status.vector_ok and status.vector_message
    assert tutor.ask(QUESTION, "ana").retrieval.degraded_methods == ("vector",)
    config.chroma_path.unlink()
    tutor.index._retry_at["vector"] = 0.0  # instead of waiting RETRY_SECONDS
    turn = tutor.ask(QUESTION, "ana")
    assert turn.degraded == () and turn.retrieval.methods["vector"]
    assert tutor.status().vector_ok and tutor.status().vectors == status.chunks


def test_a_question_does_not_wait_for_another_process_indexing(
    make_tutor: TutorFactory, config: Config, audit: AuditService
) -> None:
    """While another process holds the indexing lock, a turn that would resync the vectors
    answers at once from the other methods (and says why) instead of queueing behind it."""
    import fcntl
    import os

    from backends.tutor.service import LOCK_FILE

    config.chroma_path.write_text("not a folder", encoding="utf-8")
    tutor = make_tutor()
    tutor.prepare()
    config.chroma_path.unlink()
    tutor.index._retry_at["vector"] = 0.0
    fd = os.open(config.path(LOCK_FILE), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # "another process" (another open file description)
        turn = tutor.ask(QUESTION, "ana")  # waiting (600 s) would trip pytest-timeout
        assert turn.retrieval.degraded_methods == ("vector",)
        assert "another Custodia process is indexing" in " ".join(turn.degraded)
    finally:
        os.close(fd)
    tutor.index._retry_at["vector"] = 0.0
    assert tutor.ask(QUESTION, "ana").degraded == ()  # lock released: resynced


@pytest.mark.parametrize("k", [0, -1, -3, 21, True, 2.0])
def test_k_must_be_a_positive_whole_number(
    tutor: TutorService, audit: AuditService, k: object
) -> None:
    with pytest.raises(ValueError, match="k must be a whole number"):
        tutor.ask(QUESTION, "ana", k=k)  # type: ignore[arg-type]
    assert turns(audit) == []
    assert len(tutor.ask(QUESTION, "ana", k=1).passages) == 1


def test_a_data_dir_that_cannot_be_created_is_an_environment_error(
    tmp_path: Path, audit: AuditService, small_kb: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    config = Config(home=blocker / "custodia", embedder="hashing", chat_model="scripted")
    tutor = TutorService(
        config, embedder=HashingEmbedder(384), chat=ScriptedChat(), audit=audit, kb_dir=small_kb
    )
    try:
        with pytest.raises(StoreUnavailableError, match="cannot create the data folder"):
            tutor.prepare()
        with pytest.raises(StoreUnavailableError, match="cannot create the data folder"):
            tutor.ask(QUESTION, "ana")
    finally:
        tutor.close()
    assert turns(audit) == []


def test_importing_unreadable_empty_and_emptied_files(tutor: TutorService, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "bad.md").write_bytes(b"\xff\xfe\x00")
    (folder / "empty.md").write_text("", encoding="utf-8")
    (folder / "title-only.md").write_text("# Just a title\n\n", encoding="utf-8")
    report = tutor.import_path(folder / "bad.md", "ana")
    assert report.imported == 0 and len(report.unreadable) == 1
    assert "not UTF-8" in report.unreadable[0] and "1 unreadable" in report.line()
    report = tutor.import_path(folder, "ana")
    assert (report.added, report.imported) == (0, 0)
    assert sorted(Path(s.split(":")[0]).name for s in report.skipped) == [
        "empty.md",
        "title-only.md",
    ]
    assert "2 skipped (empty)" in report.line() and tutor.users() == []
    # a note imported, then emptied: its passages go
    note = folder / "later.md"
    note.write_text("# Later\n\nZebrafish rota on Mondays.\n", encoding="utf-8")
    assert tutor.import_path(note, "ana").added == 1
    note.write_text("", encoding="utf-8")
    report = tutor.import_path(note, "ana")
    assert report.removed == 1 and report.chunks_removed and tutor.users() == []
    assert not tutor.retrieve("zebrafish rota", "ana").methods["keyword"]


def test_an_empty_user_never_means_the_shared_corpus(tutor: TutorService, tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("# Mine\n\nZebrafish rota.\n", encoding="utf-8")
    for blank in ("", "   "):
        with pytest.raises(ScopeError):
            tutor.import_path(note, blank)
    before = tutor.status().by_scope
    assert tutor.import_path(note, " ana ").scope == "user:ana"  # stripped, as `ask` does
    assert tutor.import_path(note, None).scope == "shared"  # None (no --user): shared
    assert tutor.status().by_scope["shared"][0] == before["shared"][0] + 1


def test_forgetting_a_users_notes_removes_them_from_every_store(
    tutor: TutorService, tmp_path: Path
) -> None:
    for user in ("ana", "bob"):
        note = tmp_path / user / "rota.md"
        note.parent.mkdir()
        note.write_text(
            f"# {user} rota\n\nZebrafish rota: warfarin and gout clinic on Mondays.\n",
            encoding="utf-8",
        )
        tutor.import_path(note, user)
    vectors = tutor.vectors.count()
    assert tutor.graph.counts().relations.get("user:ana")
    assert tutor.graph.digest("user:ana")

    done = tutor.forget_user(" ana ")
    assert (done.user, done.scope, done.documents, done.chunks) == ("ana", "user:ana", 1, 1)
    assert done.pending == ()
    assert tutor.users() == ["bob"]
    assert tutor.vectors.count() == vectors - 1
    assert not tutor.vectors.collection.get(where={"scope": "user:ana"})["ids"]
    assert "user:ana" not in tutor.graph.counts().relations
    assert tutor.graph.digest("user:ana") is None
    assert tutor.retrieve("zebrafish rota", "ana").passages[0].scope == "shared"
    assert tutor.retrieve("zebrafish rota", "bob").passages[0].scope == "user:bob"
    assert tutor.forget_user("ana").documents == 0  # again: nothing left, no error
    with pytest.raises(ScopeError):
        tutor.forget_user("  ")


def test_forgetting_a_users_notes_with_the_graph_down_finishes_at_the_next_sync(
    make_tutor: TutorFactory, config: Config, tmp_path: Path
) -> None:
    tutor = make_tutor()
    tutor.prepare()
    note = tmp_path / "rota.md"
    note.write_text("# Rota\n\nWarfarin and gout clinic.\n", encoding="utf-8")
    tutor.import_path(note, "ana")
    tutor.close()
    down = BoltGraph(f"bolt://127.0.0.1:{free_port()}", namespace="down", timeout=0.5)
    offline = make_tutor(graph=down)
    done = offline.forget_user("ana")
    assert done.documents == 1 and len(done.pending) == 1
    assert done.pending[0].startswith("graph:")
    offline.close()
    again = make_tutor()  # the embedded graph again: it still holds ana's relations
    assert again.graph.counts().relations.get("user:ana")
    again.prepare()
    assert "user:ana" not in again.graph.counts().relations
    assert again.graph.digest("user:ana") is None


@pytest.mark.parametrize(
    "question",
    ["what do u give for a heart attack", "What is given for a heart attack?"],
)
def test_a_lay_question_is_weighed_in_the_notes_words(
    make_tutor: TutorFactory, tmp_path: Path, question: str
) -> None:
    """No note says "heart attack" or "give": the question is weighed as one about the
    treatment of acute coronary syndrome, the note's words, and answered from it (a QA pass
    found it refused as not covered)."""
    kb = make_small_kb(tmp_path / "with-acs", (*SMALL_NOTES, "acute-coronary-syndrome"))
    tutor = make_tutor(ScriptedChat(replies=["Give rest."]), kb_dir=kb)
    turn = tutor.ask(question, "ana")
    assert turn.grounding is not None and turn.grounding.mode == EXTRACTIVE
    assert "aspirin" in turn.answer
    assert "treatment" in turn.retrieval.asked and "coronary" in turn.retrieval.asked


def test_a_dose_question_is_answered_only_by_a_number_with_its_unit(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    """The UTI note names nitrofurantoin and a number, "avoided when the eGFR is below 45",
    but gives no dose: not covered (a near miss of the evaluation set). The anaphylaxis note
    gives adrenaline's dose in mg: covered."""
    kb = make_small_kb(tmp_path / "with-uti", (*SMALL_NOTES, "urinary-tract-infection"))
    tutor = make_tutor(ScriptedChat(replies=["Take 100 mg."] * 2), kb_dir=kb)
    missed = tutor.ask(
        "What dose of nitrofurantoin is used for uncomplicated cystitis, and for how many days?",
        "ana",
    )
    assert missed.grounding is not None and missed.grounding.mode == NOT_COVERED
    dose = tutor.ask("What dose of adrenaline does an adult get for anaphylaxis?", "ana")
    assert dose.grounding is not None and dose.grounding.mode == EXTRACTIVE
    assert "0.5 mg" in dose.answer


def test_a_question_asking_why_a_dose_changes_is_not_an_amount_question(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    """ "Why are the doses reduced…" asks for a reason: a quote without a dose answers it (the
    amount rule refused it; found by the follow-up evaluation, thread f013)."""
    kb = make_small_kb(tmp_path / "with-heparin", (*SMALL_NOTES, "heparin"))
    tutor = make_tutor(ScriptedChat(replies=["Because."] * 2), kb_dir=kb)
    first = tutor.ask("How is low-molecular-weight heparin given?", "ana")
    turn = tutor.ask(
        "Why are the doses reduced in kidney impairment?",
        "ana",
        earlier=first.retrieval.understood,
    )
    assert turn.grounding is not None and turn.grounding.mode == EXTRACTIVE
    assert "cleared by the kidneys" in turn.answer
