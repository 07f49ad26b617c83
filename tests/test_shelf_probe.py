"""Together vs alone (issue #30) on real files with the real pair engine: each unit alone, then all at once,
per size, and the analysis of each size. Files have no path to hardware: the probe says so instead of
inventing one, and the verdict rests on the figures alone."""

import json

import pytest

from slogqual.sweep import target as targets
from slogqual.analysis import shelf as A
from slogqual.device import claim_for_writing
from slogqual.results.shelf import ShelfResult
from slogqual.sweep.shelf_probe import DEPTH, SHELF_SCHEMA, probe
from slogqual.units import KiB

pytestmark = pytest.mark.integration


def test_probe_measures_each_unit_alone_and_together_per_size(tmp_path, pair_engine):
    files = [tmp_path / f"{n}.img" for n in "ab"]
    for f in files:
        f.write_bytes(b"\0" * (8 << 20))
    tray = [targets.resolve(str(f), 256 * KiB) for f in files]
    with claim_for_writing(tray[0].path, False), claim_for_writing(tray[1].path, False):
        result = probe(tray, runtime_s=0.2, sizes=[128 * KiB, 256 * KiB, 16 << 20])
    # 16 MiB does not fit an 8 MiB file; the higher-queue-depth round follows, at 1 MiB (fio, no flush)
    assert [(s.size, s.depth) for s in result.sizes] == [(128 * KiB, 1), (256 * KiB, 1), (1024 * KiB, DEPTH)]
    assert result.sizes[-1].label == f"1M QD{DEPTH}"
    for s in result.sizes:
        assert set(s.alone) == set(s.together) == {str(f) for f in files}
        assert all(v > 0 for v in list(s.alone.values()) + list(s.together.values()))
        aggregate = [f for f in s.analysis.findings if f.kind in (A.SCALED, A.CAPPED, A.SHORT)]
        assert len(aggregate) == 1  # one verdict on the aggregate per size
        assert aggregate[0].figures["together"] == pytest.approx(sum(s.together.values()))
        assert aggregate[0].figures["alone_sum"] == pytest.approx(sum(s.alone.values()))
        assert aggregate[0].kind != A.CAPPED  # files share no element with a link: nothing to blame
    assert all("not a block device" in p.error for p in result.paths)
    doc = json.loads(json.dumps(result.to_dict()))
    assert doc["schema"] == SHELF_SCHEMA and len(doc["sizes"]) == 3 and doc["units"] == [str(f) for f in files]
    assert "depth" not in doc["sizes"][0] and doc["sizes"][2]["depth"] == DEPTH and doc["sizes"][2]["flush"] is False
    read = ShelfResult.from_dict(doc)
    assert [s.label for s in read.sizes] == ["128K", "256K", f"1M QD{DEPTH}"]


def test_sweep_probe_writes_the_shelf_document_beside_the_results_and_prints_the_verdicts(tmp_path):
    from conftest import load, slogqual

    files = [tmp_path / f"{n}.img" for n in "ab"]
    for f in files:
        f.write_bytes(b"\0" * (16 << 20))
    out = tmp_path / "out"
    p = slogqual("sweep", *files, "--parallel", "--probe", "--sizes", "4k", "--runtime", "0.2", "--settle", "0",
                 "--quiet", "-o", out)
    assert p.returncode == 0, p.stderr
    (shelf_file,) = [n for n in sorted(out.iterdir()) if n.name.startswith("slogqual-shelf-")]
    doc = load(shelf_file)
    assert doc["schema"] == SHELF_SCHEMA and [s["size"] for s in doc["sizes"]] == [128 * KiB << i for i in range(7)] \
        + [1024 * KiB]
    assert "together vs alone" in p.stdout and "128K: 2 units alone" in p.stdout
    assert f"1M QD{DEPTH}: 2 units" in p.stdout
    assert len([n for n in out.iterdir() if n.name.startswith("slogqual-sweep-")]) == 2


@pytest.mark.parametrize("extra, words", [([], "two or more"), (["b", "--engine", "fio"], "pair engine")])
def test_probe_is_bad_input_before_anything_is_written(tmp_path, extra, words):
    from conftest import slogqual

    a = tmp_path / "a.img"
    a.write_bytes(b"\0" * (8 << 20))
    (tmp_path / "b").write_bytes(b"\0" * (8 << 20))
    p = slogqual("sweep", a, *[tmp_path / e if e == "b" else e for e in extra], "--probe", "--sizes", "4k",
                 "--quiet", "-o", tmp_path / "out", cwd=tmp_path)
    assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert a.read_bytes() == b"\0" * (8 << 20)


def _recorded_paths(monkeypatch, tree, names):
    """Each file's path from the host read from the recorded sysfs ``tree`` as the disk ``names[file]``
    (test_shelf's two-HBA shelf), every read counted: a file has no path of its own to declare a ceiling on."""
    from slogqual.device import topology as T

    reads = []

    def unit_path(path, root=None, host=None):
        reads.append(path)
        unit = T.walk(names[path], tree)
        unit.device = path
        return unit

    monkeypatch.setattr(T, "unit_path", unit_path)
    return reads


def test_a_probing_sweep_reads_each_units_path_and_identity_once_and_records_the_plans(tmp_path, monkeypatch,
                                                                                       pair_engine):
    from slogqual import device
    from slogqual.analysis import path_ceiling
    from slogqual.device import topology as T
    from slogqual.sweep.engine import SweepParams
    from slogqual.sweep.door import SweepRequest, run_sweeps
    from test_shelf import two_hba_tree

    tree = two_hba_tree(tmp_path / "sys")
    names = {str(tmp_path / f"{n}.img"): n for n in ("sdb", "sde")}
    for f in names:
        with open(f, "wb") as fh:
            fh.write(b"\0" * (8 << 20))
    reads = _recorded_paths(monkeypatch, tree, names)
    identified = []
    real_identify = device.identify
    monkeypatch.setattr(device, "identify", lambda path: identified.append(path) or real_identify(path))
    req = SweepRequest(targets=list(names), params=SweepParams(sizes=[128 * KiB], runtime_s=0.1, settle_s=0),
                       parallel=True, probe=True, path_ceilings=["host2=3m"], output_dir=str(tmp_path / "out"),
                       record_in_store=False)
    (tmp_path / "out").mkdir()
    outcome = run_sweeps(req)
    assert outcome.exit_code == 0 and outcome.shelf is not None
    # once each: the plan's read (checking the ceiling) is the probe's; the sweep's identity is the probe's
    assert sorted(reads) == sorted(names)
    assert sorted(identified) == sorted(names)
    # the document holds what the probe read for itself before: the same paths with the ceiling set
    expected = [T.walk(n, tree) for n in names.values()]
    for unit, f in zip(expected, names):
        unit.device = f
    path_ceiling.apply(expected, path_ceiling.parse_all(["host2=3m"], lambda u: u))
    doc = json.loads(open(outcome.shelf_path).read())
    assert json.dumps(doc["paths"]) == json.dumps([p.to_dict() for p in expected])
    assert [e["name"] for e in doc["paths"][0]["elements"] if e.get("declared_ceiling")] == ["host2"]
