"""Settings: declared per area and per method, resolved from defaults, file, env and flags."""

from middleware.config.areas import (
    AnswerSettings,
    EvalSettings,
    LLMSettings,
    ServerSettings,
    SourceSettings,
    TextSettings,
)
from middleware.config.fields import Setting, setting
from middleware.config.methods import (
    METHOD_TABLES,
    MethodTable,
    PseudoGraphSettings,
    QSMSettings,
    RoKSettings,
)
from middleware.config.settings import REGISTRY, SETTINGS, Settings, lookup

__all__ = [
    "METHOD_TABLES",
    "REGISTRY",
    "SETTINGS",
    "AnswerSettings",
    "EvalSettings",
    "LLMSettings",
    "MethodTable",
    "PseudoGraphSettings",
    "QSMSettings",
    "RoKSettings",
    "ServerSettings",
    "Setting",
    "Settings",
    "SourceSettings",
    "TextSettings",
    "lookup",
    "setting",
]
