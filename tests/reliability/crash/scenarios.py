"""The crash scenarios: what a child writes, and what must hold when the next one starts.

Each scenario opens the stores exactly as the headless CLI does — a
:class:`~backends.services.Services` and ``services.get(name, kind)`` (tests/parts.py) (or the same
constructor with the deterministic models) — then:

1. **checks** the data dir against the :class:`~.ledger.Ledger`: every file loads, every
   acknowledged write is there (or superseded by a write that was in flight), the audit
   chain verifies, the indexes reconcile with their source of truth;
2. says ``ready``;
3. writes in a loop, printing ``intent`` before and ``ack`` after each durable write, until
   the zygote kills it with SIGKILL.

The check of step 1 therefore runs after *every* kill, in a process that starts the way the
app starts after a crash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.models.chat import ChatModel, Prompt, ScriptedChat, ShouldStop
from backends.models.embedders import HashingEmbedder
from backends.services import Services
from tests.reliability.crash.ledger import Ledger, State, Violation, check_key

__all__ = ["SCENARIOS", "Channel", "Violation", "preload"]

DIMENSION = 64
CONVERSATIONS_KEY = base64.urlsafe_b64encode(hashlib.sha256(b"crash-conversations").digest())


def preload() -> None:
    """Import everything a child needs, once, in the zygote (before any fork)."""
    import chromadb  # noqa: F401
    import qdrant_client  # noqa: F401
    import qdrant_edge  # noqa: F401
    from qdrant_client.local import qdrant_local  # noqa: F401

    import backends.audit.service
    import backends.conversations.service
    import backends.memories.service
    import backends.migrate
    import backends.multiagent.service
    import backends.stores.audit_log.sqlite
    import backends.tutor.service  # noqa: F401


class Channel:
    """The child's side of the protocol (one JSON object per line on the zygote's pipe)."""

    def __init__(self, fd: int, ready: Callable[[], None]) -> None:
        self._fd = fd
        self._ready = ready

    def _send(self, obj: object) -> None:
        os.write(self._fd, (json.dumps(obj) + "\n").encode("utf-8"))

    def intent(self, key: str, state: State) -> None:
        self._send({"intent": key, "state": state})

    def ack(self, key: str, state: State) -> None:
        self._send({"ack": key, "state": state})

    def info(self, **values: Any) -> None:
        self._send({"info": values})

    def ready(self) -> None:
        self._ready()


class EchoChat(ChatModel):
    """Answers ``answer to: <message>``, word by word: every stored answer can be checked."""

    name = "echo"

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        for word in f"answer to: {prompt.user}".split(" "):
            if should_stop():
                return
            yield word + " "


WORDS = [
    "apple",
    "river",
    "stone",
    "cloud",
    "amber",
    "violet",
    "north",
    "garden",
    "copper",
    "lantern",
    "meadow",
    "silver",
    "harbour",
    "orchard",
    "thunder",
    "willow",
    "marble",
    "cedar",
    "falcon",
    "ember",
    "glacier",
    "hollow",
    "island",
    "juniper",
]


def words(seed: str, count: int) -> str:
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    return " ".join(WORDS[digest[i % len(digest)] % len(WORDS)] for i in range(count))


def services_for(home: Path, chat: ChatModel | None = None, **config: Any) -> Services:
    cfg = Config(home=home, embedder="hashing", chat_model="scripted", **config).validated()
    return Services(cfg, embedder=HashingEmbedder(DIMENSION), chat=chat or ScriptedChat())


def integrity(path: Path) -> None:
    """``PRAGMA integrity_check`` on a second, read-only connection."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        result = conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()
    if result != "ok":
        raise Violation(f"{path.name}: integrity_check says {result!r}")


class Scenario:
    name = ""
    #: seconds after ``ready`` the kill lands (uniform in this range)
    kill_window = (0.02, 0.2)
    #: kills of the slow (CI) loop: 200, fewer for a scenario whose every run moves a store
    slow_kills = 200

    def prepare(self, home: Path, **extra: Any) -> None:
        """Parent side, once, before the first child (seed data)."""

    def child(self, command: dict[str, Any], channel: Channel) -> None:
        home = Path(command["home"])
        ledger = Ledger.load(Path(command["ledger"]))
        rng = random.Random(int(command["seed"]))
        counter = iter(range(int(command["base"]) + 1, 10**15))
        self.command = command
        self.run(home, ledger, rng, counter, channel)

    def run(
        self,
        home: Path,
        ledger: Ledger,
        rng: random.Random,
        counter: Iterator[int],
        channel: Channel,
    ) -> None:
        raise NotImplementedError


# -- memories (PA1-PA4) -----------------------------------------------------------------------


