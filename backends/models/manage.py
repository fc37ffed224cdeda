"""Managing the models a user has: list, add, remove, choose — one set of checks and messages
for the models dialog and ``custodia models``.

A model is named to the user by a friendly name (the file's name without ``.gguf``, "SmolLM2 …
(bundled)"), never by its config key (``gguf:…``). Removing takes a file out of the data dir's
models folder: a link is unlinked, a copy is moved aside (hidden, so it is no longer listed)
until :func:`purge` deletes it or :func:`restore` puts it back — the dialog's undo.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from backends import assistants
from backends import config as config_module
from backends.config import Config
from backends.errors import ModelUnavailableError
from backends.i18n import _, number
from backends.models import local
from backends.models.files import SMOLLM2_GGUF
from backends.models.settings import RUNTIME_DEFAULTS
from backends.progress import Progress

BUNDLED_KEY = "smollm2"
BUNDLED_NAME = "SmolLM2-135M-Instruct"
#: what the bundled file's header says it was trained on (the file is pinned by its sha256)
BUNDLED_CONTEXT_LENGTH = 8192
#: where a removed copy waits until the dialog closes (hidden: never listed)
REMOVED_PREFIX = ".removed-"


def friendly_name(key: str) -> str:
    """What the user calls the model ``key`` names (never ``gguf:…``)."""
    kind, _sep, arg = key.partition(":")
    if kind == BUNDLED_KEY:
        return _("{name} (bundled)").format(name=BUNDLED_NAME)
    if kind == "gguf":
        name = Path(arg).name
        return name[: -len(local.GGUF_SUFFIX)] if name.lower().endswith(".gguf") else name
    if kind == "retrieval-only":
        return _("Retrieval-only (no generation)")
    if kind == "ollama":
        return _("{name} (Ollama)").format(name=arg)
    if kind == "openai":
        return _("{name} (server)").format(name=arg)
    if kind == "scripted":
        return _("Scripted (for tests)")
    return key


def context_bound(info: local.GGUFInfo, asked: int | None, memory: local.Memory) -> tuple[int, str]:
    """The context size ``info`` is loaded with when ``asked`` for, and why it is smaller
    ("" when it is not): never more than the file was trained on, nor than memory holds."""
    context = asked or RUNTIME_DEFAULTS.context_size or 2048
    reason = ""
    if info.context_length and context > info.context_length:
        context = info.context_length
        reason = _("{name} was trained on {count} tokens").format(
            name=info.name, count=number(info.context_length)
        )
    per_token = info.kv_cache_bytes(1)
    spare = memory.available - info.file_size - local.CONTEXT_OVERHEAD
    if per_token and spare > 0 and context * per_token > spare:
        most = max(256, spare // per_token // 256 * 256)
        if most < context:
            context = most
            reason = _("this machine's free memory holds about {count} tokens").format(
                count=number(most)
            )
    return context, reason


@dataclass(frozen=True)
class Entry:
    """One model the user has, as the dialog's table and ``custodia models list`` show it."""

    key: str
    name: str
    path: Path | None
    info: local.GGUFInfo | None
    #: "ready", or a short reason it cannot chat
    status: str
    #: the whole reason it cannot chat ("" when it can)
    reason: str
    context: int = 0
    needed: int = 0
    bundled: bool = False
    #: a link in the models folder to a file kept elsewhere
    linked: bool = False
    #: in the data dir's models folder (what Remove may take away)
    removable: bool = False
    #: the assistants that answer with it
    used_by: tuple[str, ...] = ()
    #: why ``context`` is smaller than the settings ask ("" when it is not)
    context_note: str = ""

    @property
    def ready(self) -> bool:
        return not self.reason

    def to_json(self) -> dict[str, object]:
        info = self.info.describe() if self.info else {}
        return {
            "key": self.key,
            "name": self.name,
            "path": str(self.path) if self.path else None,
            "status": self.status,
            "reason": self.reason,
            "context": self.context,
            "memory_needed": self.needed,
            "bundled": self.bundled,
            "linked": self.linked,
            "removable": self.removable,
            "used_by": list(self.used_by),
            "context_note": self.context_note,
            **({"file": info} if info else {}),
        }


