"""Checkpoints as C2SP signed notes, tlog-proofs and consistency proofs, end to end (CT10).

Written with ``custodia audit checkpoint/prove``, checked with ``custodia audit check`` from
the files and the verifier key alone; every mutation of a proof, a key or an origin is
rejected; a read-only copy of the data dir is verified, exported and proved from without a
byte written. (The same files are checked by the reference Go libraries in
``test_tlog_harness.py``.)
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backends.audit import AuditService
from backends.audit.proofs import (
    InclusionProof,
    ProofFileError,
    check_consistency,
    check_inclusion,
)
from backends.cli import main
from backends.config import Config
from backends.stores.audit_log import note

#: golang.org/x/mod/sumdb/note's own example (note_test.go): name, key and key hash
GO_EXAMPLE_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(11):
        service.append(
            "tutor.turn", "ana" if n % 2 else None, personal={"q": n} if n % 2 else None, n=n
        )
    service.close()
    return home


def _key(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run(capsys, "audit", "key")
    assert code == 0
    return out.strip()


def test_the_key_hash_is_sumdb_notes() -> None:
    """The example key of golang.org/x/mod/sumdb/note parses, and our hash agrees with it."""
    verifier = note.Verifier.parse(GO_EXAMPLE_VKEY)
    assert verifier.name == "PeterNeumann" and verifier.hash.hex() == "c74f20a3"
    assert note.verifier_key("PeterNeumann", verifier.public_key) == GO_EXAMPLE_VKEY


def test_a_note_signs_and_opens_and_refuses_tampering() -> None:
    key = Ed25519PrivateKey.generate()
    signed = note.sign("origin\n3\n" + base64.b64encode(bytes(32)).decode() + "\n", "o", key)
    verifier = note.Verifier.of("o", key.public_key())
    assert note.open_note(signed, verifier).startswith("origin\n3\n")
    for forged in (signed.replace("\n3\n", "\n4\n"), signed.replace("— o ", "— p ")):
        with pytest.raises(note.NoteError):
            note.open_note(forged, verifier)
    with pytest.raises(note.NoteError):
        note.open_note(signed, note.Verifier.of("o", Ed25519PrivateKey.generate().public_key()))


def test_prove_and_check_a_record_with_the_key_alone(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _key(capsys)
    assert key.startswith("custodia/audit/") and key.count("+") >= 2
    proof = tmp_path / "r5.tlog-proof"
    code, out, _ = run(capsys, "audit", "prove", "5", "--output", str(proof))
    assert code == 0 and "record 5" in out
    text = proof.read_text()
    assert text.startswith("c2sp.org/tlog-proof@v1\nextra ") and "\nindex 4\n" in text
    # offline: another folder, no data dir, only the files and the key
    shutil.rmtree(home)
    code, out, _ = run(capsys, "audit", "check", str(proof), "--key", key)
    assert code == 0 and out.startswith("OK record 5 is in the log"), out
    entry = tmp_path / "record.json"
    entry.write_bytes(InclusionProof.parse(text).entry or b"")
    assert run(capsys, "audit", "check", str(proof), "--key", key, "--entry", str(entry))[0] == 0
    entry.write_text(entry.read_text().replace('"v":1', '"v":2'))
    code, out, _ = run(capsys, "audit", "check", str(proof), "--key", key, "--entry", str(entry))
    assert code == 1 and out.startswith("FAILED")


def _mutations(text: str) -> dict[str, str]:
    proof = InclusionProof.parse(text)
    flipped = [bytearray(h) for h in proof.path]
    flipped[0][0] ^= 1
    out = {
        "flipped bit": InclusionProof(
            proof.index, [bytes(h) for h in flipped], proof.checkpoint, proof.entry
        ).text(),
        "wrong index": InclusionProof(
            proof.index + 1, proof.path, proof.checkpoint, proof.entry
        ).text(),
        "truncated path": InclusionProof(
            proof.index, proof.path[:-1], proof.checkpoint, proof.entry
        ).text(),
        "extended path": InclusionProof(
            proof.index, [*proof.path, proof.path[0]], proof.checkpoint, proof.entry
        ).text(),
        "other record": InclusionProof(proof.index, proof.path, proof.checkpoint, b"{}").text(),
    }
    body, _ = note.split(proof.checkpoint)
    lines = body.split("\n")
    lines[1] = str(int(lines[1]) + 1)  # wrong size: the signature no longer holds
    out["wrong size"] = text.replace(body, "\n".join(lines))
    return out


def test_mutated_proofs_wrong_keys_and_origins_are_rejected(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _key(capsys)
    proof = tmp_path / "p.tlog-proof"
    assert run(capsys, "audit", "prove", "6", "--output", str(proof))[0] == 0
    text = proof.read_text()
    check_inclusion(text, key)
    for what, mutated in _mutations(text).items():
        with pytest.raises(ProofFileError):
            check_inclusion(mutated, key)
            pytest.fail(f"accepted: {what}")
    other = Ed25519PrivateKey.generate().public_key()
    name = key.split("+")[0]
    with pytest.raises(ProofFileError, match="not signed by"):
        check_inclusion(text, note.verifier_key(name, other))  # wrong key
    # the right key under another origin: the note's signature names the log's origin
    private = Ed25519PrivateKey.generate()
    body, _ = note.split(InclusionProof.parse(text).checkpoint)
    forged_origin = "custodia/audit/another\n" + body.split("\n", 1)[1]
    forged = note.sign(forged_origin, name, private)  # by the key the checker holds
    with pytest.raises(ProofFileError, match="another log"):
        check_inclusion(
            InclusionProof.parse(text)
            .text()
            .replace(InclusionProof.parse(text).checkpoint, forged),
            note.verifier_key(name, private.public_key()),
        )


def test_consistency_between_two_checkpoints_and_a_rewrite_caught(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = _key(capsys)
    old, new, proof = tmp_path / "old.note", tmp_path / "new.note", tmp_path / "c.proof"
    assert run(capsys, "audit", "checkpoint", "--output", str(old))[0] == 0
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(9):
        service.append("tutor.turn", None, n=100 + n)
    service.close()
    assert run(capsys, "audit", "checkpoint", "--output", str(new))[0] == 0
    code, out, _ = run(
        capsys, "audit", "prove", "--from", str(old), "--to", str(new), "--output", str(proof)
    )
    assert code == 0 and "11 -> 20" in out, out
    code, out, _ = run(
        capsys, "audit", "check", str(proof), "--from", str(old), "--to", str(new), "--key", key
    )
    assert code == 0 and out.startswith("OK the log of 20 records"), out
    # swapped, or one hash flipped: refused
    code, out, _ = run(
        capsys, "audit", "check", str(proof), "--from", str(new), "--to", str(old), "--key", key
    )
    assert code == 1
    hashes = proof.read_text().splitlines()
    raw = bytearray(base64.b64decode(hashes[0]))
    raw[3] ^= 4
    hashes[0] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(ProofFileError):
        check_consistency(old.read_text(), new.read_text(), "\n".join(hashes) + "\n", key)


def test_the_checkpoints_list_names_the_first_one_a_rewrite_breaks(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from tests.backends.audit.test_cli import _rewrite_from

    assert run(capsys, "audit", "checkpoint")[0] == 0  # seq 11
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(4):
        service.append("tutor.turn", None, n=200 + n)
    service.checkpoint()  # seq 15
    report = service.consistency_report()
    assert [(s.checkpoint.seq, s.ok) for s in report] == [(11, True), (15, True)]
    service.close()
    conn = sqlite3.connect(home / "audit.sqlite3")
    conn.close()
    # the forger keeps the trust file's old lines: both checkpoints now disagree with the log
    trust = (home / "audit-checkpoints.jsonl").read_text()
    _rewrite_from(home, 13)
    (home / "audit-checkpoints.jsonl").write_text(trust)
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        report = service.consistency_report()
    finally:
        service.close()
    assert [(s.checkpoint.seq, s.ok, s.first_broken) for s in report] == [
        (11, True, False),
        (15, False, True),
    ]


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_read_only_backup_verifies_exports_and_proves_without_a_byte_written(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old_json = tmp_path / "old.json"
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:  # a checkpoint as earlier releases exported it: JSON, no Merkle root
        from backends.audit.checkpoints import export_checkpoint

        head = service.log.head()
        legacy = service.signer.sign(service.log.log_id, head.seq, head.hash)
        export_checkpoint(legacy, old_json, service.signer.public_key)
    finally:
        service.close()
    assert json.loads(old_json.read_text())["checkpoint"]["seq"] == 11
    assert run(capsys, "audit", "checkpoint", "--output", str(tmp_path / "cp.note"))[0] == 0
    backup = tmp_path / "backup"
    shutil.copytree(home, backup)
    for path in [*backup.rglob("*"), backup]:  # chmod -R a-w
        path.chmod(path.stat().st_mode & ~0o222)
    before = _digests(backup)
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path / "elsewhere"))
    try:
        d = ["--data-dir", str(backup)]
        code, out, err = run(capsys, "audit", "verify", *d)
        assert (code, out.strip()) == (0, "OK 11 records"), err
        code, out, _ = run(capsys, "audit", "verify", *d, "--checkpoint", str(old_json))
        assert (code, out.strip()) == (0, "OK 11 records")
        code, out, _ = run(capsys, "audit", "verify", *d, "--checkpoint", str(tmp_path / "cp.note"))
        assert (code, out.strip()) == (0, "OK 11 records")
        code, out, _ = run(capsys, "audit", "export", *d, "--format", "jsonl")
        assert code == 0 and len(out.splitlines()) == 11
        proof = tmp_path / "ro.tlog-proof"
        code, out, _ = run(capsys, "audit", "prove", "3", *d, "--output", str(proof))
        assert code == 0, out
        code, key, _ = run(capsys, "audit", "key", *d)
        assert run(capsys, "audit", "check", str(proof), "--key", key.strip())[0] == 0
        assert sorted(os.listdir(backup)) == sorted(before)
        assert _digests(backup) == before
    finally:
        for path in [backup, *backup.rglob("*")]:
            path.chmod(0o700)


def test_a_log_truncated_after_a_checkpoint_breaks_it_and_the_first_is_named(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        service.checkpoint()  # seq 11
        for n in range(3):
            service.append("tutor.turn", None, n=300 + n)
        service.checkpoint()  # seq 14
    finally:
        service.close()
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    for table in ("audit_log", "audit_tree"):
        conn.execute(f"DROP TRIGGER {table}_no_delete")
    conn.execute("DELETE FROM audit_log WHERE seq > 12")
    conn.close()
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        report = service.consistency_report()
    finally:
        service.close()
    assert [(s.checkpoint.seq, s.ok, s.first_broken) for s in report] == [
        (11, True, False),
        (14, False, True),
    ]
    assert "truncated" in report[1].detail
    code, out, _ = run(capsys, "audit", "verify")
    assert code == 1 and "truncated" in out