class MemoriesScenario(Scenario):
    """Remember, edit and forget facts; the vectores table, its metadata and the matrix agree."""

    name = "memories"
    keys = 40

    @staticmethod
    def text(key: int, v: int) -> str:
        return f"Fact {key} version {v} about {words(f'{key}:{v}', 6)}"

    @staticmethod
    def parse(text: str) -> tuple[str, int] | None:
        parts = text.split(" ")
        if len(parts) < 4 or parts[0] != "Fact" or parts[2] != "version":
            return None
        return f"m{parts[1]}", int(parts[3])

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        from backends.memories.service import STORE_FILE
        from tests.parts import memories_service as get_service

        services = services_for(home)
        assistant = get_service(services)
        current = self.check(assistant, ledger, home / STORE_FILE)
        channel.ready()
        while True:
            key = rng.randrange(self.keys)
            v = next(counter)
            name = f"m{key}"
            text = self.text(key, v)
            if name not in current:
                channel.intent(name, {"v": v})
                outcome = assistant.remember(text, source="cli", force=True)
                assert outcome.status == "created", outcome
                current[name] = text
                channel.ack(name, {"v": v})
            elif rng.random() < 0.75:
                channel.intent(name, {"v": v})
                assistant.update(current[name], text)
                current[name] = text
                channel.ack(name, {"v": v})
            else:
                channel.intent(name, {"v": v, "present": False})
                assistant.delete(current.pop(name))
                channel.ack(name, {"v": v, "present": False})

    def check(self, assistant: Any, ledger: Ledger, path: Path) -> dict[str, str]:
        store = assistant.store
        store.load()
        integrity(path)
        memories = store.list()
        stats = store.stats()
        if stats.unreadable or stats.total != len(memories) or stats.searchable != len(memories):
            raise Violation(f"memories: stats disagree with the rows: {stats}")
        meta = store.conn.execute("SELECT count(*) FROM memory_meta").fetchone()[0]
        if meta != len(memories):
            raise Violation(f"memories: {meta} metadata rows for {len(memories)} memories")
        if store.loaded_rows != len(memories):
            raise Violation(f"memories: matrix has {store.loaded_rows} rows, table {len(memories)}")
        current: dict[str, str] = {}
        for memory in memories:
            parsed = self.parse(memory.text)
            if parsed is None or memory.text != self.text(int(parsed[0][1:]), parsed[1]):
                raise Violation(f"memories: a stored text is damaged: {memory.text!r}")
            if parsed[0] in current:
                raise Violation(f"memories: two versions of {parsed[0]} are stored")
            current[parsed[0]] = memory.text
            hits = assistant.search(memory.text, k=1)
            if not hits or hits[0].text != memory.text or hits[0].similarity < 0.999:
                raise Violation(f"memories: the matrix does not find {memory.text!r}: {hits}")
        for key in ledger.keys() | set(current):
            text = current.get(key)
            observed = None if text is None else {"v": self.parse(text)[1]}  # type: ignore[index]
            check_key(ledger, key, observed)
        return current


# -- multi-agent sessions (MA1-MA7, MA10) ------------------------------------------------------


class SessionsScenario(Scenario):
    """Sessions saved through the three layers, and whole coordinator runs (Qdrant memory)."""

    name = "sessions"
    keys = 25
    tasks = 8

    @staticmethod
    def payload(key: str, v: int) -> str:
        return words(f"{key}:{v}", 20)

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        from backends.stores.sessions import PHASES, Session
        from tests.parts import multiagent_service as get_service

        services = services_for(home)
        service = get_service(services)
        known = self.check(service, ledger, home)
        channel.ready()
        while True:
            v = next(counter)
            if rng.random() < 0.15:
                key = f"task {rng.randrange(self.tasks)}"
                session = known.get(key)
                if session is not None and session.phase == "done":
                    continue
                channel.intent(key, {"v": v, "phase": "any"})
                if session is None:
                    final = service.ask(f"crash {key}: parse a file")
                else:
                    final = service.run(session.session_id)
                known[key] = final
                if final.phase == "done" and service.sessions.pending_sqlite == 0:
                    channel.ack(key, {"v": v, "phase": "done"})
                continue
            key = f"session {rng.randrange(self.keys)}"
            session = known.get(key)
            if session is None:
                session = Session.new(f"crash {key}", model="scripted")
            session.phase = rng.choice(PHASES)
            session.data["v"] = v
            session.data["payload"] = self.payload(key, v)
            channel.intent(key, {"v": v})
            known[key] = service.sessions.save(session)
            if service.sessions.pending_sqlite == 0:  # in SQLite: durable
                channel.ack(key, {"v": v})

    def check(self, service: Any, ledger: Ledger, home: Path) -> dict[str, Any]:
        from backends.multiagent.service import SESSIONS_FILE

        health = service.health()
        if health["sessions SQLite"] != "ok":
            raise Violation(f"sessions: SQLite layer degraded after a restart: {health}")
        integrity(home / SESSIONS_FILE)
        known: dict[str, Any] = {}
        observed: dict[str, State] = {}
        for session in service.list_sessions():
            key = session.task.split(":")[0].removeprefix("crash ")
            if key in known:
                raise Violation(f"sessions: two sessions for {key}")
            known[key] = session
            if key.startswith("session "):
                v = int(session.data.get("v", -1))
                if session.data.get("payload") != self.payload(key, v):
                    raise Violation(f"sessions: {key} holds a damaged payload: {session.data}")
                observed[key] = {"v": v}
            else:
                observed[key] = {"phase": session.phase}
        memory = service.memory()  # Qdrant local must open after any kill
        memory.check()
        for key in ledger.keys() | set(observed):
            if key.startswith("task "):
                acked = ledger.acked.get(key)
                if acked is not None:
                    if observed.get(key, {}).get("phase") != "done":
                        raise Violation(f"sessions: {key} was acknowledged done: {observed}")
                    sid = known[key].session_id
                    hits = memory.search("session_memory", known[key].task, session=sid)
                    if not hits:
                        raise Violation(f"sessions: the outcome of {key} is not in memory")
                elif key in observed and not ledger.pending.get(key):
                    raise Violation(f"sessions: {key} was never started")
                continue
            check_key(ledger, key, observed.get(key))
        return known


