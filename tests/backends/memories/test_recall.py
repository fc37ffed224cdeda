"""The recall pipeline (issue 29): entity expansion, re-ranking, why, and the second model's
vectors kept beside the memories. Deterministic (hashing embedder) unless marked ``model``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from backends.config import Config
from backends.memories.entities import _changed
from backends.memories.recall import (
    BARE,
    Recall,
    RecallHit,
    RecallSettings,
    asks_for,
    fold,
    holds,
    language,
    names,
    relations,
    topics,
)
from backends.memories.service import MemoryAssistant
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.progress import Progress
from backends.services import Services
from backends.stores.memories.sqlite import SQLiteMemoryStore

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "datadir-0.1"
DATA = Path(__file__).resolve().parents[3] / "bench" / "data"


def test_names_fold_accents_and_skip_question_words() -> None:
    assert fold("Lucía Ñandú") == "lucia nandu"
    assert names("My sister Lucía lives in Valencia") == ["lucia", "valencia"]
    assert names("When is Tomás's wedding?") == ["tomas"]
    assert names("What does Daniel do on Monday?") == ["daniel"]  # weekdays are not names
    assert names("Where can I get in if I'm locked out?") == []  # "I'm" is no name


def test_relations_a_fact_states() -> None:
    assert relations("My sister Lucía lives in Valencia") == {("sister", "lucia")}
    assert relations("My mother's name is Carmen") == {("mother", "carmen")}
    assert relations("Mi jefa se llama Priya") == {("boss", "priya")}
    assert relations("I like tea") == set()


def test_someone_elses_relations_are_not_the_users() -> None:
    # Sami is Leo's best friend, Elena Javier's wife: "my friend", "my spouse" are not them
    assert relations("Leo's best friend is a boy called Sami") == set()
    assert relations("Javier's wife is called Elena") == set()
    assert relations("La mujer de Javier se llama Elena") == set()
    assert relations("Marco lives in Turin with his girlfriend Anna") == set()
    assert relations("My music teacher is called Mr. Ito") == {("teacher", "ito")}
    assert relations("My best friend Marco's birthday is on 2 August") == {("friend", "marco")}
    # ...and what a question asks about them names no one of the user's by it
    assert topics("Who is my cousin's wife?") >= {"wife"}
    assert topics("Who is my cousin married to?") >= {"spouse", "wife", "husband"}
    assert topics("¿Dónde fue nuestra boda?") >= {"spouse"}
    assert topics("Who is my wife?") == frozenset()


def test_what_a_question_asks_for_and_what_a_fact_holds() -> None:
    assert asks_for("When is my girl's birthday?") == "date"
    assert asks_for("¿Quién es mi superior?") == "person"
    assert asks_for("Where did I grow up?") == "place"
    assert asks_for("¿Cuánto pago de alquiler?") == "number"
    assert asks_for("What is my job?") is None
    assert "date" in holds("My daughter Emma was born on 14 March 2015")
    assert "person" in holds("Javier's wife is called Elena", known={"javier"})
    assert "person" not in holds("My cousin Javier has three children", known={"javier"})
    assert "place" in holds("Me crié en Cádiz")


def test_language_is_told_by_its_little_words() -> None:
    assert language("Which city is my sibling based in?") == "en"
    assert language("¿En qué ciudad vive mi hermana?") == "es"


@pytest.fixture
def store(tmp_path: Path) -> SQLiteMemoryStore:
    embedder = HashingEmbedder(256)
    facts = [
        "My sister Lucía lives in Valencia",
        "My sister Lucía works as a nurse",
        "Marco and I met at a summer camp in 2003",
        "My best friend Marco likes trains",
        "I drink my coffee black",
    ]
    store = SQLiteMemoryStore(tmp_path / "m.sqlite3", embedder.dimension, embedder.name)
    store.add_many(zip(facts, embedder.embed_batch(facts), strict=True))
    return store


def test_a_relation_in_the_question_brings_the_people_it_names(store: SQLiteMemoryStore) -> None:
    recall = Recall(store, HashingEmbedder(256))
    people, asked = recall.entities.expand("Where does my sibling live?")
    assert people == set() and "sister" in asked  # no names learnt before the first refresh
    recall.entities.refresh(store)
    people, asked = recall.entities.expand("Where does my sibling live?")
    assert people == {"lucia"} and {"sister", "brother"} <= asked
    # bare cosine: the hashing embedder sees no shared word with "met at a summer camp"
    bare = recall.search("How did I get to know my best friend?", k=5, settings=BARE)
    hits = recall.search("How did I get to know my best friend?", k=5)
    met = "Marco and I met at a summer camp in 2003"

    def rank(found: list[RecallHit]) -> int:
        texts = [h.text for h in found]
        return texts.index(met) if met in texts else len(texts)

    assert rank(hits) < rank(bare)  # "my best friend" is Marco: his memories come up
    assert "name: Marco" in hits[rank(hits)].why


def test_every_hit_says_why_and_the_threshold_is_on_the_question_as_asked(
    store: SQLiteMemoryStore,
) -> None:
    recall = Recall(store, HashingEmbedder(256))
    hits = recall.search("Where does Lucia live?", k=3)
    assert hits[0].text == "My sister Lucía lives in Valencia"
    assert hits[0].why.startswith("meaning ") and "name: Lucía" in hits[0].why
    assert "has a place" in hits[0].why
    plain = HashingEmbedder(256).embed("Where does Lucia live?")
    exact = store.similarities(plain, [hits[0].text])[hits[0].text]
    assert hits[0].similarity == pytest.approx(exact, abs=1e-6)
    assert all(h.similarity >= 0.2 for h in recall.search("Where does Lucia live?", 5, 0.2))


def test_parts_can_be_switched_off(store: SQLiteMemoryStore) -> None:
    recall = Recall(store, HashingEmbedder(256))
    for question in ("Where does Lucia live?", "What do I drink?"):
        hits = recall.search(question, k=2, settings=BARE)
        assert all(h.why.startswith("meaning ") and "·" not in h.why for h in hits)
    assert RecallSettings().without("expand", "entities") == RecallSettings(
        expand=False, entities=False
    )


def test_the_second_models_vectors_are_kept_and_dropped_with_the_text(
    store: SQLiteMemoryStore,
) -> None:
    second = HashingEmbedder(64)
    recall = Recall(store, HashingEmbedder(256), second)
    recall.search("Where does my sister live?", k=3)  # English: the second model re-ranks
    kept = store.signal_vectors(second.name, store.searchable_texts())
    assert "My sister Lucía lives in Valencia" in kept
    vector = kept["My sister Lucía lives in Valencia"]
    assert np.allclose(vector, second.embed("My sister Lucía lives in Valencia"), atol=1e-6)
    hits = recall.search("Where does my sister live?", k=3)
    assert any("hashing-64" in h.why for h in hits)
    store.update(
        "My sister Lucía lives in Valencia",
        "My sister Lucía lives in Madrid",
        HashingEmbedder(256).embed("My sister Lucía lives in Madrid"),
    )
    store.delete("My sister Lucía works as a nurse")
    left = store.signal_vectors(
        second.name, ["My sister Lucía lives in Valencia", "My sister Lucía works as a nurse"]
    )
    assert left == {}
    # a vector for a memory that does not exist is not kept
    store.put_signal_vectors(second.name, [("never told", second.embed("never told"))])
    assert store.signal_vectors(second.name, ["never told"]) == {}


def test_an_english_only_second_model_is_not_asked_about_spanish(
    store: SQLiteMemoryStore,
) -> None:
    second = HashingEmbedder(64)
    recall = Recall(store, HashingEmbedder(256), second)
    hits = recall.search("¿Dónde vive mi hermana Lucía?", k=3)
    assert hits and not any("hashing-64" in h.why for h in hits)
    assert store.signal_vectors(second.name, store.searchable_texts()) == {}


def test_the_assistant_search_and_find_use_the_same_recall(tmp_path: Path) -> None:
    services = Services(Config(home=tmp_path), embedder=HashingEmbedder(128))
    assistant = services.get("memories", MemoryAssistant)
    try:
        assistant.remember("My sister Lucía lives in Valencia")
        assistant.remember("I drink my coffee black")
        searched = assistant.search("Where does my sister Lucía live?", k=1)
        recalled = assistant.recall("Where does my sister Lucía live?", k=1, threshold=0.0)
        found = assistant.find("Where does my sister Lucía live?")
        assert searched[0].text == recalled[0].text == found[0].memory.text
        assert searched[0].why == recalled[0].why == found[0].why
        assert "name: Lucía" in searched[0].why
    finally:
        services.close()


def _open_old_datadir(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    for path in home.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)
    return Config(home=home)


def test_a_data_dir_from_before_opens_and_re_embeds_with_a_new_embedder(tmp_path: Path) -> None:
    """Today's data dir (memories by hashing-32) under another memories embedder: nothing is
    searched by the wrong model, nothing is lost, re-embedding reports progress."""
    config = _open_old_datadir(tmp_path)
    before = sorted(
        (m.text, m.created_at)
        for m in SQLiteMemoryStore(config.path("memories.sqlite3"), 32, "hashing-32").list()
    )
    assistant = MemoryAssistant(
        config.path("memories.sqlite3"), lambda: HashingEmbedder(48), ScriptedChat, config=config
    )
    try:
        status = assistant.open()
        assert status.stats.total == 3 and status.stats.needs_reembed == 3
        assert status.stats.other_dimensions == {32: 3}
        assert assistant.search("Bob prefers tea") == []  # 32-d rows are never compared
        steps: list[tuple[int, int]] = []
        progress = Progress(callback=lambda done, total, message: steps.append((done, total)))
        assert assistant.reembed(progress) == 3
        assert steps and steps[-1] == (3, 3)
        assert assistant.status().stats.needs_reembed == 0
        assert assistant.search("Bob prefers tea", k=1)[0].text == "Bob prefers tea"
        after = sorted((m.text, m.created_at) for m in assistant.recent())
        assert after == before
    finally:
        assistant.close()


@pytest.mark.model
def test_spanish_facts_are_recalled_by_spanish_and_english_questions(tmp_path: Path) -> None:
    items = json.loads((DATA / "memory_recall_es.json").read_text(encoding="utf-8"))["items"][:8]
    services = Services(Config(home=tmp_path, embedder="minilm"))
    assistant = services.get("memories", MemoryAssistant)
    try:
        assert assistant.embedder.name == "use-multilingual-v3"
        for item in items:
            assistant.remember(item["fact"], force=True)
            assistant.remember(item["distractor"], force=True)
        for key in ("question", "question_en"):
            top3 = [
                item["fact"] in [h.text for h in assistant.search(item[key], k=3)] for item in items
            ]
            assert sum(top3) >= 7, key
    finally:
        services.close()


class _NamedLikeUse(HashingEmbedder):
    """A deterministic stand-in carrying the multilingual model's name and dimension."""

    def __init__(self) -> None:
        super().__init__(512)
        self.name = "use-multilingual-v3"