def short_status(err: local.GGUFError | None, needed: int, memory: local.Memory) -> str:
    """A status that fits a table column (the whole reason goes beside it)."""
    kind = err.kind if err is not None else ""
    return {
        "not-gguf": _("not a GGUF file"),
        "truncated": _("truncated: copy it again"),
        "version": _("GGUF version not supported"),
        "no-template": _("no chat template: cannot chat"),
        "architecture": _("architecture not supported"),
        "memory": _("too large: needs {needed}, {available} available").format(
            needed=local.human_size(needed), available=local.human_size(memory.available)
        ),
        "missing": _("missing"),
        "": _("ready"),
    }.get(kind, str(err))


def _reason(err: local.GGUFError) -> str:
    return str(err).removeprefix(f"{err.path}: ")


def used_by(config: Config, key: str) -> tuple[str, ...]:
    return tuple(a for a in assistants.names() if config.model_for(a) == key)


def entry_for(
    config: Config,
    key: str,
    path: Path | None,
    info: local.GGUFInfo | None,
    error: local.GGUFError | None,
    memory: local.Memory,
    *,
    bundled: bool = False,
) -> Entry:
    """The checks the dialog and the command share: readable, usable, fits at the context
    the settings ask for (bounded by what the file was trained on)."""
    models = config.path(local.MODELS_DIR)
    in_folder = path is not None and path.parent == models
    linked = in_folder and path is not None and path.is_symlink()
    name = friendly_name(key) if bundled or path is None else friendly_name(f"gguf:{path.name}")

    def made(status: str, reason: str, context: int = 0, needed: int = 0, note: str = "") -> Entry:
        return Entry(
            key,
            name,
            path,
            info,
            status,
            reason,
            context,
            needed,
            bundled=bundled,
            linked=linked,
            removable=in_folder and not bundled,
            used_by=used_by(config, key),
            context_note=note,
        )

    if info is None:
        err = error or local.GGUFError(path or key, "missing", _("no such model file"))
        return made(short_status(err, 0, memory), _reason(err))
    asked = config.generation_for("", key).context_size
    context, note = context_bound(info, asked, memory)
    needed = info.memory_needed(context)
    problem: local.GGUFError | None = None
    try:
        local.check_usable(info)
        local.check_fits(info, context, memory)
    except local.GGUFError as err:
        problem = err
    return made(
        short_status(problem, needed, memory),
        _reason(problem) if problem else "",
        context,
        needed,
        note,
    )


def bundled_entry(config: Config, memory: local.Memory) -> Entry:
    try:
        path: Path | None = SMOLLM2_GGUF.locate()
    except ModelUnavailableError as err:
        missing = local.GGUFError(SMOLLM2_GGUF.relpath, "missing", str(err))
        return entry_for(config, BUNDLED_KEY, None, None, missing, memory, bundled=True)
    assert path is not None
    try:
        info = local.inspect(path)
    except local.GGUFError as err:
        return entry_for(config, BUNDLED_KEY, path, None, err, memory, bundled=True)
    return entry_for(
        config, BUNDLED_KEY, path, replace(info, name=BUNDLED_NAME), None, memory, bundled=True
    )


def entries(config: Config, memory: local.Memory) -> list[Entry]:
    """The bundled model, then every GGUF file in the models folders (reads their headers:
    call it off the GUI thread)."""
    folders = local.model_folders(config.home, config.model_folders)
    out = [bundled_entry(config, memory)]
    for found in local.list_models(folders):
        out.append(entry_for(config, found.key, found.path, found.info, found.error, memory))
    return out


def find_entry(config: Config, name: str, memory: local.Memory) -> Entry:
    """The entry ``name`` means: its key, its friendly name, its file's name or path."""
    wanted = name.strip()
    listed = entries(config, memory)
    lowered = wanted.lower().removesuffix(local.GGUF_SUFFIX)
    for entry in listed:
        names = {entry.key.lower(), entry.name.lower()}
        if entry.path is not None:
            names |= {entry.path.stem.lower(), str(entry.path).lower()}
        if entry.bundled:
            names |= {BUNDLED_NAME.lower(), "bundled"}
        if lowered in names or wanted.lower() in names:
            return entry
    shown = ", ".join(e.name for e in listed)
    raise local.GGUFError(
        wanted, "missing", _("no model of that name; the models are: {names}").format(names=shown)
    )


# -- changing what is there ----------------------------------------------------------------