# -- conversations (CA1-CA6) -------------------------------------------------------------------


class ConversationsScenario(Scenario):
    """Encrypted conversations: new ones, chat turns; files, SQLite index and Chroma agree."""

    name = "conversations"
    keys = 12

    @staticmethod
    def user_text(name: str, index: int) -> str:
        return f"{name} message {index}: {words(f'{name}:{index}', 12)}"

    def agent(self, home: Path) -> Any:
        from backends.conversations.service import ConversationAgent

        services = services_for(
            home, chat=EchoChat(), conversations_key=CONVERSATIONS_KEY.decode("ascii")
        )
        return services.service(
            "conversations",
            lambda: ConversationAgent(
                services.config,
                embedder=lambda: services.embedder,
                chat=lambda: services.chat_choice,
                use_keyring=False,
            ),
            ConversationAgent.close,
        )

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        agent = self.agent(home)
        known = self.check(agent, ledger)
        channel.ready()
        while True:
            key = f"crash-{rng.randrange(self.keys)}"
            v = next(counter)
            if key not in known:
                channel.intent(key, {"v": v, "n": 0})
                known[key] = (agent.create(name=key).id, 0)
                channel.ack(key, {"v": v, "n": 0})
                continue
            cid, n = known[key]
            channel.intent(key, {"v": v, "n": n + 1})
            channel.intent(key, {"v": v, "n": n + 2})
            result = agent.ask(self.user_text(key, n), conversation_id=cid)
            assert result.answer_index == n + 1, (result, n)
            known[key] = (cid, n + 2)
            channel.ack(key, {"v": v, "n": n + 2})

    def check(self, agent: Any, ledger: Ledger) -> dict[str, tuple[str, int]]:
        report = agent.start()
        if report.unreadable:
            raise Violation(f"conversations: {report.unreadable} unreadable after a restart")
        integrity(agent.config.path("conversations.sqlite3"))
        files = agent.files.scan()
        rows = {r.file: r for r in agent.conversations()}
        if set(rows) != set(files):
            raise Violation(f"conversations: index {sorted(rows)} != files {sorted(files)}")
        known: dict[str, tuple[str, int]] = {}
        expected_ids: set[str] = set()
        for file, stamp in files.items():
            conversation, _ = agent.files.read(file)  # every file loads (and decrypts)
            row = rows[file]
            if row.messages != len(conversation.history) or row.stamp != stamp:
                raise Violation(f"conversations: index row of {file} is stale: {row}")
            if not conversation.encrypted:
                raise Violation(f"conversations: {file} is stored in clear")
            name = conversation.name
            for i, message in enumerate(conversation.history):
                want = (
                    self.user_text(name, i)
                    if message.role == "user"
                    else "answer to: " + conversation.history[i - 1].content
                )
                if message.content.strip() != want.strip():
                    raise Violation(f"conversations: {name} message {i} is damaged")
                expected_ids.add(f"{file}:{i}")
            if name in known:
                raise Violation(f"conversations: two conversations named {name}")
            known[name] = (conversation.id, len(conversation.history))
        agent.sync_vectors()  # the derived index: Chroma must open after any kill
        present = agent.vectors().ids()
        if present != expected_ids:
            raise Violation(
                f"conversations: Chroma holds {len(present)} ids, the files {len(expected_ids)}"
                f" (missing {sorted(expected_ids - present)[:3]}, extra "
                f"{sorted(present - expected_ids)[:3]})"
            )
        for key in ledger.keys() | set(known):
            entry = known.get(key)
            observed = None if entry is None else {"n": entry[1]}
            check_key(ledger, key, observed, same=lambda o, e: o["n"] == e["n"])
        return known


# -- key rotation (CA2) ------------------------------------------------------------------------


def rotation_key(generation: int) -> str:
    digest = hashlib.sha256(f"crash-rotation-{generation}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")


