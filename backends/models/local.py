"""GGUF files on disk: what each one is (read from its header, never its weights), whether it
fits in this machine's memory, and adding one to the models folder.

The header is parsed here with the constants of the ``gguf`` package (llama.cpp's own): a
streaming read that skips the tokenizer's arrays, so a 150k-token vocabulary or a truncated
file is read in milliseconds and every failure is named (not a GGUF, truncated, an
architecture llama.cpp does not know). ``gguf.GGUFReader`` memory-maps the whole file and
builds one Python object per vocabulary entry, and says only ``ValueError`` when cut short.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from backends.errors import CancelledError, ModelUnavailableError
from backends.failures import failed, with_details
from backends.i18n import _, ngettext, number
from backends.progress import Progress

#: the models folder inside the data dir; folders the user adds come from ``model_folders``
MODELS_DIR = "models"
GGUF_SUFFIX = ".gguf"
#: how deep a models folder is searched (LM Studio keeps ``publisher/model/file.gguf``)
MAX_DEPTH = 3
#: bytes per step when copying a model file (progress and cancellation between steps)
COPY_BLOCK = 8 << 20
#: fixed overhead of a llama.cpp context beside weights and KV cache (compute buffers)
CONTEXT_OVERHEAD = 96 << 20

_MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?"}
_SCALARS.update({10: "<Q", 11: "<q", 12: "<d"})
_STRING, _ARRAY = 8, 9

# Every count, length and depth a header declares is bounded before it is acted on, so a
# hostile file costs bounded time and memory and fails alone (issue 25, item 8). The bounds
# are far above what llama.cpp's converters write (about 40 keys, short key names, a few
# kilobytes of chat template, a vocabulary of at most a few hundred thousand entries).
#: the longest key name accepted
_MAX_KEY = 4096
#: the longest text value kept (a chat template, a name); longer ones are refused
_MAX_TEXT = 4 << 20
#: the most values an array that is kept may hold (per-layer head counts)
_MAX_KEPT = 1 << 16
#: the most entries one array may declare
_MAX_ITEMS = 1 << 22
#: the most values a whole header may declare (arrays' entries included): bounds the time
_MAX_VALUES = 1 << 23
#: how deep arrays may nest (llama.cpp writes none nested)
_MAX_NESTING = 4
#: the most metadata keys and tensors a header may declare
_MAX_KEYS = 1 << 14
_MAX_TENSORS = 1 << 20
#: a ggml tensor has at most four dimensions (GGML_MAX_DIMS)
_MAX_DIMS = 4
#: the keys whose text is read; every other text value is skipped unread
_TEXT_KEYS = frozenset({"general.name", "general.architecture", "tokenizer.chat_template"})
#: array-valued keys whose values are kept (per-layer head counts); the rest are skipped
_KEEP_ARRAYS = ("attention.head_count", "attention.head_count_kv")


class GGUFError(ModelUnavailableError):
    """A GGUF file that cannot be used; ``kind`` says why for tests and the models list:
    ``not-gguf``, ``truncated``, ``version``, ``architecture``, ``no-template``,
    ``memory``, ``missing``."""

    def __init__(self, path: Path | str, kind: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = Path(path)
        self.kind = kind


@dataclass(frozen=True)
class GGUFInfo:
    """What a GGUF file's header says about the model in it."""

    path: Path
    name: str
    architecture: str
    parameters: int
    quantisation: str
    context_length: int
    file_size: int
    chat_template: str
    layers: int
    embedding: int
    head_count: int
    head_count_kv: int
    key_length: int
    value_length: int
    version: int

    @property
    def has_chat_template(self) -> bool:
        return bool(self.chat_template.strip())

    @property
    def supported(self) -> bool:
        return self.architecture in known_architectures()

    def kv_cache_bytes(self, context: int) -> int:
        """The f16 key/value cache llama.cpp allocates for ``context`` tokens."""
        per_token = self.layers * self.head_count_kv * (self.key_length + self.value_length)
        return int(context) * per_token * 2

    def memory_needed(self, context: int) -> int:
        """Weights (the file, memory-mapped) + KV cache + compute buffers: an estimate."""
        return self.file_size + self.kv_cache_bytes(context) + CONTEXT_OVERHEAD

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "architecture": self.architecture,
            "parameters": self.parameters,
            "quantisation": self.quantisation,
            "context_length": self.context_length,
            "file_size": self.file_size,
            "chat_template": self.has_chat_template,
        }


