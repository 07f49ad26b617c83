"""diskinfo -wS import: real published output (padded and collapsed), headers, garbage, the CLI."""

import json

import pytest

from conftest import fixture_path, load, slogqual
from slogqual.errors import UsageError
from slogqual.importers import diskinfo
from slogqual.results import SWEEP_SCHEMA, SweepResult, load_sweep, save_sweep

COLLAPSED = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.collapsed.txt")
PADDED_BOTH = fixture_path("diskinfo", "freebsd-r320683-intel710-samsung950pro.padded.txt")
PADDED_ONE = fixture_path("diskinfo", "freebsd-r320683-intel710.padded.txt")

# The published figures (FreeBSD r320683 commit message), written out here once more by hand so the
# parser is checked against the source, not against itself.
INTEL_710 = [(512, 138.3, 3.5), (1024, 137.7, 7.1), (2048, 151.1, 12.9), (4096, 158.2, 24.7),
             (8192, 175.6, 44.5), (16384, 210.1, 74.4), (32768, 274.2, 114.0), (65536, 416.5, 150.1),
             (131072, 776.6, 161.0), (262144, 1503.1, 166.3), (524288, 2968.7, 168.4),
             (1048576, 5866.8, 170.5), (2097152, 11696.6, 171.0), (4194304, 23329.6, 171.5),
             (8388608, 46779.5, 171.0)]
SAMSUNG_950 = [(512, 2092.9, 0.2), (1024, 2013.1, 0.5), (2048, 2014.8, 1.0), (4096, 2090.7, 1.9),
               (8192, 2044.5, 3.8), (16384, 2084.8, 7.5), (32768, 2137.1, 14.6), (65536, 2173.4, 28.8),
               (131072, 2923.9, 42.8), (262144, 3085.3, 81.0), (524288, 3112.2, 160.7),
               (1048576, 2430.6, 411.4), (2097152, 3788.9, 527.9), (4194304, 6198.0, 645.4),
               (8388608, 10764.9, 743.2)]


def triples(result):
    return [(p.size, p.lat_us.mean, p.mbps) for p in result.points]


@pytest.mark.parametrize("path", [COLLAPSED, PADDED_BOTH])
def test_two_devices_in_one_file_padded_or_collapsed(path):
    results = diskinfo.import_file(path)
    assert [triples(r) for r in results] == [INTEL_710, SAMSUNG_950]
    for r in results:
        assert r.source == "diskinfo" and r.status == "complete"
        assert r.params["sizes"] == [s for s, _, _ in INTEL_710]
        assert r.warnings == []
        assert not any("does not equal" in n for n in r.notes)  # every MiB/s follows from its mean
        assert all(p.lat_basis == "completion" and p.lat_us.p99 is None for p in r.points)
        assert r.device is None  # no header was published with these runs


def test_padded_single_device_and_derived_counts():
    (r,) = diskinfo.import_file(PADDED_ONE)
    assert triples(r) == INTEL_710
    p512, p8m = r.points[0], r.points[-1]
    # 138.3 us: 29 batches of 250 to pass 1 s; 46.8 ms: one batch of 250 takes 11.7 s.
    assert p512.ios == 7250 and p8m.ios == 250
    assert p512.iops == pytest.approx(1e6 / 138.3)
    assert any("derived" in n for n in r.notes)


def test_whitespace_forms_agree():
    a = [r.to_dict()["points"] for r in diskinfo.import_file(COLLAPSED)]
    b = [r.to_dict()["points"] for r in diskinfo.import_file(PADDED_BOTH)]
    assert a == b


# A verbose header laid out with diskinfo.c's own printf formats ("\t%-12u\t# sectorsize" ...); the
# values are made up for the test, the result lines are the Intel 710's published ones.
HEADER = (
    "/dev/ada1\n"
    "\t512         \t# sectorsize\n"
    "\t100030242816\t# mediasize in bytes (93G)\n"
    "\t195371568   \t# mediasize in sectors\n"
    "\t4096        \t# stripesize\n"
    "\t0           \t# stripeoffset\n"
    "\tINTEL SSDSA2BZ100G3\t# Disk descr.\n"
    "\tCVLV1234567 \t# Disk ident.\n"
    "\tYes         \t# TRIM/UNMAP support\n"
    "\t0           \t# Rotation rate in RPM\n"
    "\n"
)


def _block(rows):
    return "Synchronous random writes:\n" + "".join(
        "\t%4.4g kbytes: " % (s / 1024) + "%8.1f usec/IO = %8.1f Mbytes/s\n" % (us, mb) for s, us, mb in rows)


