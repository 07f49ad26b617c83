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
from typing import Any, Dict, List, Sequence

from slogqual.results import atomic_file


def _suite_name(doc: Dict[str, Any]) -> str:
    ident = doc.get("identity") or {}
    label = " ".join(str(ident[k]) for k in ("model", "serial") if ident.get(k))
    return f"{doc.get('target')}" + (f" ({label})" if label else "")


def _classname(doc: Dict[str, Any]) -> str:
    profile = (doc.get("profile") or {}).get("name", "profile")
    name = str(doc.get("name") or doc.get("target") or "device")
    return f"slogqual.qualify.{profile}.{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}"


def build(docs: Sequence[Dict[str, Any]], name: str = "slogqual qualify") -> ET.ElementTree:
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for doc in docs:
        crit: List[Dict[str, Any]] = doc.get("criteria") or []
        broken = doc.get("verdict") in ("refused", "error")
        suite = ET.SubElement(root, "testsuite", name=_suite_name(doc), timestamp=str(doc.get("started") or ""),
                              hostname=socket.gethostname())
        props = ET.SubElement(suite, "properties")
        ident = doc.get("identity") or {}
        steady = doc.get("steady_state") or {}
        for key, value in (("verdict", doc.get("verdict")), ("profile", (doc.get("profile") or {}).get("name")),
                           ("model", ident.get("model")), ("serial", ident.get("serial")),
                           ("firmware", ident.get("firmware")), ("class", ident.get("class")),
                           ("steady_state", steady.get("label", "not checked")),
                           ("steady_state_reached", str(bool(steady.get("reached"))).lower()),
                           ("precondition", (doc.get("precondition") or {}).get("mode"))):
            ET.SubElement(props, "property", name=key, value="" if value is None else str(value))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for c in crit:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=_classname(doc), name=c.get("name") or c["check"])
            result = c.get("result")
            if result == "fail":
                counts["failures"] += 1
                f = ET.SubElement(case, "failure", type="threshold",
                                  message=f"measured {c.get('measured_text')}, threshold {c.get('threshold_text')}")
                f.text = c.get("message", "") + (f"\nwhy: {c['why']}" if c.get("why") else "")
            elif result == "not-evaluated" and broken:
                counts["errors"] += 1
                e = ET.SubElement(case, "error", type=str(doc.get("verdict")), message=str(doc.get("error") or ""))
                e.text = c.get("detail", "")
            elif result == "not-evaluated":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"not evaluated: {c.get('detail', '')}")
            out = ET.SubElement(case, "system-out")
            out.text = c.get("message", "") + ("" if steady.get("reached") or not steady.get("checked")
                                               else " [steady state NOT reached]")
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        lines = [f"verdict: {doc.get('verdict')}", f"steady state: {steady.get('label', 'not checked')}"]
        if doc.get("error"):
            lines.append(f"error: {doc['error']}")
        lines += [f"WARNING: {w}" for w in doc.get("warnings") or []]
        ET.SubElement(suite, "system-out").text = "\n".join(lines)
    for k, v in totals.items():
        root.set(k, str(v))
    if hasattr(ET, "indent"):  # Python 3.9+
        ET.indent(root)
    return ET.ElementTree(root)


def write(path: str, docs: Sequence[Dict[str, Any]]) -> None:
    tree = build(docs)
    with atomic_file(path, binary=True) as (fh, _):  # never half a report (ENOSPC, EROFS, Ctrl-C)
        tree.write(fh, encoding="utf-8", xml_declaration=True)