# -- reading a header ----------------------------------------------------------------------


class _Truncated(Exception):
    pass


class _Header:
    """Reads GGUF values from a buffered file of ``size`` bytes, within the bounds above;
    ``_Truncated`` when the file ends early, ``ValueError`` naming a bound exceeded."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self.fh = fh
        self.size = size
        self.budget = _MAX_VALUES

    def remaining(self) -> int:
        return self.size - self.fh.tell()

    def take(self, size: int) -> bytes:
        if size > self.remaining():
            raise _Truncated  # before asking for the bytes: a declared gigabyte is not read
        data = self.fh.read(size)
        if len(data) != size:
            raise _Truncated
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def count(self, what: str, limit: int, least: int = 1) -> int:
        """A declared count or length: refused above ``limit``, or when the rest of the file
        cannot hold it at ``least`` bytes per item."""
        value = int(self.unpack("<Q"))
        if value > limit:
            raise ValueError(f"it declares {value} {what} (at most {limit} are accepted)")
        if value * least > self.remaining():
            raise _Truncated
        return value

    def spend(self, values: int) -> None:
        self.budget -= values
        if self.budget < 0:
            raise ValueError(f"its header declares more than {_MAX_VALUES} values")

    def string(self, what: str, limit: int) -> str:
        return self.take(self.count(what, limit)).decode("utf-8", errors="replace")

    def skip(self, size: int) -> None:
        if size > self.remaining():
            raise _Truncated
        if size:
            self.fh.seek(size, os.SEEK_CUR)

    def value(self, kind: int, keep: bool, depth: int = 0) -> Any:
        """The value of type ``kind``; unless ``keep``, texts and arrays are skipped (their
        length or count is returned instead)."""
        self.spend(1)
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            if keep:
                return self.string("bytes of text", _MAX_TEXT)
            self.skip(self.count("bytes of text", _MAX_ITEMS * 64))
            return None
        if kind != _ARRAY:
            raise ValueError(f"unknown metadata value type {kind}")
        if depth >= _MAX_NESTING:
            raise ValueError(f"its arrays are nested more than {_MAX_NESTING} deep")
        item = int(self.unpack("<I"))
        if item in _SCALARS:
            width = struct.calcsize(_SCALARS[item])
            count = self.count("array entries", _MAX_KEPT if keep else _MAX_ITEMS, width)
            if not keep:
                self.skip(count * width)
                return count
            self.spend(count)
            return list(struct.unpack(f"<{count}{_SCALARS[item][1]}", self.take(count * width)))
        if item not in (_STRING, _ARRAY):
            raise ValueError(f"unknown metadata value type {item}")
        count = self.count("array entries", _MAX_ITEMS, 8)
        for _entry in range(count):  # arrays of texts or arrays: skipped, never kept
            self.value(item, False, depth + 1)
        return None if keep else count


def read_gguf(path: Path | str) -> GGUFInfo:
    """The model described by ``path``'s header; :class:`GGUFError` naming why not."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as raw:
            return _parse(path, size, _Header(raw, size))
    except _Truncated:
        raise GGUFError(
            path,
            "truncated",
            _("the file is truncated (it ends inside its header); copy it again"),
        ) from None
    except FileNotFoundError:
        raise GGUFError(path, "missing", _("no such model file")) from None
    except IsADirectoryError:
        raise GGUFError(path, "not-gguf", _("is a folder, not a GGUF file")) from None
    except OSError as err:
        raise GGUFError(path, "missing", failed(_("cannot read it"), err)) from None
    except (ValueError, UnicodeDecodeError, struct.error, OverflowError) as err:
        raise GGUFError(
            path, "not-gguf", with_details(_("not a valid GGUF file"), str(err))
        ) from None


