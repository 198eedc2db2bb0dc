"""Settings: declared per area and per method, resolved from defaults, file, env and flags."""

from middleware.config.areas import (
    AnswerSettings,
    EvalSettings,
    LLMSettings,
    SourceSettings,
    TextSettings,
)
from middleware.config.fields import Setting, setting
from middleware.config.methods import (
    METHOD_TABLES,
    KSLSettings,
    MethodTable,
    PseudoGraphSettings,
    QSMSettings,
    ReachSettings,
    RoKSettings,
    SCSettings,
)
from middleware.config.service import ServerSettings
from middleware.config.settings import REGISTRY, SETTINGS, Settings, lookup

__all__ = [
    "METHOD_TABLES",
    "REGISTRY",
    "SETTINGS",
    "AnswerSettings",
    "EvalSettings",
    "KSLSettings",
    "LLMSettings",
    "MethodTable",
    "PseudoGraphSettings",
    "QSMSettings",
    "ReachSettings",
    "RoKSettings",
    "SCSettings",
    "ServerSettings",
    "Setting",
    "Settings",
    "SourceSettings",
    "TextSettings",
    "lookup",
    "setting",
]
