"""Bring your own model: generation settings, a model per assistant, GGUF files that load or
are refused with the reason (the assistant falls back to retrieval-only mode, labelled)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.models import local, settings
from backends.models.chat import LlamaCppChat, Prompt, ScriptedChat, TunedChat
from backends.models.files import SMOLLM2_GGUF
from backends.models.registry import create_chat_model
from backends.models.settings import GenerationSettings
from backends.services import Services
from tests.backends.models.gguf_files import truncate, write_gguf


def _llama_or_skip() -> None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("CUSTODIA_REQUIRE_LLAMA") == "1":
            pytest.fail("llama-cpp-python is required here but not installed")
        pytest.skip("llama-cpp-python not built on this machine (see .venv/llama-build.log)")


@pytest.fixture
def smollm2() -> Path:
    try:
        return SMOLLM2_GGUF.verified()
    except Exception as err:
        pytest.skip(f"bundled SmolLM2 not installed: {err}")


# -- settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "field", "words"),
    [
        ({"temperature": 3}, "temperature", "between 0 and 2"),
        ({"temperature": "hot"}, "temperature", "not a number"),
        ({"top_p": 0}, "top_p", "between 0.01 and 1"),
        ({"max_tokens": 12.5}, "max_tokens", "whole number"),
        ({"max_tokens": 0}, "max_tokens", "between 1 and 32768"),
        ({"context_size": 100}, "context_size", "between 256 and 262144"),
        ({"threads": -1}, "threads", "between 0 and 256"),
        ({"repeat_penalty": True}, "repeat_penalty", "not a number"),
        ({"system_prompt": 7}, "system_prompt", "must be text"),
        ({"temprature": 0.1}, "temprature", "unknown setting"),
    ],
)
def test_each_bad_setting_is_named(table: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(settings.SettingError, match=words) as err:
        settings.parse(table)
    assert err.value.name == field


def test_layers_runtime_assistant_model_then_assistant_table() -> None:
    assert settings.resolve("tutor", "smollm2", {}).temperature == 0.1  # the tutor samples cold
    assert settings.resolve("conversations", "smollm2", {}).temperature == 0.7
    tables = {
        "gguf:phi": {"context_size": 4096, "temperature": 0.5, "threads": 2},
        "tutor": {"temperature": 0.05, "max_tokens": 200},
    }
    tuned = settings.resolve("tutor", "gguf:phi", tables)
    assert (tuned.temperature, tuned.context_size, tuned.threads) == (0.05, 4096, 2)
    assert tuned.max_tokens == 200 and tuned.repeat_penalty == 1.15
    assert settings.resolve("memories", "gguf:phi", tables).temperature == 0.5
    assert settings.resolve("memories", "smollm2", tables).max_tokens is None


def test_tuned_chat_respects_the_prompt_and_fills_the_rest() -> None:
    inner = ScriptedChat(replies=["ok"])
    tuned = TunedChat(
        inner,
        GenerationSettings(
            temperature=0.6,
            top_p=0.8,
            max_tokens=100,
            repeat_penalty=1.3,
            system_prompt="Be brief.",
        ),
    )
    tuned.complete(Prompt("q", system="Cite sources.", max_tokens=384, temperature=0.1))
    tuned.complete(Prompt("q", max_tokens=50))
    first, second = inner.calls
    assert first.temperature == 0.1  # the assistant asked for it: kept
    assert (first.top_p, first.repeat_penalty) == (0.8, 1.3)
    assert first.max_tokens == 100  # the setting is a ceiling
    assert first.system == "Cite sources.\n\nBe brief."  # after the assistant's own
    assert (second.temperature, second.max_tokens) == (0.6, 50)
    assert tuned.calls is inner.calls and tuned.name == "scripted"


# -- a model per assistant -------------------------------------------------------------------


def test_each_assistant_gets_its_model_and_settings(tmp_path: Path) -> None:
    cfg = Config(
        home=tmp_path,
        chat_model="scripted",
        models={"tutor": "retrieval-only"},
        generation={"memories": {"top_p": 0.5}},
    ).validated()
    services = Services(cfg)
    assert services.chat_for("tutor").retrieval_only
    memories = services.chat_for("memories")
    assert memories.name == "scripted" and isinstance(memories, TunedChat)
    memories.complete(Prompt("q"))
    assert memories.calls[-1].top_p == 0.5 and memories.calls[-1].temperature == 0.2
    with pytest.raises(ValueError, match="unknown assistant"):
        services.chat_for("tutr")


def test_use_model_switches_the_next_answer(tmp_path: Path) -> None:
    services = Services(Config(home=tmp_path, chat_model="scripted").validated())
    assert services.chat_for("tutor").name == "scripted"
    config = services.use_model("tutor", "retrieval-only")
    assert config.models == {"tutor": "retrieval-only"}
    assert services.chat_for("tutor").retrieval_only
    assert services.chat_for("memories").name == "scripted"  # the others keep theirs


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: truncate(write_gguf(p), -64), "truncated"),
        (lambda p: p.write_bytes(b"\x7fELF not a model") and p, "not a GGUF model file"),
        (lambda p: write_gguf(p, template=None), "no chat template"),
        (lambda p: write_gguf(p, arch="notamodel"), "architecture 'notamodel'"),
    ],
)
def test_a_broken_file_falls_back_to_retrieval_only_with_the_reason(
    tmp_path: Path, make: Callable[[Path], Path], words: str
) -> None:
    (tmp_path / "models").mkdir()
    make(tmp_path / "models" / "bad.gguf")
    cfg = Config(home=tmp_path, models={"tutor": "gguf:bad"}).validated()
    choice = Services(cfg).chat_choice_for("tutor")
    assert choice.model.retrieval_only
    assert words in choice.fallback_reason and "bad.gguf" in choice.fallback_reason
    assert (tmp_path / "models" / "bad.gguf").exists()  # nothing is lost


def test_a_missing_file_names_the_folders(tmp_path: Path) -> None:
    cfg = Config(home=tmp_path, chat_model="gguf:absent").validated()
    choice = create_chat_model(cfg, "tutor")
    assert choice.model.retrieval_only
    assert "no model file of that name in" in choice.fallback_reason
    assert str(tmp_path / "models") in choice.fallback_reason


def test_a_load_refused_for_memory_never_reaches_llama(smollm2: Path, tmp_path: Path) -> None:
    cfg = Config(home=tmp_path, models={"tutor": f"gguf:{smollm2}"}).validated()
    tight = Services(cfg, memory=lambda: local.Memory(total=1 << 30, available=64 << 20))
    choice = tight.chat_choice_for("tutor")
    assert choice.model.retrieval_only
    assert "needs about" in choice.fallback_reason
    assert "only 64 MB of 1.0 GB is available" in choice.fallback_reason


@pytest.mark.model
def test_llama_cpp_says_why_it_refuses_a_file_without_weights(tmp_path: Path) -> None:
    _llama_or_skip()
    path = write_gguf(tmp_path / "empty.gguf")  # a valid header, no real tensors
    choice = create_chat_model(Config(home=tmp_path, chat_model=f"gguf:{path}").validated())
    assert choice.model.retrieval_only
    assert "cannot load GGUF model" in choice.fallback_reason
    assert "llama.cpp says:" in choice.fallback_reason  # its own words, not a bare ValueError


@pytest.mark.model
def test_a_user_gguf_loads_with_its_settings_and_answers(smollm2: Path, tmp_path: Path) -> None:
    _llama_or_skip()
    models = tmp_path / "models"
    models.mkdir()
    (models / "my-smol.gguf").symlink_to(smollm2)
    cfg = Config(
        home=tmp_path,
        chat_model="retrieval-only",
        models={"tutor": "gguf:my-smol"},
        generation={
            "gguf:my-smol": {"context_size": 512, "threads": 1},
            "tutor": {"max_tokens": 4},
        },
    ).validated()
    services = Services(cfg)
    choice = services.chat_choice_for("tutor")
    assert choice.fallback_reason == ""
    model = choice.model
    assert isinstance(model, TunedChat) and isinstance(model.model, LlamaCppChat)
    assert model.name == "my-smol"
    described = model.describe()
    assert described["context_tokens"] == 512 and described["architecture"] == "llama"
    assert described["chat_template"] is True
    answer = model.complete(Prompt("Say hello.", max_tokens=64))
    assert answer.strip()
    assert len(model.model._llama.tokenize(answer.encode(), add_bos=False)) <= 4  # the ceiling
    # the same file with the same context size (its own table) is loaded once for both
    other = services.use_model("memories", "gguf:my-smol")
    assert other.model_for("memories") == "gguf:my-smol"
    memories = services.chat_for("memories")
    assert isinstance(memories, TunedChat)
    assert memories.model is model.model and memories.settings.max_tokens is None
    services.close()


@pytest.mark.model
def test_the_tutor_answers_with_a_user_picked_gguf(
    smollm2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The done-when: a GGUF picked for the tutor gives the next answer (and its record)."""
    _llama_or_skip()
    asked: list[Prompt] = []
    answered: list[str] = []
    real_stream = LlamaCppChat.stream

    def spy(self: LlamaCppChat, prompt: Prompt, should_stop: Any = lambda: False) -> Any:
        asked.append(prompt)
        for piece in real_stream(self, prompt, should_stop):  # the real model answers
            answered.append(piece)
            yield piece

    monkeypatch.setattr(LlamaCppChat, "stream", spy)
    from backends.tutor.service import TutorService
    from tests.backends.tutor.conftest import make_small_kb
    from tests.parts import audit_service

    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "picked.gguf").symlink_to(smollm2)
    cfg = Config(
        home=home,
        embedder="hashing",
        chat_model="scripted",
        generation={"gguf:picked": {"top_p": 0.5, "context_size": 1024, "repeat_penalty": 1.3}},
    ).validated()
    services = Services(cfg)
    services.use_model("tutor", "gguf:picked")
    tutor = services.get("tutor", TutorService)
    tutor.kb_dir = make_small_kb(tmp_path, ("paracetamol", "warfarin", "asthma"))
    try:
        tutor.prepare()
        turn = tutor.ask("What is the antidote for paracetamol overdose?", "student")
        assert turn.model == "picked" and not turn.retrieval_only
        assert asked and asked[0].temperature is not None and asked[0].temperature <= 0.2
        assert (asked[0].top_p, asked[0].repeat_penalty) == (0.5, 1.3)  # the model's settings
        tuned = services.chat_for("tutor")
        assert isinstance(tuned, TunedChat) and tuned.describe()["context_tokens"] == 1024
        assert "".join(answered).strip()  # the picked model was asked, and answered
        assert services.chat_for("memories").name == "scripted"
        records = list(audit_service(services).entries())
        assert records[-1].data["model"] == "picked"
    finally:
        tutor.close()
        services.close()


