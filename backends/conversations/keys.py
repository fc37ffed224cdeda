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
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from backends.conversations.errors import InvalidKeyError
from backends.errors import StoreUnavailableError

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
ENVIRONMENT_HINT = (
    "check it for a typo or a cut-off end. It must be the key your conversations are "
    "encrypted with; unset it only if you have no key yet"
)
KEYRING_WHAT = (
    f"the conversations key in the OS keyring (service {KEYRING_SERVICE!r}, "
    f"entry {KEYRING_ENTRY!r})"
)
KEYRING_HINT = "set CONVERSATIONS_KEY to the right key, which takes precedence"


def generate_key() -> str:
    """A fresh Fernet key (url-safe base64 text)."""
    return Fernet.generate_key().decode("ascii")


#: what a Fernet key looks like, for error messages
FERNET_SHAPE = "44 characters of url-safe base64 that encode 32 bytes, usually ending in '='"


def _fernet(key: str, what: str = "the conversations key", hint: str = "") -> Fernet:
    try:
        return Fernet(key.strip().encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise InvalidKeyError(
            f"{what} is not a Fernet key ({FERNET_SHAPE})" + (f"; {hint}" if hint else "")
        ) from None


def validate_key(key: str, what: str = "the new key", hint: str = "") -> str:
    """The key, stripped, or :class:`InvalidKeyError` naming ``what`` (where the key came
    from: ``CONVERSATIONS_KEY``, the keyring, a new key...) and what to do (``hint``)."""
    _fernet(key, what, hint)
    return key.strip()


def key_id(key: str) -> str:
    return hmac.new(key.strip().encode("ascii"), _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]


class HistoryCipher:
    """Encrypts with the first key; decrypts with whichever key the file's key id names."""

    def __init__(self, keys: Sequence[str]) -> None:
        if not keys:
            raise ValueError("HistoryCipher needs at least one key")
        self._fernets: dict[str, Fernet] = {}
        for key in keys:
            self._fernets.setdefault(key_id(key), _fernet(key))
        self.primary_id = key_id(keys[0])

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
        import keyring

        backend = keyring.get_keyring()
        priority = float(backend.priority)
    except Exception as err:  # keyring raises many things when no backend can load
        return KeyringStatus(False, f"keyring unavailable: {err}")
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if priority <= 0 or name.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return KeyringStatus(False, "no OS keyring backend is available on this system")
    if getattr(backend, "backends", None) == []:  # a chainer over nothing
        return KeyringStatus(False, "no OS keyring backend is available on this system")
    return KeyringStatus(True, name)


class KeyStore:
    """Finds the key and remembers a key set in the app (keyring, else this session only)."""

    def __init__(
        self, environment_key: str = "", use_keyring: bool = True, pending_file: Path | None = None
    ) -> None:
        self._environment_key = environment_key.strip()
        #: where a generated rotation key is kept when no keyring holds it (0600)
        self.pending_file = pending_file
        self._use_keyring = use_keyring
        self._session_key = ""
        self._lock = threading.Lock()
        self._keyring: KeyringStatus | None = None

    def keyring(self) -> KeyringStatus:
        with self._lock:
            if self._keyring is None:
                self._keyring = (
                    keyring_status()
                    if self._use_keyring
                    else KeyringStatus(False, "the OS keyring is not used")
                )
            return self._keyring

    def current(self) -> tuple[str, str]:
        """``(key, source)``; source is session, environment, keyring or none.

        A key set in the app during this session wins (it is the newest choice); at the next
        start the environment, then the keyring, decide again.
        """
        if self._session_key:
            return self._session_key, "session"
        if self._environment_key:
            key = validate_key(self._environment_key, "CONVERSATIONS_KEY", ENVIRONMENT_HINT)
            return key, "environment"
        stored = self._keyring_get(KEYRING_ENTRY)
        if stored:
            return validate_key(stored, KEYRING_WHAT, KEYRING_HINT), "keyring"
        return "", "none"

    @property
    def from_environment(self) -> bool:
        return bool(self._environment_key)

    def remember(self, key: str) -> str:
        """Keep ``key`` for later starts; return where: ``keyring`` or ``session``."""
        key = validate_key(key)
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
            return stored, "the OS keyring"
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
            return f"the OS keyring (service {KEYRING_SERVICE!r}, entry {KEYRING_PENDING_ENTRY!r})"
        if not durable:
            return ""
        if self.pending_file is None:
            raise StoreUnavailableError(
                "no OS keyring and no data dir to keep the generated key in: nothing was "
                "changed; give a key of your own in CUSTODIA_NEW_CONVERSATIONS_KEY instead"
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
            import keyring

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
            log.warning("cannot read the saved rotation key %s: %s", self.pending_file, err)
            return ""
        try:
            return validate_key(text)
        except InvalidKeyError:
            log.warning("%s does not hold a Fernet key; ignored", self.pending_file)
            return ""

    def _keyring_get(self, entry: str) -> str:
        if not self.keyring().usable:
            return ""
        try:
            import keyring

            return keyring.get_password(KEYRING_SERVICE, entry) or ""
        except Exception as err:
            log.warning("cannot read the OS keyring: %s", err)
            return ""

    def _keyring_set(self, entry: str, key: str) -> bool:
        if not self.keyring().usable:
            return False
        try:
            import keyring

            keyring.set_password(KEYRING_SERVICE, entry, key)
        except Exception as err:
            log.warning("cannot write the OS keyring, keeping the key for this session: %s", err)
            return False
        return True


def _write_private(path: Path, text: str) -> None:
    """``text`` into ``path`` atomically, 0600, fsync'd with its folder (a key must survive a
    power cut before anything is encrypted under it)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)
            view = memoryview(text.encode("ascii"))
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
        raise StoreUnavailableError(
            f"{path}: cannot save the generated key ({err.strerror or err}); nothing was changed"
        ) from err