def test_verbose_header_gives_identity():
    (r,) = diskinfo.import_text(HEADER + _block(INTEL_710), "hdr.txt")
    assert r.target == {"path": "/dev/ada1", "kind": "block", "size": 100030242816}
    assert r.device["model"] == "INTEL SSDSA2BZ100G3"
    assert r.device["serial"] == "CVLV1234567"
    assert r.device["sector_size"] == 512 and r.device["trim"] is True and r.device["rotational"] is False
    assert r.device["diskinfo_header"]["mediasize in bytes (93G)"] == "100030242816"
    assert triples(r) == INTEL_710


def test_collapsed_header_and_two_named_devices():
    collapsed = "\n".join(" ".join(line.split()) for line in (HEADER + _block(INTEL_710)).splitlines())
    second = collapsed.replace("/dev/ada1", "/dev/nvd0").replace("INTEL SSDSA2BZ100G3", "Samsung SSD 950 PRO")
    results = diskinfo.import_text(collapsed + "\n" + second + "\n", "two.txt")
    assert [r.target["path"] for r in results] == ["/dev/ada1", "/dev/nvd0"]
    assert [r.device["model"] for r in results] == ["INTEL SSDSA2BZ100G3", "Samsung SSD 950 PRO"]


def test_shell_prompt_and_other_diskinfo_tests_are_not_garbage():
    text = ("root@freenas:~ # diskinfo -citwS /dev/da3\n"
            "I/O command overhead:\n\ttime to read 10MB block      0.063105 sec\t=    0.003 msec/sector\n"
            "\ttime to read 20480 sectors   1.243264 sec\t=    0.061 msec/sector\n"
            "\tcalculated command overhead\t\t\t=    0.058 msec/sector\n"
            "Seek times:\n\tFull stroke:\t  250 iter in   0.050000 sec =    0.200 msec\n"
            "Transfer rates:\n\toutside:       102400 kbytes in   0.300000 sec =   341333 kbytes/sec\n"
            "Asynchronous random reads:\n\tsectorsize:    12345 ops in    3.000000 sec =     4115 IOPS\n"
            + _block(INTEL_710[:4]))
    (r,) = diskinfo.import_text(text, "paste.txt")
    assert r.target["path"] == "/dev/da3" and len(r.points) == 4
    assert any("ends at 4K" in n for n in r.notes)


def test_garbage_is_reported_with_its_line_number():
    text = _block(INTEL_710[:3]) + "this line is not diskinfo output\n" + _block(INTEL_710[3:5])
    with pytest.raises(UsageError, match=r"line 5: not diskinfo -wS output: 'this line is not"):
        diskinfo.import_text(text, "g.txt")
    results = diskinfo.import_text(text, "g.txt", skip_garbage=True)
    assert any("lines 5" in n for r in results for n in r.notes)


def test_no_result_lines_is_an_error():
    with pytest.raises(UsageError, match="no diskinfo -wS result lines"):
        diskinfo.import_text(HEADER, "hdr-only.txt")
    with pytest.raises(UsageError, match="no diskinfo -wS result lines"):
        diskinfo.import_text("", "empty.txt")


def test_inconsistent_figures_are_flagged():
    rows = list(INTEL_710)
    rows[3] = (4096, 158.2, 42.7)  # a mistyped MiB/s
    (r,) = diskinfo.import_text(_block(rows), "typo.txt")
    flagged = [n for n in r.notes if "does not equal size / usec/IO" in n]
    assert len(flagged) == 1 and "1 line(s)" in flagged[0] and "line 5: 42.7 Mbytes/s vs 24.7" in flagged[0]
    (clean,) = diskinfo.import_text(_block(INTEL_710), "clean.txt")
    assert not any("does not equal" in n for n in clean.notes)


def test_size_that_is_not_whole_sectors_is_rejected():
    with pytest.raises(UsageError, match=r"line 2: 0.3 kbytes is not a whole number of 512-byte sectors"):
        diskinfo.import_text("Synchronous random writes:\n0.3 kbytes: 100.0 usec/IO = 3.0 Mbytes/s\n", "x.txt")


def test_result_round_trips_through_the_schema():
    for r in diskinfo.import_file(COLLAPSED):
        again = SweepResult.from_dict(json.loads(json.dumps(r.to_dict())))
        assert again.to_dict() == r.to_dict()
        assert again.schema == SWEEP_SCHEMA


