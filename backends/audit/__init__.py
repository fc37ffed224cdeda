"""The tamper-evident audit log (SPEC CT1–CT4, CT8): hash chain, pseudonyms, checkpoints.

``record`` (canonical form and chain hash), ``log`` (the :class:`AuditLog` Protocol),
``sqlite_log`` / ``postgres_log`` (its two implementations), ``pseudonyms`` (per-person keys,
crypto-shredding), ``checkpoints`` (Ed25519-signed heads), ``verify`` (full and incremental
verification), ``service`` (what the clinical tutor calls) and ``cli``. See docs/AUDIT.md.
"""
