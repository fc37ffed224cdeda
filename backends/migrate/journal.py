"""``migration-journal.json``: what lets an interrupted or cancelled migration finish the job.

The data dir's journal records each finished step and the audit copy's position (and, kept
across migrations, which embedded log was copied into which server log). Its format is the
first release's: a journal written by any earlier version resumes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from backends.failures import failed
from backends.i18n import _
from backends.migrate_steps import JSONDict, MigrationError

JOURNAL_FILE = "migration-journal.json"
JOURNAL_VERSION = 1


class Journal:
    """``migration-journal.json`` in the data dir: finished steps and the audit position.

    Written atomically (temporary file, fsync, rename), 0600. A journal of another version
    (or not a JSON object) is not resumed: the migration starts over, which every step
    allows (each copy resumes from what its target holds).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: JSONDict = {}

    @classmethod
    def load(cls, path: Path) -> Journal:
        journal = cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return journal
        except (OSError, ValueError) as err:
            raise MigrationError(
                failed(_("{path}: unreadable migration journal").format(path=path), err)
            ) from err
        if isinstance(data, dict) and data.get("version") == JOURNAL_VERSION:
            journal.data = data
        return journal

    @property
    def unfinished(self) -> bool:
        return bool(self.data) and not self.data.get("finished")

    def _object(self, key: str) -> JSONDict:
        found = self.data.get(key)
        if not isinstance(found, dict):
            found = {}
            self.data[key] = found
        return found

    def target(self) -> dict[str, str]:
        found = self.data.get("target")
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def step(self, name: str) -> JSONDict:
        steps = self._object("steps")
        found = steps.get(name)
        if not isinstance(found, dict):
            found = {}
            steps[name] = found
        return found

    @property
    def audit_link(self) -> JSONDict:
        """Which embedded log was copied into which server log (kept across migrations)."""
        return self._object("audit_link")

    def begin(self, target: dict[str, str], resume: bool) -> None:
        if not resume:
            link = self.data.get("audit_link") or {}
            self.data = {"version": JOURNAL_VERSION, "started": time.time(), "steps": {}}
            self.data["audit_link"] = link
        self.data["target"] = target
        self.data["finished"] = None
        self.save()

    def finish(self) -> None:
        self.data["finished"] = time.time()
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.data, fh, indent=2, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as err:
            raise MigrationError(
                failed(_("{path}: cannot write the migration journal").format(path=self.path), err)
            ) from err