def _read_metadata(path: Path, h: _Header) -> tuple[int, int, dict[str, Any]]:
    """The header (magic, version, counts) and the metadata worth keeping: the version, how
    many tensors follow, and the keys."""
    magic = h.fh.read(4)
    if magic != _MAGIC:
        if not magic:
            raise GGUFError(path, "not-gguf", _("not a GGUF model file (the file is empty)"))
        raise GGUFError(
            path,
            "not-gguf",
            _("not a GGUF model file (its first bytes are {bytes}, not 'GGUF')").format(
                bytes=magic.hex()
            ),
        )
    version = int(h.unpack("<I"))
    if version not in (2, 3):
        raise GGUFError(
            path,
            "version",
            _("GGUF version {version} is not supported (2 or 3)").format(version=version),
        )
    tensor_count = h.count("tensors", _MAX_TENSORS, 24)
    kv_count = h.count("metadata keys", _MAX_KEYS, 13)
    meta: dict[str, Any] = {}
    for _key in range(kv_count):
        key = h.string("bytes of key name", _MAX_KEY)
        kind = int(h.unpack("<I"))
        if key == "general.alignment" and kind not in (4, 10):  # llama.cpp: a uint32
            raise ValueError(f"general.alignment is of type {kind}, not a whole number")
        keep = key in _TEXT_KEYS or (kind == _ARRAY and key.endswith(_KEEP_ARRAYS))
        value = h.value(kind, keep=keep or kind not in (_STRING, _ARRAY))
        if keep or kind not in (_STRING, _ARRAY):
            meta[key] = value
    return version, tensor_count, meta


def _read_tensors(h: _Header, tensor_count: int) -> tuple[int, int, dict[int, int]]:
    """The tensors' descriptions: the parameter count, where their data ends, and the
    elements of each quantisation type (of the matrices)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType  # noqa: PLC0415 — lazy: gguf only when a model file is read

    parameters = 0
    data_end = 0
    type_counts: dict[int, int] = {}
    for _tensor in range(tensor_count):
        h.skip(h.count("bytes of tensor name", _MAX_KEY))
        n_dims = int(h.unpack("<I"))
        if n_dims > _MAX_DIMS:
            raise ValueError(f"a tensor of {n_dims} dimensions (ggml has at most {_MAX_DIMS})")
        dims = [int(h.unpack("<Q")) for _ in range(n_dims)]
        ggml_type = int(h.unpack("<I"))
        offset = int(h.unpack("<Q"))
        elements = 1
        for d in dims:
            elements *= d
        parameters += elements
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            raise ValueError(f"unknown tensor type {ggml_type}") from None
        data_end = max(data_end, offset + elements * type_size // block)
        if len(dims) > 1:
            type_counts[ggml_type] = type_counts.get(ggml_type, 0) + elements
    return parameters, data_end, type_counts


def _check_fits(path: Path, size: int, h: _Header, meta: dict[str, Any], data_end: int) -> None:
    """The alignment is a power of two and the file holds every tensor's data."""
    alignment = meta.get("general.alignment", 32)
    if (
        isinstance(alignment, bool)
        or not isinstance(alignment, int)
        or not 0 < alignment <= 1 << 20
        or alignment & (alignment - 1)
    ):
        raise ValueError(f"general.alignment is {alignment!r}, not a power of two")
    start = h.fh.tell()
    start += (-start) % alignment
    if data_end and start + data_end > size:
        missing = start + data_end - size
        need, has = _mb(start + data_end), _mb(size)
        if need == has:  # "needs 8 KB but it holds 8 KB" says nothing: the bytes
            need = _("{count} bytes").format(count=number(start + data_end))
            has = _("{count} bytes").format(count=number(size))
        raise GGUFError(
            path,
            "truncated",
            _(
                "the file is truncated: its tensors need {need} but it holds {has} ({missing} "
                "missing); copy or download it again"
            ).format(need=need, has=has, missing=_mb(missing)),
        )


