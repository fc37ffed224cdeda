"""The desktop tests never touch the user's window settings (QSettings): every test gets
its own settings folder; the welcome banner is shown only where a test asks for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_qsettings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from desktop.testing.plugin import isolated_qsettings

    with isolated_qsettings(tmp_path_factory.mktemp("qsettings")) as folder:
        yield folder