def test_cli_writes_one_file_per_device(tmp_path):
    out = tmp_path / "di.json"
    proc = slogqual("import", "diskinfo", COLLAPSED, "-o", out, "--name", "Intel 710", "--name", "Samsung 950 PRO")
    assert proc.returncode == 0, proc.stderr
    docs = [load(tmp_path / "di-1.json"), load(tmp_path / "di-2.json")]
    assert [d["target"]["label"] for d in docs] == ["Intel 710", "Samsung 950 PRO"]
    assert [d["source"] for d in docs] == ["diskinfo", "diskinfo"]
    assert "SAS SSD-class" in proc.stderr  # the class in plain words for each file written


def test_cli_single_device_to_stdout_and_errors(tmp_path):
    proc = slogqual("import", "diskinfo", PADDED_ONE)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["points"][0]["lat_us"]["mean"] == 138.3
    bad = tmp_path / "bad.txt"
    bad.write_text("Synchronous random writes:\n\t 0.5 kbytes:    138.3 usec/IO =      3.5 Mbytes/s\nlorem ipsum\n")
    proc = slogqual("import", "diskinfo", bad)
    assert proc.returncode == 2 and "line 3" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n")
    proc = slogqual("import", "diskinfo", empty)
    assert proc.returncode == 2 and "no diskinfo -wS result lines" in proc.stderr
    proc = slogqual("import", "diskinfo", tmp_path / "missing.txt")
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_web_copy_with_non_breaking_spaces_and_crlf():
    text = _block(INTEL_710).replace("\t", "\u00a0\u00a0").replace(" ", "\u00a0").replace("\n", "\r\n")
    (r,) = diskinfo.import_text(text, "web.txt")
    assert triples(r) == INTEL_710
    source = _block(INTEL_710).replace("\t", "&nbsp; &nbsp; ").replace("  ", " &nbsp;")  # a page's HTML
    (r,) = diskinfo.import_text(source, "page.html.txt")
    assert triples(r) == INTEL_710


REAL_HEADER = fixture_path("diskinfo", "dainslef-notes-hgst-hdn726060ale614.v.txt")


def test_real_verbose_header_parses_and_without_results_is_an_error():
    with open(REAL_HEADER) as fh:
        parsed = diskinfo.parse(fh.read(), REAL_HEADER)
    assert parsed.garbage == [] and len(parsed.devices) == 1
    dev = parsed.devices[0]
    assert dev.name == "ada1" and dev.command == "$ diskinfo -v ada1" and dev.points == []
    rec = diskinfo.header_record(dev)
    assert (rec["model"], rec["serial"], rec["sector_size"], rec["media_size"]) == (
        "HGST HDN726060ALE614", "K1JVDUGD", 512, 6001175126016)
    assert rec["rotation_rate"] == 7200 and rec["rotational"] is True and rec["trim"] is False
    assert rec["stripe_size"] == 4096 and rec["zone_mode"] == "Not_Zoned"
    with pytest.raises(UsageError, match=r"no diskinfo -wS result lines .*\(diskinfo output of ada1 without the -S test\)"):
        diskinfo.import_file(REAL_HEADER)


def test_real_header_followed_by_results_names_the_device():
    with open(REAL_HEADER) as fh:
        text = fh.read()
    (r,) = diskinfo.import_text(text + "\n" + _block(INTEL_710[:3]), "joined.txt")
    assert r.target["path"] == "ada1" and r.target["kind"] == "block" and r.device["model"] == "HGST HDN726060ALE614"


ZERO_LINE = ("Synchronous random writes:\n"
             "\t 0.5 kbytes:    138.3 usec/IO =      3.5 Mbytes/s\n"
             "\t   1 kbytes:      0.0 usec/IO =      7.1 Mbytes/s\n"
             "\t   2 kbytes:    151.1 usec/IO =     12.9 Mbytes/s\n")


def test_zero_usec_per_io_is_refused_naming_the_line():
    # it was a ZeroDivisionError: a write that took no time is no measurement (edited or damaged)
    with pytest.raises(UsageError, match=r"^z\.txt: line 3: 0\.0 usec/IO is not a measurement .*--skip-garbage"):
        diskinfo.import_text(ZERO_LINE, "z.txt")


def test_zero_usec_per_io_skipped_with_skip_garbage_and_noted():
    (r,) = diskinfo.import_text(ZERO_LINE, "z.txt", skip_garbage=True)
    assert [p.size for p in r.points] == [512, 2048]
    assert any("line 3: 0.0 usec/IO is not a measurement" in n for n in r.notes)
    assert any("sizes jump from 512 to 2K" in n or "sizes jump" in n for n in r.notes)


