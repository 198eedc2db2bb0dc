"""Question-answering methods over knowledge graphs, all returning an ``Answer``."""

from middleware.methods.answer import (
    Answer,
    AnswerEntity,
    Evidence,
    EvidencePath,
    EvidenceTriple,
    Step,
    Usage,
)
from middleware.methods.baselines import IO, CoT
from middleware.methods.method import Method, MethodBase
from middleware.methods.pseudograph import PseudoGraph, PseudoGraphConfig
from middleware.methods.qsm import QSM
from middleware.methods.registry import METHODS, SPECS, MethodSpec, build_method
from middleware.methods.rok import RoK, RoKConfig
from middleware.methods.run import AnswerPolicy
from middleware.methods.sc import SelfConsistency

__all__ = [
    "IO",
    "METHODS",
    "QSM",
    "SPECS",
    "Answer",
    "AnswerEntity",
    "AnswerPolicy",
    "CoT",
    "Evidence",
    "EvidencePath",
    "EvidenceTriple",
    "Method",
    "MethodBase",
    "MethodSpec",
    "PseudoGraph",
    "PseudoGraphConfig",
    "RoK",
    "RoKConfig",
    "SelfConsistency",
    "Step",
    "Usage",
    "build_method",
]
