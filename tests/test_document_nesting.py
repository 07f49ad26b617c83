"""Documents nested too deep, and a resume document without its target (issue #28): each a one-line
DocumentError (exit 2), never a RecursionError or KeyError traceback."""

import json

import pytest

from conftest import slogqual
from slogqual.results import MAX_DEPTH, load_json, load_sweep
from slogqual.results.schema import DocumentError
from slogqual.sweep.engine import load_for_resume


def _sweep(**over):
    doc = {"schema": "slogqual.sweep/1", "source": "slogqual", "status": "interrupted", "error": None,
           "target": {"path": "/dev/null", "kind": "file", "size": None},
           "params": {"mode": "flush", "sizes": [512, 4096], "runtime_s": 1.0, "settle_s": 1.0},
           "environment": {}, "notes": [], "warnings": [], "points": []}
    doc.update(over)
    return doc


def _nested(depth):
    return "[" * depth + "]" * depth


def _write_deep(path, depth):
    # the nesting sits in a key no check looks into: only the reader's own depth can stop it
    text = json.dumps(_sweep(environment={"x": "NESTED"})).replace('"NESTED"', _nested(depth))
    path.write_text(text)
    return path


@pytest.mark.parametrize("depth", [100_000, MAX_DEPTH + 1])
def test_load_json_refuses_deep_nesting_as_a_document_error(tmp_path, depth):
    path = _write_deep(tmp_path / "deep.json", depth)
    with pytest.raises(DocumentError, match=rf"deep.json: not a slogqual document \(JSON nested deeper than "
                                            rf"{MAX_DEPTH} levels\)"):
        load_json(str(path))


def test_nesting_a_document_may_have_still_loads(tmp_path):
    path = _write_deep(tmp_path / "ok.json", MAX_DEPTH - 3)  # object, environment, x: three levels above
    assert load_sweep(str(path)).environment["x"] == json.loads(_nested(MAX_DEPTH - 3))


@pytest.mark.parametrize("argv", [
    ("sweep", "--resume", "{doc}"),
    ("plot", "{doc}", "-o", "{out}"),
    ("import", "json", "{doc}", "--store", "{store}"),
    ("scenario", "cost", "{doc}", "{doc}"),
])
def test_every_reader_refuses_deep_nesting_in_one_line(tmp_path, argv):
    doc = _write_deep(tmp_path / "deep.json", 100_000)
    args = [a.format(doc=doc, out=tmp_path / "p.png", store=tmp_path / "store.db") for a in argv]
    proc = slogqual(*args, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"slogqual: {doc}: not a slogqual document (JSON nested deeper than {MAX_DEPTH} levels)"]


def test_resume_without_target_path_is_refused_naming_the_key(tmp_path):
    doc = _sweep(target={"kind": "block"})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DocumentError, match=r"r\.json: key 'target\.path' is missing"):
        load_for_resume(str(path))
    proc = slogqual("sweep", "--resume", path, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"slogqual: {path}: key 'target.path' is missing"]


@pytest.mark.parametrize("params,why", [
    ({"mode": "flush"}, "key 'params.sizes' is missing"),
    ({"sizes": []}, "key 'params.sizes' is empty"),
    ({"sizes": [512, "4k"]}, "key 'params.sizes[1]' must be a size in bytes"),
])
def test_resume_without_sizes_is_refused_naming_the_key(tmp_path, params, why):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_sweep(params=params)))
    with pytest.raises(DocumentError, match=why.replace("[", r"\[").replace("]", r"\]")):
        load_for_resume(str(path))
