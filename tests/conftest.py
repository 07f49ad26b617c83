import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# Commands that record into the result store (sweep, scenario, import, qualify) must not write the
# user's real store from tests: every test run gets its own, unless a test names another.
import tempfile as _tempfile  # noqa: E402

os.environ["SLOGQUAL_STORE"] = os.path.join(_tempfile.mkdtemp(prefix="slogqual-test-store-"), "results.sqlite")
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "fixtures")


def fixture_path(*parts):
    return os.path.join(FIXTURES, *parts)


def read_fixture(*parts):
    with open(fixture_path(*parts)) as fh:
        return fh.read()


def slogqual(*args, env=None, cwd=None, timeout=600):
    """Run the real CLI (python -m slogqual) and capture its output."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "slogqual", *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)


def load(path):
    with open(path) as fh:
        return json.load(fh)


def need(*programs):
    missing = [p for p in programs if shutil.which(p) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (contrib/install-deps.sh)")


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices)")


@pytest.fixture
def loop_device(tmp_path):
    """A fresh 64 MiB loop device over a file, detached afterwards whatever happens."""
    img = tmp_path / "loop.img"
    with open(img, "wb") as fh:
        fh.truncate(64 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True, text=True)
    if dev.returncode != 0:
        pytest.skip(f"no loop device: {dev.stderr.strip()}")
    path = dev.stdout.strip()
    try:
        yield path
    finally:
        subprocess.run(["losetup", "-d", path], capture_output=True)