def test_memories_of_the_previous_default_model_are_re_embedded_unasked(tmp_path: Path) -> None:
    path = tmp_path / "memories.sqlite3"
    with SQLiteMemoryStore(path, 384, "all-MiniLM-L6-v2") as old:  # today's main: MiniLM
        old.add("My dog is called Rex", np.ones(384, dtype=np.float32))
    assistant = MemoryAssistant(path, _NamedLikeUse, ScriptedChat, config=Config(home=tmp_path))
    try:
        status = assistant.open()
        assert status.reembed_now and status.stats.stale_models == {"all-MiniLM-L6-v2": 1}
        assert assistant.reembed() == 1
        assert not assistant.status().reembed_now and not assistant.status().recall_limited
    finally:
        assistant.close()
    # memories of any other model are the user's choice to re-embed: asked, not done
    config = _open_old_datadir(tmp_path / "other")
    assistant = MemoryAssistant(
        config.path("memories.sqlite3"), _NamedLikeUse, ScriptedChat, config=config
    )
    try:
        status = assistant.open()
        assert status.recall_limited and not status.reembed_now
    finally:
        assistant.close()


class _Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(256)
        self.texts: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed_batch(texts)


def test_a_turn_recalling_twice_embeds_its_question_once(store: SQLiteMemoryStore) -> None:
    counting = _Counting()
    recall = Recall(store, counting)
    first = recall.search("Where does my sister live?", k=2)
    asked = list(counting.texts)
    assert recall.search("Where does my sister live?", k=5, threshold=0.0)[:2] == first
    assert counting.texts == asked  # the second recall reused the vectors
    recall.forget_queries()
    recall.search("Where does my sister live?", k=2)
    assert counting.texts == asked + asked


