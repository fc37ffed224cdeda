"""Issue 25, item 11: a ``.kdf.json`` cannot make an unlock cost more than Custodia claims —
each entry at most twice the default Scrypt cost, at most MAX_KDF_ENTRIES entries, and the same
derivation never tried twice."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from backends.conversations import keys
from backends.conversations.errors import InvalidKeyError
from backends.conversations.keys import (
    KDF_FILE,
    KDF_FORMAT,
    MAX_KDF_ENTRIES,
    SCRYPT_N,
    SCRYPT_P,
    SCRYPT_R,
    KdfEntry,
    PassphraseFile,
)

PASSPHRASE = "correct horse battery staple"


def _entry(n: int, r: int, p: int, salt: bytes = b"s" * 16, key_id: str = "x") -> dict[str, Any]:
    return {
        "kdf": "scrypt",
        "key_id": key_id,
        "salt": base64.b64encode(salt).decode(),
        "n": n,
        "r": r,
        "p": p,
    }


def _write(path: Path, entries: list[dict[str, Any]]) -> PassphraseFile:
    path.write_text(json.dumps({"format": KDF_FORMAT, "version": 1, "entries": entries}))
    return PassphraseFile(path)


@pytest.mark.parametrize(
    ("n", "r", "p"),
    [(2**20, 4, 4), (2**20, 1, 4), (2**18, 8, 2), (2**17, 16, 2), (2**19, 8, 1)],
)
def test_an_entry_costing_more_than_twice_the_default_is_refused(n: int, r: int, p: int) -> None:
    with pytest.raises(ValueError, match="cost more than Custodia ever sets"):
        KdfEntry.from_json(_entry(n, r, p))


@pytest.mark.parametrize(
    ("n", "r", "p"), [(SCRYPT_N, SCRYPT_R, SCRYPT_P), (2 * SCRYPT_N, SCRYPT_R, 1), (2**14, 8, 4)]
)
def test_what_custodia_sets_and_up_to_twice_it_is_read(n: int, r: int, p: int) -> None:
    assert KdfEntry.from_json(_entry(n, r, p)).n == n


def test_a_file_with_too_many_entries_is_damaged(tmp_path: Path) -> None:
    many = [_entry(2**10, 8, 1, salt=bytes([i]) * 16) for i in range(MAX_KDF_ENTRIES + 1)]
    store = _write(tmp_path / KDF_FILE, many)
    with pytest.raises(Exception, match=f"more than {MAX_KDF_ENTRIES} entries"):
        store.unlock(PASSPHRASE)


def test_the_same_derivation_is_tried_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _write(tmp_path / KDF_FILE, [_entry(2**10, 8, 1, key_id=str(i)) for i in range(8)])
    derived: list[KdfEntry] = []
    real = keys.derive_key

    def counting(passphrase: str, entry: KdfEntry) -> str:
        derived.append(entry)
        return real(passphrase, entry)

    monkeypatch.setattr(keys, "derive_key", counting)
    with pytest.raises(InvalidKeyError, match="wrong passphrase"):
        store.unlock(PASSPHRASE)
    assert len(derived) == 1


def test_a_full_file_takes_no_new_passphrase(tmp_path: Path) -> None:
    full = [_entry(2**10, 8, 1, salt=bytes([i]) * 16) for i in range(MAX_KDF_ENTRIES)]
    store = _write(tmp_path / KDF_FILE, full)
    with pytest.raises(InvalidKeyError, match=f"{MAX_KDF_ENTRIES} passphrases"):
        store.add(PASSPHRASE)
    assert len(store.entries()) == MAX_KDF_ENTRIES  # still readable: nothing locked out
