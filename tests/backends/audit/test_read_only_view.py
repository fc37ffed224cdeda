"""A read-only view of the audit log never answers from files that changed under it
(issue 28 review).

After a clean close the app's next start leaves a 0-byte ``-wal``; ``audit verify --read-only``
then chose ``immutable=1``, which tells SQLite the file never changes: after 6,000 appends and
a checkpoint by the app, the reader's head()/count() said 10 while chain() walked 6,010.
``immutable=1`` is now only for a copy nobody writes; a live data dir is read with ``mode=ro``,
and a view SQLite was told is frozen fails with "the log changed while it was read" if its file
or ``-wal`` moves.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from backends.audit.verify import verify_chain
from backends.stores.audit_log import AuditLogError
from backends.stores.audit_log import sqlite as sqlite_log
from backends.stores.audit_log.record import Draft
from backends.stores.audit_log.sqlite import CHANGED_WHILE_READ, SQLiteAuditLog


def _drafts(n: int, tag: str = "x") -> list[Draft]:
    return [Draft("test.write", None, {"tag": tag, "i": i, "pad": "z" * 300}) for i in range(n)]


def test_a_reader_beside_the_running_app_sees_what_the_app_wrote(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    writer = SQLiteAuditLog(path)
    writer.append_many(_drafts(10))
    writer.close()
    writer = SQLiteAuditLog(path)  # the app starts again: a 0-byte -wal
    reader = SQLiteAuditLog(path, read_only=True)  # `audit verify --read-only` meanwhile
    try:
        assert reader.head().seq == 10
        for k in range(5):
            writer.append_many(_drafts(200, f"k{k}"))
        writer._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        walked = sum(len(rows) for rows in reader.chain(0))
        assert reader.head().seq == reader.count() == walked == 1010
        result = verify_chain(reader)
        assert result.ok and result.records >= 1010, result.line()
    finally:
        reader.close()
        writer.close()


def _frozen_copy(tmp_path: Path, n: int = 30) -> Path:
    live = tmp_path / "live"
    log = SQLiteAuditLog(live / "audit.sqlite3")
    log.append_many(_drafts(n))
    log.close()
    copy = tmp_path / "copy"
    shutil.copytree(live, copy)
    for p in copy.rglob("*"):
        p.chmod(0o444)
    copy.chmod(0o555)
    return copy / "audit.sqlite3"


def _thaw(path: Path) -> None:
    path.parent.chmod(0o755)
    for p in path.parent.iterdir():
        p.chmod(0o644)


def test_a_frozen_copy_that_changes_while_read_fails_instead_of_answering(
    tmp_path: Path,
) -> None:
    path = _frozen_copy(tmp_path)
    reader = SQLiteAuditLog(path, read_only=True)
    try:
        assert reader._copy is not None and reader._copy.mode == "immutable=1"
        assert reader.head().seq == 30
        _thaw(path)  # it was not a copy nobody writes after all
        writer = SQLiteAuditLog(path)
        writer.append_many(_drafts(50, "later"))
        writer.close()
        with pytest.raises(AuditLogError, match=CHANGED_WHILE_READ):
            reader.head()
        with pytest.raises(AuditLogError, match=CHANGED_WHILE_READ):
            verify_chain(reader)
    finally:
        reader.close()
        _thaw(path)


def test_a_frozen_copy_whose_wal_moves_during_the_copy_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = tmp_path / "live"
    log = SQLiteAuditLog(live / "audit.sqlite3")
    log.append_many(_drafts(20))
    copy = tmp_path / "copy"
    shutil.copytree(live, copy)  # taken while the log was open: its commits in -wal
    log.close()
    path = copy / "audit.sqlite3"
    assert Path(f"{path}-wal").stat().st_size > 0
    for p in copy.iterdir():
        p.chmod(0o444)
    copy.chmod(0o555)
    real = shutil.copyfile
    ticks = iter(range(1, 100))

    def copy_while_written(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> str:
        out = real(src, dst)
        if str(src).endswith("-wal"):  # someone writes between the two copies
            os.utime(src, ns=(next(ticks) * 10**9, next(ticks) * 10**9))
        return str(out)

    monkeypatch.setattr(sqlite_log.shutil, "copyfile", copy_while_written)
    try:
        with pytest.raises(AuditLogError, match=CHANGED_WHILE_READ):
            SQLiteAuditLog(path, read_only=True)
        monkeypatch.setattr(sqlite_log.shutil, "copyfile", real)
        reader = SQLiteAuditLog(path, read_only=True)  # untouched: read from a private copy
        assert reader._copy is not None and reader._copy.mode.startswith("mode=ro")
        assert reader.head().seq == 20 and verify_chain(reader).ok
        reader.close()
    finally:
        _thaw(path)


def test_a_read_only_key_store_beside_the_app_sees_an_erasure(tmp_path: Path) -> None:
    """The sibling: the key store read with ``immutable=1`` beside the running app kept
    opening a person's fields after the app destroyed their key."""
    from backends.audit.pseudonyms import KeyStore

    path = tmp_path / "audit-keys.sqlite3"
    live = KeyStore(path)
    try:
        pseudonym, sealed = live.seal("carol", {"question": "secret"})
        reader = KeyStore(path, read_only=True)
        try:
            assert reader.open(pseudonym, sealed) == {"question": "secret"}
            live.forget("carol")
            assert reader.open(pseudonym, sealed) is None
        finally:
            reader.close()
    finally:
        live.close()
