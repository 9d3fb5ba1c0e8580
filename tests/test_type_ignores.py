"""Every ``type: ignore`` left in the package says why, beside it.

mypy runs clean in CI (``.ci/run``); where a line still silences it, a reader must
see the reason without digging: a comment after the ignore, or on the line above.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(?P<after>.*)$")


def test_every_type_ignore_gives_its_reason() -> None:
    unexplained = []
    for path in sorted([*ROOT.glob("daemon/**/*.py"), *ROOT.glob("drivers/**/*.py")]):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            found = IGNORE.search(line)
            if found is None:
                continue
            reason_after = found.group("after").strip().startswith("#")
            above = lines[number - 2].strip() if number > 1 else ""
            reason_above = above.startswith("#") and "type: ignore" not in above
            previous_ignore = number > 1 and IGNORE.search(lines[number - 2]) is not None
            if not (reason_after or reason_above or previous_ignore):
                unexplained.append(f"{path.relative_to(ROOT)}:{number}")
    assert unexplained == []
