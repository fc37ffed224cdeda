"""A signed checkpoint of an audit log: "log ``log_id`` had head ``head`` at ``seq``".

The type belongs to the storage layer, since each audit log keeps the checkpoints offered to it
(:meth:`~backends.stores.audit_log.AuditLog.add_checkpoint`). Signing, the trust file and the
key files stay in :mod:`backends.audit.checkpoints`, which re-exports these names.
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass
from hashlib import sha256

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from backends.errors import CustodiaEnvironmentError
from backends.failures import with_details
from backends.i18n import _
from backends.stores.audit_log.note import (
    NoteCheckpoint,
    NoteError,
    Verifier,
    log_id_of,
    open_note,
    origin_of,
    split,
)
from backends.stores.audit_log.record import canonical

#: prefix of the signed bytes, so the signature cannot be reused for anything else
DOMAIN = b"custodia-audit-checkpoint-v1\n"


class CheckpointError(CustodiaEnvironmentError):
    """The signing key or the checkpoint file cannot be used."""


class CheckpointRejected(CheckpointError):
    """A checkpoint that must not be trusted: bad signature, unknown key, replay, fork."""


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class Checkpoint:
    log_id: str
    seq: int
    head: str
    time: str
    key_id: str
    signature: str = ""  # base64 of the Ed25519 signature over :meth:`payload`
    #: the Merkle root (hex) of the first ``seq`` records ("" in checkpoints before the tree)
    root: str = ""
    #: the same checkpoint as a C2SP signed note (:mod:`~backends.stores.audit_log.note`)
    note: str = ""

    @property
    def origin(self) -> str:
        return origin_of(self.log_id)

    def payload(self) -> bytes:
        fields = {
            "head": self.head,
            "key_id": self.key_id,
            "log_id": self.log_id,
            "seq": self.seq,
            "time": self.time,
        }
        return DOMAIN + canonical(fields).encode("utf-8")

    def to_json(self) -> str:
        fields = asdict(self)
        for name in ("root", "note"):  # as earlier releases wrote them when absent
            if not fields[name]:
                del fields[name]
        return canonical(fields)

    @classmethod
    def from_json(cls, text: str) -> Checkpoint:
        try:
            obj = json.loads(text)
            return cls(
                log_id=str(obj["log_id"]),
                seq=int(obj["seq"]),
                head=str(obj["head"]),
                time=str(obj["time"]),
                key_id=str(obj["key_id"]),
                signature=str(obj.get("signature", "")),
                root=str(obj.get("root", "")),
                note=str(obj.get("note", "")),
            )
        except (ValueError, KeyError, TypeError) as err:
            raise CheckpointRejected(with_details(_("not a checkpoint"), str(err))) from None

    def check(self, public_key: Ed25519PublicKey, log_id: str | None = None) -> None:
        """Raise :class:`CheckpointRejected` unless signed by ``public_key`` (for ``log_id``)."""
        if log_id is not None and self.log_id != log_id:
            raise CheckpointRejected(
                _("checkpoint at seq {seq} belongs to another log ({log_id})").format(
                    seq=self.seq, log_id=self.log_id
                )
            )
        if self.key_id != key_id(public_key):
            raise CheckpointRejected(
                _("checkpoint at seq {seq} is signed by an unknown key ({key})").format(
                    seq=self.seq, key=self.key_id
                )
            )
        if not self.signature and not self.note:
            raise CheckpointRejected(
                _("checkpoint at seq {seq} is not signed").format(seq=self.seq)
            )
        if self.root and not self.note:  # the JSON signature covers no root (payload())
            raise CheckpointRejected(
                _(
                    "checkpoint at seq {seq} states a Merkle root that no signature covers (a "
                    "JSON checkpoint signs seq and head only; its root would be trusted unsigned)"
                ).format(seq=self.seq)
            )
        if self.signature:
            try:
                public_key.verify(base64.b64decode(self.signature, validate=True), self.payload())
            except (InvalidSignature, ValueError):
                raise CheckpointRejected(
                    _("checkpoint at seq {seq}: the signature does not verify").format(seq=self.seq)
                ) from None
        if self.note:
            try:
                body = open_note(self.note, Verifier.of(self.origin, public_key))
                parsed = NoteCheckpoint.parse(body)
            except NoteError as err:
                raise CheckpointRejected(
                    _("checkpoint at seq {seq}: {problem}").format(seq=self.seq, problem=err)
                ) from None
            if (parsed.origin, parsed.size, parsed.root.hex(), parsed.seq, parsed.head) != (
                self.origin,
                self.seq,
                self.root,
                self.seq,
                self.head,
            ):
                raise CheckpointRejected(
                    _("checkpoint at seq {seq}: its signed note says something else").format(
                        seq=self.seq
                    )
                )

    @classmethod
    def from_note(cls, text: str, public_key: Ed25519PublicKey) -> Checkpoint:
        """The checkpoint a C2SP note states, once ``public_key`` is found to have signed it
        under the note's own origin (:class:`CheckpointRejected` otherwise)."""
        try:
            body, _signatures = split(text)
            parsed = NoteCheckpoint.parse(body)
            open_note(text, Verifier.of(parsed.origin, public_key))
        except NoteError as err:
            raise CheckpointRejected(
                _("not a checkpoint signed by this key: {problem}").format(problem=err)
            ) from None
        log_id = log_id_of(parsed.origin)
        if not log_id or parsed.size != parsed.seq or not parsed.head:
            raise CheckpointRejected(
                _("{origin}: not a checkpoint of a Custodia audit log").format(origin=parsed.origin)
            )
        return cls(
            log_id,
            parsed.seq,
            parsed.head,
            parsed.time,
            key_id(public_key),
            root=parsed.root.hex(),
            note=text,
        )

    @staticmethod
    def peek_note(text: str) -> NoteCheckpoint:
        """What a note says, signature not checked (to find the log and key it needs)."""
        try:
            return NoteCheckpoint.parse(split(text)[0])
        except NoteError as err:
            raise CheckpointRejected(
                _("not a checkpoint note: {problem}").format(problem=err)
            ) from None
