"""The layering rules of README's layout, checked on the source (an ast walk, no imports run):

- nothing below the CLI imports ``slogqual.cli`` (the CLI parses and prints; the work is in the library);
- only ``slogqual/tools/`` imports ``subprocess`` (one door per external program, one error contract);
- ``results`` and ``analysis`` import no tools (they never start a process);
- no module imports itself back through others: the package's import graph (module-level and
  function-local imports alike) has no cycle.
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


# --- no import cycle ----------------------------------------------------------------------------------

def module_name(rel):
    """``slogqual/device/__init__.py`` -> ``slogqual.device``, ``slogqual/device/linux.py`` -> ``slogqual.device.linux``."""
    name = rel[:-len(".py")].replace("/", ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def import_edges(path, known):
    """The package modules the file's imports run, each with the line of the first import of it.

    ``from P import N`` depends on the module P.N when there is one, else on P (N is a name P's code
    defines). The parent packages the import system runs first are not edges: every submodule would
    otherwise be in a cycle with a package ``__init__`` that imports it, which Python resolves by
    design. A function-local import is an edge like any other: it runs on the call, in the middle of
    whatever imported the caller."""
    rel = os.path.relpath(path, os.path.dirname(PKG)).replace(os.sep, "/")
    package = module_name(rel) if rel.endswith("/__init__.py") else os.path.dirname(rel).replace("/", ".")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    edges = {}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in targets:
            while t and t not in known:  # import slogqual.tools.run.X never happens; a.b.c of a.b's module
                t = t.rpartition(".")[0]
            if t:
                edges[t] = min(edges.get(t, node.lineno), node.lineno)
    return edges


def import_graph():
    """{module: {imported module: line}} for every module of the package."""
    files = {module_name(rel): path for rel, path in modules()}
    return {mod: import_edges(path, files) for mod, path in files.items()}


def import_cycles(graph):
    """One cycle per strongly connected group of modules (Tarjan), each as the list of imports that
    close it: ``[(module, line, imported module), ...]`` from the group's first module back to it."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, {}):
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(graph, g) for g in groups]


def _cycle_in(graph, group):
    """A shortest path of imports from the group's first module back to it, inside the group."""
    start = min(group)
    paths = {start: []}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w not in group:
                continue
            step = paths[v] + [(v, graph[v][w], w)]
            if w == start:
                return step
            if w not in paths:
                paths[w] = step
                todo.append(w)
    raise AssertionError(f"no cycle in the group {sorted(group)}")


def show_cycle(cycle):
    return " -> ".join(f"{a} (line {line})" for a, line, _b in cycle) + f" -> {cycle[-1][2]}"


# Imports left out of the cycle check, each a known cycle with its reason. Nothing else may close one.
_TRANSPORT_DISPATCH = ("pool/transport/__init__.py attach() picks the transport's module by a call-time import, "
                       "and those modules import the vocabulary (Attached, iqn_for, LOOPBACK, ISCSI_PORT) from the "
                       "package's __init__: untying it means moving that vocabulary to a module of its own (not "
                       "the device room's change, issue #27)")
ALLOWED_CYCLE_EDGES = {("slogqual.pool.transport", f"slogqual.pool.transport.{m}"): _TRANSPORT_DISPATCH
                       for m in ("freebsd_iscsi", "freebsd_nfs", "iscsi", "nfs", "local")}


def test_no_import_cycle():
    graph = import_graph()
    stale = [edge for edge in ALLOWED_CYCLE_EDGES if edge[1] not in graph.get(edge[0], {})]
    assert stale == [], "allowed imports that no longer exist (take them off ALLOWED_CYCLE_EDGES)"
    for importer, imported_module in ALLOWED_CYCLE_EDGES:
        del graph[importer][imported_module]
    cycles = [show_cycle(c) for c in import_cycles(graph)]
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_the_cycle_walk_sees_a_cycle_through_a_function_local_import(tmp_path, monkeypatch):
    pkg = tmp_path / "slogqual"
    (pkg / "device").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "device" / "__init__.py").write_text("from slogqual.device.a import f\n")
    (pkg / "device" / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "device" / "b.py").write_text("import os\nfrom slogqual.device.a import f\n")
    (pkg / "device" / "c.py").write_text("from slogqual.device import a, b\n")  # no cycle: c is imported by no one
    monkeypatch.setattr(__import__(__name__), "PKG", str(pkg))
    assert [show_cycle(c) for c in import_cycles(import_graph())] == [
        "slogqual.device.a (line 2) -> slogqual.device.b (line 2) -> slogqual.device.a"]
