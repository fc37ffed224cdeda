"""C2SP signed notes and checkpoints (c2sp.org/signed-note, c2sp.org/tlog-checkpoint).

The text format of golang.org/x/mod/sumdb/note, so that the ecosystem's verifiers read ours::

    <origin>\\n<tree size>\\n<base64 root>\\n[extension lines]\\n   ← the body (what is signed)
    \\n
    — <key name> <base64(4-byte key hash ‖ Ed25519 signature)>\\n

A key is named, and identified by ``SHA-256(name ‖ "\\n" ‖ 0x01 ‖ public key)[:4]``; its
*verifier key* is ``<name>+<hex key hash>+<base64(0x01 ‖ public key)>``. Anyone holding that one
line can check a checkpoint, with our code or the Go module's ``note.NewVerifier``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from hashlib import sha256

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from backends.errors import CustodiaEnvironmentError
from backends.i18n import _

ALG_ED25519 = 1
#: the em dash and space that open a signature line
SIG_PREFIX = "\u2014 "
#: our checkpoints' origin (and key name): this prefix and the log's id
ORIGIN_PREFIX = "custodia/audit/"


class NoteError(CustodiaEnvironmentError):
    """A note, checkpoint or verifier key that cannot be used (malformed or not signed)."""


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_hash(name: str, public_key: Ed25519PublicKey) -> bytes:
    """The 4-byte key hash of sumdb/note: ``SHA-256(name ‖ "\\n" ‖ 0x01 ‖ key)[:4]``."""
    return sha256(name.encode("utf-8") + b"\n" + bytes([ALG_ED25519]) + _raw(public_key)).digest()[
        :4
    ]


def _check_name(name: str) -> None:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise NoteError(_("{name!r} is not a key name (no spaces or '+')").format(name=name))


def verifier_key(name: str, public_key: Ed25519PublicKey) -> str:
    """``<name>+<hex key hash>+<base64(0x01 ‖ public key)>``."""
    _check_name(name)
    encoded = base64.b64encode(bytes([ALG_ED25519]) + _raw(public_key)).decode("ascii")
    return f"{name}+{key_hash(name, public_key).hex()}+{encoded}"


@dataclass(frozen=True)
class Verifier:
    name: str
    hash: bytes
    public_key: Ed25519PublicKey

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """A verifier key line; :class:`NoteError` unless well-formed and self-consistent."""
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError(_("a verifier key is <name>+<hex key hash>+<base64 key>"))
        name, hex_hash, encoded = parts
        _check_name(name)
        try:
            digest = bytes.fromhex(hex_hash)
            raw = base64.b64decode(encoded, validate=True)
        except (ValueError, binascii.Error):
            raise NoteError(_("the verifier key's hash or key is not hex/base64")) from None
        if len(digest) != 4 or len(raw) != 33 or raw[0] != ALG_ED25519:
            raise NoteError(_("not an Ed25519 verifier key"))
        public_key = Ed25519PublicKey.from_public_bytes(raw[1:])
        if key_hash(name, public_key) != digest:
            raise NoteError(_("the verifier key's hash does not match its name and key"))
        return cls(name, digest, public_key)

    @classmethod
    def of(cls, name: str, public_key: Ed25519PublicKey) -> Verifier:
        _check_name(name)
        return cls(name, key_hash(name, public_key), public_key)


def sign(body: str, name: str, private_key: Ed25519PrivateKey) -> str:
    """The signed note of ``body`` (which ends with a newline)."""
    _check_body(body)
    _check_name(name)
    signature = private_key.sign(body.encode("utf-8"))
    blob = base64.b64encode(key_hash(name, private_key.public_key()) + signature).decode("ascii")
    return f"{body}\n{SIG_PREFIX}{name} {blob}\n"


def _check_body(body: str) -> None:
    if not body.endswith("\n"):
        raise NoteError(_("a note's text ends with a newline"))
    if any((ord(c) < 0x20 and c != "\n") or c == "\x7f" for c in body):
        raise NoteError(_("a note's text holds control characters"))


def split(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """``(body, [(name, key hash ‖ signature), …])`` — nothing verified yet."""
    cut = note.rfind("\n\n")
    if cut < 0 or not note.endswith("\n"):
        raise NoteError(_("not a signed note (no blank line before the signatures)"))
    body, lines = note[: cut + 1], note[cut + 2 :].splitlines()
    _check_body(body)
    signatures = []
    for line in lines:
        if not line.startswith(SIG_PREFIX):
            raise NoteError(_("not a signature line: {line!r}").format(line=line[:40]))
        name, _space, blob = line[len(SIG_PREFIX) :].rpartition(" ")
        try:
            raw = base64.b64decode(blob, validate=True)
        except (ValueError, binascii.Error):
            raise NoteError(_("a signature is not base64")) from None
        if len(raw) < 5:
            raise NoteError(_("a signature is too short"))
        signatures.append((name, raw))
    if not signatures:
        raise NoteError(_("the note is not signed"))
    return body, signatures


def open_note(note: str, verifier: Verifier) -> str:
    """The body of ``note`` if ``verifier`` signed it; :class:`NoteError` otherwise."""
    body, signatures = split(note)
    for name, raw in signatures:
        if name == verifier.name and raw[:4] == verifier.hash:
            try:
                verifier.public_key.verify(raw[4:], body.encode("utf-8"))
            except InvalidSignature:
                raise NoteError(
                    _("the signature by {name} does not verify").format(name=name)
                ) from None
            return body
    raise NoteError(
        _("the note is not signed by {name} (key {hex})").format(
            name=verifier.name, hex=verifier.hash.hex()
        )
    )


# -- checkpoints (c2sp.org/tlog-checkpoint) ----------------------------------------------------
@dataclass(frozen=True)
class NoteCheckpoint:
    """A checkpoint body: origin, tree size, root, and our extension lines pinning the chain
    (CT2): ``chain <seq> <head hash>`` and ``time <UTC>``."""

    origin: str
    size: int
    root: bytes
    seq: int
    head: str
    time: str

    def body(self) -> str:
        root = base64.b64encode(self.root).decode("ascii")
        return (
            f"{self.origin}\n{self.size}\n{root}\nchain {self.seq} {self.head}\ntime {self.time}\n"
        )

    @classmethod
    def parse(cls, body: str) -> NoteCheckpoint:
        lines = body.split("\n")
        if len(lines) < 4 or lines[-1] != "":
            raise NoteError(_("a checkpoint has an origin, a size and a root hash, one per line"))
        origin, size_text, root_text, *rest = lines[:-1]
        try:
            if not size_text.isdigit() or (size_text.startswith("0") and size_text != "0"):
                raise ValueError(size_text)
            size = int(size_text)
            root = base64.b64decode(root_text, validate=True)
        except (ValueError, binascii.Error):
            raise NoteError(_("the checkpoint's size or root hash is malformed")) from None
        if not origin or len(root) != 32:
            raise NoteError(_("the checkpoint's origin or root hash is malformed"))
        seq, head, time = size, "", ""
        for line in rest:
            key, _space, value = line.partition(" ")
            if key == "chain":
                seq_text, _space, head = value.partition(" ")
                if not seq_text.isdigit():
                    raise NoteError(_("the checkpoint's chain line is malformed"))
                seq = int(seq_text)
            elif key == "time":
                time = value
        return cls(origin, size, root, seq, head, time)


def origin_of(log_id: str) -> str:
    return ORIGIN_PREFIX + log_id


def log_id_of(origin: str) -> str:
    return origin[len(ORIGIN_PREFIX) :] if origin.startswith(ORIGIN_PREFIX) else ""
