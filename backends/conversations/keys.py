"""The history key: Fernet encryption of the ``history`` field and where the key lives (CA2).

Key sources, first match wins: ``CONVERSATIONS_KEY`` (environment / config), the OS keyring
(service ``custodia``, entry ``conversations_key``) when a usable keyring backend exists, or
a key set in the app for this session only (when no keyring is available, said so in the UI).

The new key of an unfinished rotation (the *pending* key) is kept in the keyring too; a key
``rotate-key --generate`` made, when no keyring holds it, in ``conversations/.rotation.key``
(0600) from before the first file is rewritten until the rotation is finished — so an
interrupted rotation never leaves files under a key nobody has.

Every encrypted file records a *key id* next to its token: the first 16 hex digits of
``HMAC-SHA256(key, "custodia conversations key id")``. It reveals nothing about the key, and
it tells a wrong key (another key id) from a damaged token (our key id, token does not
verify), and which files an interrupted rotation has already re-encrypted.

A key can also be *derived from a passphrase* (Scrypt, memory-hard): the salt, the Scrypt
parameters and the derived key's key id (the check value that tells a wrong passphrase at
once, before any file is read) are kept in ``conversations/.kdf.json``; the derived key
itself is never written anywhere (no file, no keyring) and is asked for at every start.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import logging
import os
import threading
import unicodedata
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from backends import failures
from backends.conversations.errors import InvalidKeyError
from backends.errors import StoreUnavailableError
from backends.i18n import N_, _

log = logging.getLogger(__name__)

KEYRING_SERVICE = "custodia"
KEYRING_ENTRY = "conversations_key"
#: the new key of an unfinished rotation, so the app can resume it
KEYRING_PENDING_ENTRY = "conversations_key_rotation"
#: a *generated* rotation key when no keyring holds it, next to the rotation journal (0600),
#: from before the first file is rewritten until the rotation is finished: the only copy
#: besides what was printed, so an interrupted rotation never leaves files under a key
#: nobody has
PENDING_KEY_FILE = ".rotation.key"

_KEY_ID_LABEL = b"custodia conversations key id"

#: what to do about a malformed current key (generating a new one would not help: the
#: history stays under the old key)
ENVIRONMENT_HINT = N_(
    "check it for a typo or a cut-off end. It must be the key your conversations are "
    "encrypted with; unset it only if you have no key yet"
)
ENVIRONMENT_WHAT = N_("the conversations key set in the environment")
KEYRING_WHAT = N_("the conversations key in the OS keyring")
KEYRING_PLACE = f"keyring service {KEYRING_SERVICE!r}, entry {KEYRING_ENTRY!r}"
KEYRING_HINT = N_("set the right key in the environment, which takes precedence")


def generate_key() -> str:
    """A fresh Fernet key (url-safe base64 text)."""
    return Fernet.generate_key().decode("ascii")


#: what a Fernet key looks like, for error messages
FERNET_SHAPE = N_("44 characters of url-safe base64 that encode 32 bytes, usually ending in '='")


def _fernet(
    key: str, what: str = N_("the conversations key"), hint: str = "", where: str = ""
) -> Fernet:
    try:
        return Fernet(key.strip().encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        said = _("{what} is not a valid key ({shape})").format(what=_(what), shape=_(FERNET_SHAPE))
        if hint:
            said += "; " + _(hint)
        # the variable's and the cipher's names are the details (issue 30)
        details = f"{where}: not a Fernet key" if where else "not a Fernet key"
        raise InvalidKeyError(failures.with_details(said, details)) from None


def validate_key(key: str, what: str = N_("the new key"), hint: str = "", where: str = "") -> str:
    """The key, stripped, or :class:`InvalidKeyError` naming ``what`` (where the key came
    from, in words: the environment, the keyring, a new key...), what to do (``hint``; both
    marked, translated here) and, as its details, ``where`` (a variable's name)."""
    _fernet(key, what, hint, where)
    return key.strip()


def key_id(key: str) -> str:
    return hmac.new(key.strip().encode("ascii"), _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]


class HistoryCipher:
    """Encrypts with the first key; decrypts with whichever key the file's key id names.

    With ``can_encrypt`` false the keys only read (the keys of an earlier history given
    back while new conversations are stored in clear): writes stay in clear.
    """

    def __init__(self, keys: Sequence[str], *, can_encrypt: bool = True) -> None:
        if not keys:
            raise ValueError("HistoryCipher needs at least one key")
        self._fernets: dict[str, Fernet] = {}
        for key in keys:
            self._fernets.setdefault(key_id(key), _fernet(key))
        self.primary_id = key_id(keys[0])
        self.can_encrypt = can_encrypt

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._fernets)

    def knows(self, kid: str) -> bool:
        return kid in self._fernets

    def encrypt(self, plaintext: bytes) -> tuple[str, str]:
        """``(key_id, token)`` for ``plaintext`` under the primary key."""
        return self.primary_id, self._fernets[self.primary_id].encrypt(plaintext).decode("ascii")

    def decrypt(self, token: str, kid: str | None) -> bytes:
        """Plaintext; :class:`InvalidToken` when the token does not verify under that key.

        Without a key id (a foreign file) every known key is tried.
        """
        data = token.encode("ascii")
        if kid is not None:
            return self._fernets[kid].decrypt(data)
        for fernet in self._fernets.values():
            try:
                return fernet.decrypt(data)
            except InvalidToken:
                continue
        raise InvalidToken