class RotationScenario(Scenario):
    """Key rotations killed at random and resumed with the same new key; nothing unreadable."""

    name = "rotation"
    files = 30
    kill_window = (0.02, 0.25)

    @staticmethod
    def message(conversation: int, index: int) -> str:
        return f"rotation {conversation} message {index}: {words(f'r{conversation}:{index}', 15)}"

    def agent(self, home: Path, key: str) -> Any:
        from backends.conversations.service import ConversationAgent

        services = services_for(home, conversations_key=key)
        return ConversationAgent(
            services.config,
            embedder=lambda: services.embedder,
            chat=lambda: services.chat_choice,
            use_keyring=False,
        )

    def prepare(self, home: Path, **extra: Any) -> None:
        from backends.conversations.files import Conversation, StoredMessage

        agent = self.agent(home, rotation_key(0))
        try:
            for c in range(self.files):
                history = [
                    StoredMessage("user" if i % 2 == 0 else "assistant", self.message(c, i))
                    for i in range(6)
                ]
                conversation = Conversation(
                    id=f"rot{c:03d}",
                    name=f"rotation {c}",
                    date="2025-01-01T00:00:00+00:00",
                    provider="scripted",
                    model="scripted",
                    history=history,
                )
                agent.add(conversation)
        finally:
            agent.close()

    def generations(self, home: Path) -> tuple[int | None, dict[str, int]]:
        """(generation of an unfinished rotation or None, {file: generation of its key})."""
        from backends.conversations.files import pending_rotation
        from backends.conversations.keys import key_id

        folder = home / "conversations"
        ids = {key_id(rotation_key(g)): g for g in range(2000)}
        pending = pending_rotation(folder)
        target = ids[pending] if pending else None
        found: dict[str, int] = {}
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_bytes())
            if not data.get("encrypted") or data.get("key_id") not in ids:
                raise Violation(f"rotation: {path.name} is under no known key: {data}")
            found[path.name] = ids[data["key_id"]]
        return target, found

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        target, found = self.generations(home)
        gens = set(found.values())
        if len(found) != self.files:
            raise Violation(f"rotation: {len(found)} files, expected {self.files}")
        if target is not None:
            if not gens <= {target - 1, target}:
                raise Violation(f"rotation: rotating to {target}, files under {sorted(gens)}")
            old = target - 1
        else:
            if len(gens) != 1:
                raise Violation(f"rotation: no rotation underway, files under {sorted(gens)}")
            old = gens.pop()
            target = old + 1
        acked = ledger.acked.get("generation")
        if acked is not None and min(found.values()) < acked["v"]:
            raise Violation(f"rotation: rotation {acked['v']} was acknowledged, files {found}")
        from backends.conversations.files import ConversationFiles

        agent = self.agent(home, rotation_key(old))
        agent.start()  # the restart: the old key, as before the crash
        files = agent.files.scan()
        rows = {r.file: r for r in agent.conversations()}
        if set(rows) != set(files):
            raise Violation(f"rotation: index {sorted(rows)} != files {sorted(files)}")
        for file, row in rows.items():
            if row.readable != (found[file] == old) or row.stamp != files[file]:
                raise Violation(f"rotation: index row of {file} is wrong: {row}")
        both = ConversationFiles(agent.folder, replace_cipher(old, target))
        for c in range(self.files):
            conversation, _ = both.read(
                f"rot{c:03d}.json"
            )  # every file loads, one key or the other
            texts = [m.content for m in conversation.history]
            if texts != [self.message(c, i) for i in range(6)]:
                raise Violation(f"rotation: rot{c:03d} does not hold its messages")
        agent.close()
        channel.ready()
        while True:
            agent = self.agent(home, rotation_key(old))
            channel.intent("generation", {"v": target})
            agent.rotate_key(rotation_key(target))
            channel.ack("generation", {"v": target})
            agent.close()
            old, target = target, target + 1


class GeneratedRotationScenario(RotationScenario):
    """``rotate-key --generate`` killed at random: the key is shown (acknowledged) and saved
    before a file is under it, so every conversation opens with a key the user has, and the
    next rotation finishes the unfinished one with the saved key."""

    name = "rotation-generate"

    def user_keys(self, ledger: Ledger) -> list[str]:
        """The first key and every key shown to the user (acknowledged: printed by the CLI
        before any file was under it); a key only in flight was never shown."""
        shown = [state["key"] for name, state in ledger.acked.items() if name.startswith("key ")]
        return [rotation_key(0), *shown]

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        from backends.conversations.files import ConversationFiles, pending_rotation
        from backends.conversations.keys import HistoryCipher, generate_key, key_id

        folder = home / "conversations"
        keys = self.user_keys(ledger)
        by_id = {key_id(k): k for k in keys}
        files = ConversationFiles(folder, HistoryCipher(keys))
        kids: set[str] = set()
        for c in range(self.files):
            conversation, _ = files.read(f"rot{c:03d}.json")  # opens with a key the user has
            if [m.content for m in conversation.history] != [self.message(c, i) for i in range(6)]:
                raise Violation(f"rotation-generate: rot{c:03d} does not hold its messages")
            kids.add(conversation.key_id)
        pending = pending_rotation(folder)
        if pending:  # unfinished: the app, started with the old key, finds the saved one
            old = [by_id[k] for k in kids if k != pending]
            current = old[0] if old else by_id[pending]
        elif len(kids) != 1:
            raise Violation(f"rotation-generate: no rotation underway, files under {kids}")
        else:  # finished: the user sets CONVERSATIONS_KEY to the key that was printed
            current = by_id[kids.pop()]
        agent = self.agent(home, current)
        agent.start()
        unreadable = [r.file for r in agent.conversations() if not r.readable]
        if unreadable:
            raise Violation(f"rotation-generate: the app cannot read {unreadable}")
        resume, _ = agent.saved_pending_key()
        if pending and not resume:
            raise Violation("rotation-generate: an unfinished rotation without its saved key")
        agent.close()
        channel.info(unfinished=bool(pending))  # the kill landed inside a rotation
        channel.ready()
        while True:
            agent = self.agent(home, current)
            resume, _ = agent.saved_pending_key()
            new = resume or generate_key()
            v = next(counter)

            def shown(where: str, new: str = new, v: int = v) -> None:
                channel.ack(f"key {key_id(new)}", {"v": v, "key": new})  # printed: the user has it

            channel.intent(f"key {key_id(new)}", {"v": v, "key": new})
            agent.rotate_key(new, generated=not resume, on_key_saved=shown)
            agent.close()
            current = new


