"""``custodia migrate --to server``: copy the embedded data to the configured servers.

What "server" means differs per datum (DC3 and the seed's rule), so each kind has its own step:

================== ============================================================================
sessions           the durable mirror **stays SQLite** (MA1 in both profiles); sessions written
                   in the last 24 h are copied to the Redis L2 with the TTL they have left
tickets, feed      nothing to copy: 30-minute hand-offs and pub/sub messages live in the memory
                   of the running process; new ones go to Redis after the switch
semantic memory    points (vector + payload, same ids) copied to the Qdrant server when
                   ``qdrant_url`` is set; otherwise it stays in local mode
memories           **stay SQLite** (PA1: the memory table *is* SQLite; one user's memories gain
                   nothing from a server, and WAL already lets several processes share it)
conversations      the JSON files stay (CA1); the SQLite index is reconciled with them (rebuilt
                   where it differs); the vectors are re-embedded from the files into the Chroma
                   server when ``chroma_url`` is set (deterministic ids: a rerun never duplicates)
knowledge base     the chunks stay SQLite; their vectors go to the Chroma server when set; the
                   graph is rebuilt on the Bolt server from the chunks (per scope, by digest)
audit log          copied to Postgres **record by record** (the same ``seq, record, hash``),
                   each batch inside ``pg_advisory_xact_lock``; the chain is verified on both
                   sides before and after; a non-empty server log is never merged into
checkpoints        the trust file and the signing key stay local (they must live outside the
                   database); after the copy a checkpoint of the server log at the copied head
                   is signed and trusted — the link between the two logs
pseudonym keys     beside a server log, wrapped under a desktop-only key (CT4, CT11)
================== ============================================================================

The migration is a loop over the registry (:mod:`backends.assistants`): each declaration
names its owner's steps (``migrations="backends.<owner>.migration:STEPS"``), one
:class:`~backends.migrate_steps.Migratable` per datum kind, which names its step, the store
role holding it and the server setting it moves to (the key of the journal's target), and
plans its step as COPY, REBUILD, STAYS or NOTHING. Stores are opened through the registry
(:func:`backends.stores.open`) on the embedded configuration (:func:`source_config`) and on
the target's (:func:`target_config`); the copies themselves are the stores' own ``copy_to``,
and the rebuilds are the assistants' own. No step names an engine class.

Nothing embedded is ever deleted or changed. Progress goes through
:class:`~backends.progress.Progress` (each batch checks cancellation); a journal in the data dir
(``migration-journal.json``, :mod:`backends.migrate.journal`) records each finished step and the
audit copy's position, so running again after an interruption or a cancel finishes the job. A
dry run (:func:`plan_migration`) reads and probes, and writes nothing anywhere.

The package: :mod:`~backends.migrate.loop` (plan and run over the declared steps),
:mod:`~backends.migrate.journal`, :mod:`~backends.migrate.switch` (what a change of engine does
to the data). The audit chain copy is the audit log's own (:mod:`backends.audit.chain_copy`);
the schema and roles on Postgres are made by
:func:`backends.stores.audit_log.postgres.bootstrap` when they are missing, with the *admin DSN*
(``--admin-dsn``; by default the configured ``postgres_dsn``, which must then be a role that may
create roles). When the configured DSN names the application role, its password is kept, so the
configured DSN keeps working.
"""

from backends.migrate.journal import JOURNAL_FILE, JOURNAL_VERSION, Journal
from backends.migrate.loop import (
    MigrationPlan,
    declared_steps,
    iter_lines,
    migrate,
    plan_migration,
)
from backends.migrate.switch import SwitchSummary, switch_summary, switch_to_server
from backends.migrate_steps import (
    COPY,
    NOTHING,
    REBUILD,
    STAYS,
    AuditMergeRefused,
    BrokenChainError,
    Migratable,
    MigrateOptions,
    MigrationError,
    Step,
    dsn_url,
    source_config,
    target_config,
)

__all__ = [
    "COPY",
    "JOURNAL_FILE",
    "JOURNAL_VERSION",
    "NOTHING",
    "REBUILD",
    "STAYS",
    "AuditMergeRefused",
    "BrokenChainError",
    "Journal",
    "Migratable",
    "MigrateOptions",
    "MigrationError",
    "MigrationPlan",
    "Step",
    "SwitchSummary",
    "declared_steps",
    "dsn_url",
    "iter_lines",
    "migrate",
    "plan_migration",
    "source_config",
    "switch_summary",
    "switch_to_server",
    "target_config",
]
