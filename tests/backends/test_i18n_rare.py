"""Rarer messages a Spanish user still read in English (issue 27): an embedder that does not
load, a migration journal that cannot be read or written, no free conversation id, the audit
log's copy refused or interrupted, a folder that cannot be written, a cancelled task, and
the " (imported)" after an imported conversation's name. English stays as it was."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from backends import cli, config, failures, i18n
from backends.errors import CancelledError, CustodiaEnvironmentError
from tests.i18n_words import compile_catalogues, english_words

FIXTURES = Path(__file__).parent / "conversations" / "fixtures"


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


def _english(text: str, home: Path) -> list[str]:
    """The English words of ``text`` without its details and paths."""
    return english_words(failures.without_details(text).replace(str(home), " "))


def _error(action: object, home: Path) -> str:
    with pytest.raises(Exception) as info:
        action()  # type: ignore[operator]
    said = str(info.value)
    assert not _english(said, home), said
    return said


def test_an_embedder_that_does_not_load_says_so_in_spanish(spanish: Path) -> None:
    from backends.models import registry

    said = []
    for embedder in ("hashing:uno", "hashing:1"):
        settings = config.load(environ={"CUSTODIA_EMBEDDER": embedder}, home=spanish)
        said.append(_error(lambda s=settings: registry.create_embedder(s), spanish))
    assert "no se puede usar como codificador" in said[0], said[0]
    assert "al menos 2" in said[1], said[1]


class _Ollama(BaseHTTPRequestHandler):
    """A loopback Ollama that answers /api/embed with no embeddings, or too few."""

    replies: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps(self.replies.pop(0)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_an_ollama_embedder_that_answers_wrong_says_so_in_spanish(spanish: Path) -> None:
    from backends.models.embedders import OllamaEmbedder

    _Ollama.replies = [{"error": "model not found"}, {"embeddings": [[0.1, 0.2]]}]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ollama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        none = _error(lambda: OllamaEmbedder("nomic", url, 5), spanish)
        assert none.startswith("Ollama no devolvió vectores para nomic"), none
        assert failures.split(none)[1] == '{"error": "model not found"}'
        embedder = OllamaEmbedder.__new__(OllamaEmbedder)
        embedder.__dict__.update(_model="nomic", _url=url + "/api/embed", _timeout=5, dimension=2)
        few = _error(lambda: embedder.embed_batch(["uno", "dos"]), spanish)
        assert "1×2" in few and "2 textos" in few, few
    finally:
        server.shutdown()
        server.server_close()


def test_a_migration_journal_that_cannot_be_read_or_written_is_said_in_spanish(
    spanish: Path,
) -> None:
    from backends.migrate.journal import Journal

    bad = spanish / "migration.json"
    bad.write_bytes(b"\xff\xfe no es JSON")
    read = _error(lambda: Journal.load(bad), spanish)
    assert "no se puede leer el diario de la migración" in read, read
    folder = spanish / "carpeta.json"
    folder.mkdir()
    (folder / "dentro").write_text("x")
    journal = Journal(folder)
    written = _error(journal.save, spanish)
    assert "no se puede escribir el diario de la migración" in written, written
    assert failures.split(written)[1], written  # the OS's words stay, as the details


def test_no_free_conversation_id_is_said_in_spanish(
    spanish: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backends.conversations import library as library_module
    from backends.conversations.files import Conversation, ConversationFiles

    files = ConversationFiles(spanish / "conversaciones")
    files.ensure()
    library = library_module.ConversationLibrary(files, spanish / "indice.sqlite3")
    taken = Conversation("a" * 32, "Hola", "2026-12-03T08:00:00+00:00", "scripted", "scripted")
    library.save_new(taken)
    monkeypatch.setattr(library_module, "new_id", lambda: taken.id)  # every id is taken
    said = _error(lambda: library.save_new(taken), spanish)
    assert said.endswith("no se encontró un identificador de conversación libre"), said


def test_the_audit_logs_copy_errors_speak_spanish(spanish: Path) -> None:
    from backends.stores.audit_log import Head
    from backends.stores.audit_log.record import Draft
    from backends.stores.audit_log.sqlite import SQLiteAuditLog

    source = SQLiteAuditLog(spanish / "origen.sqlite3")
    other = SQLiteAuditLog(spanish / "otro.sqlite3")
    empty = SQLiteAuditLog(spanish / "vacio.sqlite3")
    source.append_many([Draft("test.write", None, {"n": i}) for i in range(3)])
    other.append_many([Draft("test.other", None, {"n": i}) for i in range(2)])
    said = [
        _error(lambda: source.resume_point(other), spanish),
        _error(lambda: source.copy_to(empty, after=9), spanish),
        _error(lambda: empty.extend([(6, "{}", "00")], Head(5, "00")), spanish),
    ]
    assert "no son el comienzo de" in said[0], said[0]
    assert "no hay ningún registro 9 desde el que reanudar" in said[1], said[1]
    assert "el registro cambió durante la copia" in said[2], said[2]


def test_a_store_folder_that_cannot_be_written_is_said_in_spanish(spanish: Path) -> None:
    from backends.stores.description import writable_folder

    if not Path("/proc/sys").is_dir() or not Path("/proc/sys").exists():
        pytest.skip("no read-only folder to try")
    import os

    if os.access("/proc/sys", os.W_OK):
        pytest.skip("every folder is writable here")
    said = _error(lambda: writable_folder(Path("/proc/sys")), spanish)
    assert said == "/proc/sys: no se puede escribir en la carpeta", said


def test_a_cancelled_task_says_so_in_spanish(spanish: Path) -> None:
    from backends.progress import Progress

    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError) as info:
        progress.check()
    assert str(info.value) == "cancelado por el usuario"


def test_an_imported_conversation_is_named_in_the_users_language_at_import(
    spanish: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = FIXTURES / "chatgpt_conversations.json"
    assert cli.main(["conversations", "import", str(source)]) == 0
    capsys.readouterr()
    assert cli.main(["conversations", "list", "--json"]) == 0
    names = sorted(row["name"] for row in json.loads(capsys.readouterr().out))
    assert names == ["Sourdough starter help (importada)", "Trip to Lisbon (importada)"]
    # an export of an imported one, imported again, keeps one suffix (either language)
    from backends.conversations.importers import imported_name

    assert imported_name("Trip to Lisbon (importada)") == "Trip to Lisbon (importada)"
    assert imported_name("Trip to Lisbon (imported)") == "Trip to Lisbon (imported)"


def test_english_is_unchanged(tmp_path: Path) -> None:
    from backends.conversations.importers import imported_name
    from backends.progress import Progress

    i18n.install("en")
    assert imported_name("Trip") == "Trip (imported)"
    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError, match=r"^cancelled by the user$"):
        progress.check()
    from backends.migrate.journal import Journal

    bad = tmp_path / "migration.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(CustodiaEnvironmentError) as info:
        Journal.load(bad)
    assert str(info.value).startswith(f"{bad}: unreadable migration journal (details: ")


def test_the_audit_commands_refusals_speak_spanish(
    spanish: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty log to checkpoint, a record that is not there to prove, a signing key others
    can read."""
    from backends.audit.service import SIGNING_KEY_FILE, AuditService

    said = []
    assert cli.main(["audit", "checkpoint"]) != 0
    said.append(capsys.readouterr().err.strip())
    service = AuditService.open(config.load(), checkpoint_every=0)
    for n in range(3):
        service.append("tutor.turn", "ana", personal={"n": n}, n=n)
    service.close()
    assert cli.main(["audit", "prove", "99", "--output", str(spanish / "p")]) != 0
    said.append(capsys.readouterr().err.strip())
    assert cli.main(["audit", "checkpoint"]) == 0
    capsys.readouterr()
    key = next(spanish.rglob(SIGNING_KEY_FILE))
    key.chmod(0o644)
    assert cli.main(["audit", "checkpoint"]) != 0
    said.append(capsys.readouterr().err.strip())
    left = [line for line in said if not line or _english(line, spanish)]
    assert not left, "\n".join(said)
    assert "está vacío" in said[0] and "ninguna entrada 99" in said[1], said
    assert "otros usuarios pueden leer la clave de firma" in said[2], said[2]


