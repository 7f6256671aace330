"""``make help`` lists the targets a person types, each described where it is defined."""

import re
import subprocess

from tests.support.book import ROOT

MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
DESCRIBED = re.findall(r"^## ([\w-]+): ", MAKEFILE, re.M)


def test_each_described_target_is_defined_right_below_its_description():
    for name in DESCRIBED:
        below = MAKEFILE.split(f"## {name}: ", 1)[1].split("\n")[1:]
        definition = next(line for line in below if not line.startswith("#"))
        assert definition.startswith(f"{name}:"), (
            f"Makefile: '## {name}:' describes {definition!r}, not the target {name}"
        )


def test_make_help_lists_every_described_target():
    shown = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = re.findall(r"^  ([\w-]+) ", shown, re.M)
    assert listed == DESCRIBED and {"book", "test", "test-fast", "page"} <= set(listed), shown