def test_an_english_fact_naming_someone_with_an_accent_is_english() -> None:
    # before: the accent of a name made it "unsure" (and Lucía's memories were read by an
    # English-only second model only by luck)
    assert language("My sister Lucía lives in Valencia") == "en"
    assert language("I'm lactose intolerant") == "en"
    assert language("Soy alérgica a la penicilina") == "es"
    assert language("Which antibiotic should doctors never give me?") == "en"


def _facts_store(tmp_path: Path, facts: list[str]) -> tuple[SQLiteMemoryStore, HashingEmbedder]:
    embedder = HashingEmbedder(256)
    store = SQLiteMemoryStore(tmp_path / "e.sqlite3", embedder.dimension, embedder.name)
    store.add_many(zip(facts, embedder.embed_batch(facts), strict=True))
    return store, embedder


def test_the_entity_index_reads_only_what_changed(tmp_path: Path) -> None:
    store, embedder = _facts_store(
        tmp_path,
        ["My sister Lucía lives in Valencia", "My sister Lucía is a nurse", "I like tea"],
    )
    recall = Recall(store, embedder)
    recall.search("Where does my sibling live?", k=2)
    index = recall.entities
    assert index.learnt == 3 and index.by_relation["sister"] == {"lucia"}
    store.add("My brother Tomás plays the drums", embedder.embed("My brother Tomás plays drums"))
    recall.search("Where does my sibling live?", k=2)
    assert index.learnt == 4  # the new memory only
    assert index.expand("Where does my sibling live?")[0] == {"lucia", "tomas"}
    # Lucía stays a sister while one memory says so
    store.delete("My sister Lucía lives in Valencia")
    recall.search("Where does my sibling live?", k=2)
    assert index.by_relation["sister"] == {"lucia"} and index.learnt == 4
    store.update(
        "My sister Lucía is a nurse",
        "My cousin Lucía is a nurse",
        embedder.embed("My cousin Lucía is a nurse"),
    )
    hits = recall.search("Where does my sibling live?", k=3)
    assert index.learnt == 5
    assert index.by_relation.get("sister", set()) == set()
    assert index.by_relation["cousin"] == {"lucia"}
    assert index.by_name["lucia"] == {"My cousin Lucía is a nurse"}
    assert not any("name: Lucía" in h.why for h in hits)  # no longer a sibling
    store.close()


