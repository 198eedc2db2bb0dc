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
from middleware.methods.pseudograph import PseudoGraph, PseudoGraphConfig
from middleware.methods.qsm import QSM
from middleware.methods.registry import METHODS, build_method
from middleware.methods.rok import RoK, RoKConfig

__all__ = [
    "IO",
    "METHODS",
    "QSM",
    "Answer",
    "AnswerEntity",
    "CoT",
    "Evidence",
    "EvidencePath",
    "EvidenceTriple",
    "Method",
    "PseudoGraph",
    "PseudoGraphConfig",
    "RoK",
    "RoKConfig",
    "Step",
    "build_method",
]
