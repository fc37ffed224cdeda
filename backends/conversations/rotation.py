"""Changing the key on disk: the resumable re-encryption of every file under a new key (its
journal, the check that refuses to split the history across keys), and an earlier history
set aside when its key is lost.

Apart from :mod:`.files` because it is about the history as a whole (which key its files are
under), where :mod:`.files` reads and writes one file at a time.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.fernet import InvalidToken

from backends import failures
from backends.conversations import files as files_module
from backends.conversations.errors import (
    ConversationError,
    ConversationNotFoundError,
    CorruptConversationError,
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    RotationInProgressError,
)
from backends.conversations.files import ConversationFiles, fsync_dir
from backends.conversations.keys import HistoryCipher, key_id, write_private
from backends.conversations.naming import now_iso
from backends.errors import StoreUnavailableError
from backends.i18n import N_, _
from backends.progress import Progress

ROTATION_JOURNAL = ".rotation.journal"
#: key ids of an earlier history the user chose to set aside (its key was lost): those
#: files are kept untouched, listed as locked, and no longer block new conversations
SET_ASIDE_FILE = ".locked.json"
SET_ASIDE_FORMAT = "custodia.conversations.locked"

log = logging.getLogger(__name__)


@dataclass
class RotationReport:
    rotated: int = 0
    already: int = 0
    #: files that could not be read (wrong key, corrupt): left untouched, listed here
    failed: list[tuple[str, str]] = field(default_factory=list)
    resumed: bool = False


class RotationJournal:
    """``.rotation.journal``: a header line naming the new key id, then one line per file done.

    Appended with ``fsync`` after each file, so an interrupted rotation resumes where it
    stopped; each file is itself replaced atomically, so it is always under one key or the
    other. The key id in every file is the ground truth; the journal makes resuming cheap and
    tells a start-up that a rotation is unfinished.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / ROTATION_JOURNAL

    def read(self) -> tuple[str, set[str]] | None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StoreUnavailableError(
                failures.failed(_("{path}: cannot be read").format(path=self.path), err)
            ) from err
        try:
            header = json.loads(lines[0])
            new_kid = str(header["new_key_id"])
        except (IndexError, ValueError, KeyError, TypeError):
            return None  # a header torn by a crash: nothing was rotated under it yet
        return new_kid, {line.strip() for line in lines[1:] if line.strip()}

    def begin(self, new_kid: str) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(
                fd, (json.dumps({"new_key_id": new_kid, "started": now_iso()}) + "\n").encode()
            )
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)

    def mark(self, file: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, (file + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def finish(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        fsync_dir(self.path.parent)


def pending_rotation(folder: Path) -> str:
    """The new key id of an unfinished rotation, or ""."""
    state = RotationJournal(folder).read()
    return state[0] if state else ""


def set_aside_key_ids(folder: Path) -> frozenset[str]:
    """Key ids of the earlier histories set aside here (``.locked.json``); empty when none.

    A damaged marker counts as none: the files it named are then locked again (refused, as
    before), never rewritten.
    """
    try:
        data = json.loads((folder / SET_ASIDE_FILE).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != SET_ASIDE_FORMAT:
            return frozenset()
        return frozenset(str(item["key_id"]) for item in data["locked"])
    except FileNotFoundError:
        return frozenset()
    except (OSError, ValueError, KeyError, TypeError) as err:
        log.warning(_("%s is unreadable (%s); ignored"), SET_ASIDE_FILE, err)
        return frozenset()


def set_aside(folder: Path, key_ids: Iterable[str], files: int) -> None:
    """Record ``key_ids`` as an earlier history kept aside (atomically, 0600, fsync'd)."""
    known = set(set_aside_key_ids(folder))
    items = [{"key_id": k} for k in sorted(known | set(key_ids))]
    text = json.dumps(
        {
            "format": SET_ASIDE_FORMAT,
            "version": 1,
            "since": now_iso(),
            "files": files,
            "locked": items,
        },
        indent=1,
    )
    write_private(folder / SET_ASIDE_FILE, text + "\n", what=N_("the locked history's record"))


def _key_list(key_ids: Iterable[str]) -> str:
    return ", ".join(sorted(key_ids)) or "none recorded"


def check_history_keys(
    folder: Path, new_key: str, old_keys: Sequence[str], ignore: Iterable[str] = ()
) -> None:
    """Refuse a rotation that would split the history across keys.

    When encrypted conversations exist and **none** of them is under the new key or one of
    ``old_keys`` (the current and pending keys), the key they are under is not set here:
    re-encrypting the rest under a new key would leave the folder needing two keys (and
    switching to the new one would lock those files out). :class:`HistoryKeyError`, before
    anything is changed. A stray file under another key while the rest is under a key set
    here is not refused: rotation reports it and leaves it untouched, as before.

    Cheap: files are read (their clear JSON, no decryption) only until the first one under
    a key given here — usually the first encrypted file. Files under a key id in ``ignore``
    (an earlier history set aside) are left out: rotation leaves them untouched.
    """
    ignored = set(ignore) | set(set_aside_key_ids(folder))
    cipher = HistoryCipher([new_key, *old_keys])
    files = ConversationFiles(folder, cipher)
    foreign: dict[str, int] = {}
    for name, stamp in sorted(files.scan().items()):
        path = folder / name
        if stamp.size > files_module.MAX_FILE_BYTES:
            continue  # not read at all: rotation reports it and leaves it alone
        try:
            data = files.parse(path, path.read_bytes())
        except (OSError, CorruptConversationError):
            continue  # not a key question: rotation reports it and leaves it alone
        if not data.get("encrypted"):
            continue
        kid = data.get("key_id") if isinstance(data.get("key_id"), str) else None
        if kid is not None and cipher.knows(kid):
            return
        if kid is not None and kid in ignored:
            continue
        token = data.get("history")
        if kid is None and isinstance(token, str):
            try:
                cipher.decrypt(token, None)
                return
            except (InvalidToken, UnicodeEncodeError):
                pass
        foreign[kid or "(none)"] = foreign.get(kid or "(none)", 0) + 1
    if not foreign:
        return
    count = sum(foreign.values())
    ids = _key_list(foreign)
    todo = _(
        "Set their key in the environment first (or give that key in “Set key…” in the app); "
        "if it is lost for good, move those files out of {folder} first. Nothing was changed."
    ).format(folder=folder)
    if not old_keys:
        said = _(
            "{count} conversation(s) are already encrypted (key id {ids}) and no current key "
            "is set here: a new key now would encrypt the rest under another key and split "
            "the history across two keys. {todo}"
        ).format(count=count, ids=ids, todo=todo)
        # the variable's name is the details (issue 30)
        raise HistoryKeyRequiredError(
            failures.with_details(said, "CONVERSATIONS_KEY"), tuple(sorted(foreign)), count
        )
    said = _(
        "the current key (key id {current}) opens none of the {count} encrypted "
        "conversation(s) (key id {ids}): a wrong or mistyped key? A new key now would split "
        "the history across keys. {todo}"
    ).format(current=_key_list(key_id(k) for k in old_keys), count=count, ids=ids, todo=todo)
    raise HistoryWrongKeyError(
        failures.with_details(said, "CONVERSATIONS_KEY"), tuple(sorted(foreign)), count
    )


def rotate(
    folder: Path, new_key: str, old_keys: list[str], progress: Progress | None = None
) -> RotationReport:
    """Re-encrypt every readable file under ``new_key`` (clear files get encrypted too).

    Resumable: run it again with the same new key after a crash or a cancel. A different new
    key while a rotation is unfinished is refused (:class:`RotationInProgressError`).
    Unreadable files are reported and never rewritten. When encrypted files exist and none
    is under one of the keys given, nothing is changed (:func:`check_history_keys`).
    """
    progress = progress or Progress()
    new_kid = key_id(new_key)
    journal = RotationJournal(folder)
    report = RotationReport()
    state = journal.read()
    if state is not None and state[0] != new_kid:
        raise RotationInProgressError(
            _(
                "a key rotation to key id {pending} is unfinished; run it again with that key "
                "to resume it (this key has id {given}); when its key was saved (a generated "
                "key, or the OS keyring), `custodia rotate-key` without a new key finishes it"
            ).format(pending=state[0], given=new_kid)
        )
    check_history_keys(folder, new_key, old_keys)
    done: set[str] = set()
    if state is None:
        journal.begin(new_kid)
    else:
        report.resumed = True
        done = state[1]
    files = ConversationFiles(folder, HistoryCipher([new_key, *old_keys]))
    names = sorted(files.scan())
    for stray in files.strays():  # a folder named x.json: not a conversation, never touched
        report.failed.append((stray, "not a regular file; left untouched"))
    progress.start(len(names), _("re-encrypting conversations"))
    for name in names:
        progress.check()
        if name in done:
            report.already += 1
            progress.advance(1, name)
            continue
        try:
            conversation, _stamp = files.read(name)
        except ConversationNotFoundError:
            progress.advance(1, name)
            continue
        except ConversationError as err:  # wrong key, corrupt, no permission, too large
            report.failed.append((name, err.detail))
            progress.advance(1, name)
            continue
        if conversation.encrypted and conversation.key_id == new_kid:
            report.already += 1
        else:
            try:
                files.write(conversation)
            except ConversationError as err:  # too large once encrypted: left as it was
                report.failed.append((name, err.detail))
                progress.advance(1, name)
                continue
            report.rotated += 1
        journal.mark(name)
        progress.advance(1, name)
    journal.finish()
    return report