def test_a_large_first_build_runs_aside_and_searches_do_not_wait_for_it(tmp_path: Path) -> None:
    facts = [f"My friend Person{i} lives in Town{i}" for i in range(40)]
    store, embedder = _facts_store(tmp_path, [*facts, "My sister Lucía lives in Valencia"])
    recall = Recall(store, embedder)
    recall.entities.INLINE = 10  # more new memories than this: built in a thread
    hits = recall.search("Where does my sibling live?", k=3)
    assert hits  # answered, with or without the index
    recall.entities.wait()
    assert recall.entities.ready() and len(recall.entities) == 41
    hits = recall.search("Where does my sibling live?", k=50)  # a candidate by her name
    assert any(h.text == "My sister Lucía lives in Valencia" for h in hits)
    lucia = next(h for h in hits if h.text == "My sister Lucía lives in Valencia")
    assert "name: Lucía" in lucia.why
    store.close()


def test_warm_builds_the_index_before_any_search(tmp_path: Path) -> None:
    store, embedder = _facts_store(tmp_path, [f"My friend Ana{i} likes tea" for i in range(30)])
    recall = Recall(store, embedder)
    recall.entities.INLINE = 5
    recall.warm()
    assert recall.entities.ready() and recall.entities.learnt == 30
    store.close()


