"""Question-answering methods over knowledge graphs, all returning an ``Answer``."""

from middleware.methods.base import (
    Answer,
    AnswerEntity,
    Evidence,
    EvidencePath,
    EvidenceTriple,
    Method,
    Step,
)
from middleware.methods.baselines import IO, CoT
from middleware.methods.registry import METHODS, build_method
from middleware.methods.rok import RoK, RoKConfig

__all__ = [
    "IO",
    "METHODS",
    "Answer",
    "AnswerEntity",
    "CoT",
    "Evidence",
    "EvidencePath",
    "EvidenceTriple",
    "Method",
    "RoK",
    "RoKConfig",
    "Step",
    "build_method",
]
