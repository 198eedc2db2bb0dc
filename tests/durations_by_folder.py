"""Seconds each test folder took, from pytest's ``--durations=0`` report.

    pytest -q --durations=0 | tee durations.txt
    python tests/durations_by_folder.py durations.txt

Setup, call and teardown all count. Doctests of the package count as ``middleware``.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Iterable

LINE = re.compile(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+?)::")


def by_folder(lines: Iterable[str]) -> dict[str, float]:
    """Seconds per folder of the test files named in ``lines``."""
    seconds: defaultdict[str, float] = defaultdict(float)
    for line in lines:
        found = LINE.match(line)
        if found:
            path = found.group(2)
            folder = path.rsplit("/", 1)[0] if path.startswith("tests/") else "middleware"
            seconds[folder] += float(found.group(1))
    return seconds


def main(argv: list[str]) -> int:
    with open(argv[1]) if len(argv) > 1 else sys.stdin as report:
        seconds = by_folder(report)
    for folder, total in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"{total:8.1f} s  {folder}")
    print(f"{sum(seconds.values()):8.1f} s  in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
