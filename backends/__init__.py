"""Custodia's core: configuration, models, stores and the four assistants' services.

Nothing in this package imports Qt or ``desktop`` (checked by import-linter in `make test`).
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("custodia")
except _metadata.PackageNotFoundError:  # running from a bare checkout or a frozen bundle
    __version__ = "0.1.0"
