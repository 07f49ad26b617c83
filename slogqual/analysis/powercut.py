"""What a ``slogqual.powercut/1`` result says, in words: for the store's summary (``slogqual history``)
and the report. Pure: a document in, words and rows out (the verdict itself is the document's own,
checked by slogqual/results/powercut.py; the power-loss verdict of a device is analysis/powerloss.py).

How the power was cut decides what a result is evidence of, so it is always said first:

- ``emulation``: ``powercut run --emulate`` (method.emulation set, target.kind "emulated"): nbdkit served a
  backing file and was SIGKILLed. It shows that the method tells a device that drops flushed data from
  one that keeps it; it says nothing about any real device.
- ``real``: ``powercut run --cut-cmd`` (method.cut "--cut-cmd ..."): the user's command cut the device's
  power. Evidence for that device and firmware over that many cuts, not a guarantee.
- ``external``: ``powercut verify`` (method.cut "external (verified afterwards)"): slogqual checked the
  media after a cut it did not make, so whether that cut was real or emulated is not recorded.

The counts are summed from the cycles (the loader checked each cycle's intact + lost = acknowledged);
the document's ``totals`` are not trusted on their own.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

METHOD_EMULATION, METHOD_REAL, METHOD_EXTERNAL = "emulation", "real", "external"
COUNTS = ("acknowledged", "intact", "torn", "stale", "missing", "lost")
EMULATION_SHORT = {"unsafe": "nbdkit cache=unsafe", "writeback": "nbdkit cache=writeback",
                   "none": "nbdkit, no cache filter"}
CAVEAT = {
    METHOD_EMULATION: "EMULATED: nbdkit served a backing file and its SIGKILL was the power cut. This shows the "
                      "method tells a device that drops flushed data from one that keeps it; it says nothing "
                      "about any real device (docs/powercut.md).",
    METHOD_REAL: "A real power cut by the user's command. A pass is evidence for this device and firmware over "
                 "these cuts, not a guarantee: a device that passes five cuts may fail the sixth.",
    METHOD_EXTERNAL: "Verified afterwards (slogqual powercut verify): slogqual did not make this cut, so whether "
                     "it was a real power cut or an emulated one is not recorded in this result.",
}


def method_of(doc: Dict[str, Any]) -> str:
    """emulation, real or external (module docstring)."""
    method = doc.get("method") if isinstance(doc.get("method"), dict) else {}
    target = doc.get("target") if isinstance(doc.get("target"), dict) else {}
    if method.get("emulation") or target.get("kind") == "emulated":
        return METHOD_EMULATION
    if str(method.get("cut") or "").startswith("--cut-cmd"):
        return METHOD_REAL
    return METHOD_EXTERNAL


def method_short(doc: Dict[str, Any]) -> str:
    """'emulated (nbdkit cache=unsafe)', 'real power cut' or 'external cut, verified afterwards'."""
    kind = method_of(doc)
    if kind == METHOD_EMULATION:
        how = (doc.get("method") or {}).get("emulation")
        return f"emulated ({EMULATION_SHORT.get(how, how or 'nbdkit')})"
    if kind == METHOD_REAL:
        return "real power cut"
    return "external cut, verified afterwards"


def totals(doc: Dict[str, Any]) -> Dict[str, int]:
    t = {k: 0 for k in COUNTS}
    for cy in doc.get("cycles") or []:
        for k in COUNTS[:-1]:
            t[k] += int(cy.get(k) or 0)
    t["lost"] = t["torn"] + t["stale"] + t["missing"]
    return t


def counts_text(doc: Dict[str, Any]) -> str:
    t = totals(doc)
    return (f"{len(doc.get('cycles') or [])} of {doc.get('expected_cycles', '?')} cycle(s), "
            f"{t['acknowledged']} acknowledged, {t['intact']} intact, {t['lost']} lost "
            f"(torn {t['torn']}, stale {t['stale']}, missing {t['missing']})")


def summary(doc: Dict[str, Any]) -> str:
    """One line for the store and ``slogqual history``: how the power was cut, then the counts."""
    return f"{method_short(doc)}: {counts_text(doc)}"


def verdict_words(doc: Dict[str, Any]) -> Tuple[str, str]:
    """(text, tone) of the result's verdict; tone bad / good / neutral as the report colours it. An
    emulated pass is neutral: it shows the method works, not that a device is safe."""
    verdict = str(doc.get("verdict") or "incomplete")
    t = totals(doc)
    kind = method_of(doc)
    tag = " (emulated)" if kind == METHOD_EMULATION else ""
    if verdict == "fail":
        return f"FAIL{tag}: {t['lost']} of {t['acknowledged']} acknowledged records lost", "bad"
    if verdict == "pass":
        return (f"PASS{tag}: all {t['acknowledged']} acknowledged records intact after "
                f"{len(doc.get('cycles') or [])} cut(s)"), ("good" if kind == METHOD_REAL else "neutral")
    why = doc.get("error") or f"status {doc.get('status')}"
    return f"INCOMPLETE{tag}: {why}", "neutral"


def method_rows(doc: Dict[str, Any]) -> List[Tuple[str, str]]:
    """How the power was cut and the records written, as (name, value) rows."""
    m = doc.get("method") if isinstance(doc.get("method"), dict) else {}
    rows = [("method", method_short(doc)), ("cut", str(m.get("cut") or "not recorded"))]
    if m.get("restore"):
        rows.append(("restore", str(m["restore"])))
    if m.get("emulation"):
        rows.append(("emulated device", str(m.get("emulation_means") or m["emulation"])))
    for key, label in (("recorder", "recorder"), ("cut_after", "cut after (acknowledged records)"),
                       ("flush", "flush"), ("direct", "O_DIRECT")):
        if m.get(key) not in (None, ""):
            rows.append((label, "yes" if m[key] is True else "no" if m[key] is False else str(m[key])))
    sizes = m.get("sizes") or []
    if sizes:
        rows.append(("record sizes", ", ".join(f"{s // 1024}K" if s % 1024 == 0 else f"{s} B" for s in sizes)))
    return rows


CYCLE_HEADERS = ["cycle", "acknowledged", "intact", "torn", "stale", "missing", "lost", "how the writer ended"]


def cycle_rows(doc: Dict[str, Any]) -> List[List[str]]:
    """One row per cycle, then the totals."""
    rows = []
    for cy in doc.get("cycles") or []:
        lost = int(cy.get("torn") or 0) + int(cy.get("stale") or 0) + int(cy.get("missing") or 0)
        rows.append([str(cy.get("cycle"))] + [str(int(cy.get(k) or 0)) for k in COUNTS[:-1]] + [str(lost),
                                                                                               str(cy.get("writer_end") or "")])
    t = totals(doc)
    rows.append(["total"] + [str(t[k]) for k in COUNTS] + [""])
    return rows


LOST_HEADERS = ["cycle", "record", "offset", "size", "state"]


def lost_rows(doc: Dict[str, Any], limit: int = 10) -> List[List[str]]:
    """The first ``limit`` lost records (the document keeps the first 100 of each cycle)."""
    out = []
    for cy in doc.get("cycles") or []:
        for r in cy.get("lost_records") or []:
            if len(out) == limit:
                return out
            out.append([str(cy.get("cycle")), str(r.get("seq")), str(r.get("offset")), str(r.get("size")),
                        str(r.get("state"))])
    return out