def _parse(path: Path, size: int, h: _Header) -> GGUFInfo:
    version, tensor_count, meta = _read_metadata(path, h)
    parameters, data_end, type_counts = _read_tensors(h, tensor_count)
    _check_fits(path, size, h, meta, data_end)
    arch = _text(meta.get("general.architecture"))

    def num(key: str, default: int = 0) -> int:
        value = meta.get(f"{arch}.{key}", default)
        if isinstance(value, list):
            value = max((v for v in value if isinstance(v, int | float)), default=default)
        try:
            return max(0, int(value))
        except (TypeError, ValueError, OverflowError):
            return default

    embedding = num("embedding_length")
    heads = num("attention.head_count")
    heads_kv = num("attention.head_count_kv", heads)
    head_dim = embedding // heads if heads else 0
    return GGUFInfo(
        path=path,
        name=_text(meta.get("general.name"))[:200] or path.stem,
        architecture=arch or "unknown",
        parameters=parameters,
        quantisation=_quantisation(meta.get("general.file_type"), type_counts),
        context_length=num("context_length"),
        file_size=size,
        chat_template=_text(meta.get("tokenizer.chat_template")),
        layers=num("block_count"),
        embedding=embedding,
        head_count=heads,
        head_count_kv=heads_kv,
        key_length=num("attention.key_length", head_dim),
        value_length=num("attention.value_length", head_dim),
        version=version,
    )


def _text(value: Any) -> str:
    """A metadata text, or "" when the key holds something else (a number, an array)."""
    return value if isinstance(value, str) else ""


def _quantisation(file_type: Any, type_counts: dict[int, int]) -> str:
    from gguf import GGMLQuantizationType, LlamaFileType  # noqa: PLC0415 — lazy: gguf only when a model file is read

    if isinstance(file_type, int):
        with contextlib.suppress(ValueError):
            name = LlamaFileType(file_type).name
            return name.removeprefix("MOSTLY_").replace("ALL_", "")
    if type_counts:  # no file type recorded: the type most weights have
        commonest = max(type_counts, key=lambda t: type_counts[t])
        with contextlib.suppress(ValueError):
            return GGMLQuantizationType(commonest).name
    return "unknown"


_ARCHITECTURES: frozenset[str] | None = None
_ARCH_LOCK = threading.Lock()


def known_architectures() -> frozenset[str]:
    """Architectures the llama.cpp project's ``gguf`` package names (llama.cpp's list)."""
    global _ARCHITECTURES
    with _ARCH_LOCK:
        if _ARCHITECTURES is None:
            from gguf import MODEL_ARCH_NAMES  # noqa: PLC0415 — lazy: gguf only when a model file is read

            _ARCHITECTURES = frozenset(MODEL_ARCH_NAMES.values())
        return _ARCHITECTURES


def _mb(size: int) -> str:
    if size >= 1 << 30:
        return f"{number(size / (1 << 30), 1)} GB"
    if size >= 1 << 20:
        return f"{number(size / (1 << 20))} MB"
    if size >= 1 << 10:  # a truncated file: "0 MB" would say nothing
        return f"{number(size / (1 << 10))} KB"
    return ngettext("{count} byte", "{count} bytes", size).format(count=number(size))


human_size = _mb


# -- memory --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """This machine's memory, in bytes (``available`` is what a new process may take)."""

    total: int
    available: int


def machine_memory(meminfo: Path = Path("/proc/meminfo")) -> Memory:
    """``MemAvailable``/``MemTotal`` from /proc/meminfo, else ``os.sysconf``."""
    with contextlib.suppress(OSError, ValueError):
        values: dict[str, int] = {}
        for line in meminfo.read_text(encoding="ascii").splitlines():
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts:
                values[key] = int(parts[0]) * 1024
        if "MemTotal" in values:
            return Memory(values["MemTotal"], values.get("MemAvailable", values.get("MemFree", 0)))
    page = os.sysconf("SC_PAGE_SIZE")
    return Memory(os.sysconf("SC_PHYS_PAGES") * page, os.sysconf("SC_AVPHYS_PAGES") * page)