@pytest.mark.parametrize("line,why", [
    ("\t 0.5 kbytes: 1e999 usec/IO = 3.5 Mbytes/s", "1e999 usec/IO is not a finite number"),
    ("\t 1e999 kbytes: 138.3 usec/IO = 3.5 Mbytes/s", "1e999 kbytes is not a finite number"),  # was OverflowError
    ("\t 0.5 kbytes: 138.3 usec/IO = 1e999 Mbytes/s", "1e999 Mbytes/s is not a finite number"),
    ("\t 0.5 kbytes: 1e12 usec/IO = 0.0 Mbytes/s", "1e12 usec/IO is not a measurement"),
])
def test_impossible_figures_are_refused_naming_the_line(line, why):
    with pytest.raises(UsageError, match=r"line 2: " + why.replace(".", r"\.")):
        diskinfo.import_text("Synchronous random writes:\n" + line + "\n", "x.txt")


def test_zero_mbytes_per_second_is_real_and_kept():
    # 512 bytes at 12 ms is 0.04 MiB/s, which diskinfo prints as 0.0
    (r,) = diskinfo.import_text("\t 0.5 kbytes:  12000.0 usec/IO =      0.0 Mbytes/s\n", "slow.txt")
    assert r.points[0].mbps == 0.0 and r.points[0].lat_us.mean == 12000.0


def test_cli_zero_usec_per_io_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "zero.txt"
    bad.write_text(ZERO_LINE)
    proc = slogqual("import", "diskinfo", bad)
    assert proc.returncode == 2, proc.stderr
    assert "line 3: 0.0 usec/IO" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_header_numbers_are_numbers_and_the_document_loads(tmp_path):
    # issue #28: rotation_rate was kept as the text '0', which plot, report and the store refuse
    (r,) = diskinfo.import_text(HEADER + _block(INTEL_710[:3]), "hdr.txt")
    assert r.device["rotation_rate"] == 0 and r.device["rotational"] is False
    assert r.device["diskinfo_header"]["Rotation rate in RPM"] == "0"  # the raw text stays, as printed
    for key in ("sector_size", "media_size", "media_sectors", "stripe_size", "stripe_offset", "rotation_rate"):
        assert type(r.device[key]) is int, key
    path = tmp_path / "hdr.json"
    save_sweep(str(path), r)
    assert load_sweep(str(path)).device["rotation_rate"] == 0


def test_header_words_where_numbers_belong_are_left_out():
    # diskinfo prints "Unknown" for DISK_RR_UNKNOWN; a web page can leave anything in the value
    text = (HEADER.replace("\t0           \t# Rotation rate in RPM", "\tUnknown     \t# Rotation rate in RPM")
            .replace("\t512         \t# sectorsize", "\t512 bytes\t# sectorsize")
            .replace("\tYes         \t# TRIM/UNMAP support", "\tmaybe\t# TRIM/UNMAP support"))
    (r,) = diskinfo.import_text(text + _block(INTEL_710[:3]), "unknown.txt")
    for key in ("rotation_rate", "rotational", "sector_size", "trim"):
        assert key not in r.device, key
    assert r.device["diskinfo_header"]["Rotation rate in RPM"] == "Unknown"
    assert r.device["media_size"] == 100030242816


def test_a_document_its_own_loader_refuses_is_refused_in_one_line(monkeypatch):
    # what the importer wrote before issue #28's fix: the loader's refusal now stops the import
    real = diskinfo._device_record

    def old_record(dev):
        rec = real(dev)
        rec["rotation_rate"] = "0"
        return rec

    monkeypatch.setattr(diskinfo, "_device_record", old_record)
    with pytest.raises(UsageError) as err:
        diskinfo.import_text(HEADER + _block(INTEL_710[:3]), "hdr.txt")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("hdr.txt (/dev/ada1): key 'device.rotation_rate' must be a number")
    assert message.endswith("the imported document would not load; nothing written")


def test_cli_refuses_an_unloadable_document_and_writes_nothing(monkeypatch, tmp_path, capsys):
    from slogqual.cli import main

    real = diskinfo._device_record
    monkeypatch.setattr(diskinfo, "_device_record", lambda dev: dict(real(dev), rotation_rate="0"))
    log = tmp_path / "hdr.txt"
    log.write_text(HEADER + _block(INTEL_710[:3]))
    out = tmp_path / "hdr.json"
    code = main(["import", "diskinfo", str(log), "-o", str(out), "--no-store"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "would not load" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [log]
