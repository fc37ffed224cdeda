"""The tamper-evident audit log (SPEC CT1–CT4, CT8): hash chain, pseudonyms, checkpoints.

A lower layer the clinical tutor uses. ``pseudonyms`` (per-person keys, crypto-shredding),
``checkpoints`` (Ed25519-signed heads), ``verify`` (full and incremental verification),
``service`` (what the tutor calls) and ``cli``; the log itself — its record format and chain
hash, its Protocol, the SQLite and Postgres implementations — is the audit-log role of the
storage layer (:mod:`backends.stores.audit_log`). See docs/AUDIT.md.

The public surface — what the desktop uses: :class:`AuditService` (built by
:func:`backends.audit.service.build`, declared in :mod:`backends.audit.assistant`) and the
value types it returns.
"""

from backends.audit.data import DATA
from backends.audit.proofs import Checked, ProofFileError, check_consistency, check_inclusion
from backends.audit.service import (
    EXPORT_FORMATS,
    AuditService,
    CheckpointStatus,
    ProofUnavailable,
)
from backends.audit.verify import VerifyResult
from backends.stores.audit_log import Filter
from backends.stores.audit_log.record import Entry

__all__ = [
    "DATA",
    "EXPORT_FORMATS",
    "AuditService",
    "Checked",
    "CheckpointStatus",
    "Entry",
    "Filter",
    "ProofFileError",
    "ProofUnavailable",
    "VerifyResult",
    "check_consistency",
    "check_inclusion",
]
