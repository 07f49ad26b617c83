"""Static checks on the source that catch what only a rarely-run path would show.

An undefined name in a progress line of the pool runner (a helper removed in a tidy-up) passed every
unit test and failed only in the lab: pyflakes reports such names without running anything.
"""

import os

import pytest

from pyflakes import api as pyflakes_api
from pyflakes import messages as pyflakes_messages
from pyflakes import reporter as pyflakes_reporter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Messages that are bugs whenever they appear, not style: a name used that nothing defines, a module
# imported under two meanings, a return outside a function, a misused format string.
FATAL = (
    pyflakes_messages.UndefinedName,
    pyflakes_messages.UndefinedLocal,
    pyflakes_messages.UndefinedExport,
    pyflakes_messages.ReturnOutsideFunction,
    pyflakes_messages.StringDotFormatExtraPositionalArguments,
    pyflakes_messages.StringDotFormatMissingArgument,
    pyflakes_messages.PercentFormatMissingArgument,
)


class _Collect(pyflakes_reporter.Reporter):
    def __init__(self):
        self.found = []

    def unexpectedError(self, filename, msg):
        self.found.append(f"{filename}: {msg}")

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.found.append(f"{filename}:{lineno}: {msg}")

    def flake(self, message):
        if isinstance(message, FATAL):
            self.found.append(str(message))


def fatal_flakes(paths):
    collect = _Collect()
    for path in paths:
        pyflakes_api.checkRecursive([path], collect)
    return sorted(collect.found)


@pytest.mark.parametrize("where", ["slogqual", "contrib", "tests"])
def test_no_undefined_names(where):
    assert fatal_flakes([os.path.join(ROOT, where)]) == []


def test_the_check_sees_an_undefined_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(n):\n    return _bytes(n)\n")
    found = fatal_flakes([str(tmp_path)])
    assert len(found) == 1 and "_bytes" in found[0]
