"""The result store: every sweep, scenario, qualification and power-cut test, keyed by identity, in one SQLite file or
in a PostgreSQL database that a lab's hosts share (slogqual/store/backends.py: same tables on both).

Runs are keyed by the device's model, serial and firmware (what ``slogqual.device`` identified,
or what the user labelled a device with when it has no identity of its own, e.g. an NBD export).
Every row keeps the whole JSON document, so nothing is lost by storing; a digest of the document
makes recording the same file twice a no-op.

Location: ``--store PATH|URL``, else ``$SLOGQUAL_STORE``, else ``$XDG_DATA_HOME/slogqual/results.sqlite``
(``~/.local/share/slogqual/results.sqlite``); a ``postgresql://`` URL is a PostgreSQL store. A store
that is corrupt, locked, unwritable, unreachable or of a newer schema raises :class:`StoreError` with
one line (never a password); callers write their JSON results first, so a store failure never loses a
measurement.

All store logic is here, the commands only parse and print: selecting runs (:func:`parse_selector`,
:func:`stored_sweeps`, :func:`run_label`), the sweep inside a qualification (:func:`sweep_of`),
reading and recording result files (:func:`read_documents`, :func:`record_documents`,
:func:`record_or_warn`). What is recorded is the typed document (slogqual/store/documents.py: what a run is
filed under, read from its fields). Judging stored runs against a new one is slogqual/analysis/compare.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from slogqual.errors import UsageError
from slogqual.store.backends import Backend, NoSuchRun, StoreError, Tx, open_backend
from slogqual.store.documents import (KIND_POWERCUT, KIND_QUALIFICATION, KIND_SCENARIO, KIND_SWEEP,  # noqa: F401
                                      KINDS, SCHEMA_KINDS, TYPED, Document, filed, kind_of, summary, typed)
from slogqual.results import SWEEP_SCHEMA, SweepResult, load_json, schema_of
from slogqual.results import schema as S
from slogqual.results.qualification import Identity, QualificationResult

STORE_ENV = "SLOGQUAL_STORE"
# A store write is a few rows, but SQLite's busy handler is not fair: with eight importers writing back to
# back on a loaded two-core host one of them waited out 3 s and failed (tests/test_store_pg.py, the nine-process
# test, seen once). A run's measurement must not be lost to a lock another slogqual holds for a moment.
BUSY_TIMEOUT_S = 10.0


def default_path() -> str:
    if os.environ.get(STORE_ENV):
        return os.environ[STORE_ENV]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "slogqual", "results.sqlite")


def protected(location: Optional[str] = None) -> List[Tuple[str, str]]:
    """The result store as an output guard's protected file (outputs.check_output's ``protect``):
    ``location`` (--store), else the store slogqual resolves; none for a PostgreSQL URL."""
    from slogqual.store.backends import is_url

    location = location or default_path()
    return [] if is_url(location) else [(location, "the result store")]


def refuse_overwrite(path: str, why: str, location: Optional[str] = None) -> None:
    """UsageError when ``path`` is the result store (``location``, else the one slogqual resolves), by
    real path or by device and inode: a target that ``why`` would destroy."""
    from slogqual.outputs import same_file

    for store_path, _label in protected(location):
        if same_file(path, store_path):
            raise UsageError(f"{path} is the result store: {why}")


@dataclass
class Run:
    id: int
    kind: str
    recorded: str
    started: Optional[str]
    model: Optional[str]
    serial: Optional[str]
    firmware: Optional[str]
    device_class: Optional[str]
    target: Optional[str]
    source: Optional[str]
    status: Optional[str]
    verdict: Optional[str]
    profile: Optional[str]
    summary: Optional[str]
    path: Optional[str]
    digest: str
    host: Optional[str] = None
    slot: Optional[str] = None

    def document(self, store: "Store") -> Dict[str, Any]:
        return store.document(self.id)


RUN_COLUMNS = ("id", "kind", "recorded", "started", "model", "serial", "firmware", "device_class", "target", "source",
               "status", "verdict", "profile", "summary", "path", "digest", "host", "slot")


def _digest(doc: Dict[str, Any]) -> str:
    """Identity of a result: the document without the moment it was imported (re-importing the same
    diskinfo log is the same result)."""
    env = doc.get("environment")
    if isinstance(env, dict) and "imported_at" in env:
        doc = dict(doc, environment={k: v for k, v in env.items() if k != "imported_at"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Store:
    """The result store at a path (SQLite) or a postgresql:// URL; ``path`` is what may be printed (a
    password in the URL is ***)."""

    def __init__(self, path: Optional[str] = None, timeout: float = BUSY_TIMEOUT_S):
        self.location = path or default_path()
        self.timeout = timeout
        self.backend: Backend = open_backend(self.location, timeout)
        if path:
            self.backend.check_named()
        self.path = self.backend.display
        self.migrated: Optional[Tuple[int, int]] = None
        self._open = False

    def _fail(self, exc: BaseException) -> StoreError:
        return self.backend.fail(exc)

    def open(self) -> "Store":
        if self._open:
            return self
        try:
            self.backend.connect()
            self.migrated = self.backend.migrate()
            self._open = True
        except StoreError:
            self.backend.close()
            raise
        except self.backend.errors() as exc:
            self.backend.close()
            raise self._fail(exc) from None
        return self

    def close(self) -> None:
        self.backend.close()
        self._open = False

    def __enter__(self) -> "Store":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    @property
    def conn(self):
        """The backend's own connection (sqlite3 or psycopg), for tests and tools that know which."""
        self.open()
        return self.backend.conn

    @contextlib.contextmanager
    def _tx(self, write: bool = True) -> Iterator[Tx]:
        self.open()
        try:
            with self.backend.transaction(write) as tx:
                yield tx
        except StoreError:
            raise
        except self.backend.errors() as exc:
            raise self._fail(exc) from None

    def schema_version(self) -> int:
        with self._tx(write=False) as tx:
            return self.backend.schema_version(tx)

    # --- writing -------------------------------------------------------------------------------

    def record(self, document: Document, path: Optional[str] = None, identity: Optional[Identity] = None,
               as_read: Optional[Dict[str, Any]] = None) -> Optional[int]:
        """Store one typed document (a sweep, scenario, qualification or power-cut result: as a loader gave it,
        checked, or as a run made it); the id of its row (None when it was already stored: a run is its
        digest, so the same result from two hosts or two imports is one run). ``identity``: what the user
        labelled the device with, filling only what the document leaves unknown. ``as_read``: the JSON the
        document was loaded from, kept as it is (``import json``: the same file is the same run, whatever
        keys this slogqual's types would add to an older one); else the document as ``to_dict`` writes it."""
        if kind_of(document) is None:
            raise StoreError(f"result store: cannot record {type(document).__name__} (a sweep, scenario, "
                             "qualification or power-cut result is recorded)")
        f = filed(document).labelled(identity)
        doc = as_read if as_read is not None else document.to_dict()
        try:  # a document a reader could not load back is not stored: JSON has no NaN or infinity
            text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
        except ValueError:
            raise StoreError(f"result store: not recorded: {path or 'the document'} holds a number JSON cannot "
                             "(NaN or an infinity)") from None
        digest = _digest(doc)
        with self._tx() as tx:
            # Looked up first so that a re-import uses no id (PostgreSQL's sequence would skip one); the
            # insert's ON CONFLICT settles a race with another host recording the same run this instant.
            if tx.query("SELECT id FROM runs WHERE digest = ?", (digest,)):
                return None
            rows = tx.query(
                "INSERT INTO runs (kind, started, model, serial, firmware, device_class, target, source, "
                "status, verdict, profile, summary, path, digest, document, host, slot) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (digest) DO NOTHING RETURNING id",
                (f.kind, f.started, f.model, f.serial, f.firmware, f.device_class, f.target, f.source, f.status,
                 f.verdict, f.profile, summary(document), os.path.abspath(path) if path else None, digest,
                 text, f.host, f.slot))
            if not rows:
                return None
            run_id = int(rows[0]["id"])
            if isinstance(document, SweepResult):
                for p in document.points:
                    lat = p.lat_us
                    # a size twice in one document: the first stands (an insert/select role may not update)
                    tx.execute("INSERT INTO points (run_id, size, ios, mean_us, p50_us, p99_us, p999_us, max_us, "
                               "iops, mbps, lat_basis) VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, size) "
                               "DO NOTHING",
                               (run_id, p.size, p.ios, lat.mean, lat.p50, lat.p99, lat.p999, lat.max, p.iops,
                                p.mbps, p.lat_basis))
            return run_id

    # --- reading -------------------------------------------------------------------------------

    def runs(self, model: Optional[str] = None, serial: Optional[str] = None, kind: Optional[str] = None,
             firmware: Optional[str] = None, limit: Optional[int] = None, host: Optional[str] = None) -> List[Run]:
        where, args = [], []
        for col, val in (("model", model), ("serial", serial), ("kind", kind), ("firmware", firmware),
                         ("host", host)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY COALESCE(started, recorded), id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self._tx(write=False) as tx:
            return [Run(**r) for r in tx.query(sql, args)]

    def runs_of(self, selector: Dict[str, str], kind: Optional[str] = None) -> List[Run]:
        """The runs a selector (:func:`parse_selector`) names."""
        return self.runs(model=selector.get("model"), serial=selector.get("serial"),
                         firmware=selector.get("firmware"), kind=kind)

    def points(self, run_ids: Sequence[int]) -> Dict[int, List[Dict[str, Any]]]:
        """The stored points of sweep runs, by run id, smallest size first."""
        out: Dict[int, List[Dict[str, Any]]] = {int(i): [] for i in run_ids}
        ids = sorted(out)
        with self._tx(write=False) as tx:
            for chunk in range(0, len(ids), 500):
                part = ids[chunk:chunk + 500]
                for r in tx.query(f"SELECT run_id, size, ios, mean_us, p99_us, iops, mbps FROM points WHERE run_id "
                                  f"IN ({','.join('?' * len(part))}) ORDER BY run_id, size", part):
                    out[int(r["run_id"])].append(r)
        return out

    def document(self, run_id: int) -> Dict[str, Any]:
        if not 0 < run_id < 1 << 63:  # SQL integers are 64-bit: a larger id is no run, not an OverflowError
            raise NoSuchRun(f"result store {self.path}: no run {run_id}")
        with self._tx(write=False) as tx:
            rows = tx.query("SELECT document FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise NoSuchRun(f"result store {self.path}: no run {run_id}")
        try:
            doc = json.loads(rows[0]["document"], parse_constant=_not_json_number)
        except (TypeError, ValueError, RecursionError) as exc:
            raise StoreError(f"result store {self.path}: run {run_id} holds no readable JSON document "
                             f"({'nested too deeply' if isinstance(exc, RecursionError) else exc})") from None
        if not isinstance(doc, dict):
            raise StoreError(f"result store {self.path}: run {run_id} holds a {type(doc).__name__}, not a document")
        return doc


    def result(self, run_id: int) -> Document:
        """The stored document of a run, typed (StoreError when the row holds no document the loaders take)."""
        try:
            return typed(self.document(run_id), f"the store's run {run_id}")
        except UsageError as exc:
            raise StoreError(f"result store {self.path}: run {run_id}: {exc}") from None


def _not_json_number(token: str):
    raise ValueError(f"{token} is not a JSON number")


def digest_of(doc: Dict[str, Any]) -> str:
    return _digest(doc)


def record_or_warn(document: Document, path: Optional[str] = None, store_path: Optional[str] = None,
                   identity: Optional[Identity] = None) -> Optional[str]:
    """For commands whose result is a file (sweep, scenario run, import): record the document too.

    A store failure is one line on stderr and the returned error text; it never raises, so the
    command's own result and exit code stand.
    """
    import sys

    try:
        with Store(store_path) as store:
            store.record(document, path, identity)
    except StoreError as exc:
        print(f"slogqual: error: {exc}" + (f"; the result is kept in {path}" if path else ""), file=sys.stderr)
        return str(exc)
    return None


# --- selecting runs ---------------------------------------------------------------------------------

SELECTOR_KEYS = ("model", "serial", "firmware")


def parse_selector(spec: str) -> Dict[str, str]:
    """'model:M' (optionally ',firmware:F' or ',serial:S') -> {'model': 'M', ...}."""
    out: Dict[str, str] = {}
    for part in spec.split(","):
        key, sep, value = part.partition(":")
        key = key.strip()
        if not sep or key not in SELECTOR_KEYS or not value.strip():
            raise UsageError(f"bad --baseline {spec!r}: write model:M (optionally ,firmware:F or ,serial:S)")
        out[key] = value.strip()
    if "model" not in out and "serial" not in out:
        raise UsageError(f"bad --baseline {spec!r}: name at least model:M or serial:S")
    return out


def sweep_of(doc: Dict[str, Any], path: str) -> SweepResult:
    """The sweep in a sweep document, or inside a qualification document."""
    if schema_of(doc) == S.QUALIFICATION:
        q = QualificationResult.from_dict(doc, path)
        inner = q.sweep_result(path)
        if inner is None:
            raise UsageError(f"{path}: this qualification has no sweep (verdict {q.verdict})")
        return inner
    if schema_of(doc) != SWEEP_SCHEMA:
        raise UsageError(f"{path}: not a {SWEEP_SCHEMA} or {S.QUALIFICATION} document")
    return SweepResult.from_dict(doc, path)


def load_sweep_or_qualification(path: str) -> SweepResult:
    return sweep_of(load_json(path), path)


STORED_INPUT = re.compile(r"^store:([0-9]{1,19})$")


def stored_input(spec: str) -> Optional[int]:
    """The run id a ``store:ID`` input names (a file of that name wins: it is what the user has), else None."""
    m = STORED_INPUT.match(spec)
    return int(m.group(1)) if m and not os.path.exists(spec) else None


def input_document(spec: str, store_path: Optional[str]) -> Tuple[Dict[str, Any], str]:
    """(document, where it came from) for an input given as a file or as ``store:ID``: the stored document of
    that run in the result store (``store_path``: --store, else $SLOGQUAL_STORE or the default)."""
    run_id = stored_input(spec)
    if run_id is None:
        doc = load_json(spec)
        if not isinstance(doc, dict):  # a JSON list or number: every reader below asks it for keys
            raise S.DocumentError(f"{spec}: not a slogqual document (a JSON {type(doc).__name__}, not an object)")
        return doc, spec
    st = Store(store_path)
    if not st.backend.exists():  # reading must not leave an empty store behind
        raise UsageError(f"{spec}: the result store {st.path} does not exist: no run is recorded there")
    with st:
        return st.document(run_id), f"{spec} ({st.path})"


@dataclass
class StoredSweeps:
    """The stored sweeps a selector names, less any stored copy of the result being judged."""

    selector: Dict[str, str]
    runs: List[Tuple[Run, SweepResult]]
    identical: List[Run]


def run_label(run: Run) -> str:
    """How a stored run is named in output: 'run 12 (2026-11-22T02:30:00, serial X1)'."""
    started = (run.started or run.recorded or "")[:19]
    extra = [x for x in (started, f"serial {run.serial}" if run.serial else "") if x]
    return f"run {run.id}" + (f" ({', '.join(extra)})" if extra else "")


def stored_sweeps(selector: Dict[str, str], store_path: Optional[str],
                  leave_out: Optional[SweepResult] = None) -> StoredSweeps:
    """Every stored sweep of the selector, oldest first; a stored copy of ``leave_out`` is set apart."""
    digest = digest_of(leave_out.to_dict()) if leave_out is not None else None
    with Store(store_path) as store:
        runs = store.runs_of(selector, kind=KIND_SWEEP)
        stored = [(r, store.document(r.id)) for r in runs]
    kept = [(r, SweepResult.from_dict(d, f"the store's run {r.id}")) for r, d in stored if r.digest != digest]
    identical = [r for r, _ in stored if r.digest == digest]
    return StoredSweeps(selector, kept, identical)


# --- recording files -----------------------------------------------------------------------------------

@dataclass
class ReadDocument:
    """A result document read from a file: typed, and the JSON as the file had it (what is stored)."""

    document: Document
    path: str
    as_read: Dict[str, Any]


def read_documents(paths: Sequence[str]) -> List[ReadDocument]:
    """Every document (or list of documents) in the files, typed; anything that is not a slogqual result
    document, or a malformed one, is refused before anything is stored."""
    docs = []
    for path in paths:
        data = load_json(path)
        for doc in data if isinstance(data, list) else [data]:
            docs.append(ReadDocument(typed(doc, path), path, doc))  # a malformed one is refused here, not stored
    return docs


def record_documents(docs: Sequence[ReadDocument], store_path: Optional[str]) -> List[Optional[int]]:
    """Record documents read from files in one store; the new ids (None: already stored)."""
    with Store(store_path) as store:
        return [store.record(d.document, d.path, as_read=d.as_read) for d in docs]


def record_results_or_warn(results: Sequence[SweepResult], paths: Sequence[Optional[str]],
                           store_path: Optional[str] = None) -> None:
    """Record sweeps (import diskinfo); a store failure is one line per result, never an exception."""
    for r, path in zip(results, paths):
        record_or_warn(r, path, store_path)