#: where the memory figures come from (tests and ``Services(memory=...)`` inject their own)
MemorySource = Callable[[], Memory]


def check_fits(info: GGUFInfo, context: int, memory: Memory) -> int:
    """The bytes ``info`` needs with ``context`` tokens; :class:`GGUFError` when more than the
    machine has available (the figures are in the message)."""
    needed = info.memory_needed(context)
    if needed > memory.available:
        raise GGUFError(
            info.path,
            "memory",
            _(
                "{name} needs about {needed} of memory (weights {weights}, context of {tokens} "
                "tokens {cache}) but only {available} of {total} is available; not loaded — "
                "close other programs, lower its context size, or pick a smaller or more "
                "quantised model"
            ).format(
                name=info.name,
                needed=_mb(needed),
                weights=_mb(info.file_size),
                tokens=number(context),
                cache=_mb(info.kv_cache_bytes(context)),
                available=_mb(memory.available),
                total=_mb(memory.total),
            ),
        )
    return needed


def check_usable(info: GGUFInfo) -> None:
    """Refuse what llama.cpp cannot chat with, before loading: an unknown architecture, or
    no chat template (a base model: it would continue the text, not answer)."""
    if not info.supported:
        raise GGUFError(
            info.path,
            "architecture",
            _("architecture {name!r} is not supported by this llama.cpp").format(
                name=info.architecture
            ),
        )
    if not info.has_chat_template:
        raise GGUFError(
            info.path,
            "no-template",
            _(
                "{name} has no chat template in its metadata (a base model, not an "
                "instruction-tuned one): it cannot chat; pick an '-Instruct' or '-chat' GGUF"
            ).format(name=info.name),
        )


# -- the folders ----------------------------------------------------------------------------


def model_folders(home: Path, extra: tuple[str, ...] | list[str] = ()) -> list[Path]:
    """The data dir's ``models/`` first, then the user's folders (duplicates dropped)."""
    out: list[Path] = []
    for folder in [home / MODELS_DIR, *(Path(p).expanduser() for p in extra)]:
        if folder not in out:
            out.append(folder)
    return out


def walk(folder: Path, depth: int = MAX_DEPTH) -> Iterator[Path]:
    """The ``.gguf`` files under ``folder``, ``depth`` folders deep (hidden ones skipped)."""
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name.lower())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue  # partial copies (".name.gguf.part") and hidden files
        if entry.is_dir():
            if depth > 1:
                yield from walk(entry, depth - 1)
        elif entry.suffix.lower() == GGUF_SUFFIX and entry.is_file():
            yield entry


@dataclass(frozen=True)
class LocalModel:
    """One ``.gguf`` found in a models folder: its config key, and its header or the error."""

    key: str
    path: Path
    info: GGUFInfo | None
    error: GGUFError | None = None

    @property
    def label(self) -> str:
        if self.info is None:
            return f"{self.path.stem} (unusable)"
        return f"{self.path.stem} (GGUF)"  # the file's name: what the user copied, and the
        # name answers are recorded under (the header's general.name is often a build name)


def key_for(path: Path, folders: list[Path]) -> str:
    """``gguf:<name>`` for a file directly in a models folder, else ``gguf:<absolute path>``."""
    for folder in folders:
        if path.parent == folder:
            return f"gguf:{path.stem}"
    return f"gguf:{path}"


_CACHE: dict[tuple[str, int, int], GGUFInfo | GGUFError] = {}
_CACHE_LOCK = threading.Lock()


def inspect(path: Path) -> GGUFInfo:
    """:func:`read_gguf`, remembered per path, size and modification time."""
    try:
        stat = path.stat()
    except OSError:
        return read_gguf(path)  # says why, uncached
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
    if cached is None:
        try:
            cached = read_gguf(path)
        except GGUFError as err:
            cached = err
        with _CACHE_LOCK:
            _CACHE[key] = cached
    if isinstance(cached, GGUFError):
        raise cached
    return cached