# -- where the key lives ----------------------------------------------------------------------


@dataclass(frozen=True)
class KeyringStatus:
    usable: bool
    reason: str  # why not, or the backend's name


def keyring_status() -> KeyringStatus:
    """Whether an OS keyring backend is usable here (headless machines usually have none)."""
    try:
        import keyring  # noqa: PLC0415 — lazy: ~50 ms to import, needed only for a key

        backend = keyring.get_keyring()
        priority = float(backend.priority)
    except Exception as err:  # keyring raises many things when no backend can load
        return KeyringStatus(
            False, failures.with_details(_("the OS keyring cannot be used"), str(err))
        )
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if priority <= 0 or name.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return KeyringStatus(False, N_("no OS keyring backend is available on this system"))
    if getattr(backend, "backends", None) == []:  # a chainer over nothing
        return KeyringStatus(False, N_("no OS keyring backend is available on this system"))
    return KeyringStatus(True, name)


class KeyStore:
    """Finds the key and remembers a key set in the app (keyring, else this session only)."""

    def __init__(
        self,
        environment_key: str = "",
        use_keyring: bool = True,
        pending_file: Path | None = None,
        *,
        environment_passphrase: str = "",
        passphrases: PassphraseFile | None = None,
    ) -> None:
        self._environment_key = environment_key.strip()
        #: where a generated rotation key is kept when no keyring holds it (0600)
        self.pending_file = pending_file
        self._use_keyring = use_keyring
        self._session_key = ""
        #: the session key came from a passphrase (never written to the keyring or a file)
        self._session_passphrase = False
        self._environment_passphrase = environment_passphrase
        self._passphrase_key = ""  # derived from CONVERSATIONS_PASSPHRASE once, in memory
        self.passphrases = passphrases
        #: keys of an earlier (set-aside) history given back in this session: read only
        self.unlocked: list[str] = []
        self._lock = threading.Lock()
        self._keyring: KeyringStatus | None = None

    def keyring(self) -> KeyringStatus:
        with self._lock:
            if self._keyring is None:
                self._keyring = (
                    keyring_status()
                    if self._use_keyring
                    else KeyringStatus(False, N_("the OS keyring is not used"))
                )
            return self._keyring

    def current(self) -> tuple[str, str]:
        """``(key, source)``; source is session, environment, keyring or none.

        A key set in the app during this session wins (it is the newest choice); at the next
        start the environment, then the keyring, decide again.
        """
        if self._session_key:
            return self._session_key, "passphrase" if self._session_passphrase else "session"
        if self._environment_key:
            key = validate_key(
                self._environment_key, ENVIRONMENT_WHAT, ENVIRONMENT_HINT, "CONVERSATIONS_KEY"
            )
            return key, "environment"
        if self._environment_passphrase:
            return self._from_environment_passphrase(), "environment_passphrase"
        stored = self._keyring_get(KEYRING_ENTRY)
        if stored:
            return validate_key(stored, KEYRING_WHAT, KEYRING_HINT, KEYRING_PLACE), "keyring"
        return "", "none"

    @property
    def from_environment(self) -> bool:
        return bool(self._environment_key)

    def _from_environment_passphrase(self) -> str:
        """The key derived from ``CONVERSATIONS_PASSPHRASE`` (once: Scrypt costs ~0.4 s)."""
        with self._lock:
            if self._passphrase_key:
                return self._passphrase_key
        if self.passphrases is None:
            raise NoPassphraseError(
                failures.with_details(
                    _("a passphrase is set in the environment, but there is no data folder"),
                    "CONVERSATIONS_PASSPHRASE",
                )
            )
        key = self.passphrases.unlock(
            self._environment_passphrase,
            N_("the passphrase set in the environment"),
            where="CONVERSATIONS_PASSPHRASE",
        )
        with self._lock:
            self._passphrase_key = key
        return key

    def remember(self, key: str, *, passphrase: bool = False) -> str:
        """Keep ``key`` for later starts; return where: ``keyring`` or ``session``.

        A key derived from a passphrase is kept for this session only, whatever keyring
        there is: the passphrase is asked again at the next start (``passphrase``).
        """
        key = validate_key(key)
        if passphrase:
            self._session_key = key
            self._session_passphrase = True
            return "passphrase"
        self._session_passphrase = False
        if self._environment_key:
            # The environment wins at the next start; keep the new key for this session.
            self._session_key = key
            return "session"
        if self._keyring_set(KEYRING_ENTRY, key):
            self._session_key = ""
            return "keyring"
        self._session_key = key
        return "session"

    # -- the pending key of an unfinished rotation ------------------------------------------
    def pending(self) -> str:
        """The new key of an unfinished rotation: from the keyring, else the saved key file
        (a generated key without a keyring); "" when neither holds a valid key."""
        stored = self._keyring_get(KEYRING_PENDING_ENTRY)
        if stored:
            return stored.strip()
        return self._file_get()

    def pending_for(self, kid: str) -> tuple[str, str]:
        """``(key, where)``: the saved pending key whose key id is ``kid`` (the one the
        rotation journal names), from the keyring or the saved key file; ``("", "")``."""
        stored = self._keyring_get(KEYRING_PENDING_ENTRY).strip()
        if stored and key_id(stored) == kid:
            return stored, _("the OS keyring")
        saved = self._file_get()
        if saved and key_id(saved) == kid and self.pending_file is not None:
            return saved, str(self.pending_file)
        return "", ""

    def set_pending(self, key: str, *, durable: bool = False) -> str:
        """Keep ``key`` as the pending rotation key; return where (a sentence), or "".

        The keyring is tried first (read back, so a keyring that drops it is not trusted).
        With ``durable`` (a generated key: the user has no other copy yet) and no keyring
        holding it, it goes to :attr:`pending_file` (0600, fsync'd); when that fails too,
        :class:`~backends.errors.StoreUnavailableError` — before anything was rewritten.
        """
        key = validate_key(key)
        if self._keyring_set(KEYRING_PENDING_ENTRY, key) and (
            self._keyring_get(KEYRING_PENDING_ENTRY).strip() == key
        ):
            return _("the OS keyring (service {service!r}, entry {entry!r})").format(
                service=KEYRING_SERVICE, entry=KEYRING_PENDING_ENTRY
            )
        if not durable:
            return ""
        if self.pending_file is None:
            said = _(
                "no OS keyring and no data folder to keep the generated key in: nothing was "
                "changed; give a key of your own in the environment instead"
            )
            # the variable's name is the details (issue 30)
            raise StoreUnavailableError(
                failures.with_details(said, "CUSTODIA_NEW_CONVERSATIONS_KEY")
            )
        _write_private(self.pending_file, key + "\n")
        return str(self.pending_file)

    def clear_pending(self) -> None:
        """Forget the pending key (the rotation finished and the key is remembered)."""
        if self.pending_file is not None:
            with contextlib.suppress(FileNotFoundError):
                self.pending_file.unlink()
        if not self.keyring().usable:
            return
        try:
            import keyring  # noqa: PLC0415 — lazy: ~50 ms to import, needed only for a key

            keyring.delete_password(KEYRING_SERVICE, KEYRING_PENDING_ENTRY)
        except Exception:  # not there, or the keyring went away: nothing to clear
            log.debug("no pending rotation key to clear", exc_info=True)

    def _file_get(self) -> str:
        if self.pending_file is None:
            return ""
        try:
            text = self.pending_file.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError) as err:
            log.warning(_("cannot read the saved rotation key %s: %s"), self.pending_file, err)
            return ""
        try:
            return validate_key(text)
        except InvalidKeyError:
            log.warning(_("%s does not hold a Fernet key; ignored"), self.pending_file)
            return ""

    def _keyring_get(self, entry: str) -> str:
        if not self.keyring().usable:
            return ""
        try:
            import keyring  # noqa: PLC0415 — lazy: ~50 ms to import, needed only for a key

            return keyring.get_password(KEYRING_SERVICE, entry) or ""
        except Exception as err:
            log.warning(_("cannot read the OS keyring: %s"), err)
            return ""

    def _keyring_set(self, entry: str, key: str) -> bool:
        if not self.keyring().usable:
            return False
        try:
            import keyring  # noqa: PLC0415 — lazy: ~50 ms to import, needed only for a key

            keyring.set_password(KEYRING_SERVICE, entry, key)
        except Exception as err:
            log.warning(_("cannot write the OS keyring, keeping the key for this session: %s"), err)
            return False
        return True


