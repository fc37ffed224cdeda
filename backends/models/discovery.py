"""Models the user already has: GGUF files in the folders of LM Studio, Jan, GPT4All, llama.cpp
and Ollama, offered where Custodia can use them. Nothing is downloaded and nothing is copied:
a file is linked into the models folder where it is.

Ollama keeps its models as blobs named by digest (``blobs/sha256-<hex>``, GGUF files); its
manifests (``manifests/<registry>/<namespace>/<name>/<tag>``, JSON) name them: the layer whose
``mediaType`` is ``application/vnd.ollama.image.model`` is the model.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from backends import assistants
from backends.config import Config
from backends.errors import ModelUnavailableError
from backends.i18n import _
from backends.models import local, manage
from backends.models.files import SMOLLM2_GGUF

OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
#: the largest manifest read (they are a few hundred bytes)
MAX_MANIFEST = 1 << 20
#: how many files a search looks at in one app's folder (a home folder is not walked)
MAX_FILES = 2000
#: how deep an app's folder is searched (Jan: data/models/<engine>/<model>/model.gguf)
DEPTH = 5
#: the share of the available memory a model offered as the best fit may take
HEADROOM = 0.6


def app_folders(
    home: Path | None = None, environ: Mapping[str, str] | None = None
) -> list[tuple[str, Path]]:
    """(app, folder) for every place the apps keep GGUF files, existing or not."""
    home = home or Path.home()
    env = os.environ if environ is None else environ
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    cache = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    mac = home / "Library" / "Application Support"
    folders = [
        ("LM Studio", home / ".lmstudio" / "models"),
        ("LM Studio", cache / "lm-studio" / "models"),
        ("Jan", home / "jan" / "models"),
        ("Jan", data / "Jan" / "data" / "models"),
        ("Jan", data / "Jan" / "data" / "llamacpp" / "models"),
        ("Jan", home / ".config" / "Jan" / "data" / "models"),
        ("Jan", mac / "Jan" / "data" / "models"),
        ("GPT4All", data / "nomic.ai" / "GPT4All"),
        ("GPT4All", mac / "nomic.ai" / "GPT4All"),
        ("llama.cpp", Path(env["LLAMA_CACHE"]) if env.get("LLAMA_CACHE") else cache / "llama.cpp"),
        (
            "Ollama",
            Path(env["OLLAMA_MODELS"]) if env.get("OLLAMA_MODELS") else home / ".ollama" / "models",
        ),
    ]
    out: list[tuple[str, Path]] = []
    for app, folder in folders:
        if (app, folder) not in out:
            out.append((app, folder))
    return out


@dataclass(frozen=True)
class Found:
    """One GGUF file another app keeps, and whether Custodia can chat with it here."""

    app: str
    path: Path
    #: what the user calls it (the file's name; ``name:tag`` for Ollama)
    name: str
    #: the name its link gets in the models folder
    link_name: str
    info: local.GGUFInfo | None
    status: str
    reason: str
    context: int = 0
    needed: int = 0

    @property
    def ready(self) -> bool:
        return not self.reason

    def to_json(self) -> dict[str, object]:
        return {
            "app": self.app,
            "name": self.name,
            "path": str(self.path),
            "link_name": self.link_name,
            "status": self.status,
            "reason": self.reason,
            "context": self.context,
            "memory_needed": self.needed,
            **({"file": self.info.describe()} if self.info else {}),
        }


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


def ollama_models(root: Path) -> Iterator[tuple[str, Path]]:
    """(``name:tag``, blob) for each model Ollama's manifests under ``root`` name."""
    manifests = root / "manifests"
    count = 0
    for dirpath, dirnames, filenames in os.walk(manifests):
        dirnames.sort()
        depth = len(Path(dirpath).relative_to(manifests).parts)
        if depth >= 4:
            dirnames.clear()
        for filename in sorted(filenames):
            count += 1
            if count > MAX_FILES:
                return
            manifest = Path(dirpath) / filename
            parts = manifest.relative_to(manifests).parts  # registry, namespace, name, tag
            if len(parts) != 4:
                continue
            digest = _model_digest(manifest)
            if not digest:
                continue
            blob = root / "blobs" / digest.replace(":", "-", 1)
            _registry, namespace, model, tag = parts
            name = f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
            yield name, blob


def _model_digest(manifest: Path) -> str:
    try:
        if manifest.stat().st_size > MAX_MANIFEST:
            return ""
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    layers = data.get("layers") if isinstance(data, dict) else None
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            digest = layer.get("digest")
            if isinstance(digest, str) and re.fullmatch(r"sha256[:-][0-9a-f]{64}", digest):
                return digest
    return ""