def replace_cipher(old: int, new: int) -> Any:
    from backends.conversations.keys import HistoryCipher

    return HistoryCipher([rotation_key(new), rotation_key(old)])


# -- audit appends (CT2-CT4) --------------------------------------------------------------------


class AuditScenario(Scenario):
    """Appends (some with sealed personal fields), erasures and automatic checkpoints."""

    name = "audit"

    def service(self, home: Path) -> Any:
        from backends.audit.service import AuditService

        services = services_for(home)
        return services.service(
            "audit",
            lambda: AuditService.open(services.config, checkpoint_every=10),
            AuditService.close,
        )

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        service = self.service(home)
        self.check(service, ledger)
        channel.ready()
        base = next(counter)
        people = [f"person {base}-{i}" for i in range(3)]
        while True:
            v = next(counter)
            if rng.random() < 0.07 and people:
                person = people.pop(rng.randrange(len(people)))
                channel.intent(f"forget {person}", {"v": v})
                pseudonym = service.forget(person)
                if pseudonym is not None:
                    channel.ack(f"forget {person}", {"v": v, "pseudonym": pseudonym})
                continue
            person = rng.choice([*people, None]) if people else None
            personal = {"note": f"private note {v}"} if person else None
            channel.intent(f"n{v}", {"v": v})
            entry = service.append("crash.write", person, personal=personal, n=v)
            channel.ack(f"n{v}", {"v": v, "seq": entry.seq, "hash": entry.hash})

    def check(self, service: Any, ledger: Ledger) -> None:
        integrity(Path(service.log.location))
        integrity(service.keys.path)
        result = service.verify()
        if not result.ok:
            raise Violation(f"audit: the chain does not verify after a restart: {result.line()}")
        incremental = service.verify(from_checkpoint=True)
        if not incremental.ok:
            raise Violation(f"audit: incremental verification fails: {incremental.line()}")
        trusted = service.trust.all(service.log.log_id)
        if trusted and trusted[-1].seq > result.head.seq:
            raise Violation("audit: a trusted checkpoint is ahead of the log")
        by_n: dict[str, Any] = {}
        erased: set[str] = set()
        sealed: dict[str, Any] = {}
        for entry in service.entries():
            if entry.event_type == "person.erased":
                erased.add(entry.pseudonym)
                continue
            key = f"n{entry.data['n']}"
            if key in by_n:
                raise Violation(f"audit: {key} was appended twice")
            by_n[key] = entry
            if entry.pseudonym and entry.sealed:
                sealed.setdefault(entry.pseudonym, entry)
        for key, state in ledger.acked.items():
            if key.startswith("forget "):
                pseudonym = state["pseudonym"]
                if pseudonym not in erased:
                    raise Violation(f"audit: acknowledged erasure of {pseudonym} not recorded")
                entry = sealed.get(pseudonym)
                if entry is not None and service.reveal(entry).status != "erased":
                    raise Violation(f"audit: {pseudonym}'s key came back after a crash")
                continue
            entry = by_n.get(key)
            if entry is None or entry.seq != state["seq"] or entry.hash != state["hash"]:
                raise Violation(f"audit: acknowledged {key} {state} is stored as {entry}")
        for key in by_n:
            if key not in ledger.acked and key not in ledger.pending:
                raise Violation(f"audit: {key} was never appended")


# -- first start: every store created (schema migrations) and killed ----------------------------


class FirstStartScenario(Scenario):
    """A fresh data dir per run, killed while every store is created and migrated."""

    name = "first-start"
    kill_window = (0.0, 0.35)

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        dirs = sorted(home.glob("d*"))
        if dirs:
            self.check(dirs[-1], ledger)
        channel.ready()
        fresh = home / f"d{len(dirs):04d}"
        v = next(counter)
        self.journey(fresh, channel, v)
        channel.info(completed=True)
        while True:  # nothing more to write: wait for the kill
            time.sleep(1)

    def journey(self, home: Path, channel: Channel, v: int) -> None:
        from tests.parts import memories_service as memories

        tag = home.name
        scenario = ConversationsScenario()
        memories(services_for(home)).remember(f"First start fact {tag}", force=True)
        channel.ack(f"{tag} memory", {"v": v})
        agent = scenario.agent(home)
        agent.start()
        cid = agent.create(name=f"crash-{tag}").id
        agent.ask(scenario.user_text(f"crash-{tag}", 0), conversation_id=cid)
        channel.ack(f"{tag} conversation", {"v": v, "id": cid})
        from backends.stores.sessions import Session
        from tests.parts import multiagent_service as multiagent

        service = multiagent(services_for(home))
        service.memory()
        service.sessions.save(Session.new(f"first start {tag}"))
        channel.ack(f"{tag} session", {"v": v})
        audit = AuditScenario().service(home)
        audit.append("crash.write", "someone", personal={"note": "x"}, n=v)
        channel.ack(f"{tag} audit", {"v": v})

    def check(self, home: Path, ledger: Ledger) -> None:
        from tests.parts import memories_service as memories
        from tests.parts import multiagent_service as multiagent

        tag = home.name
        try:
            assistant = memories(services_for(home))
            assistant.open()
            texts = {m.text for m in assistant.recent()}
            agent = ConversationsScenario().agent(home)
            agent.start()
            agent.sync_vectors()
            names = {r.name for r in agent.conversations() if r.readable}
            service = multiagent(services_for(home))
            health = service.probe()
            tasks = {s.task for s in service.list_sessions()}
            audit = AuditScenario().service(home)
            verified = audit.verify()
        except CustodiaEnvironmentError as err:
            raise Violation(
                f"first start: {tag} cannot be opened after a kill during its creation: "
                f"{type(err).__name__}: {err}"
            ) from err
        bad = {k: v for k, v in health.items() if v not in ("ok", "not opened yet")}
        if bad:
            raise Violation(f"first start: {tag} layers degraded after the kill: {bad}")
        if not verified.ok:
            raise Violation(f"first start: {tag} audit chain: {verified.line()}")
        expected = {
            "memory": f"First start fact {tag}" in texts,
            "conversation": f"crash-{tag}" in names,
            "session": f"first start {tag}" in tasks,
            "audit": verified.head.seq >= 1,
        }
        for what, present in expected.items():
            if f"{tag} {what}" in ledger.acked and not present:
                raise Violation(f"first start: acknowledged {what} of {tag} is missing")


