"""docs/architecture.md names every module of the tree, once, and no module that is gone; its "Every module"
section is what contrib/architecture_rooms.py makes of the tree (rooms and layers of contrib/house.py)."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
PKG = os.path.join(ROOT, "slogqual")


def tree_modules():
    out = set()
    for root, _dirs, files in os.walk(PKG):
        for name in files:
            if name.endswith(".py"):
                out.add(os.path.relpath(os.path.join(root, name), PKG).replace(os.sep, "/"))
    return out


def named_modules(text):
    """The module paths the page lists (``- `room/module.py` — …``), relative to slogqual/."""
    return re.findall(r"^- `([\w/]+\.py)` — ", text, re.M)


def test_the_page_names_every_module_once_and_none_that_is_gone():
    named = named_modules(open(DOC, encoding="utf-8").read())
    assert sorted(tree_modules() - set(named)) == [], "modules the page does not name (contrib/architecture_rooms.py)"
    assert sorted(set(named) - tree_modules()) == [], "modules the page names that are gone"
    assert len(named) == len(set(named)), "a module named twice"


def test_the_every_module_section_is_what_the_tree_gives():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "contrib", "architecture_rooms.py"), "--check"])
    assert proc.returncode == 0, "run python3 contrib/architecture_rooms.py and read the diff"


def test_the_house_has_no_arrow_up_and_places_every_room():
    sys.path.insert(0, os.path.join(ROOT, "contrib"))
    import house
    d = house.draw(ROOT)
    assert d["unplaced"] == [] and d["arrows_up"] == {}, (d["unplaced"], d["arrows_up"])


def test_the_check_sees_a_module_the_page_does_not_name(tmp_path):
    # the rule itself, on a page that lacks one module (so the tests above cannot pass by reading nothing)
    text = open(DOC, encoding="utf-8").read()
    named = named_modules(text)
    assert "sweep/door.py" in named and len(named) > 100
    assert "sweep/door.py" not in named_modules(text.replace("- `sweep/door.py` — ", "- sweep/door.py: "))