def _candidates(
    home: Path | None, environ: Mapping[str, str] | None
) -> Iterator[tuple[str, str, Path, str]]:
    """(app, name, path, link name) of every GGUF in the apps' folders."""
    for app, folder in app_folders(home, environ):
        if not folder.is_dir():
            continue
        if app == "Ollama":
            for name, blob in ollama_models(folder):
                yield app, name, blob, f"ollama-{_safe(name.replace(':', '-'))}.gguf"
            continue
        for count, path in enumerate(local.walk(folder, DEPTH)):
            if count >= MAX_FILES:
                break
            if path.name.lower().startswith("mmproj"):
                continue  # a vision projector beside its model, not a model to chat with
            stem = path.name[: -len(local.GGUF_SUFFIX)]
            if path.name == "model.gguf":  # Jan: <model id>/model.gguf
                stem = path.parent.name
            yield app, stem, path, f"{_safe(stem)}.gguf"


def find(
    *,
    memory: local.Memory,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    context: int | None = None,
) -> list[Found]:
    """Every GGUF file the apps keep, with its header read (never its weights) and whether
    it can chat on this machine (a file two apps share is listed once)."""
    out: list[Found] = []
    seen: set[Path] = set()
    for app, name, path, link_name in _candidates(home, environ):
        try:
            real = path.resolve()
        except OSError:
            continue
        if real in seen:
            continue
        seen.add(real)
        try:
            info = local.inspect(path)
        except local.GGUFError as err:
            out.append(
                Found(
                    app,
                    path,
                    name,
                    link_name,
                    None,
                    manage.short_status(err, 0, memory),
                    str(err).removeprefix(f"{err.path}: "),
                )
            )
            continue
        out.append(_judged(app, path, name, link_name, info, memory, context))
    return out


def _judged(
    app: str,
    path: Path,
    name: str,
    link_name: str,
    info: local.GGUFInfo,
    memory: local.Memory,
    asked: int | None,
) -> Found:
    size, _why = manage.context_bound(info, asked, memory)
    needed = info.memory_needed(size)
    problem: local.GGUFError | None = None
    try:
        local.check_usable(info)
        local.check_fits(info, size, memory)
    except local.GGUFError as err:
        problem = err
    reason = str(problem).removeprefix(f"{problem.path}: ") if problem else ""
    return Found(
        app,
        path,
        name,
        link_name,
        info,
        manage.short_status(problem, needed, memory),
        reason,
        size,
        needed,
    )


def best_fits(
    found: list[Found], memory: local.Memory, config: Config | None = None
) -> dict[str, Found]:
    """For each assistant, the largest model that can chat and leaves memory to spare at the
    context that assistant asks for (none when nothing fits)."""
    out: dict[str, Found] = {}
    budget = memory.available * HEADROOM
    for assistant in assistants.names():
        best: tuple[int, int, Found] | None = None
        for item in found:
            if not item.ready or item.info is None:
                continue
            asked = (
                config.generation_for(assistant, f"gguf:{item.link_name}").context_size
                if config
                else None
            )
            size, _why = manage.context_bound(item.info, asked, memory)
            needed = item.info.memory_needed(size)
            if needed > budget:
                continue
            rank = (item.info.parameters, -needed)
            if best is None or rank > best[:2]:
                best = (*rank, item)
        if best is not None:
            out[assistant] = best[2]
    return out


def not_the_bundled_model(found: list[Found]) -> list[Found]:
    """``found`` less the copies of the bundled model another app keeps (the same file size
    and parameter count): offering one as "a better model" is offering the same model."""
    try:
        bundled = SMOLLM2_GGUF.locate()
        size, parameters = bundled.stat().st_size, local.inspect(bundled).parameters
    except (ModelUnavailableError, local.GGUFError, OSError):
        return found
    out = []
    for item in found:
        try:
            same = item.path.stat().st_size == size and (
                item.info is not None and item.info.parameters == parameters
            )
        except OSError:
            same = False
        if not same:
            out.append(item)
    return out


def pick(found: list[Found], name: str) -> Found:
    """The found file ``name`` means (its name, link name or path)."""
    wanted = name.strip().lower()
    for item in found:
        names = {item.name.lower(), item.link_name.lower(), str(item.path).lower()}
        names.add(item.link_name.lower().removesuffix(local.GGUF_SUFFIX))
        if wanted in names:
            return item
    shown = ", ".join(i.name for i in found) or _("none found")
    raise local.GGUFError(
        name, "missing", _("no such model found; found: {names}").format(names=shown)
    )


def link(config: Config, item: Found) -> Path:
    """Link ``item`` into the data dir's models folder (an existing link to it is reused)."""
    folder = config.path(local.MODELS_DIR)
    with contextlib.suppress(OSError):
        for existing in folder.iterdir():
            if existing.is_symlink() and existing.resolve() == item.path.resolve():
                return existing
    return local.add_model_file(item.path, folder, link=True, name=item.link_name)


def adopt(config: Config, item: Found, memory: local.Memory, assistant: str = "") -> Config:
    """Link ``item`` and answer with it (every assistant, or one) from the next answer."""
    path = link(config, item)
    entry = manage.find_entry(config, str(path), memory)
    return manage.use(config, entry, assistant)
