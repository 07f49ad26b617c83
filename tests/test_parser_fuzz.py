"""Fuzzing of every parser of program output (Hypothesis, seeded and bounded: the same examples on
every run, a few seconds in all).

Each parser is fed its real captures (tests/fixtures) cut short at any point, empty text, garbage,
real lines shuffled and mangled, and for the JSON ones the real capture with fields of the wrong
type (None, numbers, strings, lists, objects where something else was). Every input must end in a
valid parse or in slogqual's own error (a SlogqualError: ToolOutputError for a program's output,
UsageError for a user's import file, MeasurementError for a kstat file) — never another exception,
which the user would see as a traceback.

A parser is called as its callers call it. Most are called through ``run.parse_text`` /
``parse_output`` (the tool contract turns a parser's ValueError into ToolOutputError); those are also
called bare, where the one exception allowed besides a SlogqualError is ValueError, the contract's
"cannot read this" (device/freebsd.py catches exactly that): a TypeError, KeyError, IndexError or
AttributeError is the parser tripping over the input, not refusing it.
"""

import atexit
import copy
import glob
import json
import os
import shutil
import tempfile
from typing import Callable, List, NamedTuple

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import nvmecontrol_logpage  # noqa: E402
from conftest import FIXTURES  # noqa: E402
from slogqual.errors import SlogqualError  # noqa: E402
from slogqual.importers import diskinfo as import_diskinfo  # noqa: E402
from slogqual.kernel import procfs, sysfs  # noqa: E402
from slogqual.tools import (blkid, findmnt, fio, fio_client, iscsiadm, kstat, lsblk, lspci, nbdkit, nvme, pairbench, smartctl,  # noqa: E402
                            wipefs, zfs, zpool)
from slogqual.tools import spawn as run  # noqa: E402
from slogqual.tools.freebsd import camcontrol, ctladm, ctld, devinfo, geom, glabel, gpart, mount, nfsstat, nvmecontrol, pciconf, swapctl, sysctl  # noqa: E402
from slogqual.device import freebsd_topology  # noqa: E402
from slogqual.tools.freebsd import diskinfo as bsd_diskinfo  # noqa: E402

# Hypothesis examples per parser and strategy; SLOGQUAL_FUZZ_EXAMPLES=500 for a deeper run by hand.
EXAMPLES = int(os.environ.get("SLOGQUAL_FUZZ_EXAMPLES", "25"))
BOUNDED = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def captures(*patterns: str) -> List[str]:
    paths = sorted(p for pat in patterns for p in glob.glob(os.path.join(FIXTURES, pat)))
    assert paths, patterns
    out = []
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as fh:
            out.append(fh.read())
    return out


class Parser(NamedTuple):
    name: str
    call: Callable[[str], object]  # as its callers call it: must return or raise a SlogqualError
    bare: Callable[[str], object] = None  # the parser itself (tool-contract parsers): may also raise ValueError
    texts: List[str] = ()
    json: bool = False


def tool(program: str, parser, *args):
    return lambda text: run.parse_text(program, [program], text, parser, *args)


def _kstat_sysctl(text: str):
    oid = kstat.objset_oid("sqlabcheck", 0x36)
    return kstat.ZilStats.from_kstat(kstat.from_sysctl(sysctl.parse(text), oid))


def _as_sysctl(linux: str) -> str:
    oid = kstat.objset_oid("sqlabcheck", 0x36)
    rows = linux.splitlines()[2:]
    return "".join(f"{oid}.{r.split(None, 2)[0]}: {r.split(None, 2)[2]}\n" for r in rows if len(r.split()) >= 3)


_SYSFS = tempfile.mkdtemp(prefix="slogqual-fuzz-sysfs-")
atexit.register(shutil.rmtree, _SYSFS, True)  # made at import (parameters need it): removed at exit


def _sysfs_attribute(text: str):
    """A sysfs attribute holding text, read as the device code reads one: sysfs.read and read_int."""
    path = os.path.join(_SYSFS, "attr")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(text)
    return sysfs.read(path), sysfs.read_int(path)


