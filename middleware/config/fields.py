"""How a setting is declared: a dataclass field with a default, a range and help text.

A settings table is a frozen dataclass whose fields are made with :func:`setting`;
:func:`declared` turns a table into :class:`Setting` entries (name, type, default,
range, help), the one description the loader, the CLI and the docs all read.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo:
...     top_k: int = setting(5, "Paths kept.", minimum=1)
>>> [(s.name, s.type.__name__, s.default, s.range_text()) for s in declared(Demo, prefix="demo")]
[('demo_top_k', 'int', 5, 'at least 1')]
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

from middleware.errors import ConfigError

_KEY = "kgmw"
_TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


@dataclass(frozen=True)
class FieldInfo:
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    secret: bool = False


def setting(
    default: Any,
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] | None = None,
    secret: bool = False,
) -> Any:
    """A dataclass field that is also a setting (see the module docstring)."""
    info = FieldInfo(help, minimum, maximum, choices, secret)
    return dataclasses.field(default=default, metadata={_KEY: info})


@dataclass(frozen=True)
class Setting:
    """One setting: how it is named, typed, bounded and explained."""

    name: str
    type: type
    default: Any
    help: str
    area: str = ""
    nullable: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    secret: bool = False  # shown masked by `kgmw settings`

    @property
    def env_var(self) -> str:
        return "KGMW_" + self.name.upper()

    def range_text(self) -> str:
        """The allowed values in words ('' when any value of the type goes)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return f"{low:g} to {high:g}"
        if low is not None:
            return f"at least {low:g}"
        if high is not None:
            return f"at most {high:g}"
        return ""

    def coerce(self, value: Any, origin: str) -> Any:
        """``value`` (from TOML, env or CLI) as this setting's type, range-checked."""
        if value is None:
            if self.nullable:
                return None
            raise ConfigError(f"setting {self.name!r} from {origin} cannot be empty")
        converted = self._convert(value, origin)
        self.check(converted, origin)
        return converted

    def _convert(self, value: Any, origin: str) -> Any:
        try:
            if self.type is bool:
                if isinstance(value, bool):
                    return value
                text = str(value).strip().lower()
                if text in {"1", "true", "yes", "on"}:
                    return True
                if text in {"0", "false", "no", "off"}:
                    return False
                raise ValueError(text)
            if self.type is int and isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            if self.type in (int, float) and isinstance(value, bool):
                raise ValueError(value)
            converted = self.type(value)
            if self.type is float and not math.isfinite(converted):
                raise ValueError(value)  # nan and inf compare false with every bound
            return converted
        except (TypeError, ValueError) as err:
            raise ConfigError(
                f"setting {self.name!r} from {origin}: {value!r} is not a valid {self.type.__name__}",
                hint=self.help,
            ) from err

    def check(self, value: Any, origin: str) -> None:
        """Raise ConfigError naming this setting when ``value`` is out of its range."""
        outside = (
            (self.choices is not None and value not in self.choices)
            or (self.minimum is not None and value < self.minimum)
            or (self.maximum is not None and value > self.maximum)
        )
        if outside:
            raise ConfigError(
                f"setting {self.name!r} from {origin}: {value!r} is out of range "
                f"({self.range_text()})",
                hint=self.help,
            )


def _base_type(hint: Any) -> tuple[type, bool]:
    """The plain type of an annotation and whether it admits None."""
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [a for a in args if a is not type(None)]
        return kinds[0], len(kinds) < len(args)
    return hint, False


def declared(table: type, *, prefix: str = "", area: str = "") -> list[Setting]:
    """The settings a table declares; each name is ``prefix_field`` (or the field name)."""
    hints = typing.get_type_hints(table)
    found = []
    for item in dataclasses.fields(table):
        info = item.metadata.get(_KEY)
        if not isinstance(info, FieldInfo):
            continue
        kind, nullable = _base_type(hints[item.name])
        if kind not in _TYPES.values():
            raise TypeError(f"setting {item.name!r} of {table.__name__}: unsupported type {kind}")
        found.append(
            Setting(
                name=f"{prefix}_{item.name}" if prefix else item.name,
                type=kind,
                default=item.default,
                help=info.help,
                area=area,
                nullable=nullable,
                minimum=info.minimum,
                maximum=info.maximum,
                choices=info.choices,
                secret=info.secret,
            )
        )
    return found
