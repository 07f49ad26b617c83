"""Property tests of the CLI against careless input (Hypothesis, seeded and bounded: the same examples
on every run). Whatever the option values, paths and result documents, every run ends with a
documented exit code and never a traceback; a refused run (exit 2) leaves the target, the store and
the -o destination byte-identical.

The commands run in this process (slogqual.cli.main), so an uncaught exception is a traceback the
user would have seen; the documents are mutations of a real sweep (tests/fixtures/qualify).
"""

import copy
import hashlib
import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import fixture_path, need  # noqa: E402
from slogqual import cli  # noqa: E402

DOCUMENTED = {0, 1, 2, 3}  # docs/sweep.md's exit codes (130/141 need a signal or a closed pipe)
BOUNDED = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SWEEP = json.load(open(fixture_path("qualify", "qualification-nbd-memory-952d1d3.json")))["sweep"]["document"]


def digest(path):
    if not os.path.exists(path):
        return None
    if os.path.isdir(path):
        return "dir"
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def run(argv):
    """(exit code, stdout, stderr) of one in-process run; an escaping exception fails the test with
    the argv that caused it."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as exc:  # argparse's own refusals
                code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:  # what would have been a traceback
        pytest.fail(f"traceback from {argv!r}: {type(exc).__name__}: {exc}")
    return code, out.getvalue(), err.getvalue()


# --- option values ---------------------------------------------------------------------------------------

FINE_NUMBER = st.sampled_from(["0.05", "0.1", "1e-3", "0"])  # accepted (settle 0 is), so later checks are reached
NUMBER_TEXT = st.one_of(
    FINE_NUMBER, FINE_NUMBER, FINE_NUMBER,
    st.sampled_from(["inf", "-inf", "nan", "NaN", "1e309", "-1", "0", "", " ", "1s", "0x10", "½", "١", "1_0",
                     "0.05", "1e-9", "--", "None"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6))
SIZE_TOKEN = st.one_of(st.sampled_from(["4k", "512", "3000", "0", "-4k", "8m", "16m", "1g", "", "k", "4K", "٤k",
                                        "4kk", "4 k", "1e3", "nan"]), st.text(max_size=4))
SIZES_TEXT = st.lists(SIZE_TOKEN, max_size=4).map(",".join)


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    d = tmp_path_factory.mktemp("arena")
    target = d / "target.img"
    target.write_bytes(os.urandom(1 << 20))
    out = d / "notes.txt"
    out.write_text("someone's notes\n")
    return {"dir": d, "target": str(target), "out": str(out), "store": str(d / "store.sqlite")}


@need("fio")
@BOUNDED
@given(runtime=NUMBER_TEXT, settle=NUMBER_TEXT, sizes=SIZES_TEXT,
       mode=st.sampled_from(["flush", "dsync", "bogus", ""]),
       where=st.sampled_from(["target", "missing", "dir", "slash", "empty", "long"]),
       out=st.sampled_from(["notes", "target", "store", "dir"]))
def test_sweep_options_never_crash_and_a_refusal_writes_nothing(arena, monkeypatch, runtime, settle, sizes, mode,
                                                               where, out):
    monkeypatch.setenv("SLOGQUAL_STORE", arena["store"])
    monkeypatch.chdir(arena["dir"])
    paths = {"target": arena["target"], "missing": str(arena["dir"] / "nope.img"), "dir": str(arena["dir"]),
             "slash": arena["target"] + "/", "empty": "", "long": "x" * 5000}
    outs = {"notes": arena["out"], "target": arena["target"], "store": arena["store"], "dir": str(arena["dir"])}
    watched = [arena["target"], arena["out"], arena["store"]]
    before = {p: digest(p) for p in watched}
    code, _out, err = run(["sweep", paths[where], f"--runtime={runtime}", f"--settle={settle}", f"--sizes={sizes}",
                           f"--mode={mode}", "-o", outs[out], "--quiet"])
    hypothesis.event(f"exit {code}: {err.strip()[:40]}")
    assert code in DOCUMENTED, (code, err)
    assert "Traceback" not in err
    # -o is never someone's notes, the target itself, the store or a directory: always refused here
    assert code == 2, (code, err)
    assert err.strip() and len(err.strip().splitlines()) <= 2, err
    assert {p: digest(p) for p in watched} == before


# --- result documents ------------------------------------------------------------------------------------

def leaves(doc, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, path + (i,))
    yield path


JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
                        st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                             max_size=2))
ALL_PATHS = [p for p in leaves(SWEEP) if p]


@st.composite
def broken_sweeps(draw):
    doc = copy.deepcopy(SWEEP)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()):
                if isinstance(parent, dict):
                    parent.pop(path[-1], None)
                elif isinstance(parent, list) and path[-1] < len(parent):
                    parent.pop(path[-1])
            else:
                parent[path[-1]] = draw(JSON_VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the way there
    return doc


@pytest.fixture(scope="module")
def docs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("docs")


@BOUNDED
@given(doc=broken_sweeps(), command=st.sampled_from(["compare", "export", "report", "import-json", "resume", "plot"]))
def test_a_broken_result_document_is_one_line_never_a_traceback(docs_dir, monkeypatch, doc, command):
    monkeypatch.setenv("SLOGQUAL_STORE", str(docs_dir / "store.sqlite"))
    monkeypatch.chdir(docs_dir)
    bad = docs_dir / "bad.json"
    bad.write_text(json.dumps(doc))
    good = docs_dir / "good.json"
    good.write_text(json.dumps(SWEEP))
    out = docs_dir / "out.file"
    for stale in (out, docs_dir / "out.file.png"):
        if stale.exists():
            stale.unlink()
    argv = {"compare": ["compare", good, bad],
            "export": ["export", "--csv", bad, "-o", out],
            "report": ["report", bad, "-o", out],
            "import-json": ["import", "json", bad],
            "resume": ["sweep", "--resume", bad, "--quiet"],
            "plot": ["plot", bad, "-o", str(out) + ".png"]}[command]
    store_before = digest(docs_dir / "store.sqlite")
    code, _out, err = run(argv)
    hypothesis.event(f"{command} exit {code}: {err.strip()[:50]}")
    assert code in DOCUMENTED, (code, err)
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("slogqual: ") and len(err.strip().splitlines()) == 1, err
        assert not out.exists() and not (docs_dir / "out.file.png").exists()
        assert digest(docs_dir / "store.sqlite") == store_before


# --- scenario and profile files --------------------------------------------------------------------------

TOML_VALUES = st.sampled_from(['"4k"', "-1", "0", "inf", "nan", "-inf", "1e309", '"bogus"', "[]", "[0]", '"3000"',
                               "true", '"\u0661"', "{a = 1}", '""', "[1, 2, 3]", '["4k", "4k"]', "1.5", '"1m"'])


@st.composite
def mutated_toml(draw, text):
    lines = text.splitlines()
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        keyed = [i for i, line in enumerate(lines) if " = " in line and not line.lstrip().startswith("#")]
        if not keyed:
            break
        i = draw(st.sampled_from(keyed))
        action = draw(st.sampled_from(["value", "drop", "twice", "rename"]))
        key = lines[i].split(" = ", 1)[0]
        if action == "value":
            lines[i] = f"{key} = {draw(TOML_VALUES)}"
        elif action == "drop":
            del lines[i]
        elif action == "twice":
            lines.insert(i, lines[i])
        else:
            lines[i] = key.rstrip() + "x = " + lines[i].split(" = ", 1)[1]
    return "\n".join(lines) + "\n"


SCENARIO_TEXT = open(os.path.join(os.path.dirname(fixture_path()), "..", "scenarios", "nfs-sync.toml")).read()
PROFILE_TEXT = open(os.path.join(os.path.dirname(fixture_path()), "..", "scenarios", "profiles",
                                 "homelab-1gbe.toml")).read()


@BOUNDED
@given(text=mutated_toml(SCENARIO_TEXT), quick=st.booleans())
def test_a_broken_scenario_file_is_one_line_never_a_traceback(docs_dir, text, quick):
    path = docs_dir / "s.toml"
    path.write_text(text)
    code, out, err = run(["scenario", "show", path, *(["--quick"] if quick else [])])
    hypothesis.event(f"scenario show exit {code}")
    assert code in (0, 2) and "Traceback" not in err, (code, err)
    if code == 2:
        assert err.startswith("slogqual: ") and len(err.strip().splitlines()) == 1 and not out, err
    else:
        assert json.loads(out)["name"]


@need("fio")
@BOUNDED
@given(text=mutated_toml(PROFILE_TEXT))
def test_a_broken_profile_is_refused_before_the_target_is_touched(arena, monkeypatch, text):
    monkeypatch.setenv("SLOGQUAL_STORE", arena["store"])
    path = arena["dir"] / "p.toml"
    path.write_text(text)
    out = arena["dir"] / "q"
    before = digest(arena["target"])
    code, _out, err = run(["qualify", arena["target"], "--profile", path, "--out", out, "--quiet", "--no-html",
                           "--runtime", "0.05", "--settle", "0", "--max-rounds", "0", "--no-store"])
    hypothesis.event(f"qualify exit {code}: {err.strip()[:50]}")
    assert code in DOCUMENTED and "Traceback" not in err, (code, err)
    if code == 2:  # refused: one line, and the target was not written
        assert err.startswith("slogqual: ") and len(err.strip().splitlines()) == 1, err
        assert digest(arena["target"]) == before