FIO_OUT = captures("fio/*.stdout") + captures("lab/fio-zvol-sync-always.json")
PARSERS = [
    Parser("fio", lambda t: fio.interpret(t, "", 0, "/dev/x", 4096), texts=FIO_OUT, json=True),
    Parser("fio (failed run)", lambda t: fio.interpret(t, "fio: io_u error: Input/output error", 1, "/dev/x", 4096),
           texts=FIO_OUT, json=True),
    Parser("fio clients", tool("fio", fio_client.parse_report), fio_client.parse_report,
           captures("fio/clients-*.stdout"), json=True),
    Parser("fio clients (interpret)", lambda t: fio_client.interpret(
        t, "", 0, [fio_client.Endpoint("127.0.0.1", 33661), fio_client.Endpoint("127.0.0.1", 46035)], 4096),
        texts=captures("fio/clients-*.stdout"), json=True),
    Parser("smartctl", tool("smartctl", smartctl.parse), smartctl.parse, captures("smartctl/*.json"), json=True),
    Parser("nvme id-ctrl", tool("nvme", nvme.parse_id_ctrl), nvme.parse_id_ctrl,
           captures("nvme/id-ctrl-*", "nvme/qemu-lab-id-ctrl.json"), json=True),
    Parser("nvme get-feature", nvme.parse_get_vwc, texts=captures("nvme/qemu-lab-get-feature-6.txt")),
    Parser("nvme smart-log", tool("nvme", nvme.parse_smart_log), nvme.parse_smart_log, captures("nvme/smart-log-*"),
           json=True),
    Parser("smartctl health", tool("smartctl", smartctl.parse_health), smartctl.parse_health,
           captures("smartctl/*.json"), json=True),
    Parser("smartctl health text", tool("smartctl", smartctl.parse_health_text), smartctl.parse_health_text,
           captures("smartctl/nvme-text-*.txt")),
    Parser("lsblk", tool("lsblk", lsblk.parse), lsblk.parse, captures("lsblk/*.json", "lab/lsblk-6-classes.json"),
           json=True),
    Parser("blkid", lambda t: blkid.from_result("/dev/x", 0, t, ""), texts=captures("blkid/*.export")),
    Parser("blkid ambivalent", lambda t: blkid.from_result("/dev/x", 8, t, ""), texts=captures("blkid/*.export")),
    Parser("wipefs", tool("wipefs", wipefs.parse), wipefs.parse, captures("wipefs/*.json"), json=True),
    Parser("findmnt", tool("findmnt", findmnt.parse), findmnt.parse, captures("findmnt/*.json"), json=True),
    Parser("mountinfo", findmnt.parse_mountinfo, texts=captures("procfs/mountinfo-*.txt")),
    Parser("swaps", procfs.parse_swaps, texts=captures("procfs/swaps-*.txt")),
    Parser("/proc/stat", procfs.parse_stat, texts=captures("procfs/stat-*.txt")),
    Parser("mountstats", tool("mountstats", procfs.parse_mountstats), procfs.parse_mountstats,
           captures("mountstats/*.txt")),
    Parser("iscsiadm -m session -P 3", tool("iscsiadm", iscsiadm.parse_sessions), iscsiadm.parse_sessions,
           captures("iscsiadm/*.txt")),
    Parser("initiatorname.iscsi", tool("iscsiadm", iscsiadm.parse_initiator_name), iscsiadm.parse_initiator_name,
           ["## DO NOT EDIT OR REMOVE THIS FILE!\nInitiatorName=iqn.1993-08.org.debian:01:78c55a27e9f8\n"]),
    Parser("lspci", tool("lspci", lspci.parse, "0000:01:00.0"), lambda t: lspci.parse(t, "0000:01:00.0"),
           captures("lspci/*.txt")),
    Parser("lspci -tv", tool("lspci", lspci.parse_tree), lspci.parse_tree, captures("lspci/lspci-tv-*.txt")),
    Parser("nbdinfo --size", tool("nbdinfo", nbdkit._size), nbdkit._size, ["1073741824\n"]),
    Parser("sysfs attribute", _sysfs_attribute, texts=["4096\n", "0x1f\n", "8.0 GT/s PCIe\n", "1\n"]),
    Parser("zpool iostat -vp", tool("zpool", zpool.parse_iostat_v), zpool.parse_iostat_v,
           captures("zpool/iostat-vp*.txt")),
    Parser("zpool iostat stream", zpool.parse_iostat_stream, texts=captures("zpool/iostat-Tu-*.txt")),
    Parser("zpool list", tool("zpool", zpool.parse_list), zpool.parse_list, captures("zpool/list-Hp.txt")),
    Parser("zfs get", tool("zfs", zfs.parse_get), zfs.parse_get, captures("zfs/get-Hp-zvol.txt")),
    Parser("zfs objsetid", tool("zfs", zfs.parse_objsetid), zfs.parse_objsetid, captures("zfs/get-Hp-zvol.txt")),
    Parser("zfs --version", zfs.parse_versions, texts=captures("zfs/version-*")),
    Parser("pairbench", tool("pairbench", pairbench.parse), pairbench.parse, captures("pairbench/*.stdout")),
    Parser("kstat file", lambda t: kstat.ZilStats.from_kstat(kstat.parse_kstat(t)), texts=captures("kstat/*.txt")),
    Parser("kstat sysctl", _kstat_sysctl, texts=[_as_sysctl(t) for t in captures("kstat/*.txt")]),
    Parser("sysctl", tool("sysctl", sysctl.parse), sysctl.parse, [_as_sysctl(t) for t in captures("kstat/*.txt")]),
    Parser("sysctl kern.disks", sysctl.disks, texts=["kern.disks: ada0 da0 nvd0\n", "ada0 da0\n"]),
    Parser("camcontrol", tool("camcontrol", camcontrol.parse), camcontrol.parse,
           captures("freebsd/camcontrol-*.txt", "freebsd/cam-announce-*.txt")),
    Parser("diskinfo -v", tool("diskinfo", bsd_diskinfo.parse), bsd_diskinfo.parse, captures("freebsd/diskinfo-*.txt")),
    Parser("geom disk list", tool("geom", geom.parse), geom.parse, captures("freebsd/geom-*.txt")),
    Parser("nvmecontrol identify", tool("nvmecontrol", nvmecontrol.parse), nvmecontrol.parse,
           captures("freebsd/nvmecontrol-*.txt")),
    # no real capture of it was found: the pages printed with logpage.c's format strings (nvmecontrol_logpage.py)
    Parser("nvmecontrol logpage -p 2", tool("nvmecontrol", nvmecontrol.parse_health), nvmecontrol.parse_health,
           nvmecontrol_logpage.printed_pages()),
    Parser("mount -p", tool("mount", mount.parse), mount.parse, captures("freebsd/mount-p-*.txt")),
    Parser("iscsictl -L -v", tool("iscsictl", ctld.parse_list), ctld.parse_list, captures("freebsd/iscsictl-Lv-*.txt")),
    Parser("iscsictl -L", tool("iscsictl", ctld.parse_list_plain), ctld.parse_list_plain,
           captures("freebsd/iscsictl-L-*.txt")),
    Parser("ctladm devlist -v", tool("ctladm", ctladm.parse_devlist), ctladm.parse_devlist,
           captures("freebsd/ctladm-devlist-*.txt")),
    Parser("nfsstat -m", tool("nfsstat", nfsstat.parse), nfsstat.parse, captures("freebsd/nfsstat-m-*.txt")),
    Parser("swapctl -l", tool("swapctl", swapctl.parse), swapctl.parse, captures("freebsd/swapctl-l-*.txt")),
    Parser("gpart show -p", tool("gpart", gpart.parse), gpart.parse, captures("freebsd/gpart-show-*.txt")),
    Parser("glabel status", tool("glabel", glabel.parse), glabel.parse, captures("freebsd/glabel-status-*.txt")),
    Parser("pciconf -lvc", tool("pciconf", pciconf.parse), pciconf.parse, captures("freebsd/pciconf-lvc-*.txt")),
    Parser("camcontrol devlist -v", tool("camcontrol", camcontrol.parse_devlist), camcontrol.parse_devlist,
           captures("freebsd/camcontrol-devlist-v-*.txt")),
    Parser("devinfo -rv", tool("devinfo", devinfo.parse), devinfo.parse, captures("freebsd/devinfo-rv-*.txt")),
    Parser("a FreeBSD disk's path", lambda t: freebsd_topology.build("/dev/da0", t, t, t),
           texts=captures("freebsd/camcontrol-devlist-v-*.txt", "freebsd/devinfo-rv-*.txt", "freebsd/pciconf-lvc-*.txt")),
    Parser("camcontrol is_ata", lambda t: camcontrol.is_ata(run.parse_text("camcontrol", ["camcontrol"], t,
                                                                           camcontrol.parse)),
           texts=captures("freebsd/camcontrol-*.txt", "freebsd/cam-announce-*.txt")),
    Parser("import diskinfo", lambda t: import_diskinfo.import_text(t, "paste.txt"), texts=captures("diskinfo/*.txt")),
    Parser("import diskinfo --skip-garbage", lambda t: import_diskinfo.import_text(t, "paste.txt", skip_garbage=True),
           texts=captures("diskinfo/*.txt")),
]
IDS = [p.name for p in PARSERS]
JSON_PARSERS = [p for p in PARSERS if p.json]


