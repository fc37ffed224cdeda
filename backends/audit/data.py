"""The audit log's data, declared once (the storage map's rows, shown under the clinical tutor,
which writes them): the hash-chained log, the signed checkpoints and the pseudonym keys."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from backends import stores
from backends.audit.pseudonyms import KEK_FILE, PostgresKeyStore
from backends.audit.service import (
    CHECKPOINTS_FILE,
    KEYS_FILE,
    LOG_FILE,
    SIGNING_KEY_FILE,
    AuditService,
)
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _, number
from backends.stores.description import (
    HISTORY,
    NEEDS_SERVICES,
    NOT_CREATED,
    NOT_CREATED_YET,
    OK,
    PROVABLE,
    Datum,
    Measurement,
    Place,
    Running,
    file_size,
    scalar,
    sqlite_count,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from backends.config import Config
    from backends.stores.audit_log import AuditLog

ASSISTANT = N_("clinical tutor")


def _log_file(config: Config) -> Mapping[str, object]:
    return {"path": config.path(LOG_FILE)}


def _service(process: Running | None) -> AuditService:
    if process is None:
        raise CustodiaEnvironmentError(NEEDS_SERVICES)
    return process.get("audit", AuditService)


def _log(config: Config, process: Running | None) -> Measurement:
    running: Callable[[], AuditLog] | None = None
    if process is not None:  # built only when there is a log to count
        running = lambda: _service(process).log  # noqa: E731
    measured = stores.measure("audit_log", config, running=running, **_log_file(config))
    if measured.health == NOT_CREATED:
        return measured
    result = _service(process).verify(from_checkpoint=True)
    return replace(
        measured,
        health=OK if result.ok else result.line(),
        note=_("chain {verdict}").format(verdict=result.line()),
    )


def _checkpoints_place(config: Config) -> Place:
    return Place(N_("signed JSON lines + Ed25519 key file"), str(config.path(CHECKPOINTS_FILE)))


def _checkpoints(config: Config, process: Running | None) -> Measurement:
    if not stores.created("audit_log", config, **_log_file(config)):
        return NOT_CREATED_YET
    service = _service(process)
    trusted = service.trust.all()
    stored = len(service.log.checkpoints())
    size = file_size(config.path(CHECKPOINTS_FILE)) + file_size(config.path(SIGNING_KEY_FILE))
    mine = sum(1 for c in trusted if c.log_id == service.log.log_id)
    return Measurement(
        len(trusted),
        size,
        note=_("{mine} for this log, {stored} also stored in the log's database").format(
            mine=number(mine), stored=number(stored)
        ),
    )


def _keys_place(config: Config) -> Place:
    if config.audit == "postgres":  # shared by the desktops on the log (CT11)
        return Place(
            N_("beside the server log, wrapped under audit-log.kek"), str(config.path(KEK_FILE))
        )
    return Place(N_("SQLite (secure_delete), never on a server"), str(config.path(KEYS_FILE)))


def _keys(config: Config, process: Running | None) -> Measurement:
    if config.audit == "postgres" and process is not None:
        keys = _service(process).keys
        if isinstance(keys, PostgresKeyStore):
            held, erased = keys.counts()
            return Measurement(held, None, note=_erased(erased))
    path = config.path(KEYS_FILE)
    measured = sqlite_count(path, "SELECT count(*) FROM person_key")
    if measured.health != OK:
        return measured
    erased = scalar(path, "SELECT count(*) FROM erased")
    return replace(measured, note=_erased(int(erased or 0)))


def _erased(count: int) -> str:
    return _("erased: {count} (their keys destroyed)").format(count=number(count))


DATA = (
    Datum(
        N_("audit log"),
        ASSISTANT,
        PROVABLE,
        N_("records"),
        N_("detectable: signed checkpoints kept outside the log show what existed"),
        _log,
        role="audit_log",
        context=_log_file,
    ),
    Datum(
        N_("checkpoints"),
        ASSISTANT,
        PROVABLE,
        N_("checkpoints"),
        N_(
            "the chain still verifies, but a rewrite of the whole log is no longer evident "
            "(keep exported checkpoints elsewhere)"
        ),
        _checkpoints,
        place=_checkpoints_place,
        files=lambda config: (config.path(CHECKPOINTS_FILE), config.path(SIGNING_KEY_FILE)),
    ),
    Datum(
        N_("pseudonym keys"),
        ASSISTANT,
        HISTORY,
        N_("keys"),
        N_(
            "personal fields in the log become unreadable (as if everyone was erased); "
            "the chain still verifies"
        ),
        _keys,
        place=_keys_place,
        files=lambda config: (config.path(KEYS_FILE), config.path(KEK_FILE)),
    ),
)
