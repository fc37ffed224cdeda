"""Every message the commands print goes through the catalogue (issue 27 items 2 and 4).

The commands are run under a pseudo-translation that writes every translated message with
accented vowels ("récórds"), so whatever English is left in their output was never marked
for translation: the check does not wait for the Spanish catalogue to be filled, and
`scripts/i18n.py check` (tests/backends/test_i18n_catalogues.py) then makes sure each marked
message has its Spanish.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gettext
import re
import socket
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import cli, failures, i18n
from tests.i18n_words import compile_catalogues, english_words

#: a placeholder of str.format or of %-formatting: kept as it is, or the message breaks
_PLACEHOLDER = re.compile(
    r"(\{[^{}]*\}|%\([^)]*\)[#0 +-]*\d*(?:\.\d+)?[a-zA-Z]|%[#0 +-]*\d*(?:\.\d+)?[a-zA-Z%])"
)
_ACCENTED = str.maketrans("aeiouyAEIOUY", "áéíóúýÁÉÍÓÚÝ")


def pseudo(message: str) -> str:
    """``message`` with its words accented and its placeholders untouched."""
    parts = _PLACEHOLDER.split(message)
    return "".join(p if i % 2 else p.translate(_ACCENTED) for i, p in enumerate(parts))


@functools.cache
def marked() -> frozenset[str]:
    """Every message marked in ``backends/`` (and argparse's), as the catalogue's update
    extracts them (scripts/i18n.py): only these are ever translated."""
    compile_catalogues()  # loads the tool
    tool = sys.modules["custodia_i18n_tool"]
    out: set[str] = set()
    for message in tool.extract():
        out.update(message.id if isinstance(message.id, tuple) else (message.id,))
    return frozenset(out)


class Pseudo(gettext.NullTranslations):
    """A catalogue holding every marked message, each "translated" with accents."""

    def gettext(self, message: str) -> str:
        return pseudo(message) if message in marked() else message

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return self.gettext(msgid1 if n == 1 else msgid2)


def test_the_pseudo_translation_keeps_placeholders() -> None:
    assert pseudo("OK {count:,} records, %(prog)s: %s") == "ÓK {count:,} récórds, %(prog)s: %s"
    assert not english_words(pseudo("The model's answer, not shown as fact"))


@pytest.fixture
def pseudo_language(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    monkeypatch.setattr(i18n, "_translation", Pseudo())
    monkeypatch.setattr(i18n, "_language", "es")
    monkeypatch.setattr(argparse, "_", i18n.gettext_)
    monkeypatch.setattr(cli, "install_language", lambda environ=None: "es")
    yield tmp_path
    i18n.install("en")


def _english(text: str, home: Path) -> list[str]:
    left = []
    for line in text.replace(str(home), " ").splitlines():
        if words := english_words(line):
            left.append(f"{sorted(set(words))}: {line.strip()}")
    return left


COMMANDS = [
    ["memories", "add", "Mi hija se llama Lucía"],
    ["memories", "list"],
    ["storage"],
    ["doctor"],
    ["audit", "verify"],
    ["sessions"],
    ["models", "list"],
]


def test_the_commands_print_no_unmarked_english(
    pseudo_language: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    left = []
    for command in COMMANDS:
        cli.main(command)
        out = capsys.readouterr()
        left += [
            f"custodia {' '.join(command)}: {line}"
            for line in _english(out.out + out.err, pseudo_language)
        ]
    assert not left, "English never marked for translation:\n" + "\n".join(left)


def test_models_list_names_the_assistants_and_numbers_in_spanish(
    pseudo_language: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: "2,048 tokens; lo usa: tutor, memories, conversations, multiagent"."""
    monkeypatch.delenv("CUSTODIA_CHAT_MODEL")  # the bundled model answers every assistant
    assert cli.main(["models", "list"]) == 0
    text = capsys.readouterr().out
    assert not _english(text, pseudo_language), text
    assert pseudo("clinical tutor") in text and pseudo("multi-agent") in text
    assert "2,048" not in text and not re.search(r"\d\.\d GB", text)


def test_the_commands_speak_spanish(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same walk with the Spanish catalogue itself: no English UI word left (issue 27
    item 4: storage, doctor, audit verify, sessions, memories add, models list)."""
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    left = []
    try:
        for command in COMMANDS:
            cli.main(command)
            out = capsys.readouterr()
            left += [
                f"custodia {' '.join(command)}: {line}"
                for line in _english(out.out + out.err, tmp_path)
            ]
    finally:
        i18n.install("en")
    assert not left, "English in the Spanish commands:\n" + "\n".join(left)


def test_a_doctor_row_for_one_assistant_names_it_by_its_title(pseudo_language: Path) -> None:
    from backends import doctor

    row = doctor.Check("chat model (tutor)", "smollm2", doctor.LOCAL, ok=True).line()
    assert pseudo("chat model ({assistant})").format(assistant=pseudo("clinical tutor")) in row
    assert not english_words(row)


def _no_server_listens() -> str:
    """A URL nothing answers (a port just freed): the dry run's probe fails at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _migrate_dry_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path
) -> list[str]:
    """``custodia migrate --to server --dry-run``'s English lines: first with no server
    configured (its error), then with an unreachable Chroma server (the plan, a problem)."""
    monkeypatch.delenv("CUSTODIA_CHROMA_URL", raising=False)
    assert cli.main(["migrate", "--to", "server", "--dry-run"]) == 1
    text = capsys.readouterr().err
    monkeypatch.setenv("CUSTODIA_CHROMA_URL", _no_server_listens())
    assert cli.main(["migrate", "--to", "server", "--dry-run"]) == 1
    out = capsys.readouterr()
    text += out.out + out.err
    return _english(text, home)


def test_the_migration_plan_is_marked_for_translation(
    pseudo_language: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: the plan's step names, actions (COPY, REBUILD, STAYS, NOTHING), places,
    details and problems, and "no server is configured", all through the catalogue."""
    left = _migrate_dry_run(monkeypatch, capsys, pseudo_language)
    assert not left, "English never marked for translation:\n" + "\n".join(left)


def test_the_migration_plan_speaks_spanish(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    try:
        left = _migrate_dry_run(monkeypatch, capsys, tmp_path)
        plan = cli.main(["migrate", "--to", "server", "--dry-run"])
        text = capsys.readouterr().out
    finally:
        i18n.install("en")
    assert not left, "English in the Spanish migration plan:\n" + "\n".join(left)
    assert plan == 1 and "vectores de conversaciones" in text and "reconstruir" in text, text


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> Iterator[list[str]]:
    """Every command's words (``["kb", "import"]``), walking the subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, [*path, name])
            return
    yield path


def _missing_positionals(command: list[str]) -> list[argparse.Action]:
    parser = cli.build_parser()
    for word in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return [
        a
        for a in parser._actions
        if not a.option_strings and a.nargs in (None, "+") and a.default is None
    ]


def test_a_missing_argument_is_named_by_its_placeholder_as_shown(
    pseudo_language: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27: "se requieren los siguientes argumentos: pregunta" under "uso: … pregunta"
    (``custodia ask tutor``, ``custodia kb import`` with nothing after them), never the
    English name of the argument."""
    checked, left = 0, []
    for command in _commands(cli.build_parser(), []):
        missing = _missing_positionals(command)
        if not command or not missing:
            continue
        with pytest.raises(SystemExit) as exited:
            cli.main(command)
        assert exited.value.code == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        checked += 1
        for action in missing:
            name = action.dest if action.metavar is None else action.metavar
            shown = cli.placeholder(name)
            if shown == name or shown not in error.split(": ", 2)[-1]:
                left.append(f"custodia {' '.join(command)}: {name!r} in {error}")
    assert checked >= 5 and not left, "\n".join(left)


def test_a_missing_argument_is_named_in_spanish(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    try:
        errors = {}
        for command in (["ask", "tutor"], ["kb", "import"]):
            with pytest.raises(SystemExit):
                cli.main(command)
            errors[command[0]] = capsys.readouterr().err.strip().splitlines()[-1]
    finally:
        i18n.install("en")
    assert errors["ask"].endswith("argumentos: pregunta, --user"), errors
    assert errors["kb"].endswith("argumentos: ruta"), errors


# -- what the world says when it goes wrong (issue 27: OS and library errors) ---------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _servers_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server profile with every server on a port nothing listens on."""
    monkeypatch.setenv("CUSTODIA_PROFILE", "server")
    monkeypatch.setenv("CUSTODIA_REDIS_URL", f"redis://127.0.0.1:{_free_port()}/0")
    monkeypatch.setenv("CUSTODIA_POSTGRES_DSN", f"postgresql://u:p@127.0.0.1:{_free_port()}/c")
    monkeypatch.setenv("CUSTODIA_NEO4J_URI", f"bolt://127.0.0.1:{_free_port()}")
    monkeypatch.setenv("CUSTODIA_NEO4J_USER", "neo4j")
    monkeypatch.setenv("CUSTODIA_NEO4J_PASSWORD", "wrong")
    monkeypatch.setenv("CUSTODIA_QDRANT_URL", f"http://127.0.0.1:{_free_port()}")
    monkeypatch.setenv("CUSTODIA_CHROMA_URL", f"http://127.0.0.1:{_free_port()}")
    monkeypatch.setenv("CUSTODIA_OLLAMA_URL", f"http://127.0.0.1:{_free_port()}")


def _audited_home(home: Path) -> Path:
    from backends.audit.service import AuditService
    from backends.config import Config

    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(4):
        service.append("tutor.turn", "ana", personal={"n": n}, n=n)
    service.close()
    return home


def _tamper(home: Path, statement: str, trigger: str) -> None:
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute(statement)
    conn.close()


def _models(folder: Path) -> dict[str, Path]:
    """A file that is no GGUF, one cut inside its header, and one that is not there."""
    from tests.backends.models.gguf_files import write_gguf

    folder.mkdir(parents=True, exist_ok=True)
    garbage = folder / "garbage.gguf"
    garbage.write_bytes(b"not a model at all" * 64)
    whole = write_gguf(folder / "whole.gguf")
    cut = folder / "cut.gguf"
    cut.write_bytes(whole.read_bytes()[:40])
    return {"garbage": garbage, "cut": cut, "missing": folder / "nowhere.gguf"}


def _run(command: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with contextlib.suppress(SystemExit):
        cli.main(command)
    out = capsys.readouterr()
    return out.out + out.err


def _error_walk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], root: Path
) -> tuple[list[str], str]:
    """Every command on the error paths a user meets: servers down, a corrupt file, a bad
    model file, a broken audit chain. Their English lines (details left out: the library's
    own words, kept only there) and the whole output."""
    said: list[tuple[str, str]] = []

    def walk(home: Path, commands: list[list[str]]) -> None:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        monkeypatch.setenv("CUSTODIA_HOME", str(home))
        for command in commands:
            said.append(
                (f"custodia {' '.join(command)}", _run(command, capsys).replace(str(root), " "))
            )

    with monkeypatch.context() as down:
        _servers_down(down)
        walk(
            root / "down",
            [["doctor"], ["storage"], ["audit", "verify"], ["sessions"], ["kb", "stats"]],
        )
    corrupt = root / "corrupt"
    corrupt.mkdir(mode=0o700)
    (corrupt / "audit.sqlite3").write_bytes(b"\x13garbage, not SQLite" * 300)
    (corrupt / "multiagent.sqlite3").write_bytes(b"\x13garbage, not SQLite" * 300)
    walk(corrupt, [["audit", "verify"], ["storage"], ["sessions"]])
    bad = _models(root / "files")
    for kind, path in bad.items():
        with monkeypatch.context() as model:
            model.setenv("CUSTODIA_CHAT_MODEL", f"gguf:{path}")
            walk(root / f"model-{kind}", [["models", "add", str(path)], ["doctor"]])
    for name, statement, trigger in (
        (
            "changed",
            "UPDATE audit_log SET record = replace(record, 'tutor', 'tutoR')",
            "audit_log_no_update",
        ),
        ("gap", "DELETE FROM audit_log WHERE seq = 2", "audit_log_no_delete"),
    ):
        home = _audited_home(root / f"chain-{name}")
        _tamper(home, statement, trigger)
        walk(home, [["audit", "verify"], ["storage"]])
    left = [
        f"{where}: {line}"
        for where, text in said
        for line in _english(failures.without_details(text), root)
    ]
    return left, "\n".join(text for _where, text in said)


def test_the_error_paths_are_marked_for_translation(
    pseudo_language: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27: servers down, a corrupt file, a bad model file, a broken chain — every
    sentence through the catalogue; the library's raw text only as details."""
    left, text = _error_walk(monkeypatch, capsys, pseudo_language)
    assert not left, "English never marked for translation:\n" + "\n".join(left)
    details = pseudo("details: {0}").split("{0}")[0]
    assert details in text and "Connection refused" in text  # kept, as details
    for line in text.splitlines():
        if "Connection refused" in line or "not a database" in line:
            assert line.index(details) < line.index(
                "Connection refused" if "Connection refused" in line else "not a database"
            ), line


def test_the_error_paths_speak_spanish(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    try:
        left, text = _error_walk(monkeypatch, capsys, tmp_path)
    finally:
        i18n.install("en")
    assert not left, "English in the Spanish error paths:\n" + "\n".join(left)
    assert "la conexión fue rechazada" in text and "(detalles: " in text, text
    assert "ROTO" in text and "discordancia de hash" in text, text
    assert "el archivo no es una base de datos" in text, text


def test_a_number_in_an_error_is_written_as_the_language_writes_it() -> None:
    """Issue 27: "0,5 s" in Spanish, never "0.5 s"."""
    try:
        i18n.install("es")
        assert i18n.number(0.5, None) == "0,5" and i18n.number(5.0, None) == "5"
    finally:
        i18n.install("en")
    assert i18n.number(0.5, None) == "0.5"


# -- the conversations' own words (issue 27: headings, unreadable files, names, keys) --------


def _conversations_walk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], home: Path
) -> tuple[list[str], str]:
    """A greeting asked (its answer's heading), a conversation under another key listed
    (its reason), the storage map's note on it, and a malformed key: the English lines
    (details left out) and the whole output."""
    from backends.conversations.keys import generate_key

    monkeypatch.delenv("CONVERSATIONS_KEY", raising=False)
    said = [_run(["ask", "conversations", "Hola"], capsys)]
    said.append(_run(["rotate-key", "--generate"], capsys))
    monkeypatch.setenv("CONVERSATIONS_KEY", generate_key())  # not the key it is under
    for command in (["conversations", "list"], ["storage"]):
        said.append(_run(command, capsys))
    monkeypatch.setenv("CONVERSATIONS_KEY", "not-a-key")
    said.append(_run(["conversations", "list"], capsys))
    # the scripted test model's own words are no message of Custodia's
    said = [
        "\n".join(line for line in t.splitlines() if not line.startswith("Scripted answer"))
        for t in said
    ]
    text = "\n".join(said).replace(str(home), " ")
    return _english(failures.without_details(text), home), text


def test_the_conversations_words_are_marked_for_translation(
    pseudo_language: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    left, text = _conversations_walk(monkeypatch, capsys, pseudo_language)
    assert not left, "English never marked for translation:\n" + "\n".join(left)
    assert "CONVERSATIONS_KEY" not in failures.without_details(text), text  # issue 30


def test_the_conversations_speak_spanish(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Spanish user's "Hola" gets the Spanish heading; a new conversation's name is dated
    as Spanish writes it ("Conversación 2/12/26 17:18", never "Conversation 2026-12-02")."""
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    try:
        left, text = _conversations_walk(monkeypatch, capsys, tmp_path)
    finally:
        i18n.install("en")
    assert not left, "English in the Spanish conversations:\n" + "\n".join(left)
    assert "Palabras del propio modelo" in text and "clave incorrecta" in text, text
    assert re.search(r"Conversación \d{1,2}/\d{1,2}/\d\d \d{1,2}:\d\d", text), text
