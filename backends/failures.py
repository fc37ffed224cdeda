"""What went wrong outside the code, said in the user's words (issue 27).

A library's or the OS's own message ("Error 111 connecting to 127.0.0.1:6399. Connection
refused.", "database disk image is malformed", "No space left on device") is English
whatever language the user chose, and often names the library's internals. Custodia says
what happened in a sentence of its own, translated, names the cause when it knows it (a
refused connection, a full disk, a denied permission, a damaged database file), and keeps
the library's raw text only as the message's *details*, at its end::

    No se puede contactar con Redis en redis://127.0.0.1:6399/0: la conexión fue
    rechazada (¿está en marcha el servidor?) (detalles: Error 111 connecting to …)

:func:`split` takes a message apart again (the window shows the details in a tooltip; the
Spanish walks read the sentence alone). A message that is already Custodia's own (a
:class:`~backends.errors.CustodiaEnvironmentError`) is kept as it is: its details stay at
its end when it is wrapped again.
"""

from __future__ import annotations

import errno
import re
import socket

from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _

#: the details' label (the library's own words follow it)
DETAILS = N_("details: {0}")

REFUSED = N_("the connection was refused (is the server running?)")
TIMED_OUT = N_("no answer in time")
UNREACHABLE = N_("the address cannot be reached")
UNRESOLVED = N_("the name does not resolve to an address")
BROKEN = N_("the connection was broken")
AUTH = N_("the user name or password was refused")
PERMISSION = N_("permission denied")
DISK_FULL = N_("the disk is full")
READ_ONLY = N_("the disk or file is read-only")
NOT_FOUND = N_("no such file or folder")
IS_FOLDER = N_("it is a folder, not a file")
NOT_A_DATABASE = N_("the file is not a database (damaged, or another kind of file)")
LOCKED = N_("the database is locked by another program")
DAMAGED = N_("the database file is damaged")
IO_ERROR = N_("the disk could not be read or written")
CANNOT_OPEN = N_("the database file cannot be opened")
NO_DATABASE = N_("the database does not exist")
TOO_MANY = N_("the server accepts no more connections")
NOT_INSTALLED = N_("a part of Custodia is not installed")
UNKNOWN_ARCHITECTURE = N_("this llama.cpp does not know the model's architecture")
DAMAGED_MODEL = N_("the model file is incomplete or damaged")
OUT_OF_MEMORY = N_("not enough memory")

#: the OS's error numbers, read from any exception in the chain
_ERRNOS: dict[int, str] = {
    errno.ECONNREFUSED: REFUSED,
    errno.ETIMEDOUT: TIMED_OUT,
    errno.EHOSTUNREACH: UNREACHABLE,
    errno.ENETUNREACH: UNREACHABLE,
    errno.EADDRNOTAVAIL: UNREACHABLE,
    errno.ECONNRESET: BROKEN,
    errno.ECONNABORTED: BROKEN,
    errno.EPIPE: BROKEN,
    errno.EACCES: PERMISSION,
    errno.EPERM: PERMISSION,
    errno.ENOSPC: DISK_FULL,
    errno.EDQUOT: DISK_FULL,
    errno.EROFS: READ_ONLY,
    errno.ENOENT: NOT_FOUND,
    errno.EISDIR: IS_FOLDER,
    errno.EIO: IO_ERROR,
}

#: exception classes (by name: the libraries are imported lazily) that say their cause
_CLASSES: dict[str, str] = {
    "ConnectionRefusedError": REFUSED,
    "TimeoutError": TIMED_OUT,
    "timeout": TIMED_OUT,
    "gaierror": UNRESOLVED,
    "AuthError": AUTH,  # neo4j
    "AuthenticationError": AUTH,  # redis
    "AuthenticationWrongNumberOfArgsError": AUTH,
    "InvalidPassword": AUTH,  # psycopg
    "InvalidAuthorizationSpecification": AUTH,
    "InsufficientPrivilege": PERMISSION,
    "PermissionError": PERMISSION,
    "DiskFull": DISK_FULL,
    "InvalidCatalogName": NO_DATABASE,
    "TooManyConnections": TOO_MANY,
    "FileNotFoundError": NOT_FOUND,
    "IsADirectoryError": IS_FOLDER,
    "ModuleNotFoundError": NOT_INSTALLED,
}

