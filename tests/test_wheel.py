"""A non-editable install works: the sdist and the wheel built from this tree carry the scenarios, the
profiles, the lab's device classes and stage2.sh, and slogqual installed from the wheel into a fresh
venv (offline, away from the editable install) finds them from any directory."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import ROOT, need

pytestmark = [pytest.mark.integration, need("fio")]

# Not part of a build: version control, caches, results and whatever an earlier build left in the tree.
IGNORE = shutil.ignore_patterns(".git", "artifacts", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                ".pytest_cache", "slogqual-scratch-*")


def run(argv, **kw):
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def shipped(*parts):
    """The files of the repository's scenarios/ (relative paths), the data a wheel must carry."""
    top = os.path.join(ROOT, "scenarios", *parts)
    return sorted(os.path.relpath(os.path.join(d, f), top) for d, _, files in os.walk(top) for f in files
                  if not f.startswith("."))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """sdist from a copy of the tree (the tree itself gets no build/ or egg-info), then the wheel from the
    unpacked sdist, as `python -m build` does: a file MANIFEST.in forgets is missing from the wheel too."""
    if importlib.util.find_spec("wheel") is None:
        pytest.skip("needs the wheel package to build without isolation (pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE, symlinks=True)
    out = tmp / "out"
    run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))",
         out], cwd=src)
    (sdist,) = out.glob("slogqual-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp / "sdist")
    top = names[0].split("/")[0]
    for f in shipped():
        assert f"{top}/scenarios/{f}" in names, f"sdist lacks scenarios/{f}"
    assert f"{top}/slogqual/lab/stage2.sh" in names and f"{top}/setup.py" in names
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", out, tmp / "sdist" / top])
    (whl,) = out.glob("slogqual-*.whl")
    return whl


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv with the wheel installed (no index, no network), tabulate visible through a .pth
    naming a directory that holds only a link to it: the base interpreter's site-packages, where the
    editable install's finder is, stays out."""
    tmp = tmp_path_factory.mktemp("venv")
    env_dir = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    python = env_dir / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps", "-q", wheel])
    tabulate = importlib.util.find_spec("tabulate")
    deps = tmp / "deps"
    deps.mkdir()
    if tabulate.submodule_search_locations:  # a package directory
        target = tabulate.submodule_search_locations[0]
    else:  # a single module
        target = tabulate.origin
    (deps / os.path.basename(target)).symlink_to(target)
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    with open(os.path.join(purelib, "slogqual-test-deps.pth"), "w") as fh:
        fh.write(f"{deps}\n")
    return env_dir


@pytest.fixture
def in_venv(venv, tmp_path):
    """Run a program of the venv from a directory outside the repository, PYTHONPATH cleared."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["SLOGQUAL_STORE"] = str(tmp_path / "store.sqlite")
    work = tmp_path / "elsewhere"
    work.mkdir()

    def call(*argv, check=True):
        proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, env=env, cwd=work)
        if check:
            assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    call.dir = work
    return call


def test_wheel_carries_the_data_and_stage2(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "slogqual/lab/stage2.sh" in names
    assert "slogqual/data.py" in names
    missing = [f for f in shipped() if f"slogqual/scenarios/{f}" not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert "slogqual/scenarios/profiles/homelab-1gbe.toml" in names
    assert "slogqual/scenarios/lab-devices.toml" in names


def test_installed_wheel_finds_its_data_from_anywhere(venv, in_venv):
    py = venv / "bin" / "python"
    probe = ("import json, os, slogqual, tabulate\n"
             "from slogqual import data\n"
             "from slogqual.lab import runner\n"
             "print(json.dumps({'file': slogqual.__file__, 'data': data.data_dir(), 'stage2': runner.STAGE2,\n"
             "  'stage2_ok': os.path.isfile(runner.STAGE2), 'keep': runner.keep_paths()}))")
    got = json.loads(in_venv(py, "-c", probe).stdout)
    site = os.path.dirname(os.path.dirname(got["file"]))
    assert got["file"].startswith(str(venv) + os.sep), got  # the wheel's copy, not the editable tree
    assert got["data"] == os.path.join(site, "slogqual", "scenarios")
    assert got["stage2_ok"] and got["stage2"].startswith(str(venv) + os.sep)
    assert not any(p.startswith(ROOT) for p in got["keep"])
    cli = venv / "bin" / "slogqual"

    listed = in_venv(cli, "scenario", "list").stdout.split("\n")
    names = {line.split()[0] for line in listed if line.strip()}
    assert names == {f[:-5] for f in shipped() if "/" not in f and f.endswith(".toml") and f != "lab-devices.toml"}

    shown = json.loads(in_venv(cli, "scenario", "show", "iscsi-4k-randwrite").stdout)
    assert shown["name"] == "iscsi-4k-randwrite"

    classes = in_venv(cli, "lab", "classes").stdout
    for name in ("hdd", "sata-ssd", "nvme", "nvdimm"):
        assert any(line.split()[:1] == [name] for line in classes.splitlines()), classes

    target = in_venv.dir / "target.img"
    with open(target, "wb") as fh:
        fh.truncate(32 << 20)
    out = in_venv.dir / "q"
    proc = in_venv(cli, "qualify", target, "--profile", "homelab-1gbe", "--out", out, "--max-rounds", "0",
                   "--runtime", "0.2", "--settle", "0", "--no-html", "--no-store", "--quiet", check=False)
    # The profile may fail (a busy disk): it ran, it was found, its documents were written.
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    doc = json.loads((out / "target.img.qualification.json").read_text())
    assert doc["schema"] == "slogqual.qualification/1" and doc["verdict"] in ("pass", "fail")
    assert doc["profile"]["name"] == "homelab-1gbe" and doc["profile"]["path"].startswith(str(venv) + os.sep)
    assert (out / "target.img.sweep.json").is_file()


def test_installed_wheel_without_its_data_says_so_in_one_line(venv, in_venv):
    site = run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    data = os.path.join(site, "slogqual", "scenarios")
    hidden = data + ".hidden"
    os.rename(data, hidden)
    try:
        cli = venv / "bin" / "slogqual"
        for argv in (("scenario", "list"), ("scenario", "show", "nfs-sync"),
                     ("qualify", in_venv.dir / "x.img", "--profile", "homelab-1gbe", "--no-store"),
                     ("lab", "classes")):
            proc = in_venv(cli, *argv, check=False)
            assert proc.returncode == 2, (argv, proc.stderr)
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in proc.stderr, (argv, proc.stderr)
            assert "missing" in lines[0], (argv, lines)
    finally:
        os.rename(hidden, data)


def test_installed_wheel_carries_a_built_pair_engine(wheel, venv, in_venv):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"slogqual/native/pairbench.c", "slogqual/native/pairbench"} <= names
    py = venv / "bin" / "python"
    probe = ("import json\nfrom slogqual.tools import pairbench as p\n"
             "print(json.dumps({'path': p.locate(build_if_missing=False), 'version': p.check_version().text}))")
    got = json.loads(in_venv(py, "-c", probe).stdout)
    assert got["path"].startswith(str(venv) + os.sep), got  # built by pip install, not on first use
    assert got["version"] == "pairbench 3"