# -- passphrases (Scrypt) ---------------------------------------------------------------------


class WrongPassphraseError(InvalidKeyError):
    """The passphrase derives none of the keys recorded in ``.kdf.json`` (checked against
    their key ids, before any file is read)."""


class NoPassphraseError(InvalidKeyError):
    """A passphrase was given but none was ever set for this history (no ``.kdf.json``)."""


#: next to the conversation files: one entry per passphrase-derived key
KDF_FILE = ".kdf.json"
KDF_FORMAT = "custodia.conversations.kdf"
#: Scrypt cost, measured on this project's 2-core machines (2026-12-01): n = 2**17, r = 8,
#: p = 1 takes 0.31–0.42 s and 128 MiB per derivation (2**16: ~0.2 s; 2**18: ~0.8 s and 256
#: MiB). Stored in each entry, so a later change never locks an older passphrase out.
SCRYPT_N = 2**17
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
#: the most an entry may cost: twice the default's work (n·r·p; measured 0.6–0.85 s) and
#: memory (128·n·r: 256 MiB). A hostile entry (n = 2**20, r = 4, p = 4) took 9.2 s before.
MAX_SCRYPT_WORK = 2 * SCRYPT_N * SCRYPT_R * SCRYPT_P
MAX_SCRYPT_MEMORY = 2 * 128 * SCRYPT_N * SCRYPT_R
#: the most entries a passphrase file holds (one per passphrase ever set for the history),
#: so an unlock that tries each costs at most this many bounded derivations
MAX_KDF_ENTRIES = 16
#: the shortest new passphrase accepted (characters)
MIN_PASSPHRASE = 8