#: the libraries' words (read when no number or class says it), first match wins
_TEXTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), cause)
    for pattern, cause in (
        # llama.cpp's words, when a model file does not load
        (r"unknown (?:model )?architecture", UNKNOWN_ARCHITECTURE),
        (
            r"key not found|missing tensor|wrong number of tensors|not within the file bounds",
            DAMAGED_MODEL,
        ),
        (r"failed to allocate|out of memory|cannot allocate memory|MemoryError", OUT_OF_MEMORY),
        (r"file is (?:encrypted or is )?not a database", NOT_A_DATABASE),
        (r"database (?:table )?is locked", LOCKED),
        (r"malformed|database disk image", DAMAGED),
        (r"disk i/o error", IO_ERROR),
        (r"no space left|disk is full|quota exceeded", DISK_FULL),
        (r"read-only file system|readonly database", READ_ONLY),
        (r"unable to open database file", CANNOT_OPEN),
        (r"connection refused|actively refused|ECONNREFUSED", REFUSED),
        (r"password authentication failed|unauthori[sz]ed|WRONGPASS|NOAUTH", AUTH),
        (r"invalid username|authentication fail|invalid password", AUTH),
        (r"permission denied|access denied|operation not permitted", PERMISSION),
        (r"insufficient privilege|must be owner", PERMISSION),
        (r"name or service not known|could not translate host name", UNRESOLVED),
        (r"temporary failure in name resolution|nodename nor servname", UNRESOLVED),
        (r"no route to host|network is unreachable|host is unreachable", UNREACHABLE),
        (r"connection reset|broken pipe|connection aborted|closed the connection", BROKEN),
        (r"database \S+ does not exist|database does not exist|DatabaseNotFound", NO_DATABASE),
        (r"too many (?:connections|clients)", TOO_MANY),
        (r"timed out|timeout", TIMED_OUT),
        (r"could not connect to a chroma server|couldn't connect|failed to establish", REFUSED),
        (r"no such file or directory", NOT_FOUND),
    )
)


def _chain(err: BaseException) -> list[BaseException]:
    """``err`` and the exceptions it was raised from (or during), nearest first."""
    out: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in out and len(out) < 8:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def cause(err: BaseException) -> str:
    """What went wrong, in the user's language, when the error says it in a way Custodia
    knows (an OS error number, a library's class, its words); "" otherwise."""
    chain = _chain(err)
    for item in chain:
        number = getattr(item, "errno", None)
        if isinstance(item, OSError) and isinstance(number, int) and number in _ERRNOS:
            return _(_ERRNOS[number])
    for item in chain:
        for klass in type(item).__mro__:
            if klass.__name__ in _CLASSES:
                return _(_CLASSES[klass.__name__])
    said = text_cause(" ".join(raw(item) for item in chain))
    if said:
        return said
    if any(isinstance(item, socket.timeout) for item in chain):
        return _(TIMED_OUT)
    return ""


def text_cause(text: str) -> str:
    """The cause a library's or the OS's words name (in the user's language), or ""."""
    for pattern, said in _TEXTS:
        if pattern.search(text):
            return _(said)
    return ""


def raw(err: BaseException) -> str:
    """The library's own text of ``err`` on one line (its class when it has none)."""
    text = " ".join(str(err).split())
    return text or type(err).__name__


def with_details(message: str, details: str) -> str:
    """``message (details: …)``; just ``message`` when there are none."""
    details = " ".join(details.split())
    if not details:
        return message
    return f"{message} ({_(DETAILS).format(details)})"


def explain(err: BaseException) -> str:
    """``err`` as the user reads it: Custodia's own message as it is; a library's or the
    OS's as its cause (or "it failed" when unknown), the raw text as details."""
    if isinstance(err, CustodiaEnvironmentError):
        return " ".join(str(err).split()) or type(err).__name__
    return with_details(cause(err) or _("it failed"), raw(err))


def failed(sentence: str, err: BaseException) -> str:
    """``sentence: <cause> (details: <raw>)`` — ``sentence`` already in the user's
    language; a message of Custodia's own follows it whole, its details still last."""
    if isinstance(err, CustodiaEnvironmentError):
        main, details = split(explain(err))
        return with_details(f"{sentence}: {main}", details)
    known = cause(err)
    return with_details(f"{sentence}: {known}" if known else sentence, raw(err))


def _markers() -> list[str]:
    """The details' label as written in the installed language and in English."""
    out = []
    for label in (_(DETAILS), DETAILS):
        marker = " (" + label.split("{0}")[0]
        if marker not in out:
            out.append(marker)
    return out


def split(text: str) -> tuple[str, str]:
    """(the message, its details): ``("…: la conexión fue rechazada", "Error 111 …")``;
    details are "" when the message has none."""
    found = [(text.find(m), m) for m in _markers() if m in text]
    if not found:
        return text, ""
    at, marker = min(found)
    details = text[at + len(marker) :]
    if details.endswith(")"):
        details = details[:-1]
    return text[:at], details


def without_details(text: str) -> str:
    """``text`` with the details of each line left out (what the word walks read)."""
    return "\n".join(split(line)[0] for line in text.splitlines())
