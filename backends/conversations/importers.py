"""Export conversations as JSON or Markdown; import our JSON and ChatGPT exports.

Exports are **plaintext** (the history decrypted): the user asked for a readable copy. They
are written 0600. Our JSON export is a bundle::

    {"format": "custodia.conversations.export", "version": 1, "exported": "…",
     "conversations": [{"id": …, "name": …, "date": …, "provider": …, "model": …,
                        "history": [{"role": …, "content": …, "time": …}, …]}, …]}

Import accepts that bundle, a single conversation file of ours (clear, or encrypted under a
key this app holds), a ChatGPT ``conversations.json`` (a list of conversations with a
``mapping`` of message nodes) or the ChatGPT export ``.zip`` that contains it. An import never
overwrites an existing conversation: a clashing id gets a new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import uuid
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backends import failures
from backends.conversations.errors import ConversationError, CorruptConversationError
from backends.conversations.files import FORMAT as FILE_FORMAT
from backends.conversations.files import (
    Conversation,
    ConversationFiles,
    StoredMessage,
    iter_conversations,
)
from backends.conversations.naming import (
    MAX_NAME,
    fit_name,
    is_valid_id,
    new_id,
    repair_text,
    repaired_notice,
)
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import N_, _
from backends.progress import Progress

if TYPE_CHECKING:
    from backends.conversations.service import ConversationAgent

EXPORT_FORMAT = "custodia.conversations.export"
EXPORT_VERSION = 1
FORMATS = ("json", "markdown")


class ImportFormatError(CustodiaEnvironmentError):
    """The file is none of the formats Custodia imports."""


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


#: the most an import may hold, read or decompressed (a ChatGPT export of 10⁶ messages is
#: ~0.3 GB; parsing takes a few times its size in memory)
MAX_IMPORT_BYTES = 512 * 1024 * 1024
#: a member that decompresses to more than this many times its compressed size is a zip
#: bomb, not an export (JSON compresses 5–20×; 1.5 GB of spaces, 1000×) ...
MAX_RATIO = 100
#: ... once it is bigger than this (small members may compress as they like)
RATIO_FROM_BYTES = 1024 * 1024


# -- export -----------------------------------------------------------------------------------


def conversation_to_json(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "name": conversation.display_name,
        "date": conversation.date,
        "provider": conversation.provider,
        "model": conversation.model,
        "history": [m.to_json() for m in conversation.history],
    }


def export_json(conversations: Sequence[Conversation]) -> str:
    bundle = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported": datetime.now(UTC).isoformat(timespec="seconds"),
        "conversations": [conversation_to_json(c) for c in conversations],
    }
    return json.dumps(bundle, ensure_ascii=False, indent=1) + "\n"


#: how an answer cut short is marked in Markdown exports and ``conversations show``
STOPPED_LABEL = "stopped"

_ROLE_TITLES = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


def export_markdown(conversations: Sequence[Conversation]) -> str:
    parts: list[str] = []
    for conversation in conversations:
        lines = [
            f"# {fit_name(conversation.display_name)}",
            "",
            f"- Date: {conversation.date}",
            f"- Provider: {conversation.provider}",
            f"- Model: {conversation.model}",
            f"- Messages: {len(conversation.history)}",
            f"- Id: {conversation.id}",
            "",
        ]
        for message in conversation.history:
            title = _ROLE_TITLES.get(message.role, message.role.title())
            stopped = STOPPED_LABEL if message.stopped else ""
            meta = ", ".join(x for x in (message.time, message.model, stopped) if x)
            lines.append(f"## {title}" + (f" ({meta})" if meta else ""))
            lines.append("")
            lines.append(message.content)
            lines.append("")
        parts.append("\n".join(lines))
    return "\n---\n\n".join(parts)


def export(
    agent: ConversationAgent,
    ids: Iterable[str] | None,
    fmt: str,
    progress: Progress | None = None,
) -> tuple[str, list[str]]:
    """``(text, problems)``: the export of ``ids`` (all readable ones when None).

    Conversations that cannot be read are left out and named in ``problems``; asking for one
    id that cannot be read raises its error.
    """
    if fmt not in FORMATS:
        raise CustodiaEnvironmentError(
            _("unknown export format {fmt!r}: json or markdown").format(fmt=fmt)
        )
    wanted = list(ids) if ids is not None else [r.id for r in agent.conversations()]
    problems: list[str] = []
    loaded: list[Conversation] = []
    if progress is not None:
        progress.start(len(wanted), _("exporting"))
    for conversation_id in wanted:
        try:
            loaded.append(agent.load(conversation_id))
        except ConversationError as err:
            if ids is not None and len(wanted) == 1:
                raise
            problems.append(str(err))
        if progress is not None:
            progress.advance(1, conversation_id)
    text = export_json(loaded) if fmt == "json" else export_markdown(loaded)
    return text, problems


class ExportError(CustodiaEnvironmentError):
    """The export cannot be written where it was asked to go."""


def check_target(path: Path) -> None:
    """Refuse, before any work, an export path that cannot be a file: a folder, or a file in
    a folder that does not exist (:class:`ExportError`)."""
    if path.is_dir():
        raise ExportError(
            _("{path} is a folder: give a file name, e.g. {example}").format(
                path=path, example=path / "conversations.json"
            )
        )
    folder = path.parent
    if not folder.exists():
        raise ExportError(
            _("{path}: the folder {folder} does not exist").format(path=path, folder=folder)
        )
    if not folder.is_dir():
        raise ExportError(_("{path}: {folder} is not a folder").format(path=path, folder=folder))


def write_private(path: Path, text: str) -> None:
    """Write an export 0600 (it holds plaintext history).

    The text goes to a new private file (``O_EXCL``, 0600) in the same folder, which is then
    renamed over ``path``: an existing file, whatever its mode, is replaced by a 0600 one (an
    ``O_TRUNC`` rewrite would keep its old mode), a symlink is replaced rather than written
    through, and a failed write leaves the old file as it was. :class:`ExportError` with the
    reason when it cannot be written.
    """
    check_target(path)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(fd, 0o600)  # whatever the umask allowed, never more than the owner
            view = memoryview(text.encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        said = _("{path}: cannot write the export").format(path=path)
        raise ExportError(failures.failed(said, err)) from err


# -- import -----------------------------------------------------------------------------------


def _iso(value: Any) -> str:
    if isinstance(value, int | float) and value > 0:
        try:
            return datetime.fromtimestamp(float(value), UTC).isoformat(timespec="seconds")
        except (ValueError, OverflowError, OSError):  # a time no calendar holds
            return ""
    if isinstance(value, str) and value:
        return value
    return ""


def _history(items: Any, where: str) -> list[StoredMessage]:
    if not isinstance(items, list):
        raise ImportFormatError(_("{where}: the history is not a list").format(where=where))
    try:
        return [StoredMessage.from_json(m) for m in items]
    except ValueError as err:
        said = _("{where}: a message is malformed").format(where=where)
        raise ImportFormatError(failures.with_details(said, str(err))) from None


def from_bundle_item(item: Any, where: str) -> Conversation:
    if not isinstance(item, dict):
        raise ImportFormatError(_("{where}: a conversation is not an object").format(where=where))
    history = _history(item.get("history"), where)
    return Conversation(
        id=str(item.get("id") or new_id()),
        name=str(item.get("name") or "Imported conversation"),
        date=str(item.get("date") or datetime.now(UTC).isoformat(timespec="seconds")),
        provider=str(item.get("provider") or "unknown"),
        model=str(item.get("model") or "unknown"),
        history=history,
    )


def _chatgpt_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    kind = content.get("content_type", "text")
    if kind == "code" and isinstance(content.get("text"), str):
        return f"```\n{content['text']}\n```"
    pieces: list[str] = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif part.get("content_type") == "image_asset_pointer":
                pieces.append("[image]")
    if not pieces and isinstance(content.get("text"), str):
        pieces.append(content["text"])
    return "\n".join(p for p in pieces if p).strip()


def _chatgpt_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes of the branch the user last saw: from ``current_node`` up to the root.

    Every walk is bounded: a node is visited once (a cycle — a node its own child, two
    nodes each other's parent — ends the walk), so the walk takes at most one step per node
    of the mapping, whatever the file says.
    """
    if not isinstance(current, str) or current not in mapping:
        # No current node: follow the last child from the root.
        roots = [n for n in mapping.values() if isinstance(n, dict) and not n.get("parent")]
        if not roots:
            return []
        node: Any = roots[0]
        walked: set[int] = set()
        while isinstance(node, dict) and id(node) not in walked:
            walked.add(id(node))
            children = node.get("children")
            if not isinstance(children, list) or not children:
                break
            last = children[-1]
            following = mapping.get(last) if isinstance(last, str) else None
            if not isinstance(following, dict) or id(following) in walked:
                break  # a missing child or a cycle: the branch ends here
            node = following
        current = node.get("id") if isinstance(node, dict) else None
        if not isinstance(current, str) or mapping.get(current) is not node:
            # the node's own "id" may be missing or name another node: find its key
            current = next((k for k, v in mapping.items() if v is node), None)
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current]
        if not isinstance(node, dict):
            break
        chain.append(node)
        current = node.get("parent")
    chain.reverse()
    return chain


