"""The second vector (issue 27): Spanish questions are also searched by a multilingual
embedder's chunk vectors, a fourth ranked list in the fusion; English questions never are.

A deterministic "concepts" embedder stands in for USE: it places a Spanish phrase next to the
English note that means it (what a multilingual model does), and nothing else does — so a
note found only through it shows the method at work.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.errors import DimensionMismatchError
from backends.models.chat import ScriptedChat
from backends.models.embedders import Embedder, HashingEmbedder, Matrix, normalise
from backends.progress import Progress
from backends.services import open_store
from backends.tutor import indexing
from backends.tutor.kb import SHARED
from backends.tutor.service import SPANISH_COLLECTION, TutorService, spanish_embedder_for
from tests.backends.tutor.conftest import TutorFactory, write_note

#: a note no other method reaches from the Spanish question below (no shared word, no entity)
NOTE_TITLE = "Quillwort bathing"
NOTE_TEXT = (
    "Quillwort bathing is the old fenland custom of soaking tired feet in peat water at dusk. "
    "Villagers believed the brown water drew out weariness after the harvest."
)
SPANISH = "¿Qué costumbre del pantano alivia los pies cansados?"
ENGLISH = "How is warfarin monitored?"
#: the words a multilingual model would place together (Spanish and English)
CONCEPT = ("quillwort", "pantano")


class ConceptEmbedder(Embedder):
    """Deterministic stand-in for a multilingual embedder, of another dimension than the
    first vector's (384): texts naming :data:`CONCEPT` share one direction."""

    def __init__(self, dimension: int = 64, name: str = "concepts-test") -> None:
        self.dimension = dimension
        self.name = name
        self.texts: list[str] = []
        self._hashing = HashingEmbedder(dimension)

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        matrix = 0.2 * np.asarray(self._hashing.embed_batch(texts), dtype=np.float32)
        for row, text in enumerate(texts):
            if any(word in text.casefold() for word in CONCEPT):
                matrix[row, 0] += 1.0
        return normalise(matrix)


@pytest.fixture
def with_note(tmp_path: Path) -> Path:
    return write_note(tmp_path / "mine", "quillwort.md", NOTE_TITLE, NOTE_TEXT)


def test_a_spanish_question_reaches_a_note_only_the_second_vector_finds(
    make_tutor: TutorFactory, with_note: Path
) -> None:
    first = make_tutor()  # no second vector: today's tutor without it
    first.import_path(with_note, "ana")
    # (the small knowledge base has few chunks: each method's 3 best, the 3 best fused)
    alone = first.retrieve(SPANISH, "ana", k=3, candidates=3)
    assert alone.language == "es" and "multilingual" not in alone.methods
    assert all(p.title != NOTE_TITLE for p in alone.passages)
    first.close()

    second = ConceptEmbedder()
    tutor = make_tutor(spanish_embedder=second)
    tutor.import_path(with_note, "ana")
    found = tutor.retrieve(SPANISH, "ana", k=3, candidates=3)
    ids = {p.chunk_id for p in found.passages if p.title == NOTE_TITLE}
    assert ids, "the second vector brings the note"
    assert found.methods["multilingual"][0] in ids
    for method in ("vector", "keyword", "graph"):
        assert not ids & set(found.methods[method]), method
    passage = next(p for p in found.passages if p.title == NOTE_TITLE)
    assert passage.methods == ("multilingual",)
    # the Spanish question as asked, not its glossary words, is what it embeds
    assert second.texts[-1] == SPANISH


def test_english_questions_do_not_use_the_second_vector(
    make_tutor: TutorFactory, with_note: Path
) -> None:
    second = ConceptEmbedder()
    tutor = make_tutor(spanish_embedder=second)
    tutor.import_path(with_note, "ana")
    embedded = len(second.texts)
    retrieval = tutor.retrieve(ENGLISH, "ana")
    assert retrieval.language == "en"
    assert "multilingual" not in retrieval.methods and "multilingual" not in retrieval.trace
    assert all("multilingual" not in p.methods for p in retrieval.passages)
    assert len(second.texts) == embedded  # not even embedded
    assert tutor.last_spanish_where == {}