def add(config: Config, source: Path, *, link: bool, progress: Progress | None = None) -> Path:
    """Copy or link ``source`` into the data dir's models folder (checked first)."""
    return local.add_model_file(source, config.path(local.MODELS_DIR), progress, link=link)


@dataclass(frozen=True)
class Removed:
    """What :func:`remove` did, enough to undo it while the dialog is open."""

    name: str
    path: Path
    #: where a copy waits (None: it was a link, unlinked; its target is ``link_target``)
    aside: Path | None
    link_target: str
    #: the configuration before (an assistant that used it was moved to the bundled model)
    before: Config
    moved: tuple[str, ...]

    def message(self) -> str:
        what = (
            _("Removed the link to {name} (the file itself is where it was).")
            if self.aside is None
            else _("Removed {name} from the models folder.")
        ).format(name=self.name)
        if self.moved:
            what += " " + _("{assistants} now answer with the bundled model.").format(
                assistants=", ".join(a.capitalize() for a in self.moved)
            )
        return what


def remove(config: Config, entry: Entry) -> Removed:
    """Take ``entry`` out of the models folder: unlink a link, move a copy aside (see
    :func:`purge`); the assistants that used it go back to the bundled model."""
    if entry.bundled:
        raise local.GGUFError(
            entry.name, "bundled", _("the bundled model cannot be removed (it ships with Custodia)")
        )
    if not entry.removable or entry.path is None:
        raise local.GGUFError(
            entry.path or entry.name,
            "elsewhere",
            _(
                "it is in a folder you added, not in Custodia's models folder: not deleted "
                "(remove the folder from the list, or the file yourself)"
            ),
        )
    path = entry.path
    before = config
    target = ""
    aside: Path | None = None
    if path.is_symlink():
        target = os.readlink(path)
        path.unlink()
    else:
        aside = path.with_name(f"{REMOVED_PREFIX}{path.name}")
        os.replace(path, aside)
    moved = tuple(entry.used_by)
    if moved:
        _point_away(config, entry.key)
    return Removed(entry.name, path, aside, target, before, moved)


def _point_away(config: Config, key: str) -> None:
    def change(saved: Config) -> Config:
        models = {a: m for a, m in saved.models.items() if m != key}
        chat = BUNDLED_KEY if saved.chat_model == key else saved.chat_model
        return replace(saved, models=models, chat_model=chat)

    config_module.update_file(config.home, change)


def restore(removed: Removed) -> None:
    """Undo :func:`remove` (the file, and the assistants that used it)."""
    if removed.aside is None:
        os.symlink(removed.link_target, removed.path)
    else:
        if removed.path.exists():
            raise local.GGUFError(removed.path, "exists", _("a file of that name is there now"))
        os.replace(removed.aside, removed.path)
    if removed.moved:
        before = removed.before

        def change(saved: Config) -> Config:
            return replace(saved, models=dict(before.models), chat_model=before.chat_model)

        config_module.update_file(before.home, change)


def purge(removed: Removed) -> None:
    """Delete a removed copy for good (nothing to do for a link)."""
    if removed.aside is not None:
        with contextlib.suppress(FileNotFoundError):
            removed.aside.unlink()


def purge_leftovers(config: Config) -> None:
    """Delete copies a closed dialog left aside (a crash between remove and purge)."""
    folder = config.path(local.MODELS_DIR)
    with contextlib.suppress(OSError):
        for leftover in folder.glob(f"{REMOVED_PREFIX}*"):
            with contextlib.suppress(OSError):
                leftover.unlink()


def use(
    config: Config, entry: Entry, assistant: str = "", memory: local.Memory | None = None
) -> Config:
    """Answer with ``entry`` (one assistant, or every one) from the next answer: refused, with
    the dialog's reason, when it cannot chat or does not fit. Saved in custodia.toml."""
    if not entry.ready:
        raise local.GGUFError(entry.path or entry.name, "unusable", entry.reason)
    if assistant and assistant not in assistants.names():
        raise ValueError(f"unknown assistant {assistant!r}")
    key = entry.key

    def change(saved: Config) -> Config:
        if assistant:
            return replace(saved, models={**saved.models, assistant: key})
        return replace(saved, chat_model=key, models={})

    return config_module.update_file(config.home, change)