def from_chatgpt(item: Any, where: str) -> Conversation:
    if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
        raise ImportFormatError(
            _("{where}: not a ChatGPT conversation (no mapping)").format(where=where)
        )
    history: list[StoredMessage] = []
    model = str(item.get("default_model_slug") or "")
    for node in _chatgpt_path(item["mapping"], item.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        role = (message.get("author") or {}).get("role")
        metadata = message.get("metadata") or {}
        if role not in ("user", "assistant") or metadata.get(
            "is_visually_hidden_from_conversation"
        ):
            continue
        text = _chatgpt_text(message.get("content"))
        if not text:
            continue
        slug = str(metadata.get("model_slug") or "") if role == "assistant" else ""
        if slug:
            model = model or slug
        history.append(
            StoredMessage(
                role,
                text,
                _iso(message.get("create_time")),
                f"chatgpt:{slug}" if slug else "",
            )
        )
    return Conversation(
        id=new_id(),
        name=str(item.get("title") or "Imported ChatGPT conversation"),
        date=_iso(item.get("create_time")) or datetime.now(UTC).isoformat(timespec="seconds"),
        provider="chatgpt",
        model=model or "unknown",
        history=history,
    )


def parse(
    path: Path, raw: bytes, files: ConversationFiles, *, in_archive: bool = False
) -> list[Conversation]:
    """The conversations in an import file, whatever supported format it is."""
    where = path.name
    if raw[:2] == b"PK":
        if in_archive:  # an archive in the archive (a zip quine would never end)
            raise ImportFormatError(
                _("{where}: an archive inside the archive is not imported").format(where=where)
            )
        return _parse_zip(path, raw, files)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        said = _("{where}: not valid JSON").format(where=where)
        raise ImportFormatError(failures.with_details(said, str(err))) from None
    except RecursionError:
        raise ImportFormatError(_("{where}: JSON nested too deeply").format(where=where)) from None
    if isinstance(data, dict) and data.get("format") == EXPORT_FORMAT:
        items = data.get("conversations")
        if not isinstance(items, list):
            raise ImportFormatError(
                _("{where}: the export has no conversations list").format(where=where)
            )
        return [_convert(from_bundle_item, item, f"{where}[{i}]") for i, item in enumerate(items)]
    if isinstance(data, dict) and data.get("format") == FILE_FORMAT:
        try:
            conversation = files.decode(path, raw)
        except CorruptConversationError as err:
            raise ImportFormatError(str(err)) from None
        given = data.get("id")
        conversation.id = given if isinstance(given, str) and is_valid_id(given) else new_id()
        return [conversation]
    if isinstance(data, dict) and isinstance(data.get("mapping"), dict):
        return [_convert(from_chatgpt, data, where)]
    if isinstance(data, list) and all(isinstance(i, dict) and "mapping" in i for i in data):
        return [_convert(from_chatgpt, item, f"{where}[{i}]") for i, item in enumerate(data)]
    raise ImportFormatError(
        _(
            "{where}: not a Custodia export, a Custodia conversation or a ChatGPT "
            "conversations.json"
        ).format(where=where)
    )


def _convert(convert: Callable[[Any, str], Conversation], item: Any, where: str) -> Conversation:
    """``convert(item, where)``; a field of an unexpected type is a format error, not a bug."""
    try:
        return convert(item, where)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as err:
        said = _("{where}: malformed conversation").format(where=where)
        raise ImportFormatError(failures.with_details(said, repr(err))) from None


def _parse_zip(path: Path, raw: bytes, files: ConversationFiles) -> list[Conversation]:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
            if not names:
                raise ImportFormatError(
                    _("{name}: the archive has no conversations.json").format(name=path.name)
                )
            inner = _read_member(path, archive, archive.getinfo(names[0]))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
            EOFError, ValueError, zlib.error) as err:  # fmt: skip
        said = _("{name}: not a valid zip archive").format(name=path.name)
        raise ImportFormatError(failures.with_details(said, str(err))) from None
    return parse(path.with_name("conversations.json"), inner, files, in_archive=True)


