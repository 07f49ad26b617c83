"""What a ``slogqual.powercut/1`` result says: how its power was cut and its counts, summed from the cycles.
Pure: a document in, facts out (the verdict itself is the document's own, checked by
slogqual/results/powercut.py; the power-loss verdict of a device is analysis/powerloss.py). Its words —
the verdict's sentence, the caveat of each method, the report's rows — are slogqual/report/powercut.py's;
``summary`` (and the short words it is made of) stays here until the store's call of it moves there
(tests/test_layering.py, SENTENCES_PENDING).

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

from typing import Any, Dict

METHOD_EMULATION, METHOD_REAL, METHOD_EXTERNAL = "emulation", "real", "external"
COUNTS = ("acknowledged", "intact", "torn", "stale", "missing", "lost")
EMULATION_SHORT = {"unsafe": "nbdkit cache=unsafe", "writeback": "nbdkit cache=writeback",
                   "none": "nbdkit, no cache filter"}



def method_of(doc: Dict[str, Any]) -> str:
    """emulation, real or external (module docstring)."""
    method = doc.get("method") if isinstance(doc.get("method"), dict) else {}
    target = doc.get("target") if isinstance(doc.get("target"), dict) else {}
    if method.get("emulation") or target.get("kind") == "emulated":
        return METHOD_EMULATION
    if str(method.get("cut") or "").startswith("--cut-cmd"):
        return METHOD_REAL
    return METHOD_EXTERNAL



def totals(doc: Dict[str, Any]) -> Dict[str, int]:
    t = {k: 0 for k in COUNTS}
    for cy in doc.get("cycles") or []:
        for k in COUNTS[:-1]:
            t[k] += int(cy.get(k) or 0)
    t["lost"] = t["torn"] + t["stale"] + t["missing"]
    return t
