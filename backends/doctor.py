"""``custodia doctor``: one line per configured store and model — what, where, usable or why not.

The same checks run at start-up in a worker and show problems in the window without
blocking it. Each probe has a timeout; none writes user data.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backends import assistants, stores
from backends.assistants import HealthCheck
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _, named, number
from backends.models import local
from backends.models.manage import friendly_name
from backends.models.registry import create_chat_model, create_embedder, model_folders
from backends.net import http_json
from backends.storage_map import declared_data

if TYPE_CHECKING:
    from backends.services import Services
    from backends.stores.description import Datum


@dataclass
class Check:
    """One row of the report."""

    role: str  # what it is for: "data dir", "audit log", "embedder", ...
    kind: str  # what it is: "sqlite", "redis", "all-MiniLM-L6-v2", ...
    where: str  # path or redacted URL
    ok: bool = False
    required: bool = True  # False: detected, never required (e.g. Ollama)
    reason: str = ""
    version: str = ""
    details: dict[str, object] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        """The row in the user's language (the fields, and ``--json``, stay English)."""
        status = _("ok") if self.ok else (_("missing") if not self.required else _("FAIL"))
        extra = f" v{self.version}" if self.version else ""
        dims = self.details.get("dimension")
        extra += f" dim={dims}" if dims else ""
        why = f" — {_(self.reason)}" if self.reason else ""
        kind = self.kind_text()
        return f"[{status:>7}] {role_text(self.role):<20} {kind}{extra} @ {_(self.where)}{why}"

    def kind_text(self) -> str:
        """What was found, in the user's language (``kind`` stays English: ``--json``)."""
        if isinstance(files := self.details.get("files"), list) and self.role == MODEL_FILES:
            return _("{count} GGUF file(s)").format(count=number(len(files)))
        if isinstance(key := self.details.get("model_key"), str):
            return friendly_name(key)  # a model is named as everywhere else the user sees it
        return _(self.kind)


#: a role naming an assistant (``chat model (tutor)``): the role stays English (the window
#: looks rows up by it), the row shows the assistant's word for itself (its declaration's)
_CHAT_FOR = "chat model ({assistant})"


def role_text(role: str) -> str:
    """``role`` in the user's language."""
    head = _CHAT_FOR.partition("{")[0]
    if role.startswith(head) and role.endswith(")"):
        assistant = role[len(head) : -1]
        return _("chat model ({assistant})").format(assistant=_(_label(assistant)))
    return _(role)


def _label(name: str) -> str:
    """The doctor's word for the assistant ``name`` (its declaration's)."""
    try:
        declared = assistants.get(name)
    except KeyError:
        return name
    return declared.label or declared.title


Probe = Callable[[Check], None]

#: the doctor's store rows: its name for each, and the datum whose store it asks
#: where a model runs when it runs in this process
LOCAL = N_("local")
MODEL_FILES = N_("model files")


def _run(check: Check, probe: Probe) -> Check:
    started = time.perf_counter()
    try:
        probe(check)
        check.ok = True
    except CustodiaEnvironmentError as err:
        check.reason = str(err)
    except Exception as err:  # a probe must report, never crash the report
        check.reason = f"{type(err).__name__}: {err}"
    check.seconds = round(time.perf_counter() - started, 3)
    return check


def _probe_data_dir(config: Config) -> Probe:
    def probe(check: Check) -> None:
        config.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=config.home, prefix=".doctor-"):
            pass
        check.version = sqlite3.sqlite_version
        check.details["sqlite"] = sqlite3.sqlite_version
        free = os.statvfs(config.home)
        check.details["free_mb"] = free.f_bavail * free.f_frsize // (1 << 20)

    return probe


def _probe_store(config: Config, datum: Datum) -> Probe:
    """The store holding ``datum`` probes itself (its own typed errors, its timeouts)."""

    def probe(check: Check) -> None:
        probed = stores.checkup(datum.role, config, **datum.context(config))
        check.version = probed.version
        check.details.update(probed.details)

    return probe


def _probe_http(url: str, path: str, timeout: float) -> Probe:
    def probe(check: Check) -> None:
        reply = http_json(url.rstrip("/") + path, None, timeout)
        if isinstance(reply, dict):
            check.version = str(reply.get("version", ""))

    return probe


def _probe_embedder(config: Config, services: Services | None) -> Probe:
    def probe(check: Check) -> None:
        embedder = services.embedder if services is not None else create_embedder(config)
        vector = embedder.embed("doctor")
        check.kind = embedder.name
        check.details.update(embedder.describe())
        if vector.shape != (embedder.dimension,):
            raise CustodiaEnvironmentError(f"embedder returned shape {vector.shape}")

    return probe


def _probe_chat(config: Config, services: Services | None, assistant: str = "") -> Probe:
    def probe(check: Check) -> None:
        if services is None:
            choice = create_chat_model(config, assistant)
        elif assistant:
            choice = services.chat_choice_for(assistant)
        else:
            choice = services.chat_choice
        check.kind = choice.model.name
        check.details.update(choice.model.describe())
        key = config.model_for(assistant) if assistant else config.chat_model
        retrieval_only = bool(choice.fallback_reason or check.details.get("retrieval_only"))
        check.details["model_key"] = "retrieval-only" if retrieval_only else key
        if choice.fallback_reason:
            check.details["fallback_reason"] = choice.fallback_reason
            # Retrieval-only still answers (DC4): usable, but say why.
            check.reason = _("retrieval-only mode: {reason}").format(reason=choice.fallback_reason)

    return probe


def _layer_text(layer: str, status: str) -> str:
    """``layer (engine): state`` in the user's words: "degraded: why" as the layers say it."""
    prefix = "degraded: "
    if status.startswith(prefix):
        status = _("degraded: {reason}").format(reason=status.removeprefix(prefix))
    return f"{named(layer)}: {_(status)}"


