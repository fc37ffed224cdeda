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
