"""Issue 26: a new assistant is one package, one registry line and one tab module. The fake
assistant of ``tests/fake_assistant`` is registered through the real registry path and then
appears in the storage map, the doctor, the CLI, ``[models]`` and erasure — with no list in
the program edited."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import assistants, doctor
from backends.cli import main
from backends.config import Config
from backends.services import Services
from backends.storage_map import storage_map
from tests.fake_assistant.service import EchoService


@pytest.fixture
def echo_registered() -> Iterator[None]:
    assistants.register("echo", "tests.fake_assistant.assistant:ASSISTANT")
    try:
        yield
    finally:
        assistants.unregister("echo")


@pytest.fixture
def config(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


def test_it_is_not_there_until_registered(config: Config) -> None:
    assert "echo" not in assistants.names()
    assert "echo notes" not in [row.kind for row in storage_map(config)]


def test_its_data_is_a_storage_map_row_measured_in_its_own_store(
    echo_registered: None, config: Config
) -> None:
    services = Services(config)
    try:
        echo = services.get("echo", EchoService)
        echo.add("ana", "hello")
        echo.add("ana", "again")
        rows = {row.kind: row for row in storage_map(config, services)}
    finally:
        services.close()
    assert echo.closed  # closed with the services
    assert rows["echo notes"].items == 2 and rows["echo notes"].assistant == "echo"
    assert rows["echo notes"].where == str(config.path("echo.sqlite3"))


def test_the_doctor_checks_its_store_and_its_model(echo_registered: None, config: Config) -> None:
    from dataclasses import replace

    config = replace(config, models={"echo": "retrieval-only"}).validated()  # [models] knows it
    checks = {check.role: check for check in doctor.run(config)}
    assert checks["echo notes store"].ok and checks["echo notes store"].where == str(
        config.path("echo.sqlite3")
    )
    assert "chat model (echo)" in checks


def test_an_unregistered_name_is_refused_in_models(config: Config) -> None:
    from dataclasses import replace

    from backends.config import ConfigError

    with pytest.raises(ConfigError, match="unknown assistant"):
        replace(config, models={"echo": "scripted"}).validated()


def test_its_command_and_its_erasure_run_from_the_cli(
    echo_registered: None,
    config: Config,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CUSTODIA_HOME", str(config.home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    assert main(["echo", "hi there"]) == 0
    assert "echo (scripted): hi there" in capsys.readouterr().out
    services = Services(config)
    try:
        services.get("echo", EchoService).add("carol", "a note")
    finally:
        services.close()
    assert main(["forget", "carol"]) == 1  # no audit key for carol: nothing to forget there…
    out = capsys.readouterr().out
    assert "echo: 1 note(s) of carol deleted" in out  # …but the echo assistant erased hers
