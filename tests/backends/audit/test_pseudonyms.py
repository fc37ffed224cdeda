from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import pytest

from backends.audit.pseudonyms import KeyStore


@pytest.fixture
def store(tmp_path: Path):
    keys = KeyStore(tmp_path / "audit-keys.sqlite3")
    yield keys
    keys.close()


def _raw_key(path: Path, pseudonym: str) -> bytes:
    with sqlite3.connect(path) as conn:
        return bytes(
            conn.execute("SELECT key FROM person_key WHERE pseudonym = ?", (pseudonym,)).fetchone()[
                0
            ]
        )


def _files(path: Path) -> list[Path]:
    return [p for p in path.parent.iterdir() if p.name.startswith(path.name)]


def test_pseudonyms_are_stable_random_and_not_the_name(store: KeyStore) -> None:
    first = store.pseudonym("María López")
    assert first == store.pseudonym("María López")
    assert first != store.pseudonym("Juan Pérez")
    assert first is not None and first.startswith("p-") and len(first) == 18
    assert store.pseudonym("nobody", create=False) is None
    raw = b"".join(p.read_bytes() for p in _files(store.path))
    assert "María López".encode() not in raw and "Juan Pérez".encode() not in raw


def test_seal_and_open_round_trip_bound_to_the_person(store: KeyStore) -> None:
    pseudonym, sealed = store.seal("ana", {"name": "Ana", "dx": "asma"})
    assert '"Ana"' not in sealed and '"asma"' not in sealed  # quotes never occur in base64
    assert store.open(pseudonym, sealed) == {"name": "Ana", "dx": "asma"}
    other = store.pseudonym("beto")
    assert other is not None
    assert store.open(other, sealed) is None  # another person's key cannot open it
    assert store.open(pseudonym, sealed[:-4] + "AAAA") is None  # tampered blob


def test_forget_destroys_every_copy_of_the_key(store: KeyStore, tmp_path: Path) -> None:
    sealed = {}
    for i in range(40):
        sealed[f"person-{i}"] = store.seal(f"person-{i}", {"i": i})
    victim, blob = sealed["person-7"]
    key = _raw_key(store.path, victim)
    needles = [key, base64.b64encode(key), key.hex().encode()]
    assert any(n in b"".join(p.read_bytes() for p in _files(store.path)) for n in needles)

    assert store.forget("person-7") == victim
    assert store.open(victim, blob) is None and store.is_erased(victim)
    assert store.forget("person-7") is None  # already gone
    for path in _files(store.path):
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, f"a copy of the key survives in {path.name}"
    # a fresh process (no cache) cannot read it either; the others still can
    again = KeyStore(store.path)
    try:
        assert again.open(victim, blob) is None
        pseudonym, other_blob = sealed["person-8"]
        assert again.open(pseudonym, other_blob) == {"i": 8}
    finally:
        again.close()


def test_a_forgotten_person_who_returns_starts_afresh(store: KeyStore) -> None:
    old_pseudonym, old_blob = store.seal("ana", {"dx": "asma"})
    assert store.open(old_pseudonym, old_blob) == {"dx": "asma"}  # key and cipher now cached
    store.forget("ana")
    new_pseudonym, new_blob = store.seal("ana", {"dx": "gripe"})
    assert new_pseudonym != old_pseudonym
    assert store.open(new_pseudonym, new_blob) == {"dx": "gripe"}
    assert store.open(old_pseudonym, old_blob) is None  # no cached cipher survives forget
    assert store.open(new_pseudonym, old_blob) is None


def test_empty_person_is_a_bug(store: KeyStore) -> None:
    with pytest.raises(ValueError):
        store.pseudonym("")


def test_corrupt_key_store_is_an_environment_error(tmp_path: Path) -> None:
    from backends.errors import StoreUnavailableError

    path = tmp_path / "audit-keys.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreUnavailableError):
        KeyStore(path)