# -- clinical tutor (CT5-CT7 with CT1-CT4) -----------------------------------------------------


class TutorScenario(Scenario):
    """Audited tutor turns and imports of a user's notes (knowledge base, Chroma, graph)."""

    name = "tutor"
    questions = (
        "What does an INR measure for a patient on warfarin?",
        "How is anaphylaxis treated with adrenaline?",
        "Why is metformin stopped before contrast?",
        "What triggers an asthma attack?",
    )

    def prepare(self, home: Path, **extra: Any) -> None:
        from tests.backends.tutor.conftest import make_small_kb

        make_small_kb(home.parent)

    @staticmethod
    def note(n: int) -> str:
        return f"# Note {n}\n\nMy note number {n}: warfarin and INR, {words(f'n{n}', 30)}.\n"

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        from backends.audit.service import AuditService
        from backends.tutor.service import TutorService

        services = services_for(home)
        audit = AuditService.open(services.config, checkpoint_every=10)
        tutor = TutorService(
            services.config,
            embedder=services.embedder,
            chat=ScriptedChat(),
            audit=audit,
            kb_dir=home.parent / "kb",
        )
        notes = home.parent / "notes"
        notes.mkdir(exist_ok=True)
        self.check(tutor, audit, ledger, notes)
        channel.ready()
        while True:
            v = next(counter)
            if rng.random() < 0.2:
                name = f"note-{v}"
                (notes / f"{name}.md").write_text(self.note(v))  # the user's file, then import
                channel.intent(name, {"v": v})
                tutor.import_path(notes, "ana")
                channel.ack(name, {"v": v})
                continue
            channel.intent(f"turn {v}", {"v": v})
            turn = tutor.ask(rng.choice(self.questions), rng.choice(["ana", "bob"]))
            entry = audit.log.get(turn.audit_seq)
            assert entry is not None
            channel.ack(f"turn {v}", {"v": v, "seq": turn.audit_seq, "hash": entry.hash})

    def check(self, tutor: Any, audit: Any, ledger: Ledger, notes: Path) -> None:
        status = tutor.prepare()  # what the tab does at start: repairs the derived stores
        if not status.graph_ok or status.vectors != status.chunks:
            raise Violation(f"tutor: derived stores not repaired after a kill: {status}")
        integrity(tutor.config.path("tutor.sqlite3"))
        result = audit.verify()
        if not result.ok:
            raise Violation(f"tutor: the audit chain does not verify: {result.line()}")
        for key, state in ledger.acked.items():
            if key.startswith("turn "):
                entry = audit.log.get(state["seq"])
                if entry is None or entry.hash != state["hash"]:
                    raise Violation(f"tutor: acknowledged {key} is not in the audit log")
            elif key.startswith("note-"):
                path = tutor.config.path("tutor.sqlite3")
                conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
                try:
                    found = conn.execute(
                        "SELECT count(*) FROM chunks WHERE scope = 'user:ana' AND text LIKE ?",
                        (f"%note number {state['v']}:%",),
                    ).fetchone()[0]
                finally:
                    conn.close()
                if not found:  # the source of truth; the vectors were counted above
                    raise Violation(f"tutor: the imported {key} is not in the knowledge base")


# -- custodia migrate --to server (issue 8) ----------------------------------------------------