def list_models(folders: list[Path]) -> list[LocalModel]:
    """Every ``.gguf`` in ``folders`` with its header (or why it cannot be read)."""
    out: list[LocalModel] = []
    seen: set[Path] = set()
    for folder in folders:
        for path in walk(folder, MAX_DEPTH):
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            try:
                out.append(LocalModel(key_for(path, folders), path, inspect(path)))
            except GGUFError as err:
                out.append(LocalModel(key_for(path, folders), path, None, err))
    return out


def resolve(arg: str, folders: list[Path]) -> Path:
    """The file a ``gguf:<path or name>`` key means: a path as given, else a file named
    ``<name>`` or ``<name>.gguf`` in a models folder; :class:`GGUFError` when none is."""
    arg = arg.strip()
    if not arg:
        raise GGUFError("gguf:", "missing", _("no file named (write gguf:<path or name>)"))
    given = Path(arg).expanduser()
    if given.is_absolute() or os.sep in arg or "/" in arg:
        if given.exists():
            return given
        raise GGUFError(given, "missing", _("no such model file"))
    names = {arg.lower(), (arg + GGUF_SUFFIX).lower()}
    for folder in folders:
        for path in walk(folder, MAX_DEPTH):
            if path.name.lower() in names:
                return path
    where = ", ".join(str(f) for f in folders)
    raise GGUFError(arg, "missing", _("no model file of that name in {where}").format(where=where))


# -- adding a file ---------------------------------------------------------------------------


def add_model_file(
    source: Path,
    folder: Path,
    progress: Progress | None = None,
    *,
    link: bool = False,
    name: str = "",
) -> Path:
    """Copy (or symlink, with ``link``) a GGUF into ``folder``; return the new path.

    The header is read first, so a file that is not a usable GGUF is refused before anything
    is written. The copy goes to a hidden ``.part`` file renamed when complete: a cancelled
    or failed copy leaves nothing behind, and an existing file of that name is never replaced.
    ``name`` names the new file (an Ollama blob is named by its digest).
    """
    progress = progress or Progress()
    source = Path(source).expanduser()
    info = read_gguf(source)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (name or source.name)
    if target.suffix.lower() != GGUF_SUFFIX:
        target = target.with_name(target.name + GGUF_SUFFIX)
    if target.exists() or target.is_symlink():
        if target.resolve() == source.resolve():
            return target
        raise GGUFError(
            target, "exists", _("a model file of that name is already there; not replaced")
        )
    if link:
        os.symlink(source.resolve(), target)
        return target
    free = shutil.disk_usage(folder).free
    if info.file_size > free:
        raise GGUFError(
            target,
            "disk",
            _("not enough disk space: the file is {size}, {free} is free").format(
                size=_mb(info.file_size), free=_mb(free)
            ),
        )
    part = folder / f".{target.name}.part"
    steps = max(1, -(-info.file_size // COPY_BLOCK))
    progress.start(
        steps, _("copying {name} ({size})").format(name=source.name, size=_mb(info.file_size))
    )
    try:
        with source.open("rb") as src, part.open("wb") as dst:
            for _block in range(steps):
                block = src.read(COPY_BLOCK)
                if not block:
                    break
                dst.write(block)
                progress.advance(1, _("copying {name}").format(name=source.name))
            dst.flush()
            os.fsync(dst.fileno())
        if part.stat().st_size != info.file_size:
            raise GGUFError(source, "truncated", _("the file changed while it was copied"))
        _publish(part, target)
    except CancelledError:
        raise
    except FileExistsError:
        raise GGUFError(target, "exists", _("a model file of that name is already there")) from None
    except OSError as err:
        raise GGUFError(target, "disk", failed(_("cannot copy"), err)) from None
    finally:
        with contextlib.suppress(OSError):
            part.unlink()
    return target


def _publish(part: Path, target: Path) -> None:
    """Give the finished copy its name without ever replacing a file that appeared since."""
    try:
        os.link(part, target)  # atomic, and refuses an existing name
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links (FAT, some network shares)
        if target.exists():
            raise FileExistsError(target) from None
        os.rename(part, target)
