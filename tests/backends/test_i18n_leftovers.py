"""What a Spanish user still read in English after the first pass of issue 27: the team's
verdict, the loopback refusals, the audit keys' and checkpoints' errors, a Bolt server in
the storage map, progress lines, the recall's reasons and a migration problem said twice."""

from __future__ import annotations

import ast
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backends import cli, failures, i18n
from backends.errors import ConfigError
from tests.i18n_words import compile_catalogues, english_words

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def spanish(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    i18n.install("es")
    try:
        yield tmp_path
    finally:
        i18n.install("en")


def _said(text: str, home: Path) -> list[str]:
    """The English words of ``text`` without its details, its paths and the data dir."""
    return english_words(failures.without_details(text).replace(str(home), " "))


def test_every_progress_line_is_marked_for_translation() -> None:
    """``progress.start(n, "reading notes")`` showed its words in English in the status bar
    and on the terminal."""
    left = []
    for path in sorted((ROOT / "backends").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("start", "advance")
                and "progress" in ast.unparse(node.func.value).lower()
                and len(node.args) >= 2
            ):
                continue
            said = node.args[1]
            if isinstance(said, ast.Constant) and said.value:
                left.append(f"{path.relative_to(ROOT)}:{node.lineno}: {said.value!r}")
            elif isinstance(said, ast.JoinedStr) and any(
                isinstance(v, ast.Constant) and re.search(r"[a-z]{3}", str(v.value))
                for v in said.values
            ):
                left.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(said)}")
    assert not left, "progress lines never translated:\n" + "\n".join(left)


def test_the_team_says_its_verdict_in_spanish(
    spanish: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "Finished — unverified draft: nothing in it could be checked (no code): the model's
    draft." in the feed and the command's verification line."""
    assert cli.main(["ask", "multiagent", "Escribe", "código", "Python", "que", "lea", "CSV"]) == 0
    out = capsys.readouterr().out
    finished = [line for line in out.splitlines() if "Terminada — " in line]
    verdict = [line for line in out.splitlines() if line.startswith("verificación: ")]
    assert finished and verdict, out
    for line in finished + verdict:
        shown = line.split("Terminada — ")[-1] if "Terminada" in line else line
        assert not _said(shown, spanish), line
    assert "no se pudo comprobar nada (no hay código)" in finished[0], finished


def test_the_loopback_refusals_speak_spanish(spanish: Path) -> None:
    from backends import net

    for url in ("http://10.1.2.3:11434", "http://", "http://[::1"):
        with pytest.raises(ConfigError) as refused:
            net.require_loopback("CUSTODIA_OLLAMA_URL", url)
        said = str(refused.value).replace(url, " ")
        assert not _said(said, spanish), said
    with pytest.raises(ConfigError) as refused:
        net.require_loopback("CUSTODIA_OLLAMA_URL", "http://10.1.2.3:11434")
    assert "Custodia solo se conecta a este equipo" in str(refused.value)


def test_the_audit_keys_and_checkpoints_errors_speak_spanish(spanish: Path) -> None:
    from backends.audit import checkpoints, pseudonyms

    with pytest.raises(pseudonyms.KeyStoreError) as missing:
        pseudonyms._open_read_only(spanish / "nowhere.sqlite3")
    garbage = spanish / "checkpoint.json"
    garbage.write_text("not a checkpoint at all")
    with pytest.raises(checkpoints.CheckpointRejected) as rejected:
        checkpoints.read_exported(garbage, Ed25519PrivateKey.generate().public_key())
    with pytest.raises(checkpoints.CheckpointError) as bad_key:
        checkpoints.public_key_from_hex("zz")
    for err in (missing.value, rejected.value, bad_key.value):
        assert not _said(str(err), spanish), str(err)
    assert "almacén de claves" in str(missing.value)


def test_a_bolt_server_is_named_in_spanish_in_the_storage_map(spanish: Path) -> None:
    from backends.storage_map import engine_text

    assert engine_text("Bolt server (Neo4j 5.26.0)") == "servidor Bolt (Neo4j 5.26.0)"
    assert engine_text("SQLite (WAL) + in-process L2") == "SQLite (WAL) + L2 en el proceso"


def test_recall_says_why_in_spanish(spanish: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The memories' reasons ("meaning 0.67 · name: Lucía") and their numbers (0,67)."""
    assert cli.main(["memories", "add", "Mi hija se llama Lucía y vive en Valencia"]) == 0
    capsys.readouterr()
    assert cli.main(["memories", "search", "¿Dónde vive Lucía?"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"significado \d,\d\d", out) and "nombre: " in out, out
    assert not _said(out, spanish), out


def test_an_unreachable_server_is_said_once(
    spanish: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "servidor no accesible: http://…: no accesible: …" said it twice."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("CUSTODIA_CHROMA_URL", f"http://127.0.0.1:{port}")
    assert cli.main(["migrate", "--to", "server", "--dry-run"]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "accesible" in text, text
    assert not [line for line in text.splitlines() if line.count("accesible") > 1], text
