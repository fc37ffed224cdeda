"""Errors a Spanish user met in English after the first passes of issue 27: a setting named by
its key or its environment variable at the head of the sentence ("ollama_url: …",
"CUSTODIA_OLLAMA_URL: …"), rotate-key's requests naming CUSTODIA_NEW_CONVERSATIONS_KEY, the
passphrase's errors, a memory or a conversation that is not there, an import that is no export.
The key and the variable stay, as the details."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import cli, config, failures, i18n
from backends.errors import ConfigError
from tests.i18n_words import compile_catalogues, english_words


@pytest.fixture
def spanish(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    monkeypatch.delenv("CONVERSATIONS_KEY", raising=False)
    i18n.install("es")
    try:
        yield tmp_path
    finally:
        i18n.install("en")


def _sentence(text: str, home: Path) -> str:
    return failures.without_details(text).replace(str(home), " ")


@pytest.mark.parametrize(
    ("variable", "value", "key", "said"),
    [
        ("CUSTODIA_OLLAMA_URL", "ftp://127.0.0.1", "ollama_url", "la dirección de Ollama: "),
        ("CUSTODIA_PROFILE", "nube", "profile", "el perfil: "),
        ("CUSTODIA_TUTOR_MODEL", "nada", "models.tutor", "el modelo de chat de tutor clínico: "),
        ("CUSTODIA_REDIS_URL", "http://127.0.0.1", "redis_url", "la dirección de Redis: "),
    ],
)
def test_a_setting_is_named_in_spanish_its_key_and_variable_are_the_details(
    spanish: Path, variable: str, value: str, key: str, said: str
) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(environ={variable: value}, home=spanish)
    sentence, details = failures.split(str(info.value))
    assert sentence.startswith(said), sentence
    assert key not in sentence and variable not in sentence and not english_words(sentence)
    assert details == f"{key}, {variable}" and info.value.key == key


def test_a_refused_address_names_the_setting_not_the_variable(spanish: Path) -> None:
    from backends import net

    with pytest.raises(ConfigError) as refused:
        net.require_loopback("CUSTODIA_OLLAMA_URL", "http://10.1.2.3:11434")
    sentence, details = failures.split(str(refused.value))
    assert sentence.startswith("la dirección de Ollama: 10.1.2.3:11434: Custodia solo se conecta")
    assert details == "ollama_url, CUSTODIA_OLLAMA_URL"


def test_english_names_the_setting_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(environ={"CUSTODIA_QDRANT_URL": "ftp://x"}, home=tmp_path)
    assert str(info.value) == (
        "the Qdrant address: 'ftp://x' must start with one of http://, https:// "
        "(details: qdrant_url, CUSTODIA_QDRANT_URL)"
    )


def test_rotate_key_asks_in_spanish_without_naming_the_variable_in_its_sentence(
    spanish: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUSTODIA_NEW_CONVERSATIONS_KEY", raising=False)
    monkeypatch.delenv("CUSTODIA_NEW_CONVERSATIONS_PASSPHRASE", raising=False)
    said = []
    for command in (["rotate-key"], ["rotate-key", "--passphrase"]):
        assert cli.main(command) == 2  # no terminal here to type it in
        said.append(capsys.readouterr().err.strip())
    for line, variable in zip(
        said,
        ("CUSTODIA_NEW_CONVERSATIONS_KEY", "CUSTODIA_NEW_CONVERSATIONS_PASSPHRASE"),
        strict=True,
    ):
        sentence, details = failures.split(line)
        assert "en el entorno" in sentence and variable not in sentence, line
        assert not english_words(sentence) and details == variable, line


def test_the_passphrases_errors_speak_spanish(spanish: Path) -> None:
    from backends.conversations.errors import InvalidKeyError
    from backends.conversations.keys import KDF_FILE, PassphraseFile

    store = PassphraseFile(spanish / KDF_FILE)
    errors = []
    for passphrase in ("corta", "caballo correcto pila grapa"):
        with pytest.raises(InvalidKeyError) as info:
            store.unlock(passphrase)
        errors.append(str(info.value))
        if passphrase != "corta":
            continue
        with pytest.raises(InvalidKeyError) as short:
            store.add(passphrase)
        errors.append(str(short.value))
    store.add("caballo correcto pila grapa")
    with pytest.raises(InvalidKeyError) as wrong:
        store.unlock("caballo incorrecto", where="CONVERSATIONS_PASSPHRASE")
    errors.append(str(wrong.value))
    for error in errors:
        assert not english_words(_sentence(error, spanish)), error
    assert "frase de contraseña incorrecta" in errors[-1]
    assert failures.split(errors[-1])[1] == "CONVERSATIONS_PASSPHRASE"


def test_what_is_not_there_is_said_in_spanish(
    spanish: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = spanish / "malo.json"
    bad.write_text("{esto no es JSON", encoding="utf-8")
    other = spanish / "otro.json"
    other.write_text('{"formato": "otro"}', encoding="utf-8")
    said = []
    for command in (
        ["memories", "delete", "no existe"],
        ["conversations", "show", "nope"],
        ["conversations", "rename", "nope", "nuevo"],
        ["conversations", "import", str(bad)],
        ["conversations", "import", str(other)],
        ["conversations", "import", str(spanish / "no-esta.json")],
    ):
        assert cli.main(command) == 1
        said.append(capsys.readouterr().err.strip())
    assert cli.main(["kb", "import", str(spanish / "no-esta"), "--user", "ana"]) == 1
    said.append(capsys.readouterr().err.strip())
    for usage in (["hola", "-k", "0"], [" "]):
        with pytest.raises(SystemExit):
            cli.main(["ask", "tutor", *usage, "--user", "ana"])
        # after the command's name, which is typed as it is
        said.append(capsys.readouterr().err.strip().splitlines()[-1].partition(" error: ")[2])
    left = [line for line in said if english_words(_sentence(line, spanish))]
    assert not left, "\n".join(left)
    assert "no existe ese recuerdo" in said[0] and "no es JSON válido" in said[3], said
    assert said[-2].endswith("debe estar entre 1 y 20 pasajes, no 0"), said[-2]


def test_the_memories_undo_says_what_it_takes_back_in_spanish(spanish: Path) -> None:
    """The window's "Undo …" read "Deshacer remember “…”"."""
    from backends.memories import MemoryAssistant
    from backends.services import Services

    services = Services(config.load())
    try:
        memories = services.get("memories", MemoryAssistant)
        added = memories.remember("Mi perro se llama Toby")
        edited = memories.update("Mi perro se llama Toby", "Mi perro se llama Rex")
        deleted = memories.delete("Mi perro se llama Rex")
    finally:
        services.close()
    said = [d.description for d in (added.undo, edited.undo, deleted) if d is not None]
    assert len(said) == 3 and not [d for d in said if english_words(d)], said
