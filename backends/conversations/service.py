"""The conversation agent (SPEC section 3): the only object the tab and the CLI talk to.

It ties together the files (source of truth, :mod:`.files`), the SQLite index (:mod:`.index`),
the derived Chroma vectors (:mod:`.vectors`), the key (:mod:`.keys`) and the chat models.
Every method may block (files, models, Chroma): the desktop calls them through its worker
pool, the CLI directly. Methods are thread-safe.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from backends import answers, grounding, i18n
from backends.answers import COMPOSED, MODEL, WITHHELD, Answer, DraftStats
from backends.assistants import Needs
from backends.config import Config
from backends.conversations import files as files_module
from backends.conversations import history as history_answers
from backends.conversations.errors import (
    ConversationError,
    ConversationNotFoundError,
    HistoryKeyError,
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    InvalidKeyError,
    TurnFailedError,
)
from backends.conversations.files import (
    Conversation,
    ConversationFiles,
    FileStamp,
    RotationReport,
    StoredMessage,
    check_name,
    fit_name,
    fit_title,
    make_title,
    new_id,
    now_iso,
    pending_rotation,
    set_aside_key_ids,
    tidy_name,
)
from backends.conversations.index import (
    ConversationIndex,
    IndexDamagedError,
    IndexRow,
    ReconcileReport,
    reconcile,
    row_for,
)
from backends.conversations.keys import (
    KDF_FILE,
    PENDING_KEY_FILE,
    HistoryCipher,
    KeyringStatus,
    KeyStore,
    PassphraseFile,
    key_id,
    validate_key,
)
from backends.conversations.vectors import (
    SyncReport,
    embeddable,
    pointer_id,
    split_pointer_id,
    sync,
)
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.grounding import CheckedSentence, Source
from backends.models.chat import ChatModel, Message, Prompt, RetrievalOnlyChat, ShouldStop
from backends.models.embedders import Embedder
from backends.models.registry import CHAT_FACTORIES, ChatChoice
from backends.net import http_json, is_loopback_host
from backends.progress import Progress
from backends.services import Services, open_store
from backends.stores.vectors import VectorIndex

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are Custodia's conversation assistant. Answer the user's last message helpfully and "
    "concisely. Passages from the user's earlier conversations may be given as context; use "
    "them only when they are relevant."
)
#: messages of the current conversation sent with each turn
HISTORY_MESSAGES = 20
#: past messages searched for a history question's answer
HISTORY_CANDIDATES = 20
#: passages from other conversations offered to the model, and how similar they must be
CONTEXT_PASSAGES = 3
MIN_CONTEXT_SCORE = 0.3
PASSAGE_CHARS = 400
#: provider recorded for each kind of configured chat model
PROVIDERS = {
    "smollm2": "llama.cpp",
    "gguf": "llama.cpp",
    "scripted": "scripted",
    "retrieval-only": "retrieval-only",
    "ollama": "ollama",
    "openai": "openai",
}

#: how each key source is named in messages
_KEY_SOURCES = {
    "environment": "CONVERSATIONS_KEY",
    "environment_passphrase": "the key from CONVERSATIONS_PASSPHRASE",
    "keyring": "the key in the OS keyring",
    "session": "the key set in the app",
    "passphrase": "the key from the passphrase given in the app",
}
#: environment variable holding the passphrase the conversations key is derived from
PASSPHRASE_ENV = "CONVERSATIONS_PASSPHRASE"

T = TypeVar("T")

#: ``(config, embedder, fresh)``: with ``fresh`` the collection is dropped and made anew
VectorFactory = Callable[[Config, Embedder, bool], VectorIndex]
Never = Callable[[], bool]


def _never() -> bool:
    return False


#: the conversation files' folder and the index of them, in the data dir
FOLDER = "conversations"
INDEX_FILE = "conversations.sqlite3"


def default_vectors(config: Config, embedder: Embedder, fresh: bool = False) -> VectorIndex:
    """Local persistent Chroma under the data dir, or the server at ``config.chroma_url``.

    Only our collection is touched (``fresh`` drops it): the folder or server may hold other
    assistants' collections.
    """
    index: VectorIndex = open_store(
        "vectors",
        config,
        embedder_name=embedder.name,
        dimension=embedder.dimension,
        fresh=fresh,
    )
    return index


@dataclass(frozen=True)
class ModelChoice:
    """One entry of the provider/model picker."""

    key: str  # what ``chat_model(key)`` understands: config names, "ollama:<m>", "openai:<m>"
    provider: str
    model: str
    label: str


@dataclass(frozen=True)
class SearchHit:
    conversation_id: str
    name: str
    date: str
    index: int
    role: str
    text: str
    score: float


@dataclass(frozen=True)
class TurnResult:
    conversation_id: str
    answer: str
    provider: str
    model: str
    user_index: int
    answer_index: int
    context: int
    stopped: bool
    retrieval_only: bool
    #: why past conversations could not be searched for context ("" when they were)
    context_error: str = ""
    #: what was repaired in the message before it was saved ("" when nothing was)
    notice: str = ""
    #: each sentence of the answer checked against the past messages given as context (the
    #: tutor's support check, :mod:`backends.grounding`); ``number`` is 1-based into them
    checked: tuple[CheckedSentence, ...] = ()
    #: the past messages the answer was checked against, as the model was given them (for
    #: a history question: the past messages its ``[n]`` quote)
    context_passages: tuple[str, ...] = ()
    #: the answer shown and how it was made (:mod:`backends.answers`); ``answer`` is its text
    shown: Answer | None = None
    #: the past messages a history answer quotes, by ``[n]`` (conversation id, index)
    quoted: tuple[tuple[str, int], ...] = ()
    #: no draft was asked of the model (its drafts rarely pass): the user may ask for one
    draft_skipped: bool = False


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


@dataclass
class ImportResult:
    imported: list[tuple[str, str]] = field(default_factory=list)  # (id, name)
    renamed: int = 0  # ids that clashed and got a new one
    skipped: list[str] = field(default_factory=list)  # nothing to import there (no messages)
    #: what could not be imported, and why (the import is not complete: exit status 1)
    failed: list[str] = field(default_factory=list)
    #: what was imported changed (text repaired), one line each
    notices: list[str] = field(default_factory=list)
    #: conversations already present with the same messages: not imported again (names)
    duplicates: list[str] = field(default_factory=list)


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


class ConversationAgent:
    """Files + index + vectors + key + chat models. Build with :func:`get_service`."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Callable[[], Embedder],
        chat: Callable[[], ChatChoice],
        vectors: VectorFactory = default_vectors,
        use_keyring: bool = True,
        passphrase: str | None = None,
        configured: Callable[[], str] | None = None,
    ) -> None:
        self.config = config
        #: the model chosen for this assistant now (the window may choose another while the
        #: agent lives: Tools ▸ Models, the welcome's "Use it"); the config's, by default
        self._configured = configured or (lambda: self.config.chat_model)
        self.folder = config.path(FOLDER)
        self.passphrases = PassphraseFile(self.folder / KDF_FILE)
        self._embedder_factory = embedder
        self._chat_factory = chat
        self._vector_factory = vectors
        self._lock = threading.RLock()
        self._vector_lock = threading.RLock()
        self._vectors: VectorIndex | None = None
        self._models: dict[str, ChatModel] = {}
        self._cache: OrderedDict[tuple[str, FileStamp], Conversation] = OrderedDict()
        #: titles of clear conversations read from their files, by file version
        self._titles: dict[tuple[str, FileStamp], str] = {}
        self.keys = KeyStore(
            config.conversations_key,
            use_keyring=use_keyring,
            pending_file=self.folder / PENDING_KEY_FILE,
            environment_passphrase=(
                os.environ.get(PASSPHRASE_ENV, "") if passphrase is None else passphrase
            ),
            passphrases=self.passphrases,
        )
        #: how often each model's drafts pass (a cache file in the data dir)
        self.draft_stats = DraftStats(config.path(answers.STATS_FILE))
        self.files = ConversationFiles(self.folder)
        self.files.ensure()
        self._apply_key()
        self.index = ConversationIndex(config.path(INDEX_FILE), self.folder)
        if self.index.recovered is not None:
            self.reconcile()  # the damaged index was moved aside: rebuild it from the files

    # -- life cycle ------------------------------------------------------------------------
    def start(self, progress: Progress | None = None) -> ReconcileReport:
        """Clean crash leftovers and reconcile the index with the files (cheap when unchanged)."""
        self.files.remove_stale_temporaries()
        return self.reconcile(progress)

    def reconcile(self, progress: Progress | None = None) -> ReconcileReport:
        with self._lock:
            return self._recovering(lambda: reconcile(self.files, self.index, progress))

    def _recovering(self, action: Callable[[], T]) -> T:
        """``action()``; when the index turns out damaged, it is moved aside, rebuilt from
        the files (it is derived data) and ``action`` runs again."""
        try:
            return action()
        except IndexDamagedError as err:
            log.warning("the conversation index is damaged (%s); rebuilding it", err)
            with self._lock:
                self.index.reset()
                reconcile(self.files, self.index)
            return action()

    def close(self) -> None:
        with self._vector_lock:
            if self._vectors is not None:
                self._vectors.close()
                self._vectors = None
        with self._lock:
            self.index.close()

    # -- keys ------------------------------------------------------------------------------
    def _apply_key(self, extra_old: tuple[str, ...] = ()) -> None:
        """(Re)build the cipher from the key store (and an unfinished rotation's keys)."""
        key, _ = self.keys.current()
        keys = [key] if key else []
        pending = pending_rotation(self.folder)
        if pending:
            candidate, _ = self.keys.pending_for(pending)
            if candidate and candidate not in keys:
                keys.insert(0, candidate)  # rotation underway: write new, read both
        keys.extend(k for k in extra_old if k and k not in keys)
        can_encrypt = bool(keys)
        # keys of an earlier history given back: they read its files, never write new ones
        keys.extend(k for k in self.keys.unlocked if k not in keys)
        with self._lock:
            self.files.cipher = HistoryCipher(keys, can_encrypt=can_encrypt) if keys else None
            self._cache.clear()

    def encryption_status(self) -> EncryptionStatus:
        key, source = self.keys.current()
        rows = self._recovering(self.index.rows)
        cipher = self.files.cipher
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
        groups = self._recovering(self.index.encrypted_key_ids)
        cipher = self.files.cipher
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
            return HistoryKeyRequiredError(
                f"conversation history is encrypted ({files} conversation(s), key id {shown}); "
                "set CONVERSATIONS_KEY to its key (or give it, or its passphrase, in “Set "
                "key…” in the app; or start a new history there and keep these as locked). "
                "Nothing was written: a new conversation would be stored in clear next to it.",
                ids,
                files,
            )
        if any(readable for _, readable in groups.values()):
            return None
        if any(kid and cipher.knows(kid) for kid in groups):
            return None  # our key id, damaged tokens: the key is right
        _, source = self.keys.current()
        where = _KEY_SOURCES.get(source, "the key set here")
        return HistoryWrongKeyError(
            f"{where} (key id {cipher.primary_id}) opens none of the {files} encrypted "
            f"conversation(s) here (key id {shown}): a wrong or mistyped key? Set the key they "
            "are encrypted with. Nothing was written: a new conversation would be stored "
            "under a key nothing else uses.",
            ids,
            files,
        )

    def check_writable(self) -> None:
        """Raise :meth:`key_problem` when there is one (before anything is written)."""
        problem = self.key_problem()
        if problem is not None:
            raise problem

    def unreadable_reasons(self) -> dict[str, int]:
        """``reason -> count`` of the conversations that cannot be read now (so not searched)."""
        return self._recovering(self.index.unreadable_reasons)

    def rotate_key(
        self,
        new_key: str,
        progress: Progress | None = None,
        *,
        generated: bool = False,
        on_key_saved: Callable[[str], None] | None = None,
        passphrase: bool = False,
    ) -> RotationReport:
        """Re-encrypt every conversation under ``new_key``, crash-safely and resumably.

        With no key set before, this encrypts the clear conversations. The new key is
        remembered (keyring when usable, else this session) once every file is done; while
        it runs, and after an interruption, both keys are tried on read.

        Before the first file is rewritten the new key is kept as the pending key: in the
        OS keyring, and — ``generated`` (the user has no copy of it yet) without a keyring
        — in ``conversations/.rotation.key`` (0600), or nothing is done at all; then
        ``on_key_saved(where)`` runs (the CLI prints the key there). A kill at any point
        leaves every file under a key the user has: the old one, or the new one printed
        and saved. The saved key is removed once the rotation is finished.

        A key derived from a passphrase (``passphrase``) is never saved anywhere: its salt is
        in ``.kdf.json`` already (:meth:`key_from_passphrase`), so the passphrase gives it
        back; it is kept for this session only.
        """
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
        files_module.check_history_keys(self.folder, new_key, old_keys)
        # durable before any file is under it (a failure here changes nothing)
        where = "" if passphrase else self.keys.set_pending(new_key, durable=generated)
        if on_key_saved is not None:
            on_key_saved(where)
        with self._lock:
            self.files.cipher = HistoryCipher([new_key, *old_keys])
            self._cache.clear()
        try:
            report = files_module.rotate(self.folder, new_key, old_keys, progress)
        except BaseException:
            self._apply_key(extra_old=(new_key, *old_keys))
            raise
        self.keys.remember(new_key, passphrase=passphrase)
        self.keys.clear_pending()
        self._apply_key()
        self.reconcile()
        return report

    # -- passphrases, giving a key back, starting afresh ----------------------------------
    def key_from_passphrase(self, passphrase: str, *, new: bool = False) -> str:
        """The key ``passphrase`` derives (Scrypt, ~0.4 s): the one its ``.kdf.json`` entry
        checks (``WrongPassphraseError`` when it matches none), or with ``new`` a key under
        a fresh salt whose entry is on disk before the key is returned. A new passphrase
        that matches an existing entry gives that entry's key (no second salt)."""
        wanted = set(self.key_problem_ids())
        if self.files.cipher is not None:
            wanted.add(self.files.cipher.primary_id)
        if new:
            try:
                return self.passphrases.unlock(passphrase, prefer=wanted)
            except InvalidKeyError:
                return self.passphrases.add(passphrase)
        return self.passphrases.unlock(passphrase, prefer=wanted)

    def key_problem_ids(self) -> tuple[str, ...]:
        problem = self.key_problem()
        return problem.key_ids if problem else ()

    def use_key(
        self,
        key: str,
        progress: Progress | None = None,
        *,
        generated: bool = False,
        passphrase: bool = False,
    ) -> KeyOutcome:
        """What “Set key…” does with a key: the key of an earlier history set aside makes
        its files readable again (nothing is rewritten, new conversations stay where they
        go); any other key is :meth:`rotate_key` (``generated``: saved before any file is
        rewritten, so an interrupted change from the window is recoverable too)."""
        key = validate_key(key)
        kid = key_id(key)
        cipher = self.files.cipher
        current = cipher.primary_id if cipher is not None and cipher.can_encrypt else ""
        if kid in set_aside_key_ids(self.folder) and kid != current:
            if key not in self.keys.unlocked:
                self.keys.unlocked.append(key)
            self._apply_key()
            self.reconcile()
            rows = self.conversations()
            return KeyOutcome(None, sum(1 for r in rows if r.readable and r.key_id == kid))
        return KeyOutcome(
            self.rotate_key(key, progress, generated=generated, passphrase=passphrase)
        )

    def start_new_history(self, new_key: str | None, *, passphrase: bool = False) -> NewHistory:
        """Set the locked history aside and go on without its key.

        Its files are kept exactly as they are (never read for writing, never rewritten),
        listed as locked, and readable again whenever their key or passphrase is given
        (:meth:`use_key`). New conversations go under ``new_key`` — or, with ``None``, in
        clear (the tab warns). A key is remembered like any key set in the app (the OS
        keyring, else this session: the tab says so and offers a passphrase, which needs no
        keyring); nothing is rewritten, so no rotation key is saved. Refused when nothing
        is locked (``HistoryKeyError`` only exists then) or while a key change is unfinished.
        """
        problem = self.key_problem()
        if problem is None:
            raise CustodiaEnvironmentError(
                "no conversation is locked: there is no earlier history to set aside"
            )
        pending = pending_rotation(self.folder)
        if pending:
            raise CustodiaEnvironmentError(
                f"a key change to key id {pending} is unfinished: give its key to finish it "
                "first (a new history would leave it half done)"
            )
        if new_key is not None:
            new_key = validate_key(new_key)
            if key_id(new_key) in problem.key_ids:
                raise CustodiaEnvironmentError(
                    "this is the key of the locked history: give it in “Set key…” to unlock "
                    "it instead"
                )
        files_module.set_aside(self.folder, problem.key_ids, problem.files)
        if new_key is not None:
            self.keys.remember(new_key, passphrase=passphrase)
        self._apply_key()
        self.reconcile()
        # a CONVERSATIONS_KEY that opened nothing still encrypts what comes next: say so
        return NewHistory(problem.files, problem.key_ids, self.files.writes_encrypted())

    def saved_pending_key(self) -> tuple[str, str]:
        """``(key, where)``: the saved new key of the unfinished rotation, when one is
        unfinished and its key is kept here (keyring or the saved key file); else ``("", "")``.
        """
        pending = pending_rotation(self.folder)
        return self.keys.pending_for(pending) if pending else ("", "")

    # -- conversations ---------------------------------------------------------------------
    def conversations(self) -> list[IndexRow]:
        """The index rows, each ``name`` the one the user sees: a title made from the first
        message (decrypted here when the history is encrypted: the index holds the token
        only), else the stored name."""
        rows = self._recovering(self.index.rows)
        cipher = self.files.cipher
        out: list[IndexRow] = []
        seen: dict[tuple[str, FileStamp], str] = {}
        for row in rows:
            title = ""
            if row.readable and not row.encrypted:
                # a clear title is not in the index (no message text there, CA3): from
                # the file's first lines, once per version of the file
                cache_key = (row.file, row.stamp)
                cached = self._titles.get(cache_key)
                title = self.files.head_title(row.file) if cached is None else cached
                seen[cache_key] = title
            elif row.title and cipher is not None and cipher.knows(row.key_id):
                with contextlib.suppress(Exception):
                    text = json.loads(cipher.decrypt(row.title, row.key_id).decode("utf-8"))
                    title = fit_title(text)
            out.append(replace(row, name=title) if title else row)
        with self._lock:
            self._titles = seen
        return out

    def load(self, conversation_id: str) -> Conversation:
        """The conversation (decrypted), or a typed error for this conversation only."""
        file = self.files.path(conversation_id).name
        return self._read(file)

    def _read(self, file: str) -> Conversation:
        try:
            stamp = FileStamp.of((self.folder / file).stat())
        except FileNotFoundError:
            raise ConversationNotFoundError(self.folder / file, "no such conversation") from None
        except OSError as err:
            raise ConversationError(self.folder / file, str(err)) from err
        with self._lock:
            cached = self._cache.get((file, stamp))
            if cached is not None:
                self._cache.move_to_end((file, stamp))
                return _copy(cached)
        conversation, stamp = self.files.read(file)
        with self._lock:
            self._cache[(file, stamp)] = conversation
            while len(self._cache) > 64:
                self._cache.popitem(last=False)
        return _copy(conversation)

    def _save(self, conversation: Conversation, *, create: bool = False) -> None:
        """Write the file (atomically) and its index row."""
        stamp = self.files.write(conversation, create=create)
        cipher = self.files.cipher
        row = IndexRow(
            file=conversation.file,
            name=conversation.name,
            date=conversation.date,
            provider=conversation.provider,
            model=conversation.model,
            path=str(self.folder / conversation.file),
            messages=len(conversation.history),
            encrypted=self.files.writes_encrypted(),
            key_id=cipher.primary_id if cipher and self.files.writes_encrypted() else "",
            error=None,
            stamp=stamp,
            title=self.files.index_title(conversation, written=True),
        )
        self._recovering(lambda: self.index.apply([row]))

    def create(self, name: str = "", choice: ModelChoice | None = None) -> Conversation:
        """A new, empty conversation. The default name is the date: names stay in clear (CA2),
        so they are never derived from the (encrypted) messages."""
        conversation = self._new(choice, name)
        self.check_writable()
        with self._lock:
            self._save(conversation, create=True)
        return conversation

    def _new(self, choice: ModelChoice | None, name: str = "") -> Conversation:
        """A new conversation, not saved yet (the name tidied and checked)."""
        choice = choice or self.model_choices()[0]
        when = now_iso()
        return Conversation(
            id=new_id(),
            name=check_name(name) if tidy_name(name) else _default_name(when),
            date=when,
            provider=choice.provider,
            model=choice.model,
        )

    def rename(self, conversation_id: str, name: str) -> Conversation:
        """Rename; the name is put on one line (whitespace tidied), at most ``MAX_NAME``
        characters, else :class:`InvalidNameError` and nothing changes."""
        name = check_name(name)
        with self._lock:
            conversation = self.load(conversation_id)  # refuses unreadable files
            conversation.name = name
            conversation.title = ""  # the user's name replaces the one made from a message
            self._save(conversation)
        return conversation

    def delete(self, conversation_id: str) -> None:
        with self._lock:
            file = self.files.path(conversation_id).name
            row = self._recovering(lambda: self.index.get(file))
            self.files.delete(conversation_id)
            self._recovering(lambda: self.index.apply([], [file]))
        self._drop_vectors(file, row.messages or 0 if row else 0)

    def add(self, conversation: Conversation) -> tuple[str, bool]:
        """Store an imported conversation under its id, or a new one on a clash (never
        overwriting). Returns ``(id, renamed)``."""
        renamed = False
        conversation = replace(conversation, name=fit_name(conversation.name))
        if not files_module.is_valid_id(conversation.id):
            conversation = replace(conversation, id=new_id())
            renamed = True
        self.check_writable()
        with self._lock:
            for _ in range(100):
                try:
                    self._save(conversation, create=True)
                    return conversation.id, renamed
                except FileExistsError:
                    conversation = replace(conversation, id=new_id())
                    renamed = True
        raise ConversationError(conversation.id, "could not find a free conversation id")

    # -- models ----------------------------------------------------------------------------
    def model_choices(self) -> list[ModelChoice]:
        """The configured model first, then retrieval-only (``scripted`` is for testers: it
        is listed only when it is the configured model)."""
        configured = self._configured()
        kind, _, arg = configured.partition(":")
        provider = PROVIDERS.get(kind, kind)
        model = arg or {"smollm2": "SmolLM2-135M-Instruct"}.get(kind, kind)
        shown = i18n.gettext_("{model} ({provider}, configured)")
        out = [
            ModelChoice(configured, provider, model, shown.format(model=model, provider=provider))
        ]
        for key, label in (("retrieval-only", i18n.gettext_("Retrieval-only (no generation)")),):
            if key != configured:
                out.append(ModelChoice(key, key, key, label))
        from backends.models.registry import model_options  # reads GGUF headers (cached)

        for option in model_options(self.config):  # the user's GGUF files that can chat
            if option.key.startswith("gguf:") and not option.problem and option.key != configured:
                name = option.key.removeprefix("gguf:")
                out.append(ModelChoice(option.key, "llama.cpp", name, option.label))
        return out

    def discover_models(self, timeout: float = 1.0) -> list[ModelChoice]:
        """Models of a local Ollama and of the configured OpenAI-compatible server, if they
        answer (loopback only, short timeout); nothing when none does."""
        out: list[ModelChoice] = []
        timeout = min(timeout, self.config.network_timeout)
        known = {c.key for c in self.model_choices()}
        ollama = self.config.ollama_url.rstrip("/")
        if ollama and is_loopback_host(_host(ollama)):
            with contextlib.suppress(CustodiaEnvironmentError):
                reply = http_json(ollama + "/api/tags", None, timeout)
                for item in reply.get("models", []) if isinstance(reply, dict) else []:
                    name = str(item.get("name", "")) if isinstance(item, dict) else ""
                    if name and f"ollama:{name}" not in known:
                        out.append(
                            ModelChoice(f"ollama:{name}", "ollama", name, f"{name} (Ollama)")
                        )
        openai = self.config.openai_url.rstrip("/")
        if openai and is_loopback_host(_host(openai)):
            with contextlib.suppress(CustodiaEnvironmentError):
                reply = http_json(openai + "/models", None, timeout)
                for item in reply.get("data", []) if isinstance(reply, dict) else []:
                    name = str(item.get("id", "")) if isinstance(item, dict) else ""
                    if name and f"openai:{name}" not in known:
                        out.append(
                            ModelChoice(f"openai:{name}", "openai", name, f"{name} (OpenAI API)")
                        )
        return out

    def choice(self, key: str) -> ModelChoice:
        for candidate in self.model_choices():
            if candidate.key == key:
                return candidate
        kind, _, arg = key.partition(":")
        if kind in ("ollama", "openai", "gguf") and arg:
            return ModelChoice(key, PROVIDERS[kind], arg, f"{arg} ({kind})")
        raise CustodiaEnvironmentError(
            f"unknown model {key!r}; choose one of "
            f"{', '.join(c.key for c in self.model_choices())}, ollama:<model>, openai:<model>"
        )

    def chat_model(self, key: str) -> tuple[ChatModel, ModelChoice]:
        """The chat model for a picker key (built once), and the choice describing it."""
        choice = self.choice(key)
        with self._lock:
            model = self._models.get(key)
        if model is None:
            if key == self._configured():
                chat_choice = self._chat_factory()
                model = chat_choice.model
                if chat_choice.fallback_reason:
                    choice = ModelChoice(key, "retrieval-only", "retrieval-only", choice.label)
            elif key == "retrieval-only":
                model = RetrievalOnlyChat("chosen in the model picker")
            else:
                kind, _, arg = key.partition(":")
                model = CHAT_FACTORIES[kind](self.config, arg)
            with self._lock:
                self._models[key] = model
        if model.retrieval_only and choice.provider != "retrieval-only":
            choice = ModelChoice(key, "retrieval-only", "retrieval-only", choice.label)
        return model, choice

    # -- chat ------------------------------------------------------------------------------
    def ask(
        self,
        message: str,
        conversation_id: str | None = None,
        model_key: str | None = None,
        on_token: Callable[[str], None] | None = None,
        should_stop: ShouldStop = _never,
        on_saved: Callable[[str], None] | None = None,
        *,
        on_answer: Callable[[Answer, tuple[str, ...]], None] | None = None,
        draft: bool | None = None,
    ) -> TurnResult:
        """One turn: save the user's message, stream the answer, save it, index both.

        A history question ("What did I decide about the flights?") is answered from the
        past messages that hold it, quoted (:mod:`.history`), at once through
        ``on_answer(answer, passages)``; the model's draft then replaces it only when every
        sentence is stated by a quoted message (``draft``: True asks for one whatever the
        model's pass rate, False never). Not found: "I can't find that in your
        conversations", and no model guess. Any other question goes to the model, its words
        labelled as its own; a draft that parrots (repeats an earlier answer, echoes the
        prompt, invents a phone number or address) is withheld.

        ``on_saved(conversation_id)`` is called as soon as the user's message is on disk (a
        new conversation has its id from then on). What was said is kept whatever ends the
        answer early, marked ``stopped`` in the file:

        - ``should_stop()`` turning true (the tab's Stop): the turn returns normally;
        - an exception while streaming — ``KeyboardInterrupt`` (Ctrl+C), a closed output, a
          bug — is re-raised once the partial answer is saved;
        - the chat model failing (unreachable, stream broken) raises
          :class:`TurnFailedError` naming the conversation, so the user can continue it.

        Refused before anything is written when the history is encrypted under a key that
        is not set here (:meth:`key_problem`).
        """
        # text UTF-8 cannot hold (undecodable bytes, lone surrogates) would crash the file,
        # the index and the cipher: repaired here, and the turn says so
        message, repaired = files_module.repair_text(message.strip())
        notice = files_module.repaired_notice(repaired, "your message")
        if not message:
            raise CustodiaEnvironmentError("the message is empty")
        self.check_writable()
        model, choice = self.chat_model(model_key or self._configured())
        existing = self.load(conversation_id) if conversation_id else None
        context: list[str] = []
        context_error = ""
        try:
            hits = self.search(message, CONTEXT_PASSAGES, exclude=existing.id if existing else None)
            context = [_passage(h) for h in hits if h.score >= MIN_CONTEXT_SCORE]
        except CustodiaEnvironmentError as err:
            context_error = str(err)
            log.warning("no context from past conversations: %s", err)
        history = [
            Message(m.role, m.content)
            for m in (existing.history if existing else [])[-HISTORY_MESSAGES:]
            if m.role in ("system", "user", "assistant")
        ]
        composed, past = self._compose_history(message, existing.id if existing else None)
        if composed is not None and on_answer is not None:
            on_answer(composed, tuple(_passage(h) for h in past))
        key = f"conversations:{choice.model}"
        ask_model = True
        if composed is not None and draft is None:
            ask_model = composed.mode == COMPOSED and self.draft_stats.should_draft(key)
        elif composed is not None:
            ask_model = bool(draft)
        ask_model = ask_model and not (composed is not None and model.retrieval_only)
        with self._lock:
            if existing is None:  # a new conversation is created with its first message
                conversation = self._new(choice)
                # titled from its first message; encrypted with the history (CA2)
                conversation.title = make_title(message)
                create = True
            else:
                conversation = self.load(existing.id)  # newest version on disk
                create = False
            conversation.history.append(StoredMessage("user", message, now_iso()))
            user_index = len(conversation.history) - 1
            self._save(conversation, create=create)
        cid = conversation.id
        if on_saved is not None:
            on_saved(cid)
        thread = history
        if composed is not None:  # the draft is checked against the quoted messages
            context = [_passage(h) for h in past]
            # and asked without the thread: given it, a small model repeats its earlier
            # answers (measured on the memory assistant, docs/BENCHMARKS.md)
            thread = []
        prompt = Prompt(user=message, system=SYSTEM_PROMPT, history=thread, context=context)
        pieces: list[str] = []
        stopped = False
        failure: CustodiaEnvironmentError | None = None
        stream = model.stream(prompt, should_stop) if ask_model else iter(())
        try:
            for piece in stream:
                pieces.append(piece)
                if on_token is not None:
                    on_token(piece)
                if should_stop():
                    stopped = True
                    break
        except CustodiaEnvironmentError as err:  # the model failed mid-way
            failure = err
        except BaseException:
            # Ctrl+C, a closed output, a bug: keep what was said, then let it go on (a
            # failure while saving is logged, never put in place of the original)
            try:
                indexes = [user_index]
                if pieces:
                    conversation, answer_index = self._save_answer(
                        cid, "".join(pieces), choice, stopped=True
                    )
                    indexes.append(answer_index)
                self._index_messages(conversation, indexes)
            except Exception:
                log.exception("conversation %s: could not save the interrupted answer", cid)
            raise
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        answer = "".join(pieces)
        if failure is not None:
            if answer:
                conversation, answer_index = self._save_answer(cid, answer, choice, stopped=True)
                self._index_messages(conversation, [user_index, answer_index])
                kept = "your message and the partial answer (marked stopped) are saved"
            else:
                self._index_messages(conversation, [user_index])
                kept = "your message is saved"
            raise TurnFailedError(
                f"{failure} — {kept} in conversation {cid}; continue it once the model "
                "answers again",
                cid,
            ) from failure
        stopped = stopped or should_stop()
        sources = [Source(i + 1, "", c) for i, c in enumerate(context)]
        checked = (
            ()
            if model.retrieval_only or not context or not answer
            else tuple(grounding.check_sentences(answer, sources))
        )
        earlier = [m.content for m in history if m.role == "assistant"]
        shown, answer = self._shown(
            message, answer, composed, sources, earlier, model.retrieval_only, stopped
        )
        if composed is not None and ask_model and not stopped:
            self.draft_stats.record(key, shown.mode == answers.GENERATED)
        writer = None if shown.mode in (answers.GENERATED, MODEL) else "custodia:composed"
        try:
            conversation, answer_index = self._save_answer(
                cid, answer, choice, stopped=stopped, writer=writer
            )
        except CustodiaEnvironmentError as err:  # e.g. the disk filled up since the message
            raise TurnFailedError(
                f"the answer could not be saved ({err}) — your message is saved in "
                f"conversation {cid}; ask again once the problem is solved",
                cid,
            ) from err
        self._index_messages(conversation, [user_index, answer_index])
        return TurnResult(
            conversation_id=cid,
            answer=answer,
            provider=choice.provider,
            model=choice.model,
            user_index=user_index,
            answer_index=answer_index,
            context=len(context),
            stopped=stopped,
            retrieval_only=model.retrieval_only,
            context_error=context_error,
            notice=notice,
            checked=checked,
            context_passages=tuple(context),
            shown=shown,
            quoted=tuple((h.conversation_id, h.index) for h in past),
            draft_skipped=composed is not None
            and composed.mode == COMPOSED
            and not ask_model
            and not model.retrieval_only,
        )

    def _compose_history(
        self, message: str, current: str | None
    ) -> tuple[Answer | None, list[SearchHit]]:
        """For a history question: its answer from the past messages (and them); else
        ``(None, [])``."""
        if not history_answers.history_question(message):
            return None, []
        try:
            hits = self.search(message, HISTORY_CANDIDATES, exclude=current)
        except CustodiaEnvironmentError as err:
            log.warning("history not searched: %s", err)
            hits = []
        found = [
            history_answers.PastMessage(h.conversation_id, h.name, h.date, h.role, h.text, h.score)
            for h in hits
        ]
        composed = history_answers.compose(message, found)
        cited = [hits[n - 1] for n in composed.cited]
        if composed.mode == COMPOSED and history_answers.about_assistant(message):
            composed, cited = self._with_replies(message, composed, cited)
        numbers = {n: i + 1 for i, n in enumerate(composed.cited)}
        composed = replace(
            composed,
            sentences=tuple(
                replace(s, number=numbers[s.number]) if s.number else s for s in composed.sentences
            ),
        )
        return composed, cited

    def _with_replies(
        self, message: str, composed: Answer, cited: list[SearchHit]
    ) -> tuple[Answer, list[SearchHit]]:
        """ "What did you advise about …": a quoted message of the user's is followed by the
        assistant's reply to it, quoted too (the reply need not repeat the question's
        words)."""
        lang = history_answers.language(message)
        sentences = list(composed.sentences)
        for hit in list(cited):
            if hit.role != "user":
                continue
            try:
                conversation = self.load(hit.conversation_id)
            except ConversationError:
                continue
            following = conversation.history[hit.index + 1 : hit.index + 2]
            if not following or following[0].role != "assistant":
                continue
            reply = SearchHit(
                hit.conversation_id,
                hit.name,
                following[0].time or hit.date,
                hit.index + 1,
                "assistant",
                following[0].content,
                hit.score,
            )
            if any(
                (c.conversation_id, c.index) == (reply.conversation_id, reply.index) for c in cited
            ):
                continue
            cited.append(reply)
            past = history_answers.PastMessage(
                reply.conversation_id, reply.name, reply.date, reply.role, reply.text
            )
            sentences.append(
                answers.Shown(history_answers.quote(past, lang), answers.SUPPORTED, len(cited))
            )
        return replace(composed, sentences=tuple(sentences)), cited

    @staticmethod
    def _shown(
        message: str,
        draft: str,
        composed: Answer | None,
        sources: list[Source],
        earlier: list[str],
        retrieval_only: bool,
        stopped: bool,
    ) -> tuple[Answer, str]:
        """The answer shown and the text saved for it (:mod:`backends.answers`)."""
        lang = history_answers.language(message)
        if composed is None:
            if retrieval_only:  # its passages, labelled by the model itself
                return Answer(MODEL, (), "", draft), draft
            # what the user tells ("the hotel is the Memmo Alfama"), of their own life
            # ("My landlord told me the rent goes up to 950 euros"): the model may comment,
            # not add numbers, dates or names
            judged = answers.judge_draft(
                draft,
                sources,
                question=message,
                earlier=earlier,
                needs_support=False,
                specifics=history_answers.tells(message),
            )
            kept = tuple(s for s in judged if s.kind != WITHHELD)
            heading = history_answers.TEXTS[lang]["model_heading"]
            if judged and not kept:
                first = next((s.reason for s in judged if s.reason), "")
                note = f"The model's answer was withheld: {first}."
                shown = Answer(
                    MODEL, (answers.Shown(note, answers.SUPPORTED, 0),), heading, draft, judged
                )
                return shown, note
            shown = Answer(MODEL, kept, heading, draft, judged)
            if any(s.kind == WITHHELD for s in judged):
                return shown, shown.text
            return shown, draft  # all of it, Markdown and all
        if not draft:
            return composed, composed.text
        judged = answers.judge_draft(draft, sources, question=message, earlier=earlier)
        if stopped:
            reason = "the model's draft was stopped before it finished"
            held_back = replace(composed, draft=draft, draft_sentences=judged, reason=reason)
            return held_back, held_back.text
        cited = set(composed.cited)
        shown = answers.choose(
            composed,
            draft,
            judged,
            answers_question=any(
                s.supported
                and s.number in cited
                and answers.says_what(s.text, sources[s.number - 1].text, missing=2)
                for s in judged
            ),
        )
        return shown, shown.text

    def _save_answer(
        self,
        conversation_id: str,
        answer: str,
        choice: ModelChoice,
        *,
        stopped: bool,
        writer: str | None = None,
    ) -> tuple[Conversation, int]:
        """Append the answer (re-reading the newest file first); return it and its index."""
        with self._lock:
            conversation = self.load(conversation_id)
            conversation.history.append(
                StoredMessage(
                    "assistant",
                    answer,
                    now_iso(),
                    writer or f"{choice.provider}:{choice.model}",
                    stopped=stopped,
                )
            )
            conversation.provider, conversation.model = choice.provider, choice.model
            self._save(conversation)
            return conversation, len(conversation.history) - 1

    def _note_unreadable(self, file: str) -> None:
        """Record in the index why ``file`` cannot be read now (logged when that fails)."""
        try:
            row = row_for(self.files, file)
            if row is not None:
                self._recovering(lambda: self.index.apply([row]))
        except CustodiaEnvironmentError as err:
            log.warning("%s: cannot record that it is unreadable: %s", file, err)

    # -- vectors ---------------------------------------------------------------------------
    def embedder(self) -> Embedder:
        return self._embedder_factory()

    def vectors(self) -> VectorIndex:
        """The vector index, opened on first use (a dimension or model mismatch raises)."""
        with self._vector_lock:
            if self._vectors is None:
                self._vectors = self._vector_factory(self.config, self.embedder(), False)
            return self._vectors

    def sync_vectors(self, progress: Progress | None = None) -> SyncReport:
        """Index missing messages, drop vectors of gone files/messages (start-up worker).

        A local index Chroma itself can no longer read (its HNSW files torn by a crash) is
        derived data: it is rebuilt from the files instead of failing at every start.
        """
        with self._vector_lock:
            try:
                return sync(self.files, self.index, self.vectors(), self.embedder(), progress)
            except StoreUnavailableError as err:
                if self.config.chroma_url or "hnsw" not in str(err).lower():
                    raise
                log.warning("the local search index is damaged (%s); rebuilding it", err)
            return self.rebuild_vectors(progress)

    def rebuild_vectors(self, progress: Progress | None = None) -> SyncReport:
        """Delete the vector index and rebuild it from the files (also after a model change)."""
        with self._vector_lock:
            if self._vectors is not None:
                self._vectors.close()
                self._vectors = None
            embedder = self.embedder()
            vectors = self._vector_factory(self.config, embedder, True)
            self._vectors = vectors
            self.reconcile()
            return sync(self.files, self.index, vectors, embedder, progress)

    def _index_messages(self, conversation: Conversation, positions: list[int]) -> None:
        """Embed and upsert a few new messages; a failure is logged (the next sync repairs)."""
        try:
            with self._vector_lock:
                vectors = self.vectors()
                texts = [embeddable(conversation.history[i].content) for i in positions]
                matrix = self.embedder().embed_batch(texts)
                vectors.upsert(
                    [pointer_id(conversation.file, i) for i in positions],
                    matrix,
                    [{"file": conversation.file, "index": i} for i in positions],
                )
        except CustodiaEnvironmentError as err:
            log.warning("new messages not indexed now (the next start catches up): %s", err)

    def _drop_vectors(self, file: str, messages: int) -> None:
        with self._vector_lock:
            if self._vectors is None:
                return  # not open: the next sync drops them
            try:
                self._vectors.delete([pointer_id(file, i) for i in range(messages)])
            except CustodiaEnvironmentError as err:
                log.warning("vectors of %s not dropped now: %s", file, err)

    def search(
        self, query: str, k: int = 10, exclude: str | None = None, min_score: float = 0.05
    ) -> list[SearchHit]:
        """Past messages most similar to ``query``: pointers from the index, text from the
        files (decrypted here). Unreadable or vanished targets are skipped."""
        query = files_module.clean_text(query).strip()
        if not query or k <= 0:
            return []
        embedder = self.embedder()
        vectors = self.vectors()
        vector = embedder.embed(embeddable(query))
        exclude_file = f"{exclude}{files_module.SUFFIX}" if exclude else None
        want = k + (HISTORY_MESSAGES if exclude_file else 0)
        hits = vectors.query(vector, want)
        out: list[SearchHit] = []
        for hit in hits:
            parsed = split_pointer_id(hit.id)
            if parsed is None or parsed[0] == exclude_file or hit.score < min_score:
                continue
            file, position = parsed
            try:
                conversation = self._read(file)
            except ConversationNotFoundError:
                continue
            except ConversationError:
                # e.g. chmod 000 since the index saw it (a mode change leaves its stamp as
                # it was): the index learns why, so the search names it as not searched
                self._note_unreadable(file)
                continue
            if position >= len(conversation.history):
                continue
            msg = conversation.history[position]
            out.append(
                SearchHit(
                    conversation.id,
                    conversation.display_name,
                    conversation.date,
                    position,
                    msg.role,
                    msg.content,
                    hit.score,
                )
            )
            if len(out) >= k:
                break
        return out


# -- helpers ----------------------------------------------------------------------------------


def get_service(services: Services) -> ConversationAgent:
    """Transitional: the conversations part of ``services`` (see :mod:`backends.assistants`)."""
    return services.get("conversations", ConversationAgent)


def _copy(conversation: Conversation) -> Conversation:
    return replace(conversation, history=list(conversation.history))


def _default_name(when: str) -> str:
    try:
        stamp = datetime.fromisoformat(when).astimezone()
    except ValueError:
        return "Conversation"
    return f"Conversation {stamp:%Y-%m-%d %H:%M}"


def _passage(hit: SearchHit) -> str:
    text = " ".join(hit.text.split())
    if len(text) > PASSAGE_CHARS:
        text = text[: PASSAGE_CHARS - 1] + "…"
    return f"[{hit.name}, {hit.date[:10]}] {hit.role}: {text}"


def _host(url: str) -> str | None:
    from urllib.parse import urlparse

    return urlparse(url).hostname


def build(needs: Needs) -> ConversationAgent:
    """The agent, built from what the composition layer hands it (constructor injection)."""
    return ConversationAgent(
        replace(needs.config, chat_model=needs.model()),
        embedder=needs.embedder,
        chat=needs.chat,
        configured=needs.model,
    )
