"""The training examples: ``kgmw ksl-dataset``'s Alpaca JSON, checked before any work.

An example is the prompt the walk sends for one round (``instruction``, a blank line,
``input``, which ends at the cue ``Choice:``) and the option it should pick
(``output``), which the model learns to write after one space.

>>> import json, tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "train.json"
>>> _ = path.write_text(json.dumps([{"instruction": "Walk.", "input": "At: A\\nChoice:",
...                                  "output": "B (knows)"}]))
>>> [(e.prompt, e.target) for e in read_examples(path)]
[('Walk.\\n\\nAt: A\\nChoice:', ' B (knows)')]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from middleware.errors import BadRequest

FIELDS = ("instruction", "input", "output")
HINT = (
    "make it with `kgmw ksl-dataset --out FILE` (a JSON list of instruction/input/output objects)"
)


@dataclass(frozen=True)
class TuningExample:
    """What the model reads (``prompt``) and what it should write next (``target``)."""

    prompt: str
    target: str


def read_examples(path: Path) -> list[TuningExample]:
    """The examples in ``path``; a file that is not the export's format is a BadRequest
    naming the first thing wrong."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadRequest(f"no training data at {path}", hint=HINT) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BadRequest(f"{path} is not JSON ({err})", hint=HINT) from None
    if not isinstance(rows, list):
        raise BadRequest(f"{path} holds a JSON {type(rows).__name__}, not a list", hint=HINT)
    if not rows:
        raise BadRequest(f"{path} holds no examples", hint=HINT)
    examples = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise BadRequest(f"{path}: example {number} is not an object", hint=HINT)
        missing = [f for f in FIELDS if not isinstance(row.get(f), str)]
        if missing:
            raise BadRequest(
                f"{path}: example {number} lacks text for {', '.join(missing)}", hint=HINT
            )
        if not row["output"].strip():
            raise BadRequest(f"{path}: example {number} has an empty output", hint=HINT)
        prompt = f"{row['instruction'].strip()}\n\n{row['input'].rstrip()}"
        examples.append(TuningExample(prompt, " " + row["output"].strip()))
    return examples