def _probe_health(services: Services, health: HealthCheck) -> Probe:
    """An assistant's own health (MA6 for the multi-agent one: every session/ticket/feed/
    memory layer touched once); degraded layers named."""

    def probe(check: Check) -> None:
        layers: dict[str, str] = assistants.resolve(health.probe)(services)
        check.details["layers"] = layers
        bad = "; ".join(_layer_text(k, v) for k, v in layers.items() if v != "ok")
        if bad:
            raise CustodiaEnvironmentError(_("degraded layers — {layers}").format(layers=bad))

    return probe


def _probe_model_files(config: Config) -> Probe:
    """The GGUF files the models folders hold; an unreadable one is named (never fatal)."""

    def probe(check: Check) -> None:
        found = local.list_models(model_folders(config))
        check.details["files"] = [
            {"key": m.key, "path": str(m.path), **(m.info.describe() if m.info else {})}
            | ({"error": str(m.error)} if m.error else {})
            for m in found
        ]
        bad = [m for m in found if m.info is None]
        check.kind = f"{len(found)} GGUF file(s)"
        if bad:
            check.reason = _("unreadable: {files}").format(
                files="; ".join(str(m.error) for m in bad)
            )

    return probe


def _probe_files(paths: list[Path], assistant: str) -> Probe:
    """Each file that exists opens for reading and writing, as the assistant's turns need
    (an unreadable key or checkpoint file fails every turn; creating one is the data dir's
    check). SQLite's ``-wal``/``-shm`` beside a database count too."""

    def probe(check: Check) -> None:
        for path in paths:
            siblings = ("", "-wal", "-shm") if path.suffix == ".sqlite3" else ("",)
            for candidate in (path.with_name(path.name + end) for end in siblings):
                if not os.path.lexists(candidate):
                    continue
                try:
                    fd = os.open(candidate, os.O_RDWR)
                except OSError as err:
                    reason = err.strerror or type(err).__name__
                    raise CustodiaEnvironmentError(
                        _(
                            "{path}: cannot be opened for reading and writing ({reason}); "
                            "every {assistant} turn needs it"
                        ).format(path=candidate, reason=reason, assistant=_(assistant))
                    ) from None
                os.close(fd)

    return probe


def _file_checks(config: Config, data: Iterable[Datum]) -> list[tuple[Check, Probe]]:
    """A row for each datum whose assistant declared the files its work reads and writes."""
    checks: list[tuple[Check, Probe]] = []
    for datum in data:
        paths = list(datum.files(config))
        if paths:
            where = ", ".join(str(p) for p in paths)
            check = Check(datum.kind, N_("files"), where)
            checks.append((check, _probe_files(paths, datum.assistant)))
    return checks


def _probe_ollama(config: Config) -> Probe:
    return _probe_http(config.ollama_url, "/api/version", min(1.0, config.network_timeout))


def plan(config: Config, services: Services | None = None) -> list[tuple[Check, Probe]]:
    """The checks this configuration needs, in report order."""
    checks: list[tuple[Check, Probe]] = [
        (Check(N_("data dir"), "sqlite", str(config.home)), _probe_data_dir(config)),
    ]
    declarations = assistants.declarations()
    data = {datum.kind: datum for datum in declared_data()}
    for declared in declarations:  # each configured store, asked through the datum it holds
        for row in declared.checks:
            datum = data[row.datum]
            store = stores.describe(datum.role, config, **datum.context(config))
            checks.append(
                (Check(row.label, store.label, store.address), _probe_store(config, datum))
            )
    checks.extend(_file_checks(config, data.values()))
    checks.append(
        (Check(N_("embedder"), config.embedder, LOCAL), _probe_embedder(config, services))
    )
    for declared in declarations:
        if services is not None and declared.health is not None:
            datum = data[declared.health.datum]
            where = stores.describe(datum.role, config, **datum.context(config)).location
            check = Check(declared.health.label, datum.kind, where)
            checks.append((check, _probe_health(services, declared.health)))
    checks.append(
        (Check(N_("chat model"), config.chat_model, LOCAL), _probe_chat(config, services))
    )
    for assistant in assistants.names():  # a row for each assistant that runs a model of its own
        key = config.model_for(assistant)
        if key != config.chat_model:
            check = Check(_CHAT_FOR.format(assistant=assistant), key, LOCAL)
            checks.append((check, _probe_chat(config, services, assistant)))
    folders = ", ".join(str(f) for f in [config.path("models"), *config.model_folders])
    check = Check(MODEL_FILES, "gguf", folders, required=False)
    checks.append((check, _probe_model_files(config)))
    chat_models = [config.chat_model, *config.models.values()]
    ollama_needed = config.embedder.startswith("ollama") or any(
        m.startswith("ollama") for m in chat_models
    )
    checks.append(
        (
            Check("ollama", "ollama", config.ollama_url, required=ollama_needed),
            _probe_ollama(config),
        )
    )
    return checks


def run(config: Config, services: Services | None = None) -> Iterator[Check]:
    """Run every check, yielding each as soon as it is done (for progress).

    With ``services``, the models are the services' own instances (loaded once, reused).
    """
    for check, probe in plan(config, services):
        yield _run(check, probe)


def healthy(checks: list[Check]) -> bool:
    return all(c.ok for c in checks if c.required)


def report_json(config: Config, checks: list[Check]) -> str:
    return json.dumps(
        {
            "ok": healthy(checks),
            "profile": config.profile,
            "config": config.redacted(),
            "checks": [asdict(c) for c in checks],
        },
        indent=2,
    )
