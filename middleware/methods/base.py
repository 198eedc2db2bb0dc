"""Old import path of the answer types and the method base; see ``answer.py``,
``run.py``, ``method.py`` and ``steps.py``."""

from middleware.methods.answer import (
    Answer,
    AnswerEntity,
    Evidence,
    EvidencePath,
    EvidenceTriple,
    Grounding,
    Step,
    Usage,
)
from middleware.methods.method import Method, MethodBase
from middleware.methods.run import Run, check_question
from middleware.methods.steps import clean_answer

__all__ = [
    "Answer",
    "AnswerEntity",
    "Evidence",
    "EvidencePath",
    "EvidenceTriple",
    "Grounding",
    "Method",
    "MethodBase",
    "Run",
    "Step",
    "Usage",
    "check_question",
    "clean_answer",
]
