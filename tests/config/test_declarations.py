"""Settings declared per area and per method: ranges, tables, the old import path."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from middleware.config import (
    METHOD_TABLES,
    REGISTRY,
    PseudoGraphSettings,
    QSMSettings,
    RoKSettings,
    Settings,
)
from middleware.errors import ConfigError


def env_var_of(name: str) -> str:
    return REGISTRY[name].env_var


METHODS = Path(__file__).resolve().parents[2] / "middleware" / "methods"


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("rok_max_hops", "4", "1 to 3"),
        ("rok_damping", "1.5", "0.01 to 0.99"),
        ("pg_threshold", "2", "-1 to 1"),
        ("max_calls", "0", "at least 1"),
        ("llm", "gpt", "one of auto, embedded, openai"),
        ("answer_min_confidence", "1.2", "0 to 1"),
    ],
)
def test_out_of_range_values_name_the_setting(name: str, value: str, words: str) -> None:
    env = {REGISTRY[name].env_var: value}
    with pytest.raises(ConfigError) as caught:
        Settings.load(env=env, config_path=None)
    message = str(caught.value)
    assert repr(name) in message and words in message and env_var_of(name) in message


def test_out_of_range_in_a_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text("[kgmw]\nqsm_top_k = 0\n")
    with pytest.raises(ConfigError, match=r"'qsm_top_k' from .*kgmw.toml: 0 is out of range"):
        Settings.load(config_path=config, env={})


def test_a_method_reads_its_table_typed() -> None:
    settings = Settings.load(
        env={"KGMW_PG_THRESHOLD": "0.5", "KGMW_QSM_TOP_K": "4"}, config_path=None
    )
    assert settings.table(PseudoGraphSettings).threshold == 0.5
    assert settings.table(QSMSettings).top_k == 4
    assert settings.table(RoKSettings) == RoKSettings()
    assert settings.value("qsm_top_k") == 4 and settings.value("timeout") == 30.0


def test_tables_do_not_share_names_and_hold_only_their_prefix() -> None:
    names = [s.name for table in METHOD_TABLES for s in table.settings()]
    assert len(names) == len(set(names))
    for table in METHOD_TABLES:
        assert all(s.name.startswith(table.PREFIX + "_") for s in table.settings())


def test_old_import_path_still_works() -> None:
    from middleware.config import Settings as Old

    assert Old is Settings


def test_no_method_reads_another_methods_table() -> None:
    """A method module names no table but its own (tables are imported by class name)."""
    owners = {
        "rok": "RoKSettings",
        "pseudograph": "PseudoGraphSettings",
        "qsm": "QSMSettings",
        "sc": "SCSettings",
    }
    tables = set(owners.values())
    for path in METHODS.rglob("*.py"):
        if path.stem == "registry" or (path.parent.name == "methods" and path.stem == "__init__"):
            continue
        used = {
            n.id if isinstance(n, ast.Name) else n.attr
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Name | ast.Attribute)
        }
        own = {owners[k] for k in owners if k in path.parts or path.stem == k}
        assert not (used & tables) - own, f"{path.name} reads {sorted((used & tables) - own)}"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e9"])
def test_a_timeout_must_be_a_finite_number_of_seconds_within_a_day(value: str) -> None:
    """nan and inf compare false with every bound, and a huge timeout overflowed the
    executors' poll (a traceback from `kgmw query`, a 500 from every /sparql request)."""
    with pytest.raises(ConfigError, match="'timeout' from KGMW_TIMEOUT"):
        Settings.load(config_path=None, env={"KGMW_TIMEOUT": value})
