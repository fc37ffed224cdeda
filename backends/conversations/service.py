"""The conversation agent (SPEC section 3): the only object the tab and the CLI talk to.

A façade over the parts, one idea each: the stored conversations (files, the source of truth,
and their index: :mod:`.library`), the history's keys (:mod:`.keychange`), the model picker
(:mod:`.choices`), the search over past messages (:mod:`.search`) and the chat turn
(:mod:`.turn`). Every method may block (files, models, Chroma): the desktop calls them
through its worker pool, the CLI directly. Methods are thread-safe.

Built by :func:`build` from what the composition layer hands it (constructor injection); a
test builds a :class:`ConversationAgent` directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from backends import answers, stores
from backends.answers import Answer, DraftStats
from backends.assistants import Needs, StoreOpener
from backends.config import Config
from backends.conversations.choices import ModelChoice, ModelPicker
from backends.conversations.errors import HistoryKeyError
from backends.conversations.files import Conversation, ConversationFiles
from backends.conversations.index import IndexRow, ReconcileReport
from backends.conversations.keychange import (
    EncryptionStatus,
    HistoryKeys,
    KeyOutcome,
    NewHistory,
    history_cipher,
    key_store,
)
from backends.conversations.keys import KDF_FILE, PassphraseFile
from backends.conversations.library import ConversationLibrary
from backends.conversations.naming import fit_name, is_valid_id, new_id
from backends.conversations.rotation import RotationReport
from backends.conversations.search import (
    MessageSearch,
    SearchHit,
    VectorFactory,
    default_vectors,
)
from backends.conversations.turn import ChatTurns, TurnResult, never_stop
from backends.conversations.vectors import SyncReport
from backends.models.chat import ChatModel, ShouldStop
from backends.models.embedders import Embedder
from backends.models.registry import ChatChoice
from backends.progress import Progress
from backends.stores.vectors import VectorIndex

__all__ = [
    "FOLDER",
    "INDEX_FILE",
    "ConversationAgent",
    "EncryptionStatus",
    "KeyOutcome",
    "ModelChoice",
    "NewHistory",
    "SearchHit",
    "TurnResult",
    "build",
    "default_vectors",
]

#: the conversation files' folder and the index of them, in the data dir
FOLDER = "conversations"
INDEX_FILE = "conversations.sqlite3"


class ConversationAgent:
    """Files + index + vectors + key + chat models. Built by :func:`build`.

    ``vectors`` opens the vector index (by default the storage registry's, through
    ``open_store``); ``configured()`` is the key of the model chosen for this assistant now
    (the window may choose another while the agent lives: Tools ▸ Models, the welcome's "Use
    it"), the configuration's ``chat_model`` by default.
    """

    def __init__(
        self,
        config: Config,
        *,
        embedder: Callable[[], Embedder],
        chat: Callable[[], ChatChoice],
        vectors: VectorFactory | None = None,
        use_keyring: bool = True,
        passphrase: str | None = None,
        configured: Callable[[], str] | None = None,
        open_store: StoreOpener = stores.open,
    ) -> None:
        self.config = config
        self.folder = config.path(FOLDER)
        self.passphrases = PassphraseFile(self.folder / KDF_FILE)
        self.keys = key_store(
            config.conversations_key,
            self.folder,
            self.passphrases,
            use_keyring=use_keyring,
            passphrase=passphrase,
        )
        #: how often each model's drafts pass (a cache file in the data dir)
        self.draft_stats = DraftStats(config.path(answers.STATS_FILE))
        self.files = ConversationFiles(self.folder)
        self.files.ensure()
        self.files.cipher = history_cipher(self.keys, self.folder)
        self.library = ConversationLibrary(self.files, config.path(INDEX_FILE))
        self.index = self.library.index
        self._keys = HistoryKeys(self.library, self.keys, self.passphrases)
        self._models = ModelPicker(config, configured or (lambda: self.config.chat_model), chat)
        self._search = MessageSearch(
            config,
            self.library,
            embedder,
            vectors or partial(default_vectors, open_store=open_store),
        )
        self._turns = ChatTurns(
            self.library, self._keys, self._models, self._search, self.draft_stats
        )

    # -- life cycle ------------------------------------------------------------------------
    def start(self, progress: Progress | None = None) -> ReconcileReport:
        """Clean crash leftovers and reconcile the index with the files (cheap when unchanged)."""
        self.files.remove_stale_temporaries()
        return self.reconcile(progress)

    def reconcile(self, progress: Progress | None = None) -> ReconcileReport:
        return self.library.reconcile(progress)

    def close(self) -> None:
        self._search.close()
        self.library.close()

    # -- keys ------------------------------------------------------------------------------
    def encryption_status(self) -> EncryptionStatus:
        return self._keys.status()

    def key_problem(self) -> HistoryKeyError | None:
        """Why writing a conversation now would split the history across keys, or None.

        When encrypted conversations exist, a new message is only written if the key set here
        is (one of) theirs: with no key it would be stored in clear next to them, with a
        wrong (mistyped) key under a key nothing else uses — a lost conversation at the next
        start. Decided from the index (key ids are in clear), without reading any file.
        """
        return self._keys.key_problem()

    def key_problem_ids(self) -> tuple[str, ...]:
        return self._keys.key_problem_ids()

    def check_writable(self) -> None:
        """Raise :meth:`key_problem` when there is one (before anything is written)."""
        self._keys.check_writable()

    def unreadable_reasons(self) -> dict[str, int]:
        """``reason -> count`` of the conversations that cannot be read now (so not searched)."""
        return self.library.recovering(self.index.unreadable_reasons)

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
        return self._keys.rotate_key(
            new_key, progress, generated=generated, on_key_saved=on_key_saved, passphrase=passphrase
        )

    def key_from_passphrase(self, passphrase: str, *, new: bool = False) -> str:
        """The key ``passphrase`` derives (Scrypt, ~0.4 s): the one its ``.kdf.json`` entry
        checks (``WrongPassphraseError`` when it matches none), or with ``new`` a key under
        a fresh salt whose entry is on disk before the key is returned. A new passphrase
        that matches an existing entry gives that entry's key (no second salt)."""
        return self._keys.key_from_passphrase(passphrase, new=new)

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
        return self._keys.use_key(key, progress, generated=generated, passphrase=passphrase)

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
        return self._keys.start_new_history(new_key, passphrase=passphrase)

    def saved_pending_key(self) -> tuple[str, str]:
        """``(key, where)``: the saved new key of the unfinished rotation, when one is
        unfinished and its key is kept here (keyring or the saved key file); else ``("", "")``.
        """
        return self._keys.saved_pending_key()

    # -- conversations ---------------------------------------------------------------------
    def conversations(self) -> list[IndexRow]:
        """The index rows, each ``name`` the one the user sees: a title made from the first
        message (decrypted here when the history is encrypted: the index holds the token
        only), else the stored name."""
        return self.library.conversations()

    def load(self, conversation_id: str) -> Conversation:
        """The conversation (decrypted), or a typed error for this conversation only."""
        return self.library.load(conversation_id)

    def create(self, name: str = "", choice: ModelChoice | None = None) -> Conversation:
        """A new, empty conversation. The default name is the date: names stay in clear (CA2),
        so they are never derived from the (encrypted) messages."""
        choice = choice or self.model_choices()[0]
        conversation = self.library.new(choice.provider, choice.model, name)
        self.check_writable()
        with self.library.lock:
            self.library.save(conversation, create=True)
        return conversation

    def rename(self, conversation_id: str, name: str) -> Conversation:
        """Rename; the name is put on one line (whitespace tidied), at most ``MAX_NAME``
        characters, else :class:`InvalidNameError` and nothing changes."""
        return self.library.rename(conversation_id, name)

    def delete(self, conversation_id: str) -> None:
        file, messages = self.library.delete(conversation_id)
        self._search.drop(file, messages)

    def add(self, conversation: Conversation) -> tuple[str, bool]:
        """Store an imported conversation under its id, or a new one on a clash (never
        overwriting). Returns ``(id, renamed)``."""
        conversation = replace(conversation, name=fit_name(conversation.name))
        invalid = not is_valid_id(conversation.id)
        if invalid:
            conversation = replace(conversation, id=new_id())
        self.check_writable()
        conversation_id, renamed = self.library.save_new(conversation)
        return conversation_id, renamed or invalid

    # -- models ----------------------------------------------------------------------------
    def model_choices(self) -> list[ModelChoice]:
        """The configured model first, then retrieval-only (``scripted`` is for testers: it
        is listed only when it is the configured model), then the user's GGUF files."""
        return self._models.model_choices()

    def discover_models(self, timeout: float = 1.0) -> list[ModelChoice]:
        """Models of a local Ollama and of the configured OpenAI-compatible server, if they
        answer (loopback only, short timeout); nothing when none does."""
        return self._models.discover_models(timeout)

    def choice(self, key: str) -> ModelChoice:
        return self._models.choice(key)

    def chat_model(self, key: str) -> tuple[ChatModel, ModelChoice]:
        """The chat model for a picker key (built once), and the choice describing it."""
        return self._models.chat_model(key)

    # -- chat ------------------------------------------------------------------------------
    def ask(
        self,
        message: str,
        conversation_id: str | None = None,
        model_key: str | None = None,
        on_token: Callable[[str], None] | None = None,
        should_stop: ShouldStop = never_stop,
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
        return self._turns.ask(
            message,
            conversation_id,
            model_key,
            on_token,
            should_stop,
            on_saved,
            on_answer=on_answer,
            draft=draft,
        )

    # -- search ----------------------------------------------------------------------------
    def embedder(self) -> Embedder:
        return self._search.embedder()

    def vectors(self) -> VectorIndex:
        """The vector index, opened on first use (a dimension or model mismatch raises)."""
        return self._search.vectors()

    def sync_vectors(self, progress: Progress | None = None) -> SyncReport:
        """Index missing messages, drop vectors of gone files/messages (start-up worker);
        a damaged local index is rebuilt from the files."""
        return self._search.sync(progress)

    def rebuild_vectors(self, progress: Progress | None = None) -> SyncReport:
        """Delete the vector index and rebuild it from the files (also after a model change)."""
        return self._search.rebuild(progress)

    def search(
        self, query: str, k: int = 10, exclude: str | None = None, min_score: float = 0.05
    ) -> list[SearchHit]:
        """Past messages most similar to ``query``: pointers from the index, text from the
        files (decrypted here). Unreadable or vanished targets are skipped."""
        return self._search.search(query, k, exclude, min_score)


def build(needs: Needs) -> ConversationAgent:
    """The agent, built from what the composition layer hands it (constructor injection)."""
    return ConversationAgent(
        replace(needs.config, chat_model=needs.model()),
        embedder=needs.embedder,
        chat=needs.chat,
        configured=needs.model,
        open_store=needs.open_store,
    )