def outcome(parser: Parser, text: str) -> None:
    """Fail the test unless the parser, as called, returns or refuses in slogqual's own terms."""
    try:
        parser.call(text)
    except SlogqualError:
        pass
    except Exception as exc:
        pytest.fail(f"{parser.name}: {type(exc).__name__}: {exc} on {text[:300]!r}")
    if parser.bare is not None:
        try:
            parser.bare(text)
        except (SlogqualError, ValueError):
            pass
        except Exception as exc:
            pytest.fail(f"{parser.name} (bare): {type(exc).__name__}: {exc} on {text[:300]!r}")


# --- strategies -------------------------------------------------------------------------------------------

GARBAGE = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=" \t\n-:#=0123456789abcdefx.{}[]\",", max_size=200),
    st.binary(max_size=120).map(lambda b: b.decode("utf-8", "replace")),
    st.sampled_from(["{}", "[]", "null", "0", "\"x\"", "{\"a\": 1}", "-", "----", "----\n----\n", "\n", " ",
                     "name type data\n", "\\999", "1e999", "²", "NaN", "Infinity", "{" * 50]),
)


ODD_TOKENS = ["-", "", "0", "-1", "x", "0x", "0xzz", "\u00b2", "1e999", "nan", "inf", "\\999", "\\", ":", "=", "#",
              "----", "9" * 30, "\t", "{", "]", "Gb/s", "GT/s", "x0", "yes", "<none>", "(", ")", "%"]


