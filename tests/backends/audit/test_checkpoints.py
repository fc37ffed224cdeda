from __future__ import annotations

import base64
import dataclasses
import os
import stat
from pathlib import Path

import pytest

from backends.audit.checkpoints import (
    CheckpointError,
    CheckpointRejected,
    OlderCheckpoint,
    Signer,
    TrustStore,
    export_checkpoint,
    read_exported,
)


@pytest.fixture
def signer(tmp_path: Path) -> Signer:
    return Signer.load_or_create(tmp_path / "private" / "audit-signing.key")


@pytest.fixture
def trust(tmp_path: Path, signer: Signer) -> TrustStore:
    return TrustStore(tmp_path / "private" / "audit-checkpoints.jsonl", signer.public_key)


def test_key_file_is_private_and_reloads(signer: Signer, tmp_path: Path) -> None:
    assert signer.path is not None
    assert stat.S_IMODE(signer.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(signer.path.parent.stat().st_mode) == 0o700
    again = Signer.load_or_create(signer.path)
    assert again.key_id == signer.key_id


def test_key_readable_by_others_is_refused(signer: Signer) -> None:
    assert signer.path is not None
    os.chmod(signer.path, 0o644)
    with pytest.raises(CheckpointError, match="chmod 600"):
        Signer.load(signer.path)


def test_corrupt_key_is_an_environment_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.key"
    path.write_text("not a key")
    path.chmod(0o600)
    with pytest.raises(CheckpointError):
        Signer.load(path)


def test_accepts_valid_checkpoints_in_order(signer: Signer, trust: TrustStore) -> None:
    first = signer.sign("log", 10, "a" * 64)
    second = signer.sign("log", 20, "b" * 64)
    assert trust.accept(first) and trust.accept(second)
    assert not trust.accept(second)  # the same one again: nothing new
    assert trust.latest("log") == second
    assert stat.S_IMODE(trust.path.stat().st_mode) == 0o600


def test_wrong_signature_is_rejected(signer: Signer, trust: TrustStore) -> None:
    good = signer.sign("log", 10, "a" * 64)
    moved = dataclasses.replace(good, seq=11)  # the signature covered seq 10
    with pytest.raises(CheckpointRejected, match="does not verify"):
        trust.accept(moved)
    flipped = bytearray(base64.b64decode(good.signature))
    flipped[0] ^= 1
    bad = dataclasses.replace(good, signature=base64.b64encode(bytes(flipped)).decode())
    with pytest.raises(CheckpointRejected, match="does not verify"):
        trust.accept(bad)
    assert trust.latest() is None


def test_wrong_key_is_rejected(trust: TrustStore, tmp_path: Path) -> None:
    stranger = Signer.load_or_create(tmp_path / "stranger.key")
    with pytest.raises(CheckpointRejected, match="unknown key"):
        trust.accept(stranger.sign("log", 10, "a" * 64))
    # claiming our key id does not help either
    ours = key_id_of(trust)
    forged = dataclasses.replace(stranger.sign("log", 10, "a" * 64), key_id=ours)
    with pytest.raises(CheckpointRejected, match="does not verify"):
        trust.accept(forged)


def key_id_of(trust: TrustStore) -> str:
    from backends.audit.checkpoints import key_id

    return key_id(trust.public_key)


def test_older_checkpoint_replayed_is_rejected(signer: Signer, trust: TrustStore) -> None:
    old = signer.sign("log", 10, "a" * 64)
    new = signer.sign("log", 20, "b" * 64)
    trust.accept(old)
    trust.accept(new)
    assert trust.accept(old) is False  # already trusted: nothing to add
    with pytest.raises(OlderCheckpoint, match="older than the latest trusted") as caught:
        trust.accept(signer.sign("log", 15, "c" * 64))  # never becomes the latest
    assert caught.value.latest == new  # the caller holds it against the log instead
    assert trust.latest("log") == new
    with pytest.raises(CheckpointRejected, match="another head"):
        trust.accept(signer.sign("log", 10, "d" * 64))  # older, and a fork of a trusted one


def test_fork_at_the_same_seq_is_rejected(signer: Signer, trust: TrustStore) -> None:
    trust.accept(signer.sign("log", 10, "a" * 64))
    with pytest.raises(CheckpointRejected, match="another head"):
        trust.accept(signer.sign("log", 10, "c" * 64))


def test_tampered_trust_file_is_rejected(signer: Signer, trust: TrustStore) -> None:
    trust.accept(signer.sign("log", 10, "a" * 64))
    text = trust.path.read_text().replace('"seq":10', '"seq":99')
    trust.path.write_text(text)
    with pytest.raises(CheckpointRejected, match="line 1"):
        trust.latest()


def test_export_round_trip(signer: Signer, tmp_path: Path) -> None:
    checkpoint = signer.sign("log", 5, "d" * 64)
    path = export_checkpoint(checkpoint, tmp_path / "cp.json", signer.public_key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_exported(path) == checkpoint
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(CheckpointRejected):
        read_exported(tmp_path / "junk.json")


def test_a_root_added_to_a_json_checkpoint_is_refused(signer: Signer, tmp_path: Path) -> None:
    """The JSON signature covers log, seq, head, time and key — not ``root``: a root written
    into a JSON-only checkpoint was trusted unsigned (a changed one then made verify blame the
    log). Only a signed note vouches for a root (issue 28 review)."""
    import json

    plain = signer.sign("log", 5, "d" * 64)
    plain.check(signer.public_key, "log")
    path = export_checkpoint(plain, tmp_path / "cp.json", signer.public_key)
    obj = json.loads(path.read_text())
    obj["checkpoint"]["root"] = "ab" * 32  # as an earlier release exported it, root added
    path.write_text(json.dumps(obj))
    forged = read_exported(path)
    assert forged.root == "ab" * 32 and not forged.note
    with pytest.raises(CheckpointRejected, match="Merkle root that no signature covers"):
        forged.check(signer.public_key, "log")
    noted = signer.sign("log", 5, "d" * 64, root=bytes(32))
    noted.check(signer.public_key, "log")  # a note signs its root
    changed = dataclasses.replace(noted, root="ab" * 32)
    with pytest.raises(CheckpointRejected, match="says something else"):
        changed.check(signer.public_key, "log")
    stripped = dataclasses.replace(noted, note="")  # the note dropped, the root kept
    with pytest.raises(CheckpointRejected, match="no signature covers"):
        stripped.check(signer.public_key, "log")