def test_the_scope_filter_is_inside_the_second_vectors_query(
    make_tutor: TutorFactory, with_note: Path
) -> None:
    second = ConceptEmbedder()
    tutor = make_tutor(spanish_embedder=second)
    tutor.import_path(with_note, "ana")
    retrieval = tutor.retrieve(SPANISH, "bob", k=10)
    where = {"scope": {"$in": [SHARED, "user:bob"]}}
    assert tutor.last_spanish_where == where
    assert retrieval.trace["multilingual"]["where"] == where
    assert all(p.title != NOTE_TITLE for p in retrieval.passages)
    # one nearest neighbour asked for: ana's note is the nearest of all, yet bob gets a shared
    # chunk — the filter was applied by the search, not to its result afterwards
    hits = tutor.search_spanish_vectors(second.embed(SPANISH), [SHARED, "user:bob"], 1)
    assert len(hits) == 1 and hits[0].payload["scope"] == SHARED
    mine = tutor.search_spanish_vectors(second.embed(SPANISH), [SHARED, "user:ana"], 1)
    assert mine[0].payload["scope"] == "user:ana"
    # forgetting ana removes her chunks from the second vector too
    tutor.forget_user("ana")
    assert all(
        h.payload["scope"] == SHARED
        for h in tutor.search_spanish_vectors(second.embed(SPANISH), [SHARED, "user:ana"], 50)
    )


def test_a_wrong_dimension_second_collection_is_an_explicit_error(
    make_tutor: TutorFactory, config: Config
) -> None:
    tutor = make_tutor(spanish_embedder=ConceptEmbedder(64))
    status = tutor.prepare()
    assert status.spanish_vectors == status.chunks and status.spanish_embedder == "concepts-test"
    with pytest.raises(DimensionMismatchError):
        tutor.search_spanish_vectors(np.ones(32, dtype=np.float32), [SHARED], 3)
    tutor.close()
    # the collection holds 64-d vectors: opening it for 32-d ones is refused, never mixed
    with pytest.raises(DimensionMismatchError):
        open_store(
            "chunks",
            config,
            embedder_name="concepts-test",
            dimension=32,
            collection=SPANISH_COLLECTION,
        )
    # the first collection is another one, untouched by the second's dimension
    first = open_store("chunks", config, embedder_name="hashing-384", dimension=384)
    try:
        assert first.count() == status.chunks
    finally:
        first.close()
    # the tutor with another second embedder rebuilds its own (derived) index: nothing lost
    rebuilt = make_tutor(spanish_embedder=ConceptEmbedder(32, "concepts-32"))
    again = rebuilt.prepare()
    assert again.spanish_vectors == again.chunks and again.vectors == again.chunks


def test_a_data_dir_without_the_second_vector_builds_it_at_first_start(
    make_tutor: TutorFactory, with_note: Path
) -> None:
    before = make_tutor()
    before.prepare()
    before.import_path(with_note, "ana")
    chunks = before.status().chunks
    before.close()

    second = ConceptEmbedder()
    tutor = make_tutor(spanish_embedder=second)
    seen: list[tuple[int, int, str]] = []
    status = tutor.prepare(Progress(callback=lambda d, t, m: seen.append((d, t, m))))
    assert status.chunks == chunks and status.vectors == chunks
    assert status.spanish_vectors == chunks
    label = indexing._("embedding the knowledge base (multilingual)")
    assert any(m == label and d == t == chunks for d, t, m in seen)
    assert not any(m == "embedding the knowledge base" for _, _, m in seen)  # first kept
    assert any(p.title == NOTE_TITLE for p in tutor.retrieve(SPANISH, "ana", k=10).passages)
    # already built: the next start embeds nothing
    embedded = len(second.texts)
    tutor.prepare()
    assert len(second.texts) == embedded


