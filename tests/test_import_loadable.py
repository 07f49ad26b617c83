"""Every importer's output is read back by slogqual's own loader (issue #28): each real capture of
tests/fixtures/diskinfo — as published, whitespace-collapsed, stripped of its alignment, hand-edited —
imports to documents that ``results.load_sweep`` (what plot, report and the store read with) accepts,
with numbers where numbers belong, or is refused in one line. Nothing in between."""

import glob
import json
import os

import pytest

from conftest import FIXTURES
from slogqual.errors import UsageError
from slogqual.importers import diskinfo
from slogqual.results import device as device_schema
from slogqual.results import load_sweep, save_sweep

CAPTURES = sorted(glob.glob(os.path.join(FIXTURES, "diskinfo", "*.txt")))
# diskinfo -v headers recorded for the FreeBSD tool parser: the header -wS prints before its results
HEADERS = sorted(glob.glob(os.path.join(FIXTURES, "freebsd", "diskinfo-*.txt")))
# the first real result block (the Intel 710's, FreeBSD r320683), put after a header-only capture
RESULT_BLOCK = "".join(line for line in open(os.path.join(FIXTURES, "diskinfo", "freebsd-r320683-intel710.padded.txt"))
                       if not line.startswith("#"))

HEADER_INTEGERS = ("sector_size", "media_size", "media_sectors", "stripe_size", "stripe_offset", "rotation_rate")


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def collapsed(text):
    """What a web page shows: every run of blanks one space, no alignment at the start of a line."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines()) + "\n"


def unaligned(text):
    """Alignment lost but blanks kept inside the line (a forum's editor stripping leading tabs)."""
    return "\n".join(line.lstrip() for line in text.splitlines()) + "\n"


def hand_edited(text):
    """What people do to a paste: tabs to spaces, trailing blanks, Windows line ends, the header's padding
    gone so that its value runs into the '#'."""
    out = []
    for line in text.splitlines():
        line = line.replace("\t", "    ").rstrip()
        if "# " in line and not line.lstrip().startswith("#"):
            value, name = line.split("#", 1)
            line = value.strip() + "#" + name
        out.append(line + "  ")
    return "\r\n".join(out) + "\r\n"


FORMS = {"as published": lambda t: t, "collapsed": collapsed, "unaligned": unaligned, "hand-edited": hand_edited}


def _cases():
    for path in CAPTURES:
        for form in FORMS:
            yield pytest.param(path, form, False, id=f"{os.path.basename(path)}-{form}")
    for path in CAPTURES + HEADERS:
        for form in FORMS:
            yield pytest.param(path, form, True, id=f"{os.path.basename(path)}+results-{form}")


def _check_numbers(doc):
    """The numbers of a loaded document are numbers (bool is not one)."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    for p in doc.points:
        assert type(p.size) is int and type(p.ios) is int
        assert number(p.lat_us.mean) and number(p.iops) and number(p.mbps) and number(p.runtime_ms)
    size = doc.target.get("size")
    assert size is None or type(size) is int
    dev = doc.device or {}
    for key in HEADER_INTEGERS + device_schema.INTEGER:
        assert key not in dev or type(dev[key]) is int, (key, dev[key])
    for key in ("rotational", "trim"):
        assert key not in dev or type(dev[key]) is bool, (key, dev[key])


@pytest.mark.parametrize("path,form,with_results", list(_cases()))
def test_every_capture_imports_to_a_document_the_loader_reads(tmp_path, path, form, with_results):
    text = _read(path)
    if with_results:
        text = text.rstrip("\n") + "\n" + RESULT_BLOCK
    text = FORMS[form](text)
    try:
        results = diskinfo.import_text(text, os.path.basename(path))
    except UsageError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(os.path.basename(path))  # refused in one line
        assert not with_results or "Synchronous" not in text, str(exc)  # a header and results must import
        return
    assert results
    for i, r in enumerate(results):
        out = tmp_path / f"r{i}.json"
        save_sweep(str(out), r)
        back = load_sweep(str(out))  # raises DocumentError if the loader refuses
        assert back.to_dict() == json.loads(out.read_text())
        _check_numbers(back)


@pytest.mark.parametrize("path", CAPTURES + HEADERS, ids=os.path.basename)
def test_collapsing_whitespace_changes_no_figure(path):
    """A capture and its web-page forms import to the same points and the same device numbers."""
    text = _read(path)
    if "kbytes:" not in text:
        text = text.rstrip("\n") + "\n" + RESULT_BLOCK
    try:
        want = diskinfo.import_text(text, "x.txt")
    except UsageError:
        pytest.skip("the capture itself is refused")
    for form in ("collapsed", "unaligned", "hand-edited"):
        got = diskinfo.import_text(FORMS[form](text), "x.txt")
        assert [r.to_dict()["points"] for r in got] == [r.to_dict()["points"] for r in want], form
        for g, w in zip(got, want):
            numbers = {k: v for k, v in (w.device or {}).items() if k in HEADER_INTEGERS}
            assert {k: v for k, v in (g.device or {}).items() if k in HEADER_INTEGERS} == numbers, form