def test_a_name_too_common_to_look_up_still_gets_its_bonus(tmp_path: Path) -> None:
    facts = [f"I visited town number {i} with Marco" for i in range(12)] + ["I drink coffee"]
    store, embedder = _facts_store(tmp_path, facts)
    recall = Recall(store, embedder, settings=RecallSettings(candidates=3))
    recall.NAMED_LOOKUP = 5  # 12 memories name Marco: none is added for the name alone
    hits = recall.search("What did Marco do?", k=3)
    assert len(hits) == 3 and all("name: Marco" in h.why for h in hits)
    assert recall.entities.naming({"marco"}, 5) is None
    assert len(recall.entities.naming({"marco"}, 50) or []) == 12
    store.close()


def test_the_second_model_cannot_raise_what_it_cannot_read(store: SQLiteMemoryStore) -> None:
    """A Spanish memory keeps its first-pass score beside English ones the second model
    re-scores (standardised fusion): no signal is not a bad signal."""
    spanish = "Mi hermana Lucía vive en Valencia"
    store.add(spanish, HashingEmbedder(256).embed(spanish))
    second = HashingEmbedder(64)
    recall = Recall(store, HashingEmbedder(256), second)
    hits = recall.search("Where does my sister Lucía live?", k=10, settings=BARE)
    fused = recall.search(
        "Where does my sister Lucía live?", k=10, settings=replace(BARE, second=True)
    )
    by_text = {h.text: h for h in fused}
    assert "hashing-64" not in by_text[spanish].why
    assert all("hashing-64" in h.why for h in fused if h.text != spanish)
    assert {h.text for h in hits} == set(by_text)


def test_what_changed_between_two_readings_of_the_store_is_found_in_any_order() -> None:
    rng = np.random.default_rng(29)
    for _ in range(200):
        before = [f"memory {i}" for i in rng.choice(60, size=rng.integers(0, 40), replace=False)]
        after = list(before)
        for _ in range(rng.integers(0, 6)):  # the store's own moves, and any other order
            move = rng.integers(4)
            if move == 0:
                after.append(f"new {rng.integers(10**6)}")
            elif move == 1 and after:
                hole = int(rng.integers(len(after)))
                after[hole] = after[-1]
                after.pop()
            elif move == 2 and after:
                after[int(rng.integers(len(after)))] = f"edited {rng.integers(10**6)}"
            else:
                rng.shuffle(after)
        after = list(dict.fromkeys(after))
        removed, added = _changed(before, after)
        assert removed == set(before) - set(after) and added == set(after) - set(before)


def test_a_relation_standing_for_many_people_adds_no_names(tmp_path: Path) -> None:
    friends = ["Ana", "Bea", "Carla", "Dani", "Eva", "Fede", "Gus"]
    store, _ = _facts_store(tmp_path, [f"My friend {n} likes tea" for n in friends])
    counting = _Counting()
    recall = Recall(store, counting)
    recall.search("Which friend likes tea?", k=3)
    assert "Which friend likes tea?" in counting.texts
    assert not any("(" in t for t in counting.texts)  # 7 friends: none is added
    store.delete("My friend Gus likes tea")
    recall.forget_queries()
    recall.search("Which friend likes tea?", k=3)  # 6: they are
    assert "Which friend likes tea? (Ana, Bea, Carla, Dani, Eva, Fede)" in counting.texts
    store.close()


def test_opening_the_assistant_derives_the_entity_index(tmp_path: Path) -> None:
    """The tab opens the assistant in a worker: the index is built there, not in a search."""
    services = Services(Config(home=tmp_path), embedder=HashingEmbedder(64))
    assistant = services.get("memories", MemoryAssistant)
    try:
        for i in range(12):
            assistant.remember(f"My friend Ana{i} likes tea")
        services.close()
        services = Services(Config(home=tmp_path), embedder=HashingEmbedder(64))
        assistant = services.get("memories", MemoryAssistant)
        assistant.open()
        assert assistant.recaller.entities.ready()
        stored = assistant.status().stats.total
        assert stored > 0 and assistant.recaller.entities.learnt == stored
    finally:
        services.close()


