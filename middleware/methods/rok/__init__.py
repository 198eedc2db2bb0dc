"""RoK: reasoning on efficient knowledge paths (``rok``)."""

from middleware.config.methods import RoKSettings
from middleware.methods.rok.entities import (
    KeyEntity,
    order_key_entities,
    parse_entity_list,
    parse_numbers,
)
from middleware.methods.rok.method import RoK

RoKConfig = RoKSettings  # the table's old name

__all__ = [
    "KeyEntity",
    "RoK",
    "RoKConfig",
    "RoKSettings",
    "order_key_entities",
    "parse_entity_list",
    "parse_numbers",
]