def test_the_second_vector_is_chosen_by_the_configuration(tmp_path: Path) -> None:
    assert spanish_embedder_for(Config(home=tmp_path, embedder="hashing")) is None
    assert spanish_embedder_for(Config(home=tmp_path, tutor_spanish_embedder="none")) is None
    chosen = spanish_embedder_for(
        Config(home=tmp_path, embedder="hashing", tutor_spanish_embedder="hashing:128")
    )
    assert chosen is not None and chosen.dimension == 128


def test_an_unusable_second_vector_leaves_spanish_questions_to_the_other_methods(
    config: Config, audit: AuditService, small_kb: Path
) -> None:
    from backends.errors import ModelUnavailableError

    def broken() -> Embedder:
        raise ModelUnavailableError("the multilingual embedder is not installed")

    tutor = TutorService(
        config,
        embedder=HashingEmbedder(384),
        chat=ScriptedChat(),
        audit=audit,
        kb_dir=small_kb,
        spanish_embedder=broken,
    )
    try:
        status = tutor.prepare()
        assert status.vectors == status.chunks and status.spanish_vectors == 0
        assert "not installed" in status.spanish_message
        retrieval = tutor.retrieve("¿Cómo se controla la warfarina?", "ana")
        assert retrieval.passages and retrieval.methods["multilingual"] == []
        assert any(line.startswith("multilingual:") for line in retrieval.degraded)
        assert "multilingual" not in tutor.retrieve(ENGLISH, "ana").methods
    finally:
        tutor.close()


def test_the_old_data_dir_fixture_opens_and_builds_the_second_vector(
    tmp_path: Path, audit: AuditService, small_kb: Path
) -> None:
    import hashlib
    import shutil

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "datadir-0.1"
    home = tmp_path / "old"
    shutil.copytree(fixture, home)
    for path in home.rglob("*"):  # git keeps no modes: as the app made them
        path.chmod(0o700 if path.is_dir() else 0o600)
    others = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in home.iterdir()
        if p.is_file() and not p.name.startswith("tutor")
    }
    config = Config(home=home, embedder="hashing", chat_model="scripted").validated()
    seen: list[str] = []
    tutor = TutorService(
        config,
        embedder=HashingEmbedder(384),
        chat=ScriptedChat(),
        audit=audit,
        kb_dir=small_kb,
        spanish_embedder=ConceptEmbedder(),
    )
    try:
        status = tutor.prepare(Progress(callback=lambda d, t, m: seen.append(m)))
        assert status.chunks > 0 and status.vectors == status.chunks == status.spanish_vectors
        assert status.graph_ok
        assert indexing._("embedding the knowledge base (multilingual)") in seen
        assert tutor.retrieve("¿Cómo se controla la warfarina?", "ana").methods["multilingual"]
    finally:
        tutor.close()
    # the other assistants' files are not touched
    assert others == {
        name: hashlib.sha256((home / name).read_bytes()).hexdigest() for name in others
    }


def test_building_the_second_vector_resumes_after_a_cancel(make_tutor: TutorFactory) -> None:
    from backends.errors import CancelledError

    before = make_tutor()
    chunks = before.prepare().chunks
    before.close()

    second = ConceptEmbedder()
    tutor = make_tutor(spanish_embedder=second)
    label = indexing._("embedding the knowledge base (multilingual)")
    progress = Progress()

    def cancel_after_a_batch(done: int, total: int, message: str) -> None:
        if message == label and done > 0:
            progress.cancel()

    progress.callback = cancel_after_a_batch
    with pytest.raises(CancelledError):
        tutor.prepare(progress)
    first_run = len(second.texts)
    assert 0 < first_run < chunks
    status = tutor.prepare()
    assert status.spanish_vectors == chunks
    assert len(second.texts) == chunks  # the rest only: nothing embedded twice
