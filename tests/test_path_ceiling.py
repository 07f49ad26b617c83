"""Declared ceilings for path elements sysfs cannot rate (issue #30; analysis/path_ceiling.py): parsed, set
on the paths, recorded, and used by the shelf's and the striped log's verdicts in place of an unknown link.
Paths: the recorded lab guest tree and test_shelf's SYNTHETIC two-HBA tree (the lab shelf's layout)."""

import json

import pytest

from slogqual.analysis import path_ceiling as P
from slogqual.analysis import shelf as A
from slogqual.report import shelf as shelf_words
from slogqual.device import topology as T
from slogqual.errors import UsageError
from slogqual.results import schema as S
from slogqual.results.device import check_topology
from slogqual.results.shelf import UnitPath

from conftest import slogqual
from test_shelf import _held_figures, two_hba_tree

MiB = 1 << 20


def test_declarations_parse_by_name_or_by_unit_and_kind():
    d = P.parse("host2=3m")
    assert (d.name, d.unit, d.kind, d.bytes_s) == ("host2", None, None, 3 * MiB)
    d = P.parse("0000:00:05.0=2400m/s")  # a PCI address keeps its colons; '/s' is allowed
    assert (d.name, d.bytes_s) == ("0000:00:05.0", 2400 * MiB)
    d = P.parse("/dev/sdb:scsi-host=40m")
    assert (d.unit, d.kind, d.name) == ("/dev/sdb", "scsi-host", None)


@pytest.mark.parametrize("text, says", [
    ("host2", "give ELEMENT=RATE"), ("=3m", "give ELEMENT=RATE"), ("host2=", "give ELEMENT=RATE"),
    ("host2=fast", "not a rate"), ("host2=0", "above 0"), (":scsi-host=3m", "name the unit"),
])
def test_bad_declarations_are_one_line(text, says):
    with pytest.raises(UsageError) as exc:
        P.parse(text)
    assert says in str(exc.value) and "\n" not in str(exc.value)


def _paths(root):
    return [T.walk(n, root) for n in ("sdb", "sdc", "sdd", "sde")]


def test_a_declaration_sets_the_element_it_names_on_every_path_and_round_trips(tmp_path):
    paths = _paths(two_hba_tree(tmp_path))
    P.apply(paths, [P.parse("/dev/sdb:scsi-host=3m")])
    declared = {(p.device, e.name) for p in paths for e in p.elements if e.declared_ceiling}
    # the SCSI host of sdb is host2: set on all three units behind it, not on sde's host3
    assert declared == {("/dev/sdb", "host2"), ("/dev/sdc", "host2"), ("/dev/sdd", "host2")}
    doc = json.loads(json.dumps(paths[0].to_dict()))
    check_topology(S.Checker("t"), doc, "topology")
    assert UnitPath.from_dict(doc) == paths[0]
    host2 = [e for e in doc["elements"] if e["name"] == "host2"][0]
    assert host2["declared_ceiling"] == 3 * MiB and host2["declared"] == "/dev/sdb:scsi-host=3m"


def test_a_declaration_that_names_nothing_is_refused_with_what_the_paths_hold(tmp_path):
    paths = _paths(two_hba_tree(tmp_path))
    for text in ("host9=3m", "/dev/sdz:scsi-host=3m", "/dev/sdb:sas-expander=3m"):
        with pytest.raises(UsageError) as exc:
            P.apply(paths, [P.parse(text)])
        assert text in str(exc.value) and "host2" in str(exc.value)


def test_the_lab_shelf_with_its_hba_declared_is_capped_not_merely_held(tmp_path):
    """The same figures as test_shelf's held group: without a ceiling the three behind host2 are HELD (no
    ceiling explains them); with host2 declared at the throttle's 3 MB/s-ish they reached it: CAPPED, the
    ceiling said to be declared."""
    paths = _paths(two_hba_tree(tmp_path))
    figures = _held_figures((1.3, 1.3, 0.45))
    assert A.HELD in A.analyse(figures, paths).kinds()
    P.apply(paths, [P.parse("host2=3m")])
    result = A.analyse(figures, paths)
    assert A.HELD not in result.kinds()
    (capped,) = [f for f in result.findings if f.kind == A.CAPPED]
    assert capped.units == ["/dev/sdb", "/dev/sdc", "/dev/sdd"] and capped.element.ceiling == 3 * MiB
    assert capped.figures["of_ceiling"] == pytest.approx(3.05e6 / (3 * MiB))
    assert "SCSI host host2 (declared host2=3m), whose ceiling of 3.1 MB/s caps them" in shelf_words.finding_words(capped)
    # a declared ceiling far above what they carried does not explain it: held, the declared one named
    paths = _paths(two_hba_tree(tmp_path / "high"))
    P.apply(paths, [P.parse("host2=40m")])
    (held,) = [f for f in A.analyse(figures, paths).findings if f.kind == A.HELD]
    assert held.figures["nearest_ceiling"] == 40 * MiB


def test_sweep_refuses_a_declaration_without_probe_or_naming_nothing_before_writing(tmp_path):
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        f.write_bytes(b"\0" * (1 << 20))
    out = tmp_path / "out"
    out.mkdir()
    r = slogqual("sweep", str(a), str(b), "--sizes", "128k", "--runtime", "0.1", "--settle", "0",
                 "--path-ceiling", "host0=3m", "-o", str(out), "--quiet")
    assert r.returncode == 2 and "add --probe" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = slogqual("sweep", str(a), str(b), "--sizes", "128k", "--runtime", "0.1", "--settle", "0", "--probe",
                 "--path-ceiling", "host0=3m", "-o", str(out), "--quiet")
    # files have no path from the host: nothing to declare a ceiling for
    assert r.returncode == 2 and "no element of the units' paths is host0" in r.stderr, r.stderr
    assert list(out.iterdir()) == []
    r = slogqual("sweep", str(a), "--path-ceiling", "host0=fast", "--quiet")
    assert r.returncode == 2 and "not a rate" in r.stderr


def test_qualify_and_scenario_refuse_a_declaration_before_writing(tmp_path):
    a, b = tmp_path / "a.img", tmp_path / "b.img"
    for f in (a, b):
        f.write_bytes(b"\0" * (16 << 20))
    out = tmp_path / "q"
    qualify = ("qualify", str(a), str(b), "--profile", "homelab-1gbe", "--parallel", "--out", str(out), "--quiet")
    r = slogqual(*qualify, "--path-ceiling", "host0=3m")
    assert r.returncode == 2 and "add --probe" in r.stderr and not out.exists(), r.stderr
    r = slogqual(*qualify, "--probe", "--path-ceiling", "/dev/sdb:scsi-host=3m")
    assert r.returncode == 2 and "no element of the units' paths is the scsi-host of /dev/sdb" in r.stderr, r.stderr
    assert not out.exists()
    result = tmp_path / "s.json"
    r = slogqual("scenario", "run", "iscsi-4k-randwrite", "--data", str(a), "--log", str(b), "--path-ceiling",
                 "host0=3m", "-o", str(result), "--quiet")
    assert r.returncode == 2 and "no element of the units' paths is host0" in r.stderr and not result.exists(), r.stderr
    r = slogqual("scenario", "run", "iscsi-4k-randwrite", "--lab", "--path-ceiling", "host0=3m", "--quiet")
    assert r.returncode == 2 and "slogqual lab run --path" in r.stderr, r.stderr
