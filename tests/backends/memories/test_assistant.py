"""The memory assistant: recall into the prompt, remembering, proposals, duplicates, sessions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from backends.config import Config
from backends.errors import CancelledError, ModelUnavailableError
from backends.memories.facts import factual_statements, remember_request
from backends.memories.service import MemoryAssistant
from backends.memories.tuning import (
    AssistantSettings,
    near_duplicate_threshold_for,
    recall_threshold_for,
)
from backends.models.chat import RETRIEVAL_ONLY_LABEL, Message, RetrievalOnlyChat, ScriptedChat
from backends.models.embedders import Embedder, HashingEmbedder
from backends.progress import Progress
from backends.services import Services
from backends.stores.memories import MemoryNotFoundError


@pytest.fixture
def chat() -> ScriptedChat:
    return ScriptedChat()


@pytest.fixture
def assistant(tmp_path: Path, chat: ScriptedChat) -> Iterator[MemoryAssistant]:
    embedder = HashingEmbedder(384)
    built = MemoryAssistant(tmp_path / "memories.sqlite3", lambda: embedder, lambda: chat)
    yield built
    built.close()


# -- parsing -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("Remember that my dog is called Rex.", "My dog is called Rex"),
        ("please remember: I am allergic to penicillin", "I am allergic to penicillin"),
        ("Can you remember that I work nights, please", "I work nights"),
        ("recuerda que vivo en Valencia", "Vivo en Valencia"),
        ("remember me?", None),
        ("Do you remember my dog?", None),
        ("What is my dog called?", None),
    ],
)
def test_remember_requests(message: str, fact: str | None) -> None:
    assert remember_request(message) == fact


@pytest.mark.parametrize(
    ("message", "facts"),
    [
        (
            "I live in Valencia. What is the weather like? My sister Ana lives in Madrid!",
            ["I live in Valencia", "My sister Ana lives in Madrid"],
        ),
        ("I'm a nurse at La Fe hospital", ["I'm a nurse at La Fe hospital"]),
        ("My favourite colour is green", ["My favourite colour is green"]),
        ("Me llamo Pedro y vivo en Valencia", ["Me llamo Pedro y vivo en Valencia"]),
        ("I am wondering what to cook tonight", []),
        ("Where do I live?", []),
        ("Hello there, how are you", []),
        ("I am", []),  # too short to be a fact
    ],
)
def test_factual_statements(message: str, facts: list[str]) -> None:
    assert factual_statements(message) == facts


def test_thresholds_are_tuned_per_embedder() -> None:
    assert recall_threshold_for("hashing-384") < recall_threshold_for("all-MiniLM-L6-v2")
    assert recall_threshold_for("hashing-64") == recall_threshold_for("hashing-384")
    assert 0 < recall_threshold_for("ollama:nomic-embed-text") < 1
    assert near_duplicate_threshold_for("hashing-384") > recall_threshold_for("hashing-384")


def test_settings_override_the_thresholds(tmp_path: Path) -> None:
    embedder = HashingEmbedder(384)
    custom = MemoryAssistant(
        tmp_path / "m.sqlite3",
        lambda: embedder,
        ScriptedChat,
        AssistantSettings(recall_threshold=0.9, near_duplicate_threshold=0.99),
    )
    assert (custom.recall_threshold, custom.near_duplicate_threshold) == (0.9, 0.99)
    custom.remember("My dog is called Rex")
    assert custom.recall("What is my dog called?") == []  # 0.56 < 0.9
    custom.close()


# -- a turn --------------------------------------------------------------------------------
def test_a_turn_recalls_memories_into_the_prompt(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    assistant.remember("My dog is called Rex")
    assistant.remember("I am allergic to penicillin")
    tokens: list[str] = []
    result = assistant.turn("What is my dog called?", on_token=tokens.append)
    assert [h.text for h in result.used] == ["My dog is called Rex"]
    assert result.used[0].similarity >= assistant.recall_threshold
    prompt = chat.calls[-1]
    # numbered and restated to the user, without scaffolding a small model copies
    assert prompt.context == ["[1] Your dog is called Rex"]
    assert "long-term memory" in prompt.system and prompt.history == ()
    assert "".join(tokens).strip() == result.shown.draft  # the draft streams
    assert result.answer == "Your dog is called Rex [1]."  # the memory is the answer
    assert result.threshold == assistant.recall_threshold and result.model == "scripted"


def test_each_sentence_of_an_answer_says_whether_a_memory_states_it(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    """The model may invent what the user "said": only a sentence a memory states is marked
    as coming from the memories (CT9's check, reused)."""
    assistant.remember("My dog is called Rex")
    chat.replies[:] = ["Your dog is called Rex [1]. He is a black labrador born in 2019."]
    result = assistant.turn("What is my dog called?")
    first, second = result.checked  # "your" for "my": the same fact, told back
    assert first.supported and first.number == 1 and result.from_memories == (first,)
    assert not second.supported and "2019" in second.reason
    assert assistant.turn("Tell me a joke").checked == ()  # nothing recalled: nothing checked


def test_an_unrelated_question_recalls_nothing(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    assistant.remember("My dog is called Rex")
    result = assistant.turn("Tell me a joke")
    assert result.used == ()
    assert chat.calls[-1].context == []


def test_history_is_passed_and_trimmed(tmp_path: Path, chat: ScriptedChat) -> None:
    embedder = HashingEmbedder(64)
    short = MemoryAssistant(
        tmp_path / "m.sqlite3",
        lambda: embedder,
        lambda: chat,
        AssistantSettings(history_messages=2),
    )
    history = [Message("user", f"q{i}") for i in range(5)]
    short.turn("hello", history)
    assert [m.content for m in chat.calls[-1].history] == ["q3", "q4"]
    short.close()


def test_a_turn_can_be_stopped(assistant: MemoryAssistant) -> None:
    tokens: list[str] = []
    assistant.turn("one two three four", on_token=tokens.append, should_stop=lambda: True)
    assert tokens == []


def test_retrieval_only_mode_shows_the_memories(tmp_path: Path) -> None:
    embedder = HashingEmbedder(384)
    plain = MemoryAssistant(
        tmp_path / "m.sqlite3", lambda: embedder, lambda: RetrievalOnlyChat("no model")
    )
    plain.remember("My dog is called Rex")
    result = plain.turn("What is my dog called?")
    assert result.retrieval_only and not result.draft_skipped
    assert result.answer == "Your dog is called Rex [1]."
    general = plain.turn("Tell me a joke")
    assert "no chat model is loaded" in general.answer
    assert RETRIEVAL_ONLY_LABEL not in general.answer
    plain.close()


# -- remembering ---------------------------------------------------------------------------
def test_remember_that_stores_without_asking_the_model(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    result = assistant.turn("Remember that my dog is called Rex")
    assert result.remembered is not None and result.remembered.status == "created"
    assert "remember that" in result.answer.lower() and "My dog is called Rex" in result.answer
    assert chat.calls == []
    assert [m.text for m in assistant.recent()] == ["My dog is called Rex"]
    assert assistant.recent()[0].source == "remember"


def test_exact_duplicates_are_skipped(assistant: MemoryAssistant) -> None:
    assert assistant.remember("I live in Valencia").status == "created"
    again = assistant.remember("  I live in   Valencia. ")  # same content once normalised
    assert again.status == "duplicate" and not again.stored
    assert len(assistant.recent()) == 1
    result = assistant.turn("remember that I live in Valencia")
    assert result.remembered is not None and result.remembered.status == "duplicate"


def test_near_duplicates_are_offered_as_an_update_never_dropped(
    assistant: MemoryAssistant,
) -> None:
    assistant.remember("I live in Valencia")
    result = assistant.turn("Remember that I live in Valencia, Spain")
    outcome = result.remembered
    assert outcome is not None and outcome.status == "near_duplicate"
    assert outcome.existing == "I live in Valencia"
    assert outcome.similarity >= assistant.near_duplicate_threshold
    assert "very similar" in result.answer
    (proposal,) = result.proposals
    assert (proposal.kind, proposal.text, proposal.existing) == (
        "update",
        "I live in Valencia, Spain",
        "I live in Valencia",
    )
    assert [m.text for m in assistant.recent()] == ["I live in Valencia"]  # nothing yet
    updated = assistant.accept(proposal)
    assert updated.status == "updated"
    assert [m.text for m in assistant.recent()] == ["I live in Valencia, Spain"]


def test_a_near_duplicate_can_be_kept_beside_the_other(assistant: MemoryAssistant) -> None:
    assistant.remember("I live in Valencia")
    outcome = assistant.remember("I live in Valencia, Spain")
    assert outcome.proposal is not None
    kept = assistant.accept(outcome.proposal, keep_both=True)
    assert kept.status == "created"
    assert {m.text for m in assistant.recent()} == {
        "I live in Valencia",
        "I live in Valencia, Spain",
    }


def test_proposals_from_the_conversation(assistant: MemoryAssistant) -> None:
    result = assistant.turn("I live in Valencia. My sister Ana lives in Madrid. Any plans?")
    assert [p.text for p in result.proposals] == [
        "I live in Valencia",
        "My sister Ana lives in Madrid",
    ]
    assert all(p.kind == "new" for p in result.proposals)
    assert assistant.recent() == []  # proposals wait for the user
    assistant.accept(result.proposals[0])
    again = assistant.turn("I live in Valencia.")
    assert again.proposals == ()  # exact duplicate: not proposed again
    moved = assistant.turn("I live in Valencia, Spain.")
    (update,) = moved.proposals
    assert update.kind == "update" and update.existing == "I live in Valencia"


# -- editing, deleting, undo ---------------------------------------------------------------
def test_delete_and_undo(assistant: MemoryAssistant) -> None:
    assistant.remember("My dog is called Rex", source="cli")
    before = assistant.recent()[0]
    undo = assistant.delete("My dog is called Rex")
    assert assistant.recent() == []
    assert assistant.recall("What is my dog called?") == []
    assistant.undo(undo)
    assert assistant.recent() == [before]
    assert assistant.recall("What is my dog called?")[0].text == "My dog is called Rex"
    with pytest.raises(MemoryNotFoundError):
        assistant.delete("never stored")


def test_edit_and_undo(assistant: MemoryAssistant) -> None:
    assistant.remember("My favourite colour is green")
    outcome = assistant.update("My favourite colour is green", "My favourite colour is blue")
    assert [m.text for m in assistant.recent()] == ["My favourite colour is blue"]
    assert outcome.undo is not None
    assistant.undo(outcome.undo)
    assert [m.text for m in assistant.recent()] == ["My favourite colour is green"]
    assert assistant.search("favourite colour green", k=1)[0].text == "My favourite colour is green"


def test_undo_a_new_memory(assistant: MemoryAssistant) -> None:
    outcome = assistant.remember("I play the cello")
    assert outcome.undo is not None
    assistant.undo(outcome.undo)
    assert assistant.recent() == []


def test_find_lists_similar_then_textual_matches(assistant: MemoryAssistant) -> None:
    for text in ["My dog is called Rex", "I am allergic to penicillin", "Rex likes long walks"]:
        assistant.remember(text)
    assert len(assistant.find("")) == 3
    found = assistant.find("dog called")
    assert found[0].memory.text == "My dog is called Rex" and found[0].similarity is not None
    textual = assistant.find("penic")
    assert [f.memory.text for f in textual] == ["I am allergic to penicillin"]
    assert textual[0].similarity is None


# -- sessions and embedders ----------------------------------------------------------------
def test_a_fact_told_in_one_session_is_recalled_in_the_next(custodia_config: Config) -> None:
    first = Services(custodia_config)
    told = first.get("memories", MemoryAssistant).turn("Remember that my dog is called Rex")
    assert told.remembered is not None and told.remembered.stored
    first.close()

    second = Services(custodia_config)  # a new start of the app on the same data dir
    result = second.get("memories", MemoryAssistant).turn("What is my dog called?")
    assert [h.text for h in result.used] == ["My dog is called Rex"]
    assert result.answer == "Your dog is called Rex [1]."
    second.close()


def test_a_new_embedder_limits_recall_until_reembedded(custodia_config: Config) -> None:
    first = Services(custodia_config)
    service = first.get("memories", MemoryAssistant)
    for fact in ["My dog is called Rex", "I live in Valencia", "I am allergic to penicillin"]:
        service.remember(fact)
    first.close()

    switched = Services(replace(custodia_config, embedder="hashing:64"))
    assistant = switched.get("memories", MemoryAssistant)
    status = assistant.status()
    assert status.recall_limited and status.stats.needs_reembed == 3
    message = status.limited_recall_message()
    assert "3 of 3" in message and "384-d" in message and "hashing-64" in message
    assert assistant.recall("What is my dog called?") == []  # never compared across models
    seen: list[tuple[int, int]] = []
    done = assistant.reembed(Progress(callback=lambda d, t, m: seen.append((d, t))))
    assert done == 3 and seen[-1] == (3, 3)
    assert not assistant.status().recall_limited
    assert assistant.recall("What is my dog called?")[0].text == "My dog is called Rex"
    switched.close()


def test_reembedding_can_be_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    big = HashingEmbedder(384)
    first = MemoryAssistant(path, lambda: big, ScriptedChat)
    for i in range(40):
        first.remember(f"Fact number {i} about me and my life number {i * 7}", force=True)
    first.close()
    small = HashingEmbedder(32)
    second = MemoryAssistant(path, lambda: small, ScriptedChat)
    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError):
        second.reembed(progress)
    assert second.status().stats.needs_reembed == 40
    second.close()


class _Unavailable(Embedder):
    name = "broken"
    dimension = 8

    def embed_batch(self, texts):  # type: ignore[no-untyped-def]
        raise ModelUnavailableError("no model files")


def test_an_unavailable_embedder_is_a_typed_error(tmp_path: Path) -> None:
    broken = MemoryAssistant(tmp_path / "m.sqlite3", _Unavailable, ScriptedChat)
    with pytest.raises(ModelUnavailableError):
        broken.turn("What is my dog called?")
    broken.close()
