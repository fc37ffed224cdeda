from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backends.audit.cli import record_time
from backends.audit.service import AuditService
from backends.cli import main
from backends.config import Config
from backends.stores.audit_log.record import Draft


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    for var in ("CUSTODIA_PROFILE", "CUSTODIA_POSTGRES_DSN"):
        monkeypatch.delenv(var, raising=False)
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(6):
        service.append("tutor.turn", "ana" if n % 2 else "beto", personal={"n": n}, n=n)
    service.close()
    return home


def test_verify_ok(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify"]) == 0
    assert capsys.readouterr().out.strip() == "OK 6 records"


def test_verify_names_the_first_broken_seq(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    conn.execute("DROP TRIGGER audit_log_no_delete")
    conn.execute("DELETE FROM audit_log WHERE seq = 4")
    conn.close()
    assert main(["audit", "verify"]) == 1
    out = capsys.readouterr().out
    assert "seq 4" in out and "gap" in out


def test_checkpoint_then_incremental(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = tmp_path / "cp.note"
    assert main(["audit", "checkpoint", "--output", str(exported)]) == 0
    assert "checkpoint seq 6" in capsys.readouterr().out
    assert exported.read_text().split("\n")[1] == "6"  # a C2SP checkpoint: origin, size, root
    assert main(["audit", "verify", "--from-checkpoint"]) == 0
    assert capsys.readouterr().out.strip() == (
        "OK 6 records (0 verified since the checkpoint at seq 6)"
    )
    assert main(["audit", "verify", "--checkpoint", str(exported)]) == 0


def test_an_older_exported_checkpoint_is_held_to_the_chain_not_refused(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 14 item 4, honest log: an exported checkpoint with newer ones since still verifies
    (it was refused as a "replayed checkpoint"), and is not made the latest."""
    old = tmp_path / "old.json"
    assert main(["audit", "checkpoint", "--output", str(old)]) == 0
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    service.append("tutor.turn", None, n=99)
    service.close()
    assert main(["audit", "checkpoint"]) == 0
    capsys.readouterr()
    for extra in ([], ["--from-checkpoint"]):
        assert main(["audit", "verify", "--checkpoint", str(old), *extra]) == 0
        assert capsys.readouterr().out.startswith("OK 7 records")
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        latest = service.trust.latest(service.log.log_id)
        assert latest is not None and latest.seq == 7
    finally:
        service.close()


def _rewrite_from(home: Path, seq: int) -> None:
    """What an attacker with the files does: change record ``seq``, recompute every later hash
    (a consistent forged chain), wipe the Merkle tree (the next start rebuilds it over the
    forgery) and the stored checkpoints, re-sign the new head with the data dir's own key."""
    from backends.audit.checkpoints import Signer, TrustStore
    from backends.stores.audit_log.record import GENESIS, chain_hash

    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    for table in ("audit_log", "audit_checkpoint", "audit_tree"):
        for verb in ("update", "delete"):
            conn.execute(f"DROP TRIGGER {table}_no_{verb}")
    conn.execute("DELETE FROM audit_tree")
    rows = conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq").fetchall()
    previous = GENESIS
    for s, record, hash_ in rows:
        if s < seq:
            previous = hash_
            continue
        if s == seq:
            obj = json.loads(record)
            obj["data"]["forged"] = True
            record = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        previous = chain_hash(previous, record)
        conn.execute(
            "UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?", (record, previous, s)
        )
    conn.execute("DELETE FROM audit_checkpoint")
    log_id = conn.execute("SELECT value FROM audit_meta WHERE key = 'log_id'").fetchone()[0]
    conn.close()
    (home / "audit-checkpoints.jsonl").unlink()
    signer = Signer.load(home / "audit-signing.key")
    TrustStore(home / "audit-checkpoints.jsonl", signer.public_key).accept(
        signer.sign(log_id, len(rows), previous)
    )


def test_an_exported_checkpoint_exposes_a_rewrite_after_newer_checkpoints(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 14 item 4: checkpoint exported; more turns; a later checkpoint; rewrite from seq 3
    with recomputed hashes and re-signed: the exported checkpoint must expose it (it printed
    the same "refusing a replayed checkpoint" as for an honest log)."""
    cp1 = tmp_path / "cp1.json"
    assert main(["audit", "checkpoint", "--output", str(cp1)]) == 0  # seq 6
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(4):
        service.append("tutor.turn", "ana", personal={"n": n}, n=n)
    service.close()
    assert main(["audit", "checkpoint"]) == 0  # seq 10
    _rewrite_from(home, 3)
    capsys.readouterr()
    assert main(["audit", "verify"]) == 0  # the forged chain is consistent with its own key
    capsys.readouterr()
    for extra in ([], ["--from-checkpoint"]):
        assert main(["audit", "verify", "--checkpoint", str(cp1), *extra]) == 1
        out = capsys.readouterr().out
        assert out.startswith("BROKEN") and "seq 6" in out and "checkpoint" in out, out
    # a checkpoint re-signed at the very seq of the exported one is a fork, refused outright
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        row = service.log.get(6)
        assert row is not None
        forged = service.signer.sign(service.log.log_id, 6, row.hash)
        with (home / "audit-checkpoints.jsonl").open("a") as fh:  # the attacker writes it in
            fh.write(forged.to_json() + "\n")
    finally:
        service.close()
    assert main(["audit", "verify", "--checkpoint", str(cp1)]) == 1
    assert "forked or rewritten" in capsys.readouterr().out


def test_automatic_checkpoints_never_make_an_exported_one_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 14 item 4 without an attacker: an automatic checkpoint every N records makes any
    exported checkpoint older than the latest at once."""
    home = tmp_path / "auto"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    service = AuditService.open(Config(home=home), checkpoint_every=5)
    try:
        for n in range(3):
            service.append("tutor.turn", None, n=n)
        exported = tmp_path / "cp.json"
        assert main(["audit", "checkpoint", "--output", str(exported)]) == 0  # seq 3
        for n in range(12):
            service.append("tutor.turn", None, n=n)
        latest = service.trust.latest(service.log.log_id)
        assert latest is not None and latest.seq > 3  # automatic ones came after
    finally:
        service.close()
    capsys.readouterr()
    assert main(["audit", "verify", "--checkpoint", str(exported)]) == 0
    assert capsys.readouterr().out.startswith("OK 15 records")


def test_export_formats(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "export", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["seq"] == 1
    out = tmp_path / "audit.csv"
    assert main(["audit", "export", "--format", "csv", "--output", str(out)]) == 0
    assert out.read_text().splitlines()[0] == "seq,time,event,pseudonym,status,data,hash,record"


def test_forget(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forget", "ana"]) == 0
    assert "forgot p-" in capsys.readouterr().out
    assert main(["forget", "ana"]) == 1
    assert main(["audit", "verify"]) == 0
    assert capsys.readouterr().out.strip().endswith("OK 7 records")
    assert main(["audit", "export", "--format", "jsonl", "--event", "person.erased"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exit_:  # argparse refusing the arguments
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def exported_seqs(out: str) -> list[int]:
    return [json.loads(line)["seq"] for line in out.splitlines()]


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("2026-11-30", "2026-11-30T00:00:00.000000Z"),
        ("2026-11-30T04:30", "2026-11-30T04:30:00.000000Z"),
        ("2026-11-30T04:30:50", "2026-11-30T04:30:50.000000Z"),
        ("2026-11-30 04:30:50", "2026-11-30T04:30:50.000000Z"),
        (" 2026-11-30 04:30 ", "2026-11-30T04:30:00.000000Z"),
        ("2026-11-30T04:30:50.25Z", "2026-11-30T04:30:50.250000Z"),
        ("2026-11-30T04:30:50.123456Z", "2026-11-30T04:30:50.123456Z"),
    ],
)
def test_times_are_normalised_to_the_record_format(text: str, normalised: str) -> None:
    assert record_time(text) == normalised


@pytest.mark.parametrize(
    "text",
    [
        "garbage",
        "",
        "2026-13-01",
        "2026-02-30",
        "2026-11-30T25:00",
        "2026-11-30T04:30+02:00",
        "30/11/2026",
        "2026-11-30T4:30",
        "2026-11-30Z",
        "1733000000",
    ],
)
def test_export_rejects_a_time_it_cannot_read(
    home: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    code, out, err = run(capsys, "audit", "export", "--format", "jsonl", "--since", text)
    assert code == 2 and out == "" and "argument --since" in err
    code, out, err = run(capsys, "audit", "export", "--format", "jsonl", "--until", text)
    assert code == 2 and out == "" and "argument --until" in err


def test_since_and_until_select_by_time_whatever_the_form(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "audit", "export", "--format", "jsonl")
    times = {json.loads(line)["seq"]: json.loads(line)["time"] for line in out.splitlines()}
    third = times[3]  # e.g. 2026-11-30T04:30:50.123456Z
    # the same instant written with a space, and to the second: the records from the third on
    # (appended within the same second as the third, at most, share its second)
    to_second = third[:19]
    spaced = to_second.replace("T", " ")
    code, out, _ = run(capsys, "audit", "export", "--format", "jsonl", "--since", spaced)
    with_space = exported_seqs(out)
    code, out, _ = run(capsys, "audit", "export", "--format", "jsonl", "--since", to_second)
    assert code == 0 and with_space == exported_seqs(out)
    expected = [s for s, t in sorted(times.items()) if t >= to_second + ".000000Z"]
    assert with_space == expected and 3 in with_space
    code, out, _ = run(capsys, "audit", "export", "--format", "jsonl", "--until", spaced)
    assert exported_seqs(out) == [s for s in sorted(times) if s not in expected]
    day = third[:10]
    code, out, _ = run(capsys, "audit", "export", "--format", "jsonl", "--since", day)
    assert exported_seqs(out) == sorted(s for s, t in times.items() if t[:10] >= day)
    code, _, err = run(
        capsys, "audit", "export", "--format", "jsonl", "--since", day, "--until", day
    )
    assert code == 2 and "must be before --until" in err


def test_checkpoint_to_an_unwritable_place_signs_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in (tmp_path / "nodir" / "cp.json", tmp_path):
        code, out, err = run(capsys, "audit", "checkpoint", "--output", str(target))
        assert code == 2 and out == "" and "nothing was signed" in err
    assert not (home / "audit-checkpoints.jsonl").exists()
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        assert service.trust.latest() is None and service.log.checkpoints() == []
    finally:
        service.close()


def test_checkpoint_made_but_not_written_says_so(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cp.json"
    (tmp_path / "cp.json.tmp").mkdir()  # the folder is writable, but the write will fail
    code, out, err = run(capsys, "audit", "checkpoint", "--output", str(target))
    assert code == 1 and "checkpoint seq 6" in out
    assert "was made, trusted and stored, but not written to" in err and "Traceback" not in err
    assert not target.exists()
    assert run(capsys, "audit", "verify", "--from-checkpoint")[1].strip() == (
        "OK 6 records (0 verified since the checkpoint at seq 6)"
    )


def test_trusted_key_needs_a_checkpoint_and_must_be_a_key(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "audit", "verify", "--trusted-key", "ab" * 32)
    assert code == 2 and out == "" and "--trusted-key needs --checkpoint" in err
    exported = tmp_path / "cp.json"
    assert run(capsys, "audit", "checkpoint", "--output", str(exported))[0] == 0
    code, _, err = run(
        capsys, "audit", "verify", "--checkpoint", str(exported), "--trusted-key", "abcd"
    )
    assert code == 2 and "argument --trusted-key" in err
    code, key, _ = run(capsys, "audit", "key")
    assert code == 0
    code, out, _ = run(
        capsys, "audit", "verify", "--checkpoint", str(exported), "--trusted-key", key.strip()
    )
    assert code == 0 and out.strip() == "OK 6 records"


def test_export_to_a_reader_that_leaves_early_stops_quietly(home: Path) -> None:
    """`custodia audit export --format jsonl | head -1`, with far more than a pipe holds."""
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        service.log.append_many([Draft("tutor.turn", None, {"n": n}, None) for n in range(3000)])
    finally:
        service.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env["CUSTODIA_HOME"] = str(home)
    writer = subprocess.Popen(
        [sys.executable, "-m", "desktop.cli", "audit", "export", "--format", "jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert writer.stdout is not None and writer.stderr is not None
    assert json.loads(writer.stdout.readline())["seq"] == 1
    writer.stdout.close()  # the reader leaves after one line
    stderr = writer.stderr.read().decode()
    writer.wait(timeout=60)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert writer.returncode in (0, 141)


def test_forget_strips_the_name_as_ask_and_import_do(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "forget", " ana ")
    assert code == 0 and out.startswith("forgot p-")
    assert run(capsys, "forget", "ana")[0] == 1  # the same person: already forgotten
    code, _, err = run(capsys, "forget", "   ")
    assert code == 2 and "empty" in err
