"""Hostile settings: environment variables and custodia.toml (backends.config).

Whatever the environment or the settings file hold, :func:`backends.config.load` returns a
validated configuration or raises :class:`~backends.errors.ConfigError` naming the key — it
never lets a ``ValueError`` escape, and what it accepts is usable (URLs parse, ports exist,
timeouts are finite). The settings file itself is never rewritten by loading.
"""

from __future__ import annotations

import math
from pathlib import Path
from urllib.parse import urlparse

import pytest
import tomli_w
from hypothesis import example, given
from hypothesis import strategies as st
from psycopg import conninfo

from backends import config as config_module
from backends.config import CONFIG_FILE, ENVIRONMENT, Config
from backends.errors import ConfigError
from tests.reliability.conftest import Figures
from tests.reliability.hostile import BUDGET, hostile_settings
from tests.reliability.hostile.strategies import nasty_text

URL_FIELDS = ("redis_url", "postgres_dsn", "neo4j_uri", "qdrant_url", "chroma_url", "ollama_url")

url_like = st.one_of(
    nasty_text,
    st.builds(
        lambda scheme, host, port, rest: f"{scheme}://{host}{port}{rest}",
        st.sampled_from(["redis", "http", "https", "postgresql", "bolt", "unix", "file", ""]),
        st.sampled_from(["127.0.0.1", "localhost", "[::1]", "[::1", "[zz]", "", "a b", "%00"]),
        st.sampled_from(["", ":6379", ":0", ":99999999", ":-1", ":abc", ":"]),
        st.sampled_from(["", "/0", "/db?x=1", "/../../etc", "#frag"]),
    ),
)
values = st.one_of(
    nasty_text,
    url_like,
    st.sampled_from(["nan", "inf", "-inf", "1e309", "-0", "0", "1e-320", "true", "5"]),
)


def _check_accepted(cfg: Config) -> None:
    """An accepted configuration is usable as it stands."""
    assert isinstance(cfg.network_timeout, float)
    assert math.isfinite(cfg.network_timeout) and cfg.network_timeout > 0
    for name in URL_FIELDS:
        value = getattr(cfg, name)
        if value and name == "postgres_dsn" and "://" not in value:
            params = conninfo.conninfo_to_dict(value)  # libpq's keyword form: must parse
            assert params.get("host") or params.get("hostaddr")
        elif value:
            parsed = urlparse(value)
            _ = parsed.port  # raises ValueError for an impossible port
            assert parsed.scheme
    assert "\x00" not in str(cfg.home)


@pytest.mark.parametrize("budget", BUDGET)
def test_hostile_environment_values(budget: str, home: Path, figures: Figures) -> None:
    @hostile_settings(budget, 150)
    @given(env=st.dictionaries(st.sampled_from(sorted(ENVIRONMENT)), values, max_size=4))
    @example(env={"CUSTODIA_REDIS_URL": "redis://[::1"})
    @example(env={"CUSTODIA_CHROMA_URL": "http://[zz]"})
    @example(env={"CUSTODIA_POSTGRES_DSN": "postgresql://h:99999999/db"})
    def check(env: dict[str, str]) -> None:
        figures.add("hostile", "settings (environment)", "inputs")
        try:
            cfg = config_module.load(env, home=home)
        except ConfigError as err:
            assert str(err).strip(": ")
            figures.add("hostile", "settings (environment)", "refused")
            return
        _check_accepted(cfg)

    check()


toml_values = st.one_of(
    values,
    st.integers(),
    st.floats(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@pytest.mark.parametrize("budget", BUDGET)
def test_hostile_settings_file(budget: str, home: Path, figures: Figures) -> None:
    keys = st.sampled_from([*Config.__dataclass_fields__, "unknown", ""])

    @hostile_settings(budget, 150)
    @given(
        data=st.dictionaries(keys, toml_values, max_size=4),
        raw=st.none() | st.binary(max_size=80),
    )
    @example(data={"network_timeout": math.inf}, raw=None)
    @example(data={"network_timeout": True}, raw=None)
    @example(data={"network_timeout": 1e300}, raw=None)
    @example(data={"home": "/etc"}, raw=None)
    def check(data: dict[str, object], raw: bytes | None) -> None:
        figures.add("hostile", "settings (custodia.toml)", "inputs")
        file = home / CONFIG_FILE
        if raw is None:
            try:
                raw = tomli_w.dumps(data).encode("utf-8")
            except (TypeError, ValueError):
                return
        file.write_bytes(raw)
        try:
            cfg = config_module.load({}, home=home)
        except ConfigError as err:
            assert str(err).strip(": ")
            figures.add("hostile", "settings (custodia.toml)", "refused")
        else:
            _check_accepted(cfg)
            assert cfg.home == home  # the file cannot move the data dir
        assert file.read_bytes() == raw  # loading never rewrites the file

    check()


@pytest.mark.parametrize("home_text", ["/tmp/a\x00b", "\x00", "relative/../x\x00"])
def test_a_data_dir_with_a_nul_is_a_config_error(home_text: str) -> None:
    with pytest.raises(ConfigError, match="home"):
        config_module.load({"CUSTODIA_HOME": home_text})
