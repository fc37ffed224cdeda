from __future__ import annotations

from pathlib import Path

import pytest

from backends import config
from backends.config import Config
from backends.errors import ConfigError


def test_defaults_are_embedded_and_offline(tmp_path: Path) -> None:
    cfg = config.load(environ={}, home=tmp_path)
    assert cfg.profile == "embedded"
    assert (cfg.cache, cfg.audit, cfg.graph) == ("memory", "sqlite", "sqlite")
    assert cfg.embedder == "minilm" and cfg.chat_model == "smollm2"
    assert cfg.qdrant_path == tmp_path / "qdrant"


def test_home_from_environment(tmp_path: Path) -> None:
    cfg = config.load(environ={"CUSTODIA_HOME": str(tmp_path / "h")})
    assert cfg.home == tmp_path / "h"


def test_file_then_environment_precedence(tmp_path: Path) -> None:
    (tmp_path / "custodia.toml").write_text(
        'profile = "server"\nredis_url = "redis://127.0.0.1:1/0"\nembedder = "hashing"\n'
    )
    cfg = config.load(environ={"CUSTODIA_EMBEDDER": "hashing:64"}, home=tmp_path)
    assert cfg.profile == "server"
    assert cfg.cache == "redis"  # server profile + URL -> Redis
    assert cfg.audit == "sqlite"  # no DSN: stays embedded (each store on its own)
    assert cfg.embedder == "hashing:64"  # environment wins over the file


def test_mixed_profile_embedded_plus_postgres_audit(tmp_path: Path) -> None:
    env = {"CUSTODIA_POSTGRES_DSN": "postgresql://app@127.0.0.1:5/db"}
    (tmp_path / "custodia.toml").write_text('audit_backend = "postgres"\n')
    cfg = config.load(environ=env, home=tmp_path)
    assert (cfg.profile, cfg.cache, cfg.audit) == ("embedded", "memory", "postgres")


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"CUSTODIA_PROFILE": "cloud"}, "profile"),
        ({"CUSTODIA_REDIS_URL": "http://127.0.0.1"}, "redis_url"),
        ({"CUSTODIA_POSTGRES_DSN": "postgresql://"}, "postgres_dsn"),
        ({"CUSTODIA_NEO4J_URI": "neo4j"}, "neo4j_uri"),
        ({"CUSTODIA_EMBEDDER": "word2vec"}, "embedder"),
        ({"CUSTODIA_CHAT_MODEL": "gpt-9"}, "chat_model"),
        ({"CUSTODIA_QDRANT_URL": "ftp://x"}, "qdrant_url"),
    ],
)
def test_bad_value_names_the_key(tmp_path: Path, env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(environ=env, home=tmp_path)
    assert info.value.key == key
    assert key in str(info.value)


def test_selected_server_store_without_url_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "custodia.toml").write_text('cache_backend = "redis"\n')
    with pytest.raises(ConfigError, match="redis_url"):
        config.load(environ={}, home=tmp_path)


def test_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "custodia.toml").write_text("profile = [unterminated\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(environ={}, home=tmp_path)


def test_unknown_key_in_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "custodia.toml").write_text('colour = "blue"\n')
    with pytest.raises(ConfigError, match="colour"):
        config.load(environ={}, home=tmp_path)


def test_save_round_trip_keeps_secrets_out(tmp_path: Path) -> None:
    cfg = Config(
        home=tmp_path,
        profile="server",
        postgres_dsn="postgresql://app:hunter2@127.0.0.1:5432/custodia",
        neo4j_password="s3cret",
        conversations_key="k" * 44,
    )
    path = config.save(cfg)
    text = path.read_text()
    assert "s3cret" not in text and "k" * 44 not in text
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = config.load(environ={}, home=tmp_path)
    assert again.profile == "server" and again.postgres_dsn == cfg.postgres_dsn
    assert "hunter2" not in str(cfg.redacted())


def test_save_refuses_an_invalid_config_and_keeps_the_old_file(tmp_path: Path) -> None:
    config.save(Config(home=tmp_path, profile="server"))
    before = (tmp_path / "custodia.toml").read_text()
    with pytest.raises(ConfigError):
        config.save(Config(home=tmp_path, profile="nonsense"))
    assert (tmp_path / "custodia.toml").read_text() == before