def _tokens_mangled(text: str, data) -> str:
    """Real lines, some dropped, duplicated or reordered, in some a word (or the line) replaced by an
    odd one or split at an odd place."""
    lines = text.splitlines()
    if not lines:
        return text
    keep = data.draw(st.sampled_from(["all", "picked"]))
    picked = (list(range(len(lines))) if keep == "all" else
              data.draw(st.lists(st.integers(0, len(lines) - 1), max_size=min(40, 2 * len(lines)))))
    changes = dict(data.draw(st.lists(st.tuples(st.integers(0, len(lines) - 1), st.integers(0, 40)), max_size=6)))
    out = []
    for i in picked:
        line = lines[i]
        if i in changes:
            how = data.draw(st.sampled_from(["word", "word", "line", "cut"]))
            if how == "line":
                line = data.draw(st.sampled_from(ODD_TOKENS))
            elif how == "cut":
                line = line[:changes[i]]
            else:
                sep = "\t" if "\t" in line else " "
                words = line.split(sep)
                words[changes[i] % len(words)] = data.draw(st.sampled_from(ODD_TOKENS))
                line = sep.join(words)
        out.append(line)
    return "\n".join(out) + "\n"


ODD_VALUES = [None, 0, -1, 2**70, 1.5, -0.0, 1e308, float("nan"), float("inf"), "", "x", "0x", "-", "12abc", True,
              False, [], [1, "a"], {}, {"a": 1}, [{}], [[1]]]


