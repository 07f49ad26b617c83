"""slogqual report of every document kind slogqual writes besides sweeps: scenario results, advice and
qualifications, each alone and beside a sweep, in HTML and in Markdown — from real documents.

The scenario result and the sweeps are the lab's recordings (tests/fixtures/advisor/README.md: the 4 KiB iSCSI
run with two log candidates and their own sweeps); the qualification is a real run's document
(tests/fixtures/qualify/README.md); the advice is what `slogqual advise` writes from those recordings, made
here with OpenZFS 2.3's default tunables so that the host's own do not enter it.
"""

import html
import json
import re

import pytest

from conftest import fixture_path, need, slogqual
from slogqual.analysis import scenario as scenario_analysis
from slogqual.report import scenario as scenario_report
from slogqual.report import qualification as Q
from slogqual.report.advice import verification
from slogqual.results.advice import AdviceResult
from slogqual.results.qualification import QualificationResult
from slogqual.results.scenario import ScenarioResult

SCENARIO = fixture_path("advisor", "iscsi-4k-lab-sata-ssd-nvdimm.json")
LOG_SWEEPS = [fixture_path("advisor", "iscsi-4k-lab.log0-sata-ssd.sweep.json"),
              fixture_path("advisor", "iscsi-4k-lab.log1-nvdimm.sweep.json")]
SWEEP = LOG_SWEEPS[0]
QUALIFICATION = fixture_path("qualify", "qualification-nbd-memory-952d1d3.json")


