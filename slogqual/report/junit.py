"""JUnit XML for qualifications: one testsuite per device, one testcase per criterion.

The dialect is the common one (Jenkins, GitLab, GitHub test reporters, Azure): ``<testsuites>``
with ``tests``/``failures``/``errors``/``skipped`` counts, ``<failure message=...>`` for a missed
threshold (measured vs threshold in the message), ``<error>`` when the device was refused or the
run broke before the figure existed, ``<skipped>`` for a criterion that could not be evaluated.
The verdict, identity and steady state ride along as ``<properties>`` and in ``<system-out>``.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from typing import Sequence

from slogqual.results import atomic_file
from slogqual.results.qualification import QualificationResult


def _suite_name(q: QualificationResult) -> str:
    label = " ".join(str(v) for v in (q.who.model, q.who.serial) if v)
    return f"{q.target}" + (f" ({label})" if label else "")


def _classname(q: QualificationResult) -> str:
    name = str(q.name or q.target or "device")
    return f"slogqual.qualify.{q.profile.name}.{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}"


def build(quals: Sequence[QualificationResult], name: str = "slogqual qualify") -> ET.ElementTree:
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for q in quals:
        suite = ET.SubElement(root, "testsuite", name=_suite_name(q), timestamp=str(q.started or ""),
                              hostname=socket.gethostname())
        props = ET.SubElement(suite, "properties")
        ident, steady = q.who, q.steady
        for key, value in (("verdict", q.verdict), ("profile", q.profile.name),
                           ("model", ident.model), ("serial", ident.serial),
                           ("firmware", ident.firmware), ("class", ident.device_class),
                           ("steady_state", steady.label_text),
                           ("steady_state_reached", str(bool(steady.reached)).lower()),
                           ("precondition", q.precondition.mode if q.precondition else None)):
            ET.SubElement(props, "property", name=key, value="" if value is None else str(value))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for c in q.criteria:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=_classname(q), name=c.name or c.check)
            if c.result == "fail":
                counts["failures"] += 1
                f = ET.SubElement(case, "failure", type="threshold",
                                  message=f"measured {c.measured_text}, threshold {c.threshold_text}")
                f.text = (c.message or "") + (f"\nwhy: {c.why}" if c.why else "")
            elif c.result == "not-evaluated" and q.broken:
                counts["errors"] += 1
                e = ET.SubElement(case, "error", type=str(q.verdict), message=str(q.error or ""))
                e.text = c.detail
            elif c.result == "not-evaluated":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"not evaluated: {c.detail}")
            out = ET.SubElement(case, "system-out")
            out.text = (c.message or "") + (" [steady state NOT reached]" if steady.missed else "")
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        lines = [f"verdict: {q.verdict}", f"steady state: {steady.label_text}"]
        if q.error:
            lines.append(f"error: {q.error}")
        lines += [f"WARNING: {w}" for w in q.warnings]
        ET.SubElement(suite, "system-out").text = "\n".join(lines)
    for k, v in totals.items():
        root.set(k, str(v))
    if hasattr(ET, "indent"):  # Python 3.9+
        ET.indent(root)
    return ET.ElementTree(root)


def write(path: str, quals: Sequence[QualificationResult]) -> None:
    tree = build(quals)
    with atomic_file(path, binary=True) as (fh, _):  # never half a report (ENOSPC, EROFS, Ctrl-C)
        tree.write(fh, encoding="utf-8", xml_declaration=True)