def _read_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes, refused *before* reading when it would decompress beyond
    :data:`MAX_IMPORT_BYTES` or :data:`MAX_RATIO`; read with the same bound, whatever its
    header says (zipfile never returns more than the header's size, and checks the CRC)."""
    size, packed = info.file_size, max(1, info.compress_size)
    mb = 1024 * 1024
    if size > MAX_IMPORT_BYTES:
        raise ImportFormatError(
            _(
                "{name}: {member} would decompress to {size} MB; the most an import may hold "
                "is {most} MB"
            ).format(
                name=path.name, member=info.filename, size=size // mb, most=MAX_IMPORT_BYTES // mb
            )
        )
    if size > RATIO_FROM_BYTES and size > MAX_RATIO * packed:
        raise ImportFormatError(
            _(
                "{name}: {member} would decompress {ratio}× ({packed} bytes to {size} MB): a "
                "zip bomb, not an export"
            ).format(
                name=path.name,
                member=info.filename,
                ratio=size // packed,
                packed=packed,
                size=size // mb,
            )
        )
    with archive.open(info) as member:
        data = member.read()  # never more than the header's size (checked above)
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFormatError(
            _("{name}: {member} is larger than its header says").format(
                name=path.name, member=info.filename
            )
        )
    return data


#: added to the name of every imported conversation, so it is told from the original (in
#: the user's language at import time: "(importada)" in Spanish)
IMPORTED = N_("(imported)")


def imported_name(name: str) -> str:
    """``name (imported)``, once (a re-import of an export keeps one suffix, in English or
    in the user's language), fitted."""
    tidied = fit_name(name)
    if tidied.endswith((IMPORTED, _(IMPORTED))):
        return tidied
    suffix = " " + _(IMPORTED)
    return fit_name(tidied[: MAX_NAME - len(suffix)] + suffix)


def fingerprint(conversation: Conversation) -> str:
    """What makes two conversations the same for an import: their messages (role and
    text, in order). Names, ids, times and models may differ between exports."""
    digest = hashlib.sha256()
    for message in conversation.history:
        digest.update(json.dumps([message.role, message.content], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _present(agent: ConversationAgent) -> set[str]:
    """Fingerprints of every conversation here that can be read now."""
    return {fingerprint(c) for c in iter_conversations(agent.files)}


def import_file(
    agent: ConversationAgent, path: Path, progress: Progress | None = None
) -> ImportResult:
    """Add every conversation found in ``path``; never overwrite an existing one.

    Each is named ``… (imported)``; one whose messages are already here (an earlier import
    of the same file, or the conversation it was exported from) is skipped and named in
    ``duplicates``.
    """
    conversations = parse(path, _read_import(path), agent.files)
    agent.check_writable()  # encrypted history under a key not set here: import nothing
    result = ImportResult()
    if progress is not None:
        progress.start(0, _("checking for conversations already here"))
    present = _present(agent)
    if progress is not None:
        progress.start(len(conversations), _("importing"))
    for position, conversation in enumerate(conversations):
        conversation, repaired = _repaired(conversation)
        # names are kept in clear on one line, at most MAX_NAME characters (cut with "…")
        original = fit_name(conversation.display_name)
        conversation = replace(conversation, name=imported_name(original), title="")
        same = fingerprint(conversation)
        if not conversation.history:
            result.skipped.append(f"{original}: no messages")
        elif same in present:
            result.duplicates.append(original)
        else:
            try:
                conversation_id, renamed = agent.add(conversation)
            except StoreUnavailableError as err:  # the folder itself: the rest cannot land
                result.failed.append(f"{original}: {err}")
                result.failed.extend(
                    f"{fit_name(c.name)}: not imported (the import stopped at the error above)"
                    for c in conversations[position + 1 :]
                )
                break
            except CustodiaEnvironmentError as err:  # this conversation only (too large...)
                result.failed.append(f"{original}: {err}")
            else:
                present.add(same)
                result.imported.append((conversation_id, conversation.name))
                result.renamed += renamed
                if repaired:
                    result.notices.append(repaired_notice(repaired, original))
        if progress is not None:
            progress.advance(1, conversation.name)
    return result


def _read_import(path: Path) -> bytes:
    """The bytes of the file to import, refused when larger than an import may hold."""
    try:
        with path.open("rb") as file:
            if os.fstat(file.fileno()).st_size > MAX_IMPORT_BYTES:
                mb = MAX_IMPORT_BYTES // (1024 * 1024)
                raise ImportFormatError(
                    _("{name}: larger than {most} MB, the most an import may hold").format(
                        name=path.name, most=mb
                    )
                )
            raw = file.read()  # read(n) would allocate n bytes whatever the file holds
    except OSError as err:
        said = _("{path}: cannot be read").format(path=path)
        raise CustodiaEnvironmentError(failures.failed(said, err)) from err
    if len(raw) > MAX_IMPORT_BYTES:  # a file that grew meanwhile
        raise ImportFormatError(
            _("{name}: larger than the most an import may hold").format(name=path.name)
        )
    return raw


def _repaired(conversation: Conversation) -> tuple[Conversation, int]:
    """``conversation`` with its text repaired (lone surrogates, from a JSON escape such as
    ``"\\udfff"``, become U+FFFD) and how many characters were replaced."""
    name, count = repair_text(conversation.name)
    history: list[StoredMessage] = []
    for message in conversation.history:
        content, n = repair_text(message.content)
        count += n
        history.append(replace(message, content=content) if n else message)
    return replace(conversation, name=name, history=history), count