def make_advice(directory):
    """`slogqual advise` of the two log candidates on the recorded pool (its sync=standard steps the data side)."""
    out = directory / "advice.json"
    proc = slogqual("advise", "--log", *LOG_SWEEPS, "--scenario", SCENARIO, "--tunables", "defaults", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return str(out)


@pytest.fixture(scope="module")
def advice(tmp_path_factory):
    return make_advice(tmp_path_factory.mktemp("advice"))


def text_of(path):
    """The report's words: an HTML report's tags dropped and its entities read back, so that one assertion
    serves both formats (cells apart by spaces in one, by '|' in the other)."""
    text = path.read_text()
    return html.unescape(re.sub(r"<[^>]+>", " ", text)) if path.suffix == ".html" else text


def report(tmp_path, fmt, *inputs):
    out = tmp_path / f"report.{fmt}"
    proc = slogqual("report", *inputs, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    return out


def assert_scenario(text):
    r = ScenarioResult.load(SCENARIO)
    a = scenario_report.current(r)
    assert a["verdict"] in text and a["bottleneck"] in text  # today's verdict sentence, as `scenario run` prints it
    for s in r.steps:  # every configuration's curve, each step with its IO count and the ZIL's kstat deltas
        label = scenario_analysis.step_label(r, s)
        row = re.search(rf"{re.escape(label)}\W+{s.threads}\W+{s.ios:,}\W+{s.iops:,.0f}\W", text)
        assert row, (label, s.threads)
        assert f"{s.slog_bytes:,}" in text and f"{s.normal_bytes:,}" in text
    assert "ZIL→log B" in text and "to the log" in text


def assert_advice(text, advice_path, verified):
    adv = AdviceResult.load(advice_path)
    for c in adv.candidates:
        for s in c.steps:  # each prediction, a bound marked as one with what bounds it
            figure = ("≤ " if s.extra.get("upper_bound") else "") + f"{s.iops:,.0f}"
            assert figure in text
            if s.extra.get("upper_bound"):
                assert f"{s.threads} threads: ≤ {s.iops:,.0f} IOPS is an upper bound ({s.extra['upper_bound']})" in text
    rows = verification(adv, [(ScenarioResult.load(SCENARIO), SCENARIO)])
    assert len(rows) == 4  # two candidates at two thread counts, each measured as the single log
    if verified:
        for _, r in rows:  # the measured figure and its IO count beside the prediction
            assert re.search(rf"{re.escape(r['candidate'])}\W+{r['class']}\W+{r['threads']}\W+(≤ )?"
                             rf"{r['predicted_iops']:,.0f}\W+{r['measured_iops']:,.0f}\W+{r['measured_ios']}\W", text)
    else:
        assert "Not verified here" in text


def assert_qualification(text):
    q = QualificationResult.load(QUALIFICATION)
    assert q.verdict == "fail" and re.search(r"Verdict:\W+FAIL\b", text)
    for c in q.criteria:  # each criterion with its figure, threshold, result and evidence
        assert re.search(rf"{re.escape(c.check)}\W+{re.escape(c.measured_text)}\W+"
                         rf"{re.escape(c.threshold_text)}\W+{Q.RESULT_WORDS[c.result]}\W+{re.escape(c.detail)}",
                         text), c.check
    assert "NOT reached in 2 rounds" in text


def assert_sweep(text):
    assert "SLOGQUAL LAB SATA SSD" in text and "VOLATILE WRITE CACHE ENABLED" in text
    assert re.search(r"\b4K\W+333\W+2,997\.0\W", text)  # its first size: IOs beside the mean


def assert_self_contained(page):
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert not re.search(r"""(src|href)=["'](https?:|//|file:)""", page)
    ids = re.findall(r"""\bid=["']([^"']+)["']""", page)
    assert len(ids) == len(set(ids)), "element ids must be unique across the inlined charts"
    for href in re.findall(r"""href=["']#([^"']+)["']""", page):
        assert href in ids


def charts_of(out, fmt):
    if fmt == "html":
        return re.findall(r'<figure id="chart-([^"]+)">', out.read_text())
    names = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", out.read_text())
    for name in names:
        assert (out.parent / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return [n.removeprefix("report-").removesuffix(".png") for n in names]


SWEEP_CHARTS = ["latency", "p99", "iops", "mbps"]


def check_qualification(out, text):
    assert_qualification(text)
    # its own sweep (the evidence of its latency criterion) is charted and shown, beside any other sweep
    assert "(its sweep, /tmp/qfix/o/nbd.sweep.json)" in text
    if out.suffix == ".html":
        page = out.read_text()
        assert page.index('id="qualification"') < page.index("<h2>Summary</h2>")  # the verdict first


# kind: (its checks on the report, the charts of its own)
KINDS = {
    "scenario": (lambda out, text, advice: assert_scenario(text), ["scenario1-iops", "scenario1-p99"]),
    # no scenario result in the report: nothing to verify the advice against, and it says so
    "advice": (lambda out, text, advice: assert_advice(text, advice, verified=False), ["advice1"]),
    "qualification": (lambda out, text, advice: check_qualification(out, text), []),
}
FORMATS = pytest.mark.parametrize("fmt", ["html", "md"])


@need("gnuplot")
@FORMATS
@pytest.mark.parametrize("with_sweep", [False, True], ids=["alone", "with-sweep"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_alone_and_beside_a_sweep(tmp_path, advice, kind, fmt, with_sweep):
    document = {"scenario": SCENARIO, "advice": advice, "qualification": QUALIFICATION}[kind]
    out = report(tmp_path, fmt, document, *([SWEEP] if with_sweep else []))
    text = text_of(out)
    check, own_charts = KINDS[kind]
    check(out, text, advice)
    has_sweep = with_sweep or kind == "qualification"  # a qualification carries the sweep it measured
    assert charts_of(out, fmt) == (SWEEP_CHARTS if has_sweep else []) + own_charts
    if with_sweep:
        assert_sweep(text)
    if not has_sweep:
        assert "Charts" not in text and "Reference classes" not in text  # no sweep, no sweep charts
    if fmt == "html":
        assert_self_contained(out.read_text())


@need("gnuplot")
@FORMATS
def test_an_advice_beside_the_scenario_it_predicted(tmp_path, advice, fmt):
    out = report(tmp_path, fmt, advice, SCENARIO)
    text = text_of(out)
    assert_advice(text, advice, verified=True)
    assert_scenario(text)
    assert "Not verified here" not in text


@need("gnuplot")
@FORMATS
def test_every_kind_in_one_report(tmp_path, advice, fmt):
    out = report(tmp_path, fmt, SCENARIO, advice, QUALIFICATION, SWEEP, *LOG_SWEEPS[1:])
    text = text_of(out)
    assert_scenario(text)
    assert_advice(text, advice, verified=True)
    assert_qualification(text)
    assert_sweep(text)
    assert charts_of(out, fmt) == SWEEP_CHARTS + ["scenario1-iops", "scenario1-p99", "advice1"]
    for schema in ("slogqual.scenario/1", "slogqual.advice/1", "slogqual.qualification/1"):
        assert schema in text


@need("gnuplot")
def test_a_qualification_beside_its_own_sweep_shows_that_sweep_once(tmp_path):
    own = tmp_path / "own.sweep.json"
    own.write_text(json.dumps(json.loads(open(QUALIFICATION).read())["sweep"]["document"]))
    text = report(tmp_path, "md", QUALIFICATION, own).read_text()
    assert re.findall(r"^## \d+\. (.*)$", text, re.M) == ["nbd+unix:///?socket=/tmp/qfix/s.sock"]
    assert f"Result file `{own}`" in text and "(its sweep," not in text


def test_an_unknown_document_is_refused_in_one_line_before_anything_is_written(tmp_path, advice):
    junk = tmp_path / "junk.json"
    junk.write_text('{"schema": "slogqual.cost/1", "steps": []}')
    for fmt in ("html", "md"):
        out = tmp_path / f"r.{fmt}"
        proc = slogqual("report", SCENARIO, advice, QUALIFICATION, junk, "-o", out)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1
        assert (f"{junk}: not a slogqual.sweep/1, slogqual.powercut/1, slogqual.shelf/1, slogqual.scenario/1, "
                "slogqual.advice/1 or slogqual.qualification/1 document (schema: 'slogqual.cost/1')") in proc.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.json"]


def test_a_malformed_document_of_a_known_kind_is_refused_naming_its_key(tmp_path):
    doc = json.loads(open(SCENARIO).read())
    doc["steps"][2]["iops"] = "fast"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "r.html"
    proc = slogqual("report", bad, "-o", out)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "steps[2].iops" in proc.stderr
    assert not out.exists()


def test_qualify_writes_its_report_with_the_same_qualification_section(tmp_path):
    """qualify/output.py's report takes the section from report/qualification.py (the typed documents qualify
    holds)."""
    from slogqual.qualify import output

    doc = QualificationResult.load(QUALIFICATION)
    page = tmp_path / "qualification.html"
    assert output.write_html(str(page), [doc], [], []) == []
    assert 'id="qualification"' in page.read_text()
    assert_qualification(text_of(page))
    assert output.summary_table([doc]).splitlines()[-1].split()[-1] == "FAIL"
    assert "verdict: FAIL [steady state NOT reached]" in output.device_table(doc)
