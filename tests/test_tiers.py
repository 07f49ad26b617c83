"""The full tier (docs/testing.md, "Tiers"): the lab tests README's command skips are the ones the document
names, each with its reason — a test moved out of README's command without a word would be coverage lost
in silence."""

import ast
import os
import re

from conftest import ROOT

TESTING = os.path.join(ROOT, "docs", "testing.md")


def _marked_full():
    """(module, test) of every test function marked ``@pytest.mark.full`` in tests/."""
    found = set()
    for name in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        with open(os.path.join(ROOT, "tests", name)) as fh:
            tree = ast.parse(fh.read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                    ast.unparse(d) in ("pytest.mark.full", "mark.full") for d in node.decorator_list):
                found.add((name, node.name))
    return found


def _named_in_docs():
    """(module, test) of each entry of docs/testing.md's full-tier list."""
    with open(TESTING) as fh:
        text = fh.read()
    section = text.split("## Tiers", 1)[1].split("\n## ", 1)[0]
    tier = section.split("**The full tier**", 1)[1].split("**The slowed tier**", 1)[0]
    return {(module, test) for test, module in re.findall(r"^  - `(test_\w+)` \(tests/(test_\w+\.py)\)", tier, re.M)}


def test_the_full_tier_is_what_docs_testing_names():
    marked = _marked_full()
    assert marked, "no test is marked full: then docs/testing.md's list must go too"
    assert marked == _named_in_docs()


def test_the_full_tier_is_asked_for_by_its_variable_or_by_the_slowed_tier(monkeypatch):
    import conftest
    for name in (conftest.FULL_TIER_ENV, "SLOGQUAL_TEST_SLOW_HOST"):
        monkeypatch.delenv(name, raising=False)
    assert not conftest.full_tier_requested()
    monkeypatch.setenv(conftest.FULL_TIER_ENV, "0")
    assert not conftest.full_tier_requested()
    monkeypatch.setenv(conftest.FULL_TIER_ENV, "1")
    assert conftest.full_tier_requested()
    monkeypatch.delenv(conftest.FULL_TIER_ENV)
    monkeypatch.setenv("SLOGQUAL_TEST_SLOW_HOST", "1")  # the slowed tier runs the full tier's tests too
    assert conftest.full_tier_requested()