def _paths(doc, prefix=(), items=3):
    """Every field's path (of a list, its first ``items`` items)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,), items)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:items]):
            yield from _paths(v, prefix + (i,), items)


def _set(doc, path, value):
    if not path:
        return value
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return doc


def _json_body(text: str):
    start = text.find("{")
    try:
        return text[:start], json.loads(text[start:])
    except ValueError:
        return None


# --- the tests --------------------------------------------------------------------------------------------

# Synthetic, not a capture: arrays nested deeper than Python's JSON decoder follows (its RecursionError
# is no ValueError), bare and as the value of a real capture's first key.
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
def test_real_captures_parse_or_refuse_cleanly(parser):
    for text in parser.texts:
        outcome(parser, text)
    outcome(parser, "")
    outcome(parser, "\n \n")
    outcome(parser, DEEP)
    outcome(parser, '{"a": ' + DEEP + "}\n")


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@BOUNDED
@given(data=st.data())
def test_truncated_captures(parser, data):
    text = data.draw(st.sampled_from(parser.texts))
    cut = data.draw(st.integers(0, len(text)))
    outcome(parser, text[:cut])


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@BOUNDED
@given(text=GARBAGE)
def test_garbage(parser, text):
    outcome(parser, text)


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
@BOUNDED
@given(data=st.data())
def test_mangled_lines_of_real_captures(parser, data):
    text = data.draw(st.sampled_from(parser.texts))
    outcome(parser, _tokens_mangled(text, data))


@pytest.mark.parametrize("parser", JSON_PARSERS, ids=[p.name for p in JSON_PARSERS])
@BOUNDED
@given(data=st.data())
def test_wrong_typed_json_fields(parser, data):
    texts = [t for t in parser.texts if _json_body(t)]
    head, doc = _json_body(data.draw(st.sampled_from(texts)))
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(_paths(doc))))
        doc = _set(doc, path, copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES))))
    outcome(parser, head + json.dumps(doc))


SWEEP_TOKENS = ["", "-", "x", "\u00b2", "1e999", "\\999", "9" * 30, "{"]


@pytest.mark.parametrize("parser", PARSERS, ids=IDS)
def test_each_word_of_a_capture_replaced_by_odd_ones(parser):
    # exhaustive where Hypothesis samples: in two captures' first 40 lines, each of the first 8
    # words (tab- or space-separated) replaced in turn by each odd token
    for text in parser.texts[:2]:
        lines = text.splitlines()
        for i, line in enumerate(lines[:40]):
            sep = "\t" if "\t" in line else " "
            words = line.split(sep)
            for j in [k for k, w in enumerate(words) if w][:8]:
                for token in SWEEP_TOKENS:
                    changed = sep.join(words[:j] + [token] + words[j + 1:])
                    outcome(parser, "\n".join(lines[:i] + [changed] + lines[i + 1:]) + "\n")


SINGLE_ODD = [None, "x", True, [1], {}]
PATH_BUDGET = 400


@pytest.mark.parametrize("parser", JSON_PARSERS, ids=[p.name for p in JSON_PARSERS])
def test_each_json_field_of_each_capture_of_the_wrong_type(parser):
    # exhaustive where Hypothesis samples: every field (of a list, its first item) of the captures,
    # smallest first, up to PATH_BUDGET fields in all, replaced in turn by each odd value
    bodies = sorted((b for b in map(_json_body, parser.texts) if b), key=lambda b: len(list(_paths(b[1], items=1))))
    budget = PATH_BUDGET
    for head, doc in bodies:
        paths = list(_paths(doc, items=1))
        if budget <= 0:
            break
        budget -= len(paths)
        for path in paths:
            for value in SINGLE_ODD:
                outcome(parser, head + json.dumps(_set(copy.deepcopy(doc), path, copy.deepcopy(value))))


def test_every_fuzzed_parser_has_captures():
    # a parser without real text would only ever see garbage
    assert all(p.texts for p in PARSERS)