def test_the_conversations_refusals_speak_spanish(spanish: Path) -> None:
    """An unknown model, a conversation too long to save, a new history with nothing locked,
    a Bolt address that is not one."""
    from backends import net
    from backends.conversations import ConversationAgent
    from backends.conversations.files import (
        MAX_MESSAGES,
        Conversation,
        StoredMessage,
        check_size,
    )
    from backends.conversations.keys import generate_key
    from backends.services import Services

    services = Services(config.load())
    try:
        agent = services.get("conversations", ConversationAgent)
        said = [
            _error(lambda: agent.choice("nada"), spanish),
            _error(lambda: agent.start_new_history(generate_key()), spanish),
        ]
    finally:
        services.close()
    long = Conversation("b" * 32, "Larga", "2026-12-03T08:00:00+00:00", "scripted", "scripted")
    long.history.extend([StoredMessage("user", "hola")] * (MAX_MESSAGES + 1))
    said.append(_error(lambda: check_size(spanish / "larga.json", long), spanish))
    said.append(_error(lambda: net.loopback_bolt_uri("neo4j_uri", "http://127.0.0.1"), spanish))
    assert said[0].startswith("modelo desconocido 'nada'; elige uno de"), said[0]
    assert "ninguna conversación está bloqueada" in said[1], said[1]
    assert "no se guardó" in said[2], said[2]
    assert "no es una URI de Bolt" in said[3], said[3]


def test_a_memory_store_that_is_closed_or_foreign_says_so_in_spanish(
    spanish: Path, tmp_path: Path
) -> None:
    import sqlite3

    from backends.stores.memories.sqlite import SQLiteMemoryStore

    store = SQLiteMemoryStore(tmp_path / "memories.sqlite3", 8)
    store.close()
    closed = _error(lambda: store.conn, spanish)
    assert "está cerrado" in closed, closed
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE vectores (id INTEGER PRIMARY KEY, embedding BLOB)")
    conn.close()
    said = _error(lambda: SQLiteMemoryStore(foreign, 8), tmp_path)
    assert "no es la tabla de recuerdos" in said, said


def test_threads_that_cannot_be_used_say_so_in_spanish(spanish: Path, tmp_path: Path) -> None:
    from backends.threads import ThreadIndex

    index = ThreadIndex(tmp_path / "threads.sqlite3")
    index.close()
    said = _error(lambda: index.listed("tutor", "ana"), tmp_path)
    assert "no se puede usar la lista de hilos" in said, said
