"""Generation settings: how a model samples, how large a context it loads, and who decides.

Layers, lowest first: the runtime's defaults (:data:`RUNTIME_DEFAULTS`), the assistant's
defaults (:data:`ASSISTANT_DEFAULTS`: the tutor samples cold), ``[generation."<model>"]`` and
``[generation.<assistant>]`` in ``custodia.toml``; then a value the assistant put in its
:class:`~backends.models.chat.Prompt` (temperature, stop sequences) is respected as asked.
``max_tokens`` from the file is a ceiling on what an assistant asks for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from backends.i18n import _

#: the longest extra system prompt accepted, in characters
MAX_SYSTEM_PROMPT = 8000


@dataclass(frozen=True)
class GenerationSettings:
    """Each field ``None`` = not set at this layer (a lower layer decides)."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    context_size: int | None = None
    threads: int | None = None  # 0 = as many as llama.cpp chooses
    repeat_penalty: float | None = None
    system_prompt: str | None = None

    def over(self, lower: GenerationSettings) -> GenerationSettings:
        """These settings, with ``lower``'s where these leave one unset."""
        values = {
            f.name: getattr(self, f.name)
            if getattr(self, f.name) is not None
            else getattr(lower, f.name)
            for f in fields(self)
        }
        return GenerationSettings(**values)

    def to_toml(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


#: what llama.cpp is given when nothing else says (the values Custodia always used)
RUNTIME_DEFAULTS = GenerationSettings(
    temperature=0.2,
    top_p=0.95,
    context_size=2048,
    threads=0,
    repeat_penalty=1.15,  # small models loop on one sentence without it
    system_prompt="",
)

#: per-assistant defaults: the tutor states facts from its sources, so it samples cold
ASSISTANT_DEFAULTS: dict[str, GenerationSettings] = {
    "tutor": GenerationSettings(temperature=0.1),
    "memories": GenerationSettings(temperature=0.2),
    "conversations": GenerationSettings(temperature=0.7),
    "multiagent": GenerationSettings(temperature=0.3),
}

#: (type, low, high) of each field: numbers outside are refused with the range
LIMITS: dict[str, tuple[type, float, float]] = {
    "temperature": (float, 0.0, 2.0),
    "top_p": (float, 0.01, 1.0),
    "max_tokens": (int, 1, 32768),
    "context_size": (int, 256, 262144),
    "threads": (int, 0, 256),
    "repeat_penalty": (float, 1.0, 2.0),
}


class SettingError(ValueError):
    """One bad generation setting; ``name`` is the field (the config names the table)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


def parse(values: Any) -> GenerationSettings:
    """A ``[generation.*]`` table as settings; :class:`SettingError` for the first bad field."""
    if not isinstance(values, dict):
        raise SettingError("", _("{value!r} must be a table of settings").format(value=values))
    known = {f.name for f in fields(GenerationSettings)}
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name not in known:
            raise SettingError(
                name, _("unknown setting; known: {names}").format(names=", ".join(sorted(known)))
            )
        if name == "system_prompt":
            if not isinstance(value, str):
                raise SettingError(name, _("{value!r} must be text").format(value=value))
            if len(value) > MAX_SYSTEM_PROMPT:
                raise SettingError(
                    name, _("longer than {most} characters").format(most=MAX_SYSTEM_PROMPT)
                )
            out[name] = value
            continue
        kind, low, high = LIMITS[name]
        out[name] = _number(name, value, kind, low, high)
    return GenerationSettings(**out)


def _number(name: str, value: Any, kind: type, low: float, high: float) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise SettingError(name, _("{value!r} is not a number").format(value=value))
    try:
        number = float(value)
    except ValueError:
        raise SettingError(name, _("{value!r} is not a number").format(value=value)) from None
    if kind is int and (not math.isfinite(number) or number != int(number)):
        raise SettingError(name, _("{value!r} must be a whole number").format(value=value))
    if not low <= number <= high:  # NaN fails too
        raise SettingError(
            name,
            _("{value!r} must be between {low} and {high}").format(
                value=value, low=_shown(low), high=_shown(high)
            ),
        )
    return int(number) if kind is int else number


def _shown(number: float) -> str:
    return str(int(number)) if number == int(number) else str(number)


def resolve(
    assistant: str, model_key: str, tables: dict[str, dict[str, Any]]
) -> GenerationSettings:
    """The settings ``assistant`` runs ``model_key`` with (every field but ``max_tokens`` set:
    that one is set only when the file sets it, as a ceiling)."""
    settings = RUNTIME_DEFAULTS
    settings = ASSISTANT_DEFAULTS.get(assistant, GenerationSettings()).over(settings)
    for key in (model_key, assistant):
        if key in tables:
            settings = parse(tables[key]).over(settings)
    return settings