class MigrationScenario(Scenario):
    """``migrate --to server`` killed at random and run again until it finishes, over and over.

    Needs a Postgres database (superuser DSN) and a Redis URL in the command (``extra``).
    At every start: the journal loads, the embedded audit log is untouched, the server log is
    a clean prefix of it (never half a batch, never a different record); a finished copy is
    equal to it and the recent sessions are in Redis. Then a finished migration is undone (the
    journal removed, then the server schema dropped) and the next one starts.
    """

    name = "migration"
    records = 2_000
    kill_window = (0.02, 0.3)
    # Not timing-bound (issue 14 #10): a child says ``ready`` — which starts the kill's
    # clock — only once its run has made durable progress (a journalled step or batch, or a
    # whole migration), however slow the box. Each run reports ``info`` with its progress at
    # start, after undoing a finished copy, and at ready; the test asserts every run made
    # some and that it survived the kill into the next run.

    def prepare(self, home: Path, **extra: Any) -> None:
        from backends.audit.service import AuditService
        from backends.stores.audit_log.record import Draft
        from backends.stores.sessions import Session
        from backends.stores.sessions.sqlite import SqliteSessionMirror

        services = services_for(home)
        audit = AuditService.open(services.config, checkpoint_every=0)
        try:
            for start in range(0, self.records, 500):
                audit.log.append_many(
                    [Draft("bulk.record", None, {"i": i}) for i in range(start, start + 500)]
                )
        finally:
            audit.close()
        mirror = SqliteSessionMirror(home / "multiagent.sqlite3")
        for i in range(20):
            mirror.save(Session.new(f"migrated session {i}"))
        mirror.close()

    def _embedded(self, home: Path) -> list[tuple[int, str, str]]:
        conn = sqlite3.connect(f"{(home / 'audit.sqlite3').as_uri()}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq")
            return [(int(a), str(b), str(c)) for a, b, c in rows]
        finally:
            conn.close()

    def _server(self, dsn: str, schema: str) -> list[tuple[int, str, str]] | None:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=5, autocommit=True) as conn:
            found = conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
                "AND table_name = 'audit_log'",
                (schema,),
            ).fetchone()
            if not found:
                return None
            rows = conn.execute(f'SELECT seq, record, hash FROM "{schema}".audit_log ORDER BY seq')
            return [(int(a), str(b), str(c)) for a, b, c in rows]

    def _drop(self, dsn: str, schema: str) -> None:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=5, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    @staticmethod
    def progress(home: Path) -> list[int]:
        """[finished migrations undone, journalled work of the current one]: only grows
        (lexicographically) while work survives. The audit step is re-entered on resume (so
        its state is not counted), but its ``copied_seq`` only grows."""
        from backends.migrate import JOURNAL_FILE, Journal

        journal = Journal.load(home / JOURNAL_FILE)
        steps = journal.data.get("steps") or {}
        done = sum(
            1 for name, st in steps.items() if name != "audit log" and st.get("state") == "done"
        )
        copied = int((steps.get("audit log") or {}).get("copied_seq") or 0)
        finished = 1 if journal.data.get("finished") else 0
        undone = home / "migrations-undone"
        count = int(undone.read_text()) if undone.exists() else 0
        return [count, done + copied + finished]

    @staticmethod
    def count_undone(home: Path) -> None:
        """Before a finished journal is removed (so the count never lags the journal)."""
        undone = home / "migrations-undone"
        count = int(undone.read_text()) if undone.exists() else 0
        tmp = undone.with_name(undone.name + ".tmp")
        tmp.write_text(str(count + 1))
        os.replace(tmp, undone)

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        import redis

        from backends.migrate import JOURNAL_FILE, Journal, MigrateOptions, migrate
        from backends.progress import Progress
        from backends.stores.audit_log.postgres import Roles

        dsn, url = self.command["admin_dsn"], self.command["redis_url"]
        options = MigrateOptions(roles=Roles.with_prefix(self.command["roles"]), audit_batch=100)
        schema = options.schema
        journal_path = home / JOURNAL_FILE
        embedded = self._embedded(home)
        if len(embedded) != self.records:
            raise Violation(f"migration: the embedded log changed: {len(embedded)} records")
        channel.info(at_start=self.progress(home))
        while True:
            journal = Journal.load(journal_path)  # a torn journal would raise here
            copied = self._server(dsn, schema)
            if copied is not None and copied != embedded[: len(copied)]:
                raise Violation(f"migration: the server log is not a prefix ({len(copied)} rows)")
            if journal.data.get("finished") and copied != embedded:
                raise Violation("migration: finished, but the server log differs")
            if journal.data.get("finished") or (not journal.data and copied is not None):
                client = redis.Redis.from_url(url, socket_timeout=5)
                try:
                    keys = list(client.scan_iter("custodia:session:*"))
                    if journal.data.get("finished") and len(keys) != 20:
                        raise Violation(f"migration: {len(keys)} sessions in Redis, not 20")
                    if journal.data.get("finished"):
                        self.count_undone(home)
                    journal_path.unlink(missing_ok=True)  # undo it: the journal first,
                    self._drop(dsn, schema)  # then the copy (killed between: no journal, a copy)
                    client.flushdb()
                finally:
                    client.close()
                continue
            break
        before = self.progress(home)
        channel.info(before=before)
        ready = False

        def progressed(*_: object) -> None:
            nonlocal ready
            if ready:
                return
            now = self.progress(home)
            if now > before:  # durable: the journal on disk says so
                ready = True
                channel.info(after=now)
                channel.ready()

        while True:
            v = next(counter)
            channel.intent("migration", {"v": v})
            cfg = replace(services_for(home).config, redis_url=url, postgres_dsn=dsn).validated()
            services = Services(cfg, embedder=HashingEmbedder(DIMENSION), chat=ScriptedChat())
            try:
                migrate(services, options, Progress(callback=progressed))
            finally:
                services.close()
            progressed()  # a last step with no progress call after it (then: finished)
            if self._server(dsn, schema) != embedded:
                raise Violation("migration: finished, but the server log differs")
            channel.ack("migration", {"v": v})
            client = redis.Redis.from_url(url, socket_timeout=5)
            try:
                if len(list(client.scan_iter("custodia:session:*"))) != 20:
                    raise Violation("migration: finished, but the sessions are not in Redis")
                self.count_undone(home)
                journal_path.unlink()
                self._drop(dsn, schema)
                client.flushdb()
            finally:
                client.close()