MODELS_TOML = """
chat_model = "smollm2"
model_folders = ["~/llms", "/mnt/models"]

[models]
tutor = "gguf:qwen2.5-1.5b-instruct-q4_k_m"
memories = "retrieval-only"

[generation.tutor]
temperature = 0.05
max_tokens = 300

[generation."gguf:qwen2.5-1.5b-instruct-q4_k_m"]
context_size = 4096
threads = 2
system_prompt = "Answer in British English."
"""


def test_a_model_and_generation_settings_per_assistant(tmp_path: Path) -> None:
    (tmp_path / "custodia.toml").write_text(MODELS_TOML)
    cfg = config.load(environ={}, home=tmp_path)
    assert cfg.model_folders == ("~/llms", "/mnt/models")
    assert cfg.model_for("tutor") == "gguf:qwen2.5-1.5b-instruct-q4_k_m"
    assert cfg.model_for("memories") == "retrieval-only"
    assert cfg.model_for("conversations") == "smollm2"  # not named: chat_model
    tutor = cfg.generation_for("tutor")
    assert (tutor.temperature, tutor.max_tokens, tutor.context_size) == (0.05, 300, 4096)
    assert tutor.system_prompt == "Answer in British English."
    assert cfg.generation_for("multiagent").temperature == 0.3  # its default
    config.save(cfg)  # written back as the same tables
    again = config.load(environ={}, home=tmp_path)
    assert again == cfg
    assert (
        '[generation."gguf:qwen2.5-1.5b-instruct-q4_k_m"]'
        in (tmp_path / "custodia.toml").read_text()
    )


def test_environment_picks_an_assistant_model(tmp_path: Path) -> None:
    (tmp_path / "custodia.toml").write_text(MODELS_TOML)
    env = {"CUSTODIA_TUTOR_MODEL": "scripted", "CUSTODIA_CONVERSATIONS_MODEL": "gguf:/m/x.gguf"}
    cfg = config.load(environ=env, home=tmp_path)
    assert cfg.model_for("tutor") == "scripted"
    assert cfg.model_for("conversations") == "gguf:/m/x.gguf"
    assert cfg.model_for("memories") == "retrieval-only"  # the file's, kept


@pytest.mark.parametrize(
    ("toml", "key", "words"),
    [
        ('[models]\ntutr = "smollm2"\n', "models.tutr", "unknown assistant"),
        ('[models]\ntutor = "gpt-9"\n', "models.tutor", "gguf:<path or name>"),
        ("[models]\ntutor = 3\n", "models.tutor", "must be text"),
        ('chat_model = "gguf:"\n', "chat_model", "gguf:<path or name>"),
        ("[generation.tutor]\ntemperature = 5\n", "generation.tutor.temperature", "between 0"),
        ("[generation.tutor]\ntop_k = 5\n", "generation.tutor.top_k", "unknown setting"),
        (
            '[generation."gguf:x"]\ncontext_size = 10\n',
            'generation."gguf:x".context_size',
            "between 256",
        ),
        ("[generation.tutr]\ntemperature = 0.1\n", "generation.tutr", "neither an assistant"),
        ("generation = 3\n", "generation", "must hold tables"),
        ("model_folders = 3\n", "model_folders", "list of folder paths"),
    ],
)
def test_bad_model_settings_name_the_key(tmp_path: Path, toml: str, key: str, words: str) -> None:
    (tmp_path / "custodia.toml").write_text(toml)
    with pytest.raises(ConfigError, match=words) as info:
        config.load(environ={}, home=tmp_path)
    assert info.value.key == key


def test_gguf_keys_are_accepted_everywhere_a_model_is(tmp_path: Path) -> None:
    cfg = Config(
        home=tmp_path, chat_model="gguf:/models/a.gguf", models={"tutor": "gguf:phi-3.5-mini"}
    ).validated()
    assert cfg.model_for("tutor") == "gguf:phi-3.5-mini"
    assert "models" not in Config(home=tmp_path).to_toml_dict()  # no empty tables
