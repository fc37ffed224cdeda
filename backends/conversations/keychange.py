"""Which key the history is under, and changing it: the status line's figures, the check that
refuses a write under the wrong key, a rotation to a new key, a passphrase, the key of an
earlier history given back, a new history started without it.

Apart from the agent (:mod:`.service`) because it is one question — may the history be read
and written with the keys set here, and what happens when the user changes them — that needs
the key store and the files' keys but no model and no search.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backends import failures
from backends.conversations.errors import (
    HistoryKeyError,
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    InvalidKeyError,
)
from backends.conversations.keys import (
    PENDING_KEY_FILE,
    HistoryCipher,
    KeyringStatus,
    KeyStore,
    PassphraseFile,
    key_id,
    validate_key,
)
from backends.conversations.library import ConversationLibrary
from backends.conversations.rotation import (
    RotationReport,
    check_history_keys,
    pending_rotation,
    rotate,
    set_aside,
    set_aside_key_ids,
)
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import N_, _
from backends.progress import Progress

log = logging.getLogger(__name__)

#: environment variable holding the passphrase the conversations key is derived from
PASSPHRASE_ENV = "CONVERSATIONS_PASSPHRASE"

#: how each key source is named in messages, and the variable it comes from (the details)
_KEY_SOURCES = {
    "environment": (N_("the key set in the environment"), "CONVERSATIONS_KEY"),
    "environment_passphrase": (
        N_("the key from the passphrase set in the environment"),
        "CONVERSATIONS_PASSPHRASE",
    ),
    "keyring": (N_("the key in the OS keyring"), ""),
    "session": (N_("the key set in the app"), ""),
    "passphrase": (N_("the key from the passphrase given in the app"), ""),
}


@dataclass(frozen=True)
class EncryptionStatus:
    encrypted: bool  # a key is set: new writes are encrypted
    source: str  # session | environment | keyring | none
    key_id: str
    keyring: KeyringStatus
    clear_files: int  # conversations still stored in clear
    unreadable: int
    rotation_pending: str  # new key id of an unfinished rotation, or ""
    #: why new conversations are refused now (the history is under a key not set here)
    key_problem: str = ""
    #: key ids that a passphrase derives (``.kdf.json``): a passphrase may be asked for
    passphrase_key_ids: tuple[str, ...] = ()
    #: conversations of an earlier history set aside (their key is not set here): locked
    locked: int = 0
    locked_key_ids: tuple[str, ...] = ()
    #: key ids the key problem is about (what the history needs), and how many files
    needed_key_ids: tuple[str, ...] = ()
    needed_files: int = 0

    @property
    def passphrase_needed(self) -> bool:
        """The locked history's key comes from a passphrase (ask for it, not for a key)."""
        return any(k in self.passphrase_key_ids for k in self.needed_key_ids)

    @property
    def warning(self) -> bool:
        return (
            not self.encrypted
            or self.clear_files > 0
            or bool(self.rotation_pending)
            or bool(self.key_problem)
        )


@dataclass(frozen=True)
class KeyOutcome:
    """What giving a key (or passphrase) in the app did."""

    rotation: RotationReport | None  # the history was re-encrypted (or checked) under it
    unlocked: int = 0  # conversations of an earlier history readable again (read only)


@dataclass(frozen=True)
class NewHistory:
    """A new history was started; the earlier one is kept, untouched, as locked."""

    locked: int
    locked_key_ids: tuple[str, ...]
    encrypted: bool


def key_store(
    conversations_key: str,
    folder: Path,
    passphrases: PassphraseFile,
    *,
    use_keyring: bool,
    passphrase: str | None,
) -> KeyStore:
    """The key store of the history in ``folder``: ``conversations_key`` (the configuration's),
    the OS keyring (``use_keyring``), the passphrase given (else CONVERSATIONS_PASSPHRASE)."""
    return KeyStore(
        conversations_key,
        use_keyring=use_keyring,
        pending_file=folder / PENDING_KEY_FILE,
        environment_passphrase=(
            os.environ.get(PASSPHRASE_ENV, "") if passphrase is None else passphrase
        ),
        passphrases=passphrases,
    )


def history_cipher(
    keys: KeyStore, folder: Path, extra_old: tuple[str, ...] = ()
) -> HistoryCipher | None:
    """The cipher the history in ``folder`` is read and written with: the key set here (and
    an unfinished rotation's new key, and ``extra_old``) writes and reads; the keys of an
    earlier history given back only read. ``None`` when no key is set at all."""
    key, _ = keys.current()
    candidates = [key] if key else []
    pending = pending_rotation(folder)
    if pending:
        candidate, _ = keys.pending_for(pending)
        if candidate and candidate not in candidates:
            candidates.insert(0, candidate)  # rotation underway: write new, read both
    candidates.extend(k for k in extra_old if k and k not in candidates)
    can_encrypt = bool(candidates)
    # keys of an earlier history given back: they read its files, never write new ones
    candidates.extend(k for k in keys.unlocked if k not in candidates)
    return HistoryCipher(candidates, can_encrypt=can_encrypt) if candidates else None


