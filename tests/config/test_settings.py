"""Settings: defaults, the config file, the environment and the command line, in that
order; clear errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.config import REGISTRY, Settings
from middleware.config.settings import unknown_variables
from middleware.errors import ConfigError


def test_priority_default_file_env_cli(tmp_path: Path) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text("[kgmw]\ntimeout = 7\nretries = 1\nmax_hops = 3\n")
    s = Settings.load(config_path=config, env={"KGMW_RETRIES": "5"}, overrides={"max_hops": 1})
    assert (s.timeout, s.retries, s.max_hops, s.paths_limit) == (7.0, 5, 1, 100)
    assert [s.source_of(n) for n in ("timeout", "retries", "max_hops", "paths_limit")] == [
        str(config),
        "env",
        "cli",
        "default",
    ]


def test_config_from_env_variable(tmp_path: Path) -> None:
    config = tmp_path / "other.toml"
    config.write_text("progress = false\n")
    assert Settings.load(env={"KGMW_CONFIG": str(config)}).progress is False


def test_bad_values_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"KGMW_TIMEOUT.*not a valid float"):
        Settings.load(config_path=None, env={"KGMW_TIMEOUT": "soon"})
    bad = tmp_path / "kgmw.toml"
    bad.write_text("nonsense = 1\n")
    with pytest.raises(ConfigError, match="unknown setting 'nonsense'"):
        Settings.load(config_path=bad, env={})
    bad.write_text("timeout = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load(config_path=bad, env={})


def test_every_setting_has_help() -> None:
    assert all(s.help.endswith(".") and s.env_var.startswith("KGMW_") for s in REGISTRY.values())


def test_a_misspelt_environment_variable_gets_a_did_you_mean() -> None:
    env = {
        "KGMW_METOD": "plan",  # a slip: noted
        "KGMW_TIMEOUT": "5",  # a setting
        "KGMW_CONFIG": "x.toml",  # the config file's own variable
        "KGMW_REDIS_SECRET": "s",  # a user's own variable (env:KGMW_REDIS_SECRET): left alone
        "OTHER_METHOD": "rok",
    }
    assert unknown_variables(env.keys()) == [
        "KGMW_METOD names no setting and is ignored (did you mean KGMW_METHOD?)"
    ]


def test_an_unknown_setting_gets_a_did_you_mean(tmp_path: Path) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text('metod = "rok"\n')
    with pytest.raises(ConfigError, match="unknown setting 'metod'") as caught:
        Settings.load(config_path=config, env={})
    assert caught.value.hint == "did you mean 'method'?"
