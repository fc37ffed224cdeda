"""Signed checkpoints: a bare hash chain proves nothing against someone who rewrites all of it.

A checkpoint says "log ``log_id`` had head ``head`` at sequence ``seq`` at ``time``", signed
with an Ed25519 key kept in a file **outside the database** (0600). Whoever rewrites the log
cannot produce a valid checkpoint for the rewritten head without that file; whoever truncates
it leaves a log shorter than a checkpoint.

The :class:`TrustStore` is the verifier's memory: an append-only JSON-lines file of accepted
checkpoints (also outside the database). It only accepts checkpoints signed by the trusted key
and never one older than the latest it holds as its latest (an older checkpoint offered later
would hide everything appended since); an older one is instead held against the log — its
seq and head must still be in the chain (:class:`OlderCheckpoint`, ``verify --checkpoint``).
Checkpoints can also be exported to a file to keep elsewhere (another disk, a printout, an
e-mail to the data protection officer).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from backends.failures import failed, with_details
from backends.i18n import N_, _
from backends.stores.audit_log import note
from backends.stores.audit_log.checkpoint import DOMAIN as DOMAIN
from backends.stores.audit_log.checkpoint import Checkpoint as Checkpoint
from backends.stores.audit_log.checkpoint import CheckpointError as CheckpointError
from backends.stores.audit_log.checkpoint import CheckpointRejected as CheckpointRejected
from backends.stores.audit_log.checkpoint import key_id as key_id
from backends.stores.audit_log.note import NoteCheckpoint, origin_of
from backends.stores.audit_log.record import utc_now

#: a checkpoint that contradicts a trusted one at the same seq
FORKED = N_(
    "checkpoint at seq {seq} names another head than the trusted one: the log was forked or "
    "rewritten"
)
#: a checkpoint older than the latest trusted one (its own text: the CLI tells it apart)
REPLAYED = N_(
    "checkpoint at seq {seq} is older than the latest trusted checkpoint (seq {latest}): "
    "refusing a replayed checkpoint"
)


class OlderCheckpoint(CheckpointRejected):
    """A validly signed checkpoint older than the latest trusted one.

    It must not become the latest (that would hide what was appended since), but it can still
    be held against the log: its seq and head must still be in the chain
    (``verify_chain(pinned=...)``). Automatic checkpoints make every exported one older soon.
    """

    def __init__(self, message: str, latest: Checkpoint) -> None:
        super().__init__(message)
        self.latest = latest


def public_key_from_hex(text: str) -> Ed25519PublicKey:
    try:
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text.strip()))
    except ValueError as err:
        raise CheckpointError(
            with_details(
                _("not a public key of the checkpoints (64 hex digits)"), f"Ed25519: {err}"
            )
        ) from None


def public_key_hex(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def _private_file(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)


class Signer:
    """The Ed25519 private key (PKCS#8 PEM in a 0600 file outside the database)."""

    def __init__(self, private_key: Ed25519PrivateKey, path: Path | None = None) -> None:
        self._key = private_key
        self.path = path
        self.public_key = private_key.public_key()
        self.key_id = key_id(self.public_key)

    @classmethod
    def load_or_create(cls, path: Path) -> Signer:
        if not path.exists():
            key = Ed25519PrivateKey.generate()
            pem = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            # Complete in a private temporary first, then linked into place (never replacing
            # one): a crash can leave no empty or half-written key behind.
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{id(key):x}.tmp")
            try:
                fd = _private_file(tmp)
                try:
                    if os.write(fd, pem) != len(pem):
                        raise OSError("short write")
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.link(tmp, path)
            except FileExistsError:
                return cls.load(path)  # another process made it meanwhile
            except OSError as err:
                raise CheckpointError(
                    failed(_("{path}: cannot create the signing key").format(path=path), err)
                ) from err
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return cls(key, path)
        return cls.load(path)

    @classmethod
    def load(cls, path: Path) -> Signer:
        try:
            mode = path.stat().st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise CheckpointError(
                    _(
                        "{path}: the signing key is readable by others (mode {mode}); "
                        "run `chmod 600 {path}`"
                    ).format(path=path, mode=f"{mode & 0o777:o}")
                )
            data = path.read_bytes()
            key = serialization.load_pem_private_key(data, password=None)
        except OSError as err:
            raise CheckpointError(
                failed(_("{path}: cannot read the signing key").format(path=path), err)
            ) from err
        except ValueError as err:
            raise CheckpointError(
                with_details(_("{path}: not a signing key").format(path=path), f"PEM: {err}")
            ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise CheckpointError(
                with_details(_("{path}: not a signing key").format(path=path), "not Ed25519")
            )
        return cls(key, path)

    def sign(
        self,
        log_id: str,
        seq: int,
        head: str,
        time: str | None = None,
        root: bytes | None = None,
    ) -> Checkpoint:
        """A checkpoint of ``seq``/``head``; with the Merkle ``root`` of those ``seq`` records
        it is also a C2SP signed note (the earlier JSON signature is kept beside it, so an
        earlier release still reads the trust file)."""
        unsigned = Checkpoint(log_id, seq, head, time or utc_now(), self.key_id)
        signature = base64.b64encode(self._key.sign(unsigned.payload())).decode("ascii")
        text = ""
        if root is not None:
            origin = origin_of(log_id)
            body = NoteCheckpoint(origin, seq, root, seq, head, unsigned.time).body()
            text = note.sign(body, origin, self._key)
        return Checkpoint(
            log_id,
            seq,
            head,
            unsigned.time,
            self.key_id,
            signature,
            root=root.hex() if root is not None else "",
            note=text,
        )

    def verifier_key(self, log_id: str) -> str:
        """The note verifier key of this log: ``<origin>+<key hash>+<base64 key>``."""
        return note.verifier_key(origin_of(log_id), self.public_key)


class TrustStore:
    """Accepted checkpoints, one JSON line each, in a 0600 file outside the database."""

    def __init__(
        self, path: Path, public_key: Ed25519PublicKey, *, read_only: bool = False
    ) -> None:
        """``read_only``: a copy's trust file is read, never written; checkpoints accepted
        meanwhile are held in memory for this run only."""
        self.path = path
        self.public_key = public_key
        self.read_only = read_only
        self._held: list[Checkpoint] = []

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR | os.O_APPEND, 0o600)
        except OSError as err:
            raise CheckpointError(
                failed(_("{path}: cannot open the checkpoint file").format(path=self.path), err)
            ) from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)

    def _read(self) -> list[Checkpoint]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as err:
            raise CheckpointError(
                failed(_("{path}: cannot read the checkpoint file").format(path=self.path), err)
            ) from err
        out = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                checkpoint = Checkpoint.from_json(line)
                checkpoint.check(self.public_key)
            except CheckpointRejected as err:
                raise CheckpointRejected(
                    _("{path} line {number}: {reason}").format(
                        path=self.path, number=number, reason=err
                    )
                ) from None
            out.append(checkpoint)
        return out

    def all(self, log_id: str | None = None) -> list[Checkpoint]:
        """Every accepted checkpoint (of ``log_id``), oldest first; each signature re-checked."""
        found = [c for c in [*self._read(), *self._held] if log_id is None or c.log_id == log_id]
        return sorted(found, key=lambda c: c.seq)

    def latest(self, log_id: str | None = None) -> Checkpoint | None:
        found = self.all(log_id)
        return found[-1] if found else None

    @staticmethod
    def _check_against(checkpoint: Checkpoint, trusted: list[Checkpoint]) -> None:
        """The replay and fork rules of :meth:`accept`, for a store that is not written."""
        for known in trusted:
            if known.seq == checkpoint.seq and known.head != checkpoint.head:
                raise CheckpointRejected(_(FORKED).format(seq=checkpoint.seq))
        latest = trusted[-1] if trusted else None
        if latest is not None and checkpoint.seq < latest.seq:
            raise OlderCheckpoint(
                _(REPLAYED).format(seq=checkpoint.seq, latest=latest.seq),
                latest,
            )

    def accept(self, checkpoint: Checkpoint) -> bool:
        """Trust ``checkpoint`` from now on; False if it was already there.

        Raises :class:`CheckpointRejected` for a bad signature, an unknown key, an older
        checkpoint than the latest trusted one (replay) or a different head at the same seq.
        """
        checkpoint.check(self.public_key)
        if self.read_only:
            self._check_against(checkpoint, self.all(checkpoint.log_id))
            self._held.append(checkpoint)
            return True
        with self._locked() as fd:
            trusted = self.all(checkpoint.log_id)
            latest = trusted[-1] if trusted else None
            if latest is not None:
                if checkpoint.seq < latest.seq:
                    for known in trusted:
                        if known.seq == checkpoint.seq:
                            if known.head != checkpoint.head:
                                raise CheckpointRejected(_(FORKED).format(seq=checkpoint.seq))
                            return False  # already trusted
                    raise OlderCheckpoint(
                        _(REPLAYED).format(seq=checkpoint.seq, latest=latest.seq),
                        latest,
                    )
                if checkpoint.seq == latest.seq:
                    if checkpoint.head != latest.head:
                        raise CheckpointRejected(_(FORKED).format(seq=checkpoint.seq))
                    return False
            os.write(fd, (checkpoint.to_json() + "\n").encode("utf-8"))
            os.fsync(fd)
        return True


