"""The layering rules of README's layout, checked on the source (an ast walk, no imports run):

- nothing below the CLI imports ``slogqual.cli`` (the CLI parses and prints; the work is in the library);
- only ``slogqual/tools/`` imports ``subprocess`` (one door per external program, one error contract);
- ``results`` and ``analysis`` import no tools (they never start a process).
"""

import ast
import os

import pytest

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "slogqual")


def modules():
    for root, _dirs, files in os.walk(PKG):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, os.path.dirname(PKG))
                yield rel.replace(os.sep, "/"), path


def imported(path):
    """Every module name an import statement in the file names (relative imports resolved)."""
    rel = os.path.relpath(path, os.path.dirname(PKG))
    package = os.path.dirname(rel).replace(os.sep, ".")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            out.append((base, node.lineno))
            out += [(f"{base}.{a.name}", node.lineno) for a in node.names]  # from slogqual import cli
    return out


def under(name, prefix):
    return name == prefix or name.startswith(prefix + ".")


def violations(rule):
    found = []
    for rel, path in modules():
        for name, line in imported(path):
            why = rule(rel, name)
            if why:
                found.append(f"{rel}:{line}: imports {name} ({why})")
    return sorted(set(found))


def no_cli_below_cli(rel, name):
    if not rel.startswith("slogqual/cli/") and rel != "slogqual/__main__.py" and under(name, "slogqual.cli"):
        return "only the CLI and __main__ may import slogqual.cli"
    return ""


def subprocess_only_in_tools(rel, name):
    if under(name, "subprocess") and not rel.startswith("slogqual/tools/"):
        return "external programs start in slogqual/tools/ only"
    return ""


def leaves_import_no_tools(rel, name):
    if (rel.startswith("slogqual/results/") or rel.startswith("slogqual/analysis/")) and \
            (under(name, "slogqual.tools") or under(name, "subprocess")):
        return "results and analysis never start a process"
    return ""


@pytest.mark.parametrize("rule", [no_cli_below_cli, subprocess_only_in_tools, leaves_import_no_tools])
def test_layering(rule):
    assert violations(rule) == []


def test_the_walk_sees_the_violations_it_is_there_to_catch(tmp_path, monkeypatch):
    # the rules themselves, on files that break them (so the test above cannot pass by seeing nothing)
    pkg = tmp_path / "slogqual"
    (pkg / "pool").mkdir(parents=True)
    (pkg / "analysis").mkdir()
    (pkg / "pool" / "x.py").write_text("from slogqual import cli\nimport subprocess\n")
    (pkg / "analysis" / "y.py").write_text("from ..tools import fio\n")
    monkeypatch.setattr(__import__(__name__), "PKG", str(pkg))
    assert violations(no_cli_below_cli) == ["slogqual/pool/x.py:1: imports slogqual.cli "
                                            "(only the CLI and __main__ may import slogqual.cli)"]
    assert [v.split(":")[0] for v in violations(subprocess_only_in_tools)] == ["slogqual/pool/x.py"]
    assert violations(leaves_import_no_tools) == ["slogqual/analysis/y.py:1: imports slogqual.tools "
                                                  "(results and analysis never start a process)",
                                                  "slogqual/analysis/y.py:1: imports slogqual.tools.fio "
                                                  "(results and analysis never start a process)"]


def argv_outside_tools(path, rel):
    """List literals starting with a program slogqual knows (tools/run.PROGRAMS), outside tools/: an
    argv built away from its tool's module."""
    from slogqual.tools.run import PROGRAMS
    if rel.startswith("slogqual/tools/"):
        return []
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    return [f"{rel}:{n.lineno}: an argv for {n.elts[0].value} (build it in slogqual/tools/)"
            for n in ast.walk(tree)
            if isinstance(n, ast.List) and n.elts and isinstance(n.elts[0], ast.Constant)
            and n.elts[0].value in PROGRAMS]


def test_every_argv_is_built_in_its_tools_module():
    found = [v for rel, path in modules() for v in argv_outside_tools(path, rel)]
    assert found == []


def test_the_argv_rule_sees_an_argv_outside_tools(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text('argv = ["udevadm", "settle"]\nok = ["slogqual", "scenario", "run"]\n')
    assert argv_outside_tools(str(bad), "slogqual/pool/x.py") == [
        "slogqual/pool/x.py:1: an argv for udevadm (build it in slogqual/tools/)"]
