"""What switching stores in the settings does to the data, and writing the switch.

The window's Settings tell the user, before they save, which data a change of engine
rebuilds, which must be migrated (``custodia migrate``) and which stays where it is
(:func:`switch_summary`, pure: no store is touched); ``--switch`` and the storage map's
migration write ``profile = server`` once the copy succeeded (:func:`switch_to_server`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from backends import config as config_module
from backends.config import Config


def switch_to_server(home: Path) -> Path:
    """Write ``profile = server`` to the data dir's custodia.toml (the file's own values —
    never the environment's overrides); return the file. Takes effect at the next start."""
    on_file = config_module.load(environ={}, home=home)
    return config_module.save(replace(on_file, profile="server"))


@dataclass
class SwitchSummary:
    """What changing the configuration from ``old`` to ``new`` does to the data."""

    #: derived indexes rebuilt from their source (automatically, or by the migration)
    rebuilt: list[str] = field(default_factory=list)
    #: data that has to be copied to stay with the user (``custodia migrate``)
    migrated: list[str] = field(default_factory=list)
    #: data that stays where it is whatever the switch
    kept: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.rebuilt or self.migrated)

    def text(self) -> str:
        parts = []
        if self.migrated:
            parts.append(
                "To migrate (Storage map ▸ Migrate to server…, or `custodia migrate "
                "--to server`, before restarting):"
            )
            parts.extend(f"  • {line}" for line in self.migrated)
        if self.rebuilt:
            parts.append("Rebuilt from their source (derived indexes):")
            parts.extend(f"  • {line}" for line in self.rebuilt)
        if self.kept:
            parts.append("Unchanged:")
            parts.extend(f"  • {line}" for line in self.kept)
        return "\n".join(parts)


def switch_summary(old: Config, new: Config) -> SwitchSummary:
    """Say, per store whose engine changes, what is rebuilt and what must be migrated."""
    out = SwitchSummary()
    if old.cache != new.cache:
        if new.cache == "redis":
            out.migrated.append(
                "sessions of the last 24 h → Redis L2 (optional: the durable copy stays in "
                "SQLite, and L2 fills itself as sessions are saved)"
            )
        else:
            out.kept.append("sessions: the durable copy is SQLite; nothing is lost")
        out.kept.append("tickets and the live feed start empty on the new store (hand-offs)")
    if old.audit != new.audit:
        if new.audit == "postgres":
            out.migrated.append(
                "audit log → Postgres, record by record, chain verified on both sides; the "
                "server log must be empty (without the copy it starts a separate chain)"
            )
        else:
            out.migrated.append(
                "audit log: the embedded SQLite log is used again; records written on the "
                "server stay there (never copied back, so the two chains do not merge)"
            )
    if old.graph != new.graph:
        out.rebuilt.append(
            f"graph on {'the Bolt server' if new.graph == 'neo4j' else 'SQLite'}: rebuilt from "
            "the knowledge base at the tutor's next start"
        )
    if old.chroma_url != new.chroma_url:
        where = "the Chroma server" if new.chroma_url else "local Chroma"
        out.rebuilt.append(
            f"conversation vectors and knowledge base vectors in {where}: rebuilt from the "
            "conversation files and the knowledge base at the next start"
        )
    if old.qdrant_url != new.qdrant_url:
        if new.qdrant_url:
            out.migrated.append(
                "semantic memory → the Qdrant server (points copied: the texts live only in them)"
            )
        else:
            out.migrated.append(
                "semantic memory: the local Qdrant folder is used again; points stored on the "
                "server are not copied back"
            )
    if old.embedder != new.embedder:
        out.rebuilt.append(
            "every vector, for the new embedder: conversation and knowledge base vectors "
            "automatically; memories and semantic memory with their Re-embed all buttons"
        )
    if not out.empty:
        out.kept.append(
            "memories, conversations (JSON files), the knowledge base, pseudonym keys and "
            "checkpoints stay in the data dir"
        )
    return out
