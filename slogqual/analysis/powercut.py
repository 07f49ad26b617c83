"""What a ``slogqual.powercut/1`` result says: how its power was cut and its counts, summed from the cycles.
Pure: a result (results/powercut.py's PowercutResult) in, facts out (the verdict itself is the document's own, checked by
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

from typing import Dict

from slogqual.results.powercut import PowercutResult

METHOD_EMULATION, METHOD_REAL, METHOD_EXTERNAL = "emulation", "real", "external"
EMULATION_SHORT = {"unsafe": "nbdkit cache=unsafe", "writeback": "nbdkit cache=writeback",
                   "none": "nbdkit, no cache filter"}


def method_of(result: PowercutResult) -> str:
    """emulation, real or external (module docstring)."""
    if result.emulation or result.target_kind == "emulated":
        return METHOD_EMULATION
    if str(result.cut or "").startswith("--cut-cmd"):
        return METHOD_REAL
    return METHOD_EXTERNAL


def totals(result: PowercutResult) -> Dict[str, int]:
    """acknowledged, intact, torn, stale, missing and lost, summed from the cycles."""
    return result.totals