def export_checkpoint(checkpoint: Checkpoint, path: Path, public_key: Ed25519PublicKey) -> Path:
    """Write one checkpoint to ``path`` (0600): its C2SP signed note when it has one (what
    the ecosystem's tools read), else — a checkpoint from before the tree — the JSON form with
    the public key that checks it."""
    if checkpoint.note:
        return write_private(path, checkpoint.note)
    body = json.dumps(
        {"checkpoint": json.loads(checkpoint.to_json()), "public_key": public_key_hex(public_key)},
        indent=2,
        sort_keys=True,
    )
    return write_private(path, body + "\n")


def write_private(path: Path, text: str) -> Path:
    """``text`` to a new 0600 file at ``path``, replaced atomically when complete."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as err:
        raise CheckpointError(
            failed(_("{path}: cannot write the checkpoint").format(path=path), err)
        ) from err
    return path


def read_exported(path: Path, public_key: Ed25519PublicKey | None = None) -> Checkpoint:
    """The checkpoint in a file written by :func:`export_checkpoint`: a C2SP note (checked
    against ``public_key``, which it needs) or the JSON of earlier releases (signature not
    checked here)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CheckpointRejected(
            failed(_("{path}: cannot read the checkpoint").format(path=path), err)
        ) from None
    if not text.lstrip().startswith("{"):
        if public_key is None:
            raise CheckpointRejected(
                _("{path}: a checkpoint note needs the key to check it").format(path=path)
            )
        try:
            return Checkpoint.from_note(text, public_key)
        except CheckpointRejected as err:
            raise CheckpointRejected(f"{path}: {err}") from None
    try:
        obj = json.loads(text)
        return Checkpoint.from_json(json.dumps(obj["checkpoint"]))
    except (ValueError, KeyError, TypeError) as err:
        raise CheckpointRejected(
            with_details(_("{path}: not an exported checkpoint").format(path=path), str(err))
        ) from None