class HistoryKeys:
    """The history's keys: what is set, what the files need, and changing them."""

    def __init__(
        self, library: ConversationLibrary, keys: KeyStore, passphrases: PassphraseFile
    ) -> None:
        self.library = library
        self.keys = keys
        self.passphrases = passphrases
        self.folder = library.folder

    def apply(self, extra_old: tuple[str, ...] = ()) -> None:
        """(Re)build the cipher from the key store (and an unfinished rotation's keys)."""
        self.library.use_cipher(history_cipher(self.keys, self.folder, extra_old))

    # -- what is set, what is needed -------------------------------------------------------
    def status(self) -> EncryptionStatus:
        key, source = self.keys.current()
        rows = self.library.rows()
        cipher = self.library.files.cipher
        problem = self.key_problem()
        aside = set_aside_key_ids(self.folder)
        locked = [r for r in rows if not r.readable and r.encrypted and r.key_id in aside]
        try:
            passphrase_ids = self.passphrases.key_ids()
        except StoreUnavailableError as err:
            log.warning("%s", err)
            passphrase_ids = ()
        return EncryptionStatus(
            encrypted=bool(key),
            source=source,
            key_id=cipher.primary_id if cipher and cipher.can_encrypt else "",
            keyring=self.keys.keyring(),
            clear_files=sum(1 for r in rows if r.readable and not r.encrypted),
            unreadable=sum(1 for r in rows if not r.readable) - len(locked),
            rotation_pending=pending_rotation(self.folder),
            key_problem=str(problem) if problem else "",
            passphrase_key_ids=passphrase_ids,
            locked=len(locked),
            locked_key_ids=tuple(sorted({r.key_id for r in locked})),
            needed_key_ids=problem.key_ids if problem else (),
            needed_files=problem.files if problem else 0,
        )

    def key_problem(self) -> HistoryKeyError | None:
        """Why writing a conversation now would split the history across keys, or None.

        When encrypted conversations exist, a new message is only written if the key set here
        is (one of) theirs: with no key it would be stored in clear next to them, with a
        wrong (mistyped) key under a key nothing else uses — a lost conversation at the next
        start. Decided from the index (key ids are in clear), without reading any file.
        """
        groups = self.library.recovering(self.library.index.encrypted_key_ids)
        cipher = self.library.files.cipher
        # an earlier history the user set aside (its key lost) no longer blocks anything,
        # unless its key was given back (then its files are readable, see below)
        aside = set_aside_key_ids(self.folder)
        groups = {
            kid: group
            for kid, group in groups.items()
            if kid not in aside or (cipher is not None and cipher.knows(kid))
        }
        if not groups:
            return None
        files = sum(total for total, _ in groups.values())
        ids = tuple(sorted(kid or "(none)" for kid in groups))
        shown = ", ".join(ids)
        if cipher is not None and not cipher.can_encrypt:
            if all(kid in aside for kid in groups):
                return None  # only a given-back earlier history: new ones stay clear
            cipher = None
        if cipher is None:
            said = _(
                "conversation history is encrypted ({files} conversation(s), key id {ids}); "
                "set its key in the environment (or give it, or its passphrase, in “Set key…” "
                "in the app; or start a new history there and keep these as locked). Nothing "
                "was written: a new conversation would be stored in clear next to it."
            ).format(files=files, ids=shown)
            # the variable's name is the details (issue 30)
            return HistoryKeyRequiredError(
                failures.with_details(said, "CONVERSATIONS_KEY"), ids, files
            )
        if any(readable for _, readable in groups.values()):
            return None
        if any(kid and cipher.knows(kid) for kid in groups):
            return None  # our key id, damaged tokens: the key is right
        _key, source = self.keys.current()
        where, variable = _KEY_SOURCES.get(source, (N_("the key set here"), ""))
        said = _(
            "{where} (key id {key_id}) opens none of the {files} encrypted conversation(s) "
            "here (key id {ids}): a wrong or mistyped key? Set the key they are encrypted "
            "with. Nothing was written: a new conversation would be stored under a key "
            "nothing else uses."
        ).format(where=_(where), key_id=cipher.primary_id, files=files, ids=shown)
        return HistoryWrongKeyError(failures.with_details(said, variable), ids, files)

    def key_problem_ids(self) -> tuple[str, ...]:
        problem = self.key_problem()
        return problem.key_ids if problem else ()

    def check_writable(self) -> None:
        """Raise :meth:`key_problem` when there is one (before anything is written)."""
        problem = self.key_problem()
        if problem is not None:
            raise problem

    def saved_pending_key(self) -> tuple[str, str]:
        """``(key, where)``: the saved new key of the unfinished rotation, when one is
        unfinished and its key is kept here (keyring or the saved key file); else ``("", "")``.
        """
        pending = pending_rotation(self.folder)
        return self.keys.pending_for(pending) if pending else ("", "")

    # -- changing it -----------------------------------------------------------------------
    def rotate_key(
        self,
        new_key: str,
        progress: Progress | None = None,
        *,
        generated: bool = False,
        on_key_saved: Callable[[str], None] | None = None,
        passphrase: bool = False,
    ) -> RotationReport:
        """Re-encrypt every conversation under ``new_key``, crash-safely and resumably (see
        :meth:`backends.conversations.service.ConversationAgent.rotate_key`)."""
        new_key = validate_key(new_key)
        old_key, _ = self.keys.current()
        unfinished = pending_rotation(self.folder)
        resumed = self.keys.pending_for(unfinished)[0] if unfinished else ""
        old_keys = [
            k
            for k in dict.fromkeys((old_key, resumed, self.keys.pending(), *self.keys.unlocked))
            if k and k != new_key
        ]
        # encrypted files and none under a key set here: refuse before anything changes
        check_history_keys(self.folder, new_key, old_keys)
        # durable before any file is under it (a failure here changes nothing)
        where = "" if passphrase else self.keys.set_pending(new_key, durable=generated)
        if on_key_saved is not None:
            on_key_saved(where)
        self.library.use_cipher(HistoryCipher([new_key, *old_keys]))
        try:
            report = rotate(self.folder, new_key, old_keys, progress)
        except BaseException:
            self.apply(extra_old=(new_key, *old_keys))
            raise
        self.keys.remember(new_key, passphrase=passphrase)
        self.keys.clear_pending()
        self.apply()
        self.library.reconcile()
        return report

    def key_from_passphrase(self, passphrase: str, *, new: bool = False) -> str:
        """The key ``passphrase`` derives (see
        :meth:`backends.conversations.service.ConversationAgent.key_from_passphrase`)."""
        wanted = set(self.key_problem_ids())
        if self.library.files.cipher is not None:
            wanted.add(self.library.files.cipher.primary_id)
        if new:
            try:
                return self.passphrases.unlock(passphrase, prefer=wanted)
            except InvalidKeyError:
                return self.passphrases.add(passphrase)
        return self.passphrases.unlock(passphrase, prefer=wanted)

    def use_key(
        self,
        key: str,
        progress: Progress | None = None,
        *,
        generated: bool = False,
        passphrase: bool = False,
    ) -> KeyOutcome:
        """What “Set key…” does with a key (see
        :meth:`backends.conversations.service.ConversationAgent.use_key`)."""
        key = validate_key(key)
        kid = key_id(key)
        cipher = self.library.files.cipher
        current = cipher.primary_id if cipher is not None and cipher.can_encrypt else ""
        if kid in set_aside_key_ids(self.folder) and kid != current:
            if key not in self.keys.unlocked:
                self.keys.unlocked.append(key)
            self.apply()
            self.library.reconcile()
            rows = self.library.rows()
            return KeyOutcome(None, sum(1 for r in rows if r.readable and r.key_id == kid))
        return KeyOutcome(
            self.rotate_key(key, progress, generated=generated, passphrase=passphrase)
        )

    def start_new_history(self, new_key: str | None, *, passphrase: bool = False) -> NewHistory:
        """Set the locked history aside and go on without its key (see
        :meth:`backends.conversations.service.ConversationAgent.start_new_history`)."""
        problem = self.key_problem()
        if problem is None:
            raise CustodiaEnvironmentError(
                _("no conversation is locked: there is no earlier history to set aside")
            )
        pending = pending_rotation(self.folder)
        if pending:
            raise CustodiaEnvironmentError(
                _(
                    "a key change to key id {pending} is unfinished: give its key to finish it "
                    "first (a new history would leave it half done)"
                ).format(pending=pending)
            )
        if new_key is not None:
            new_key = validate_key(new_key)
            if key_id(new_key) in problem.key_ids:
                raise CustodiaEnvironmentError(
                    _(
                        "this is the key of the locked history: give it in “Set key…” to "
                        "unlock it instead"
                    )
                )
        set_aside(self.folder, problem.key_ids, problem.files)
        if new_key is not None:
            self.keys.remember(new_key, passphrase=passphrase)
        self.apply()
        self.library.reconcile()
        # a CONVERSATIONS_KEY that opened nothing still encrypts what comes next: say so
        return NewHistory(problem.files, problem.key_ids, self.library.files.writes_encrypted())
