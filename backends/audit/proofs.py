"""Proof files an outsider checks with the public key alone (SPEC CT10).

- **Inclusion** — c2sp.org/tlog-proof@v1, as transparency-dev/merkle's ``proof.NewTLogProof``
  writes it: the header line, ``extra <base64>`` (here: the record's canonical text, the very
  bytes of its leaf), ``index N`` (seq − 1), the audit path as base64 lines, a blank line, then
  the signed checkpoint note.
- **Consistency** — one base64 hash per line: the RFC 9162 proof that the tree of the ``--to``
  checkpoint extends the tree of the ``--from`` one.

:func:`check_inclusion` and :func:`check_consistency` need nothing but the files' text and the
verifier key: no data dir, no database, no configuration.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from backends.errors import CustodiaEnvironmentError
from backends.i18n import _, number
from backends.stores.audit_log import merkle
from backends.stores.audit_log.note import (
    NoteCheckpoint,
    NoteError,
    Verifier,
    log_id_of,
    open_note,
)

TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1"


class ProofFileError(CustodiaEnvironmentError):
    """A proof or checkpoint file that is malformed, not signed by the key, or does not prove
    what it claims."""


@dataclass(frozen=True)
class InclusionProof:
    index: int
    path: list[bytes]
    checkpoint: str  # the signed note
    entry: bytes | None = None  # the record's text (the ``extra`` line)

    def text(self) -> str:
        lines = [TLOG_PROOF_HEADER]
        if self.entry is not None:
            lines.append("extra " + base64.b64encode(self.entry).decode("ascii"))
        lines.append(f"index {self.index}")
        lines.extend(base64.b64encode(h).decode("ascii") for h in self.path)
        return "\n".join(lines) + "\n\n" + self.checkpoint

    @classmethod
    def parse(cls, text: str) -> InclusionProof:
        head, sep, checkpoint = text.partition("\n\n")
        lines = head.split("\n")
        if not sep or not lines or lines[0] != TLOG_PROOF_HEADER:
            raise ProofFileError(_("not a {header} file").format(header=TLOG_PROOF_HEADER))
        rest = lines[1:]
        entry = None
        try:
            if rest and rest[0].startswith("extra "):
                entry = base64.b64decode(rest.pop(0)[len("extra ") :], validate=True)
            if not rest or not rest[0].startswith("index "):
                raise ProofFileError(_("the proof has no 'index N' line"))
            index_text = rest.pop(0)[len("index ") :]
            if not index_text.isdigit():
                raise ProofFileError(
                    _("the proof's index {index!r} is not a number").format(index=index_text)
                )
            path = [base64.b64decode(line, validate=True) for line in rest]
        except (ValueError, binascii.Error):
            raise ProofFileError(_("the proof holds a line that is not base64")) from None
        if any(len(h) != merkle.HASH_SIZE for h in path):
            raise ProofFileError(_("the proof holds a hash that is not 32 bytes"))
        return cls(int(index_text), path, checkpoint, entry)


def read_checkpoint(note: str, key: Verifier) -> NoteCheckpoint:
    """The checkpoint ``note`` states, if ``key`` signed it (:class:`ProofFileError` else)."""
    try:
        checkpoint = NoteCheckpoint.parse(open_note(note, key))
    except NoteError as err:
        raise ProofFileError(_("the checkpoint: {err}").format(err=err)) from None
    if checkpoint.origin != key.name:
        raise ProofFileError(
            _("the checkpoint is of {origin!r}, the key of {key!r}: another log").format(
                origin=checkpoint.origin, key=key.name
            )
        )
    return checkpoint


def parse_hashes(text: str) -> list[bytes]:
    """A consistency proof file: one base64 hash per line."""
    try:
        hashes = [base64.b64decode(line, validate=True) for line in text.split("\n") if line]
    except (ValueError, binascii.Error):
        raise ProofFileError(_("the consistency proof holds a line that is not base64")) from None
    if any(len(h) != merkle.HASH_SIZE for h in hashes):
        raise ProofFileError(_("the consistency proof holds a hash that is not 32 bytes"))
    return hashes


def hashes_text(hashes: list[bytes]) -> str:
    return "".join(base64.b64encode(h).decode("ascii") + "\n" for h in hashes)


@dataclass(frozen=True)
class Checked:
    """What a proof established, in words for the person checking it."""

    line: str
    seq: int = 0
    size: int = 0


def check_inclusion(proof_text: str, key_text: str, entry: bytes | None = None) -> Checked:
    """Verify an inclusion proof offline. ``entry`` (a record's text, as exported) must be the
    one the proof carries, when both are present; one of them is needed."""
    key = _key(key_text)
    proof = InclusionProof.parse(proof_text)
    checkpoint = read_checkpoint(proof.checkpoint, key)
    if entry is not None and proof.entry is not None and entry != proof.entry:
        raise ProofFileError(_("the record given is not the record the proof is about"))
    leaf_entry = entry if entry is not None else proof.entry
    if leaf_entry is None:
        raise ProofFileError(_("the proof carries no record: give it with --entry FILE"))
    try:
        merkle.verify_inclusion(
            proof.index,
            checkpoint.size,
            merkle.leaf_hash(leaf_entry),
            proof.path,
            checkpoint.root,
        )
    except merkle.ProofError as err:
        raise ProofFileError(
            _("the record is not in the signed tree: {err}").format(err=err)
        ) from None
    seq = proof.index + 1
    return Checked(
        _("OK record {seq} is in the log {log} of {size} records signed by {key} at {time}").format(
            seq=seq,
            log=log_id_of(checkpoint.origin) or checkpoint.origin,
            size=number(checkpoint.size),
            key=key.name,
            time=checkpoint.time or "?",
        ),
        seq,
        checkpoint.size,
    )


def check_consistency(old_note: str, new_note: str, proof_text: str, key_text: str) -> Checked:
    """Verify offline that the log of ``new_note`` extends the log of ``old_note``."""
    key = _key(key_text)
    old = read_checkpoint(old_note, key)
    new = read_checkpoint(new_note, key)
    try:
        merkle.verify_consistency(old.size, new.size, old.root, new.root, parse_hashes(proof_text))
    except merkle.ProofError as err:
        raise ProofFileError(
            _("the log of {new} records does not extend the log of {old}: {err}").format(
                new=number(new.size), old=number(old.size), err=err
            )
        ) from None
    return Checked(
        _(
            "OK the log of {new} records (signed {new_time}) extends the log of {old} records "
            "(signed {old_time}): nothing before was changed or removed"
        ).format(
            new=number(new.size),
            new_time=new.time or "?",
            old=number(old.size),
            old_time=old.time or "?",
        ),
        0,
        new.size,
    )


def _key(text: str) -> Verifier:
    try:
        return Verifier.parse(text)
    except NoteError as err:
        raise ProofFileError(_("the key: {err}").format(err=err)) from None
