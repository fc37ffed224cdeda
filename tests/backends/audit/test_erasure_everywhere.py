"""CT11 (issue 25 item 3): an erasure reaches every desktop and every running process.

Two desktops with their own data dirs on one real Postgres log, and two processes on one
SQLite data dir: ``forget`` in one and the others stop revealing at once; the next turn as
the erased name gets a new pseudonym; the chain still verifies.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest

from backends.audit.pseudonyms import KeyStore, KeyStoreError, PostgresKeyStore
from backends.audit.service import ERASED_EVENT, KEYS_FILE, AuditService
from backends.config import Config
from backends.migrate import dsn_url
from backends.stores.audit_log import Filter
from backends.stores.audit_log.keys import KEK_FILE
from backends.stores.audit_log.postgres import Bootstrapped, PostgresAuditLog, Roles, bootstrap
from backends.stores.audit_log.record import Draft

TURN = {"question": "What is troponin?", "answer": "A marker of myocardial injury [1]."}


def _turn(service: AuditService, person: str, n: int) -> int:
    return service.append("tutor.turn", person, personal={**TURN, "n": n}, n=n).seq


def _shown(service: AuditService, seq: int) -> tuple[str, object]:
    entry = service.entry(seq)
    assert entry is not None
    revealed = service.reveal(entry)
    return revealed.status, revealed.personal


# -- one data dir, two processes (embedded profile) ---------------------------------------------

FORGET = (
    "import sys\n"
    "from pathlib import Path\n"
    "from backends.audit.service import AuditService\n"
    "from backends.config import Config\n"
    "s = AuditService.open(Config(home=Path(sys.argv[1])), checkpoint_every=0)\n"
    "print(s.forget(sys.argv[2]))\n"
    "s.close()\n"
)


def _forget_elsewhere(home: Path, person: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", FORGET, str(home), person],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_a_forget_in_another_process_stops_this_one_revealing_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    window = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        first = _turn(window, "student", 1)
        _turn(window, "other", 2)
        assert _shown(window, first) == ("sealed", {**TURN, "n": 1})  # the key is now cached
        old = window.entry(first).pseudonym  # type: ignore[union-attr]

        assert _forget_elsewhere(home, "student") == old

        assert _shown(window, first) == ("erased", None)
        assert window.pseudonym_of("student") is None
        # the next turn as "student" is a new person, never sealed under the destroyed key
        again = _turn(window, "student", 3)
        new = window.entry(again).pseudonym  # type: ignore[union-attr]
        assert new != old
        assert _shown(window, again) == ("sealed", {**TURN, "n": 3})
        assert _shown(window, first) == ("erased", None)
        assert _shown(window, 2)[0] == "sealed"  # someone else is untouched
        assert window.verify().ok
    finally:
        window.close()


def test_two_service_instances_on_one_data_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one = AuditService.open(Config(home=home), checkpoint_every=0)
    two = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        seq = _turn(one, "carol", 1)
        assert _shown(two, seq)[0] == "sealed"
        before = two.keys.pseudonym("carol")  # cached in ``two``
        one.forget("carol")
        assert _shown(two, seq) == ("erased", None)
        after = _turn(two, "carol", 2)
        assert two.entry(after).pseudonym not in (None, before)  # type: ignore[union-attr]
        assert _shown(one, after)[0] == "sealed"
        assert one.verify().ok and two.verify().ok
    finally:
        one.close()
        two.close()


# -- two desktops, one Postgres log (server profile) --------------------------------------------


@pytest.fixture
def made(fresh_postgres_db: str) -> Bootstrapped:
    return bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"e{uuid.uuid4().hex[:10]}"))


def _desktop(home: Path, made: Bootstrapped) -> Config:
    return Config(home=home, profile="server", postgres_dsn=dsn_url(made.app_dsn)).validated()


@pytest.fixture
def desktops(tmp_path: Path, made: Bootstrapped) -> Iterator[tuple[AuditService, AuditService]]:
    a = AuditService.open(_desktop(tmp_path / "a", made), checkpoint_every=0)
    (tmp_path / "b").mkdir()
    shutil.copy2(tmp_path / "a" / KEK_FILE, tmp_path / "b" / KEK_FILE)  # the one manual step
    b = AuditService.open(_desktop(tmp_path / "b", made), checkpoint_every=0)
    yield a, b
    a.close()
    b.close()


@pytest.mark.server
def test_forget_on_one_desktop_is_seen_on_the_other(
    desktops: tuple[AuditService, AuditService],
) -> None:
    a, b = desktops
    assert isinstance(a.keys, PostgresKeyStore) and isinstance(b.keys, PostgresKeyStore)
    on_a = _turn(a, "carol", 1)
    on_b = _turn(b, "carol", 2)
    old = a.entry(on_a).pseudonym  # type: ignore[union-attr]
    assert b.entry(on_b).pseudonym == old  # type: ignore[union-attr]  # one person, one pseudonym on the shared log
    assert _shown(b, on_a) == ("sealed", {**TURN, "n": 1})
    assert _shown(b, on_b)[0] == "sealed"

    assert a.forget("carol") == old

    # desktop B cannot reveal either turn and says the person was erased
    assert _shown(b, on_a) == ("erased", None)
    assert _shown(b, on_b) == ("erased", None)
    assert b.pseudonym_of("carol") is None
    # the next turn as carol, on either desktop, is a new pseudonym, readable on both
    new_seq = _turn(b, "carol", 3)
    new = b.entry(new_seq).pseudonym  # type: ignore[union-attr]
    assert new != old
    assert _shown(a, new_seq) == ("sealed", {**TURN, "n": 3})
    assert _shown(a, on_b) == ("erased", None)
    assert a.verify().ok and b.verify().ok
    assert old is not None
    erased = Filter(pseudonym=old, event_type=ERASED_EVENT)
    assert len(a.page(erased, 0, 10)) == 1  # exactly one person.erased record


@pytest.mark.server
def test_a_desktop_without_the_log_key_is_told_to_copy_it(
    tmp_path: Path, made: Bootstrapped
) -> None:
    AuditService.open(_desktop(tmp_path / "a", made), checkpoint_every=0).close()
    with pytest.raises(KeyStoreError, match=KEK_FILE):
        AuditService.open(_desktop(tmp_path / "b", made), checkpoint_every=0)
    (tmp_path / "b").mkdir(exist_ok=True)
    (tmp_path / "b" / KEK_FILE).write_text("00" * 32, encoding="ascii")
    with pytest.raises(KeyStoreError, match="not the key-encryption key"):
        AuditService.open(_desktop(tmp_path / "b", made), checkpoint_every=0)


@pytest.mark.server
def test_the_doctor_says_a_desktop_lacks_the_log_key(tmp_path: Path, made: Bootstrapped) -> None:
    from backends import doctor

    AuditService.open(_desktop(tmp_path / "a", made), checkpoint_every=0).close()
    lacking = replace(_desktop(tmp_path / "b", made), embedder="hashing", chat_model="scripted")
    checks = {c.role: c for c in doctor.run(lacking)}
    assert not checks["audit log"].ok and KEK_FILE in checks["audit log"].reason
    (tmp_path / "b").mkdir(exist_ok=True)
    shutil.copy2(tmp_path / "a" / KEK_FILE, tmp_path / "b" / KEK_FILE)
    checks = {c.role: c for c in doctor.run(lacking)}
    assert checks["audit log"].ok, checks["audit log"].reason


@pytest.mark.server
def test_the_application_role_cannot_delete_a_key_but_may_erase_through_the_function(
    desktops: tuple[AuditService, AuditService], made: Bootstrapped
) -> None:
    a, _b = desktops
    _turn(a, "dora", 1)
    s = made.schema
    for statement in (
        f"DELETE FROM {s}.audit_person_key",
        f"UPDATE {s}.audit_person_key SET wrapped = wrapped",
        f"TRUNCATE {s}.audit_person_key",
        f"DELETE FROM {s}.audit_key_erased",
        f"UPDATE {s}.audit_key_kek SET kek_id = 'x'",
    ):
        with (
            psycopg.connect(made.app_dsn, autocommit=True, connect_timeout=5) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege),
        ):
            conn.execute(statement)
    with (
        psycopg.connect(made.maintenance_dsn, autocommit=True, connect_timeout=5) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute(f"SELECT wrapped FROM {s}.audit_person_key")
    # the server holds only wrapped keys: no 32-byte key, no name, no HMAC it could test
    with psycopg.connect(made.app_dsn, autocommit=True, connect_timeout=5) as conn:
        rows = conn.execute(f"SELECT digest, pseudonym, wrapped FROM {s}.audit_person_key")
        for digest, pseudonym, wrapped in rows.fetchall():
            assert "dora" not in digest and len(bytes(wrapped)) == 12 + 32 + 16
            assert pseudonym.startswith("p-")


@pytest.mark.server
def test_local_keys_of_a_shared_log_move_beside_it_on_first_use(
    tmp_path: Path, made: Bootstrapped
) -> None:
    """A Postgres log used before this release kept its keys in each data dir: the first
    start adopts them (the old records stay readable everywhere, forget reaches them) and
    leaves no key in the local file (CT4)."""
    home = tmp_path / "a"
    home.mkdir()
    local = KeyStore(home / KEYS_FILE)
    pseudonym, sealed = local.seal("erin", {**TURN, "n": 1})
    key = local._key(pseudonym)
    assert key is not None
    hal, hal_sealed = local.seal("hal", {**TURN, "n": 2})
    local.forget("hal")  # erased before the move: still erased after it
    gus, gus_sealed = local.seal("gus", {**TURN, "n": 3})  # only in this dir's embedded log
    local.close()
    log = PostgresAuditLog(made.app_dsn, schema=made.schema)
    seq, hal_seq = (
        e.seq
        for e in log.append_many(
            [
                Draft("tutor.turn", pseudonym, {"n": 1}, sealed),
                Draft("tutor.turn", hal, {"n": 2}, hal_sealed),
            ]
        )
    )
    log.close()

    a = AuditService.open(_desktop(home, made), checkpoint_every=0)
    (tmp_path / "b").mkdir()
    shutil.copy2(home / KEK_FILE, tmp_path / "b" / KEK_FILE)
    b = AuditService.open(_desktop(tmp_path / "b", made), checkpoint_every=0)
    try:
        assert _shown(a, seq) == ("sealed", {**TURN, "n": 1})
        assert _shown(b, seq) == ("sealed", {**TURN, "n": 1})  # the other desktop reads it
        assert a.pseudonym_of("erin") == pseudonym  # the name still finds its keys
        raw = b"".join(p.read_bytes() for p in home.glob(KEYS_FILE + "*") if p.is_file())
        assert key not in raw and key.hex().encode() not in raw
        assert _shown(b, hal_seq) == ("erased", None)
        assert b.forget("erin") == pseudonym
        assert _shown(a, seq) == ("erased", None)
        assert a.verify().ok
    finally:
        a.close()
        b.close()
    again = AuditService.open(_desktop(home, made), checkpoint_every=0)  # idempotent
    try:
        assert _shown(again, seq) == ("erased", None)
        assert again.verify().ok
    finally:
        again.close()
    left = KeyStore(home / KEYS_FILE)  # the embedded log's own person kept her key here
    try:
        assert left.open(gus, gus_sealed) == {**TURN, "n": 3}
        assert left.open(pseudonym, sealed) is None
    finally:
        left.close()


def test_a_store_from_the_previous_release_gains_the_generation(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / KEYS_FILE
    store = KeyStore(path)
    store.seal("fay", {"q": 1})
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM key_meta WHERE key = 'generation'")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    one, two = KeyStore(path), KeyStore(path)
    try:
        p, sealed = one.seal("fay", {"q": 2})
        assert two.open(p, sealed) == {"q": 2}
        one.forget("fay")
        assert two.open(p, sealed) is None and two.is_erased(p)
    finally:
        one.close()
        two.close()


@pytest.mark.server
def test_the_server_never_holds_a_key_in_clear_not_even_in_dead_tuples_or_wal(
    desktops: tuple[AuditService, AuditService], made: Bootstrapped, fresh_postgres_db: str
) -> None:
    """CT4 on the server: after ``forget``, the deleted row's bytes may survive in the heap
    (a dead tuple) and in the WAL — as the wrapped blob only, never the key itself."""
    a, _b = desktops
    _turn(a, "ivy", 1)
    store = a.keys
    assert isinstance(store, PostgresKeyStore)
    row = store._row("ivy")
    assert row is not None
    key = store._unwrap(row[1], "key:" + row[0])
    assert key is not None and len(key) == 32
    a.forget("ivy")
    with psycopg.connect(fresh_postgres_db, autocommit=True, connect_timeout=5) as su:

        def read(sql_text: str, arg: str) -> Any:
            found = su.execute(sql_text, (arg,)).fetchone()
            assert found is not None
            return found[0]

        su.execute("CHECKPOINT")
        path = read("SELECT pg_relation_filepath(%s)", f"{made.schema}.audit_person_key")
        pages = [bytes(read("SELECT pg_read_binary_file(%s)", path))]
        for (name,) in su.execute("SELECT name FROM pg_ls_waldir() ORDER BY name").fetchall():
            pages.append(bytes(read("SELECT pg_read_binary_file(%s)", f"pg_wal/{name}")))
    raw = b"".join(pages)
    assert row[1] in raw  # the wrapped key is still there, somewhere on the server...
    for form in (key, key.hex().encode(), base64.b64encode(key)):
        assert form not in raw  # ...but never the key itself


@pytest.mark.server
def test_the_cli_on_two_desktops(
    tmp_path: Path,
    made: Bootstrapped,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's steps: `forget carol` on one desktop, `audit export --reveal` on the other."""
    import json

    from backends.cli import main

    a, b = _desktop(tmp_path / "a", made), _desktop(tmp_path / "b", made)
    service = AuditService.open(a, checkpoint_every=0)
    _turn(service, "carol", 1)
    service.close()
    b.home.mkdir()
    shutil.copy2(a.home / KEK_FILE, b.home / KEK_FILE)
    service = AuditService.open(b, checkpoint_every=0)
    _turn(service, "carol", 2)
    service.close()
    monkeypatch.setenv("CUSTODIA_PROFILE", "server")
    monkeypatch.setenv("CUSTODIA_POSTGRES_DSN", dsn_url(made.app_dsn))

    def export_on_b() -> list[dict[str, Any]]:
        monkeypatch.setenv("CUSTODIA_HOME", str(b.home))
        capsys.readouterr()
        assert main(["audit", "export", "--format", "jsonl", "--reveal"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
        return [r for r in rows if r["event"] == "tutor.turn"]

    assert [r["status"] for r in export_on_b()] == ["sealed", "sealed"]
    monkeypatch.setenv("CUSTODIA_HOME", str(a.home))
    assert main(["forget", "carol"]) == 0
    turns = export_on_b()
    assert [r["status"] for r in turns] == ["erased", "erased"]
    assert "troponin" not in json.dumps(turns)


@pytest.mark.server
def test_an_adoption_cut_short_resumes(
    tmp_path: Path, made: Bootstrapped, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the copy beside the log and before the local delete: the next start
    copies nothing twice, deletes and scrubs the local keys, and reads the records."""
    home = tmp_path / "a"
    home.mkdir()
    local = KeyStore(home / KEYS_FILE)
    pseudonym, sealed = local.seal("jo", {**TURN, "n": 1})
    key = local._key(pseudonym)
    assert key is not None
    local.close()
    log = PostgresAuditLog(made.app_dsn, schema=made.schema)
    seq = log.append_many([Draft("tutor.turn", pseudonym, {"n": 1}, sealed)])[0].seq
    log.close()

    def killed(self: KeyStore, pseudonyms: list[str]) -> None:
        raise SystemExit("killed between the copy and the local delete")

    with monkeypatch.context() as patch:
        patch.setattr(KeyStore, "destroy", killed)
        with pytest.raises(SystemExit):
            AuditService.open(_desktop(home, made), checkpoint_every=0)
    service = AuditService.open(_desktop(home, made), checkpoint_every=0)
    try:
        assert _shown(service, seq) == ("sealed", {**TURN, "n": 1})
        assert service.keys.pseudonym("jo", create=False) == pseudonym
        raw = b"".join(p.read_bytes() for p in home.glob(KEYS_FILE + "*") if p.is_file())
        assert key not in raw
    finally:
        service.close()