def normalise_passphrase(passphrase: str) -> str:
    """NFC, so the same passphrase typed on another keyboard or system derives the same key."""
    return unicodedata.normalize("NFC", passphrase)


@dataclass(frozen=True)
class KdfEntry:
    """How one passphrase key was derived; ``key_id`` is its check value."""

    key_id: str
    salt: bytes
    n: int
    r: int
    p: int
    created: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "kdf": "scrypt",
            "salt": base64.b64encode(self.salt).decode("ascii"),
            "n": self.n,
            "r": self.r,
            "p": self.p,
            "created": self.created,
        }

    @classmethod
    def from_json(cls, data: Any) -> KdfEntry:
        if not isinstance(data, dict) or data.get("kdf") != "scrypt":
            raise ValueError("not a scrypt entry")
        n, r, p = data.get("n"), data.get("r"), data.get("p")
        if not all(isinstance(v, int) and v > 0 for v in (n, r, p)):
            raise ValueError("bad scrypt parameters")
        assert isinstance(n, int) and isinstance(r, int) and isinstance(p, int)
        # bounded (a hostile entry costs at most ~1 s and 256 MiB): n a power of two
        if n < 2 or n & (n - 1) or r > 16 or p > 4:
            raise ValueError("scrypt parameters out of range")
        if n * r * p > MAX_SCRYPT_WORK or 128 * n * r > MAX_SCRYPT_MEMORY:
            raise ValueError(
                f"scrypt parameters n={n}, r={r}, p={p} cost more than Custodia ever sets "
                f"(at most {MAX_SCRYPT_WORK // (SCRYPT_N * SCRYPT_R * SCRYPT_P)}× its default)"
            )
        return cls(
            str(data["key_id"]),
            base64.b64decode(str(data["salt"]), validate=True),
            n,
            r,
            p,
            str(data.get("created", "")),
        )


def derive_key(passphrase: str, entry: KdfEntry) -> str:
    """The Fernet key ``passphrase`` gives under ``entry``'s salt and parameters (slow)."""
    raw = Scrypt(salt=entry.salt, length=32, n=entry.n, r=entry.r, p=entry.p).derive(
        normalise_passphrase(passphrase).encode("utf-8")
    )
    return base64.urlsafe_b64encode(raw).decode("ascii")