def test_conversations_offer_the_users_gguf_files_never_the_test_model(tmp_path: Path) -> None:
    from backends.conversations.service import ConversationAgent
    from backends.models.embedders import HashingEmbedder

    (tmp_path / "models").mkdir()
    write_gguf(tmp_path / "models" / "chatty.gguf")
    write_gguf(tmp_path / "models" / "base.gguf", template=None)
    cfg = Config(home=tmp_path, chat_model="smollm2", models={"conversations": "retrieval-only"})
    services = Services(cfg.validated())
    agent = ConversationAgent(
        # as its build(needs) builds it: the conversations' own model is its configured one
        Config(home=tmp_path, chat_model=cfg.model_for("conversations")),
        embedder=lambda: HashingEmbedder(64),
        chat=lambda: services.chat_choice_for("conversations"),
        use_keyring=False,
    )
    try:
        keys = [c.key for c in agent.model_choices()]
        assert keys == ["retrieval-only", "gguf:chatty"]  # no scripted, no base model
        assert agent.choice("gguf:chatty").provider == "llama.cpp"
        model, choice = agent.chat_model("retrieval-only")
        assert model.retrieval_only and choice.key == "retrieval-only"
    finally:
        agent.close()
        services.close()


def test_a_model_picked_away_from_is_not_kept_loaded(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    cfg = Config(home=tmp_path, chat_model="retrieval-only", models={"tutor": "scripted"})
    services = Services(cfg.validated())
    services.chat_for("tutor")
    services.chat_for("memories")
    loaded = services._loaded
    assert {k[0] for k in loaded.loaded_keys()} == {"scripted", "retrieval-only"}
    services.use_model("tutor", "retrieval-only")
    assert {k[0] for k in loaded.loaded_keys()} == {"retrieval-only"}  # nobody uses scripted now
    assert services.chat_for("tutor").retrieval_only


def test_doctor_has_a_row_per_assistant_model_and_lists_the_files(tmp_path: Path) -> None:
    from backends import doctor

    (tmp_path / "models").mkdir()
    write_gguf(tmp_path / "models" / "ok.gguf")
    (tmp_path / "models" / "junk.gguf").write_bytes(b"junk")
    cfg = Config(
        home=tmp_path, embedder="hashing", chat_model="scripted", models={"tutor": "gguf:junk"}
    ).validated()
    checks = {c.role: c for c in doctor.run(cfg)}
    tutor = checks["chat model (tutor)"]
    assert tutor.kind == "retrieval-only" and "not a GGUF model file" in tutor.reason
    assert "chat model (memories)" not in checks  # uses the default: its row is "chat model"
    files = checks["model files"]
    assert files.ok and not files.required and files.kind == "2 GGUF file(s)"
    assert "junk.gguf" in files.reason and [f["key"] for f in files.details["files"]] == [
        "gguf:junk",
        "gguf:ok",
    ]


@pytest.mark.parametrize(
    "cfg",
    [
        Config(chat_model="gguf:my-model"),
        Config(chat_model="retrieval-only", models={"tutor": "gguf:/m/x.gguf"}),
        Config(chat_model="scripted", models={"memories": "smollm2"}),
    ],
)
def test_llama_cpp_is_preloaded_for_any_assistants_gguf(cfg: Config) -> None:
    """The window imports llama.cpp early with the GC paused (backends/preload.py) whenever an
    assistant will run a GGUF, not only when the default model is the bundled one."""
    from backends.preload import heavy_modules

    assert "llama_cpp" in heavy_modules(cfg)
    assert "llama_cpp" not in heavy_modules(Config(chat_model="scripted"))