class LoadedMigrationScenario(MigrationScenario):
    """The migration on a box so loaded that one step takes far longer than the kill window
    (issue 14 #10: 0 of 200 migrations finished): each kill lands within 2 ms of ready."""

    name = "migration-loaded"
    kill_window = (0.0, 0.002)


class QdrantEdgeMoveScenario(Scenario):
    """A data dir of today's main with a qdrant-client local-mode folder, opened by this
    version (issue 19): its points move to qdrant-edge while the process is killed at random
    (copying, creating shards, verifying, removing the old folder, writing new points). At the
    next start every old point is in qdrant-edge with its payload and vector, the old folder is
    gone, and every acknowledged new point is there."""

    name = "qdrant-edge-move"
    kill_window = (0.0, 2.5)
    #: each run copies and verifies a whole local-mode folder (~2.7 s): 100 kills, ~5 min
    slow_kills = 100
    items = 60

    def prepare(self, home: Path, **extra: Any) -> None:
        from backends.stores.vectors import MemoryItem
        from backends.stores.vectors.qdrant import QdrantSemanticMemory

        old = QdrantSemanticMemory(HashingEmbedder(DIMENSION), path=home / "template")
        try:
            for name in ("agent_results", "code_patterns", "session_memory"):
                old.add_many(
                    name,
                    [
                        MemoryItem(words(f"{name} {i}", 8), f"s{i % 5}", "coder", f"t{i}")
                        for i in range(self.items)
                    ],
                )
            expected = {
                name: {pid: payload for pid, _, payload in old.points(name)}
                for name in old.collections
            }
        finally:
            old.close()
        (home / "template.json").write_text(json.dumps(expected), encoding="utf-8")

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        import shutil

        from backends.stores.vectors import MemoryItem
        from tests.parts import multiagent_service as get_service

        dirs = sorted(home.glob("d*"))
        if dirs:
            self.check(dirs[-1], home, ledger)
        channel.ready()
        fresh = home / f"d{len(dirs):04d}"
        tag = fresh.name
        fresh.mkdir(mode=0o700)
        shutil.copytree(home / "template", fresh / "qdrant.tmp")
        os.replace(fresh / "qdrant.tmp", fresh / "qdrant")  # today's data dir, whole or absent
        memory = get_service(services_for(fresh)).memory()  # moves the points over
        channel.ack(f"{tag} moved", {"v": next(counter)})
        for k in range(10**6):
            v = next(counter)
            key = f"{tag} item {k}"
            channel.intent(key, {"v": v})
            memory.add("agent_results", MemoryItem(f"{tag} new item {k}", "new", "coder"))
            channel.ack(key, {"v": v})

    def check(self, data: Path, home: Path, ledger: Ledger) -> None:
        from tests.parts import multiagent_service as get_service

        tag = data.name
        if not (data / "qdrant").exists() and not (data / "qdrant-edge").exists():
            return  # killed before the old folder was in place: nothing to move
        expected = json.loads((home / "template.json").read_text(encoding="utf-8"))
        try:
            memory = get_service(services_for(data)).memory()
            memory.check()
            found = {name: {pid: p for pid, _, p in memory.points(name)} for name in expected}
        except CustodiaEnvironmentError as err:
            raise Violation(f"qdrant-edge move: {tag} cannot be opened: {err}") from err
        for name, points in expected.items():
            missing = [pid for pid, payload in points.items() if found[name].get(pid) != payload]
            if missing:
                raise Violation(f"qdrant-edge move: {tag} {name} lost {len(missing)} point(s)")
        if (data / "qdrant").exists():
            raise Violation(f"qdrant-edge move: {tag} kept the old folder after moving it")
        texts = {p.get("text") for p in found["agent_results"].values()}
        for key in ledger.acked:
            if key.startswith(f"{tag} item "):
                k = key.rsplit(" ", 1)[1]
                if f"{tag} new item {k}" not in texts:
                    raise Violation(f"qdrant-edge move: acknowledged {key} is missing")
        hits = memory.search("agent_results", words("agent_results 7", 8), limit=1)
        if not hits or hits[0].ticket != "t7":
            raise Violation(f"qdrant-edge move: {tag} does not find a moved point: {hits}")


class LyingScenario(MemoriesScenario):
    """A broken writer for the harness's own test: it acknowledges a memory it never wrote."""

    name = "lying"

    def run(self, home, ledger, rng, counter, channel) -> None:  # type: ignore[no-untyped-def]
        channel.ack("m999", {"v": next(counter)})
        super().run(home, ledger, rng, counter, channel)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        MemoriesScenario(),
        SessionsScenario(),
        ConversationsScenario(),
        RotationScenario(),
        GeneratedRotationScenario(),
        AuditScenario(),
        FirstStartScenario(),
        TutorScenario(),
        QdrantEdgeMoveScenario(),
    )
}
#: scenarios that must fail (the harness's self-test), not part of the crash suite
BROKEN: dict[str, Scenario] = {LyingScenario.name: LyingScenario()}
#: scenarios that need servers (their URLs come in ``extra``)
SERVER_SCENARIOS: dict[str, Scenario] = {
    s.name: s for s in (MigrationScenario(), LoadedMigrationScenario())
}