class PassphraseFile:
    """``conversations/.kdf.json``: salts, Scrypt parameters and check values, never a key.

    Entries are only ever added (an old passphrase keeps opening the files made under it).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def entries(self) -> list[KdfEntry]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as err:
            said = _("the passphrase file {path} cannot be read").format(path=self.path)
            raise StoreUnavailableError(failures.failed(said, err)) from err
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict) or data.get("format") != KDF_FORMAT:
                raise ValueError("not a Custodia passphrase file")
            items = data["entries"]
            if not isinstance(items, list) or len(items) > MAX_KDF_ENTRIES:
                raise ValueError(
                    f"more than {MAX_KDF_ENTRIES} entries: Custodia never writes that many"
                )
            return [KdfEntry.from_json(item) for item in items]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            said = _(
                "{path} is damaged; the passphrase cannot be checked. Restore it from a "
                "backup; it holds no secret (salts and check values only)"
            ).format(path=self.path)
            raise StoreUnavailableError(failures.with_details(said, str(err))) from None

    def key_ids(self) -> tuple[str, ...]:
        return tuple(e.key_id for e in self.entries())

    def unlock(
        self,
        passphrase: str,
        what: str = N_("the passphrase"),
        prefer: Iterable[str] = (),
        where: str = "",
    ) -> str:
        """The key ``passphrase`` derives under one of the entries (those whose key id is in
        ``prefer`` first); :class:`WrongPassphraseError` when it matches none. ``what``: the
        passphrase in words (marked with ``N_``); ``where``: a variable's name, said as the
        details."""
        entries = self.entries()
        if not entries:
            said = _(
                "{what} was given, but no passphrase has been set for this history ({file} is "
                "missing): set one first (“Set key…” ▸ Passphrase, or `custodia rotate-key "
                "--passphrase`)"
            ).format(what=_(what), file=self.path.name)
            raise NoPassphraseError(failures.with_details(said, where))
        wanted = set(prefer)
        tried: set[tuple[bytes, int, int, int]] = set()
        for entry in sorted(entries, key=lambda e: e.key_id not in wanted):
            derivation = (entry.salt, entry.n, entry.r, entry.p)
            if derivation in tried:  # the same derivation twice can only fail twice
                continue
            tried.add(derivation)
            key = derive_key(passphrase, entry)
            if hmac.compare_digest(key_id(key), entry.key_id):
                return key
        ids = ", ".join(e.key_id for e in entries)
        said = _(
            "wrong passphrase: {what} matches none of the passphrases set for this history "
            "(key id {ids}); check it for a typo (letter case, keyboard layout)"
        ).format(what=_(what), ids=ids)
        raise WrongPassphraseError(failures.with_details(said, where))

    def add(self, passphrase: str) -> str:
        """A new key from ``passphrase`` and a fresh salt; its entry is on disk (fsync'd)
        before the key is returned, so nothing is ever encrypted under an unrecorded salt."""
        if len(normalise_passphrase(passphrase)) < MIN_PASSPHRASE:
            raise InvalidKeyError(
                _(
                    "a passphrase needs at least {count} characters (a few words are easier "
                    "to remember and harder to guess)"
                ).format(count=MIN_PASSPHRASE)
            )
        if len(self.entries()) >= MAX_KDF_ENTRIES:
            raise InvalidKeyError(
                _(
                    "{count} passphrases have been set for this history, the most it keeps: "
                    "start a new history, or keep using a key instead of a passphrase"
                ).format(count=MAX_KDF_ENTRIES)
            )
        entry = KdfEntry("", os.urandom(SALT_BYTES), SCRYPT_N, SCRYPT_R, SCRYPT_P)
        key = derive_key(passphrase, entry)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        entry = KdfEntry(key_id(key), entry.salt, entry.n, entry.r, entry.p, created)
        with self._lock:
            entries = [e for e in self.entries() if e.key_id != entry.key_id]
            entries.append(entry)
            text = json.dumps(
                {"format": KDF_FORMAT, "version": 1, "entries": [e.to_json() for e in entries]},
                indent=1,
            )
            write_private(self.path, text + "\n", what=N_("the passphrase's salt"))
        return key


def write_private(path: Path, text: str, what: str = N_("the generated key")) -> None:
    """``text`` into ``path`` atomically, 0600, fsync'd with its folder."""
    _write_private(path, text, what)


def _write_private(path: Path, text: str, what: str = N_("the generated key")) -> None:
    """``text`` into ``path`` atomically, 0600, fsync'd with its folder (a key must survive a
    power cut before anything is encrypted under it)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            view = memoryview(text.encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        said = _("{path}: cannot save {what}").format(path=path, what=_(what))
        main, details = failures.split(failures.failed(said, err))
        raise StoreUnavailableError(
            failures.with_details(main + "; " + _("nothing was changed"), details)
        ) from err