def test_someone_elses_spouse_is_not_the_users(tmp_path: Path) -> None:
    facts = [
        "My husband Daniel works as an airline pilot",
        "Lucía's husband is called Andrés",
        "Javier's wife is called Elena",
    ]
    store, embedder = _facts_store(tmp_path, facts)
    recall = Recall(store, embedder)
    recall.entities.refresh(store)
    people, _ = recall.entities.expand("What does my spouse do for a living?")
    assert people == {"daniel"}  # not Andrés, Lucía's, nor Elena, Javier's
    people, _ = recall.entities.expand("What does my cousin's wife do?")
    assert people == set()  # "wife" is the cousin's: it names no one of the user's
    store.close()


def _rank_of(recall: Recall, question: str, fact: str, settings: RecallSettings) -> int:
    texts = [h.text for h in recall.search(question, k=10, settings=settings)]
    return texts.index(fact) if fact in texts else len(texts)


def test_a_relation_asked_about_without_naming_anyone_raises_the_memories_about_it(
    tmp_path: Path,
) -> None:
    wife = "Javier's wife Elena is a nurse"
    facts = [
        "My cousin Javier does shift work",
        "My cousin Javier has three children",
        wife,
        "I drink my coffee black",
        "My sister Lucía lives in Valencia",
    ]
    store, embedder = _facts_store(tmp_path, facts)
    recall = Recall(store, embedder)
    question = "What does my cousin's wife do for work?"
    before = replace(RecallSettings(), topics=False)
    # both name Javier (the cousin); only one is about his wife
    assert _rank_of(recall, question, wife, RecallSettings()) == 1
    assert _rank_of(recall, question, wife, before) == 2
    why = {h.text: h.why for h in recall.search(question, k=5)}
    assert "about: wife" in why[wife]
    assert "about:" not in why["My cousin Javier has three children"]
    store.close()


def test_a_question_about_the_user_raises_the_memories_about_the_user(tmp_path: Path) -> None:
    mine = "I love the colour green"
    facts = [
        "My brother Tomás still lives in Galway",
        "My sister Lucía lives in Valencia",
        "I drink my coffee black",
        mine,
        "Blue is the favourite colour of my manager Priya",
    ]
    store, embedder = _facts_store(tmp_path, facts)
    recall = Recall(store, embedder)
    question = "What colour do I like best?"
    before = replace(RecallSettings(), self_subject=False)
    assert _rank_of(recall, question, mine, RecallSettings()) == 0
    assert _rank_of(recall, question, mine, before) == 1  # the manager's came first
    why = {h.text: h.why for h in recall.search(question, k=5)}
    assert "about you" in why[mine] and "about you" in why["I drink my coffee black"]
    assert "about you" not in why["My sister Lucía lives in Valencia"]  # hers
    assert "about you" not in why["Blue is the favourite colour of my manager Priya"]
    # "who" asks for someone else: no memory is raised for being the user's own
    assert all("about you" not in h.why for h in recall.search("Who do I pay rent to?", k=5))
    store.close()


def test_a_question_about_the_user_and_someone_raises_both(tmp_path: Path) -> None:
    wedding = "My wedding anniversary is on 21 September"
    facts = [
        "My husband Daniel grew up in Manchester",
        "My husband Daniel and his brother get on well",
        "My brother Tomás is getting married next summer",
        "I drink my coffee black",
        wedding,
        "My husband Daniel did get a new car",
        "My husband Daniel works as an airline pilot",
    ]
    store, embedder = _facts_store(tmp_path, facts)
    recall = Recall(store, embedder)
    question = "When did Daniel and I get married?"
    before = replace(RecallSettings(), self_subject=False)
    # Daniel's memories are raised for his name, the user's own for the "I"
    assert _rank_of(recall, question, wedding, RecallSettings()) < 3
    assert _rank_of(recall, question, wedding, before) == 3
    store.close()


def test_a_memory_that_gives_someones_name_answers_who_they_are() -> None:
    # "Who is my boss?" finds Priya through the relation; the memory naming her answers it
    assert "person" in holds("Mi jefa se llama Priya", known={"priya"})
    assert "person" in holds("My landlord is Mr. Schmidt", known={"schmidt"})
    assert "person" not in holds("My son Leo is in the second grade", known={"leo"})
