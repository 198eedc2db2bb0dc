"""Progress bars that suit where they are written: a live bar on a terminal, one final
line elsewhere (a log file, CI), never a run of carriage-return fragments.

>>> import io
>>> out = io.StringIO()
>>> with progress_bar(total=3, unit="q", file=out) as bar:
...     bar.update(3)
>>> "\\r" in out.getvalue(), out.getvalue().count("\\n")
(False, 1)
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm


class _FinalLine(tqdm):  # type: ignore[type-arg]
    """A bar that shows nothing while it runs and writes its last state as one line."""

    def display(self, msg: str | None = None, pos: int | None = None) -> None:
        """Nothing while running: no carriage returns on a file."""

    def close(self) -> None:
        if not self.disable and self.leave and self.fp is not None and self.n:
            meter = self.format_meter(**self.format_dict)
            self.fp.write(meter.strip() + "\n")
            self.fp.flush()
        self.leave = False  # tqdm's own close adds nothing: no empty line for an idle bar
        super().close()


def progress_bar(**options: Any) -> tqdm[Any]:
    """A tqdm bar with ``options``: live on a terminal, one final line on anything else."""
    stream = options.get("file") or sys.stderr
    if stream.isatty():
        return tqdm(**options)
    return _FinalLine(**options)
