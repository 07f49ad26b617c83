"""The result store: every sweep, scenario and qualification, in one SQLite file, keyed by identity.

Runs are keyed by the device's model, serial and firmware (what ``slogqual.device`` identified,
or what the user labelled a device with when it has no identity of its own, e.g. an NBD export).
Every row keeps the whole JSON document, so nothing is lost by storing; a digest of the document
makes recording the same file twice a no-op.

Path: ``--store PATH``, else ``$SLOGQUAL_STORE``, else ``$XDG_DATA_HOME/slogqual/results.sqlite``
(``~/.local/share/slogqual/results.sqlite``). A store that is corrupt, locked or unwritable raises
:class:`StoreError` with one line; callers write their JSON results first, so a store failure
never loses a measurement.

All store logic is here, the commands only parse and print: selecting runs (:func:`parse_selector`,
:func:`stored_sweeps`, :func:`run_label`), the sweep inside a qualification (:func:`sweep_of`),
reading and recording result files (:func:`read_documents`, :func:`record_documents`,
:func:`record_or_warn`). Judging stored runs against a new one is slogqual/analysis/compare.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from slogqual.analysis import scenario as scenario_analysis
from slogqual.errors import SlogqualError, UsageError
from slogqual.results import SWEEP_SCHEMA, SweepResult, load_json
from slogqual.results import schema as S
from slogqual.results.qualification import QualificationResult
from slogqual.results.scenario import ScenarioResult

STORE_ENV = "SLOGQUAL_STORE"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 3.0  # a store write is a few rows: waiting longer means another writer is stuck

KIND_SWEEP, KIND_SCENARIO, KIND_QUALIFICATION = "sweep", "scenario", "qualification"
SCHEMA_KINDS = {S.SWEEP: KIND_SWEEP, S.SCENARIO: KIND_SCENARIO, S.QUALIFICATION: KIND_QUALIFICATION}
TYPED = {KIND_SWEEP: SweepResult.from_dict, KIND_SCENARIO: ScenarioResult.from_dict,
         KIND_QUALIFICATION: QualificationResult.from_dict}

_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,              -- sweep | scenario | qualification
    recorded TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    started TEXT,
    model TEXT, serial TEXT, firmware TEXT,
    device_class TEXT,
    target TEXT,
    source TEXT,                     -- slogqual | diskinfo | ...
    status TEXT,
    verdict TEXT,                    -- qualifications: pass | fail | incomplete | refused | error
    profile TEXT,
    summary TEXT,
    path TEXT,                       -- the JSON file the run was recorded from or written to
    digest TEXT NOT NULL UNIQUE,
    document TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_model ON runs (model);
CREATE INDEX IF NOT EXISTS runs_serial ON runs (serial);
CREATE TABLE IF NOT EXISTS points (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    size INTEGER NOT NULL,
    ios INTEGER, mean_us REAL, p50_us REAL, p99_us REAL, p999_us REAL, max_us REAL,
    iops REAL, mbps REAL, lat_basis TEXT,
    PRIMARY KEY (run_id, size)
);
"""


class StoreError(SlogqualError):
    """The store cannot be opened or written (corrupt, locked, unwritable)."""

    exit_code = 1


def default_path() -> str:
    if os.environ.get(STORE_ENV):
        return os.environ[STORE_ENV]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "slogqual", "results.sqlite")


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

    def document(self, store: "Store") -> Dict[str, Any]:
        return store.document(self.id)


def _digest(doc: Dict[str, Any]) -> str:
    """Identity of a result: the document without the moment it was imported (re-importing the same
    diskinfo log is the same result)."""
    env = doc.get("environment")
    if isinstance(env, dict) and "imported_at" in env:
        doc = dict(doc, environment={k: v for k, v in env.items() if k != "imported_at"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def identity_of(doc: Dict[str, Any]) -> Dict[str, Optional[str]]:
    """model/serial/firmware/class/target of any of the three documents."""
    schema = doc.get("schema")
    if schema == S.QUALIFICATION:
        ident = doc.get("identity") or {}
        return {"model": ident.get("model"), "serial": ident.get("serial"), "firmware": ident.get("firmware"),
                "class": ident.get("class"), "target": doc.get("target")}
    if schema == S.SCENARIO:
        pool = doc.get("pool") or {}
        logs = pool.get("log") or []
        dev = (pool.get("devices") or {}).get(logs[0]) if logs else None
        dev = dev or {}
        return {"model": dev.get("model"), "serial": dev.get("serial"), "firmware": dev.get("firmware"),
                "class": dev.get("class"), "target": logs[0] if logs else None}
    dev = doc.get("device") or {}
    target = doc.get("target") if isinstance(doc.get("target"), dict) else {}
    return {"model": dev.get("model") or target.get("label"), "serial": dev.get("serial"),
            "firmware": dev.get("firmware"), "class": dev.get("class"), "target": target.get("path")}


def _summary(kind: str, doc: Dict[str, Any]) -> str:
    if kind == KIND_SWEEP:
        pts = doc.get("points") or []
        four = next((p for p in pts if p.get("size") == 4096), None)
        head = f"{len(pts)} sizes"
        if four:
            head += f"; 4K mean {four['lat_us']['mean']:.1f} µs, {four['iops']:.0f} IOPS"
        return head
    if kind == KIND_SCENARIO:
        a = scenario_analysis.current(doc) or {}  # today's rules on the measured steps
        return str(a.get("verdict") or f"{len(doc.get('steps') or [])} steps")
    s = doc.get("summary") or {}
    ss = (doc.get("steady_state") or {}).get("label", "")
    return f"{s.get('pass', 0)} pass, {s.get('fail', 0)} fail, {s.get('not-evaluated', 0)} not evaluated; " \
           f"steady state {ss}"


class Store:
    def __init__(self, path: Optional[str] = None, timeout: float = BUSY_TIMEOUT_S):
        self.path = path or default_path()
        self.timeout = timeout
        self._conn: Optional[sqlite3.Connection] = None

    def _fail(self, exc: BaseException) -> StoreError:
        text = str(exc).strip() or type(exc).__name__
        hint = ""
        if "locked" in text or "busy" in text:
            hint = f" (another process holds it for more than {self.timeout:g} s)"
        elif "not a database" in text or "malformed" in text or "corrupt" in text:
            hint = " (move the file aside or point --store / $SLOGQUAL_STORE elsewhere)"
        return StoreError(f"result store {self.path}: {text}{hint}")

    def open(self) -> "Store":
        try:
            directory = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(directory, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                conn.close()
                raise StoreError(f"result store {self.path}: schema version {version} is newer than this "
                                 f"slogqual ({SCHEMA_VERSION})")
            if version < SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")
                for statement in _DDL.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            self._conn = conn
        except StoreError:
            raise
        except (sqlite3.Error, OSError) as exc:
            raise self._fail(exc) from None
        return self

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "Store":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self.open()
        return self._conn

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._fail(exc) from None

    # --- writing -------------------------------------------------------------------------------

    def record(self, doc: Dict[str, Any], path: Optional[str] = None,
               identity: Optional[Dict[str, Optional[str]]] = None) -> Optional[int]:
        """Store one document; the id of its row (None when it was already stored)."""
        kind = SCHEMA_KINDS.get(doc.get("schema"))
        if kind is None:
            raise StoreError(f"result store: cannot record a document of schema {doc.get('schema')!r}")
        try:  # the typed loader of its kind: a malformed document is not stored
            TYPED[kind](doc, path or "the document")
        except UsageError as exc:
            raise StoreError(f"result store: not recorded: {exc}") from None
        ident = dict(identity_of(doc))
        for k, v in (identity or {}).items():
            if v and not ident.get(k):
                ident[k] = v
        started = doc.get("started") or (doc.get("environment") or {}).get("started")
        digest = _digest(doc)
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO runs (kind, started, model, serial, firmware, device_class, target, source, "
                "status, verdict, profile, summary, path, digest, document) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (kind, started, ident.get("model"), ident.get("serial"), ident.get("firmware"), ident.get("class"),
                 ident.get("target"), doc.get("source", "slogqual"), doc.get("status"), doc.get("verdict"),
                 (doc.get("profile") or {}).get("name") if kind == KIND_QUALIFICATION else None,
                 _summary(kind, doc), os.path.abspath(path) if path else None, digest,
                 json.dumps(doc, separators=(",", ":"))))
            if cur.rowcount == 0:
                return None
            run_id = cur.lastrowid
            if kind == KIND_SWEEP:
                for p in doc.get("points") or []:
                    lat = p.get("lat_us") or {}
                    conn.execute("INSERT OR REPLACE INTO points VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                 (run_id, p["size"], p.get("ios"), lat.get("mean"), lat.get("p50"), lat.get("p99"),
                                  lat.get("p999"), lat.get("max"), p.get("iops"), p.get("mbps"), p.get("lat_basis")))
            return run_id

    # --- reading -------------------------------------------------------------------------------

    def runs(self, model: Optional[str] = None, serial: Optional[str] = None, kind: Optional[str] = None,
             firmware: Optional[str] = None, limit: Optional[int] = None) -> List[Run]:
        where, args = [], []
        for col, val in (("model", model), ("serial", serial), ("kind", kind), ("firmware", firmware)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        sql = ("SELECT id, kind, recorded, started, model, serial, firmware, device_class, target, source, status, "
               "verdict, profile, summary, path, digest FROM runs")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY COALESCE(started, recorded), id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        try:
            return [Run(**dict(r)) for r in self.conn.execute(sql, args).fetchall()]
        except sqlite3.Error as exc:
            raise self._fail(exc) from None

    def runs_of(self, selector: Dict[str, str], kind: Optional[str] = None) -> List[Run]:
        """The runs a selector (:func:`parse_selector`) names."""
        return self.runs(model=selector.get("model"), serial=selector.get("serial"),
                         firmware=selector.get("firmware"), kind=kind)

    def document(self, run_id: int) -> Dict[str, Any]:
        if not 0 < run_id < 1 << 63:  # SQLite integers are 64-bit: a larger id is no run, not an OverflowError
            raise StoreError(f"result store {self.path}: no run {run_id}")
        try:
            row = self.conn.execute("SELECT document FROM runs WHERE id = ?", (run_id,)).fetchone()
        except sqlite3.Error as exc:
            raise self._fail(exc) from None
        if row is None:
            raise StoreError(f"result store {self.path}: no run {run_id}")
        try:
            doc = json.loads(row[0], parse_constant=_not_json_number)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"result store {self.path}: run {run_id} holds no readable JSON document ({exc})") from None
        if not isinstance(doc, dict):
            raise StoreError(f"result store {self.path}: run {run_id} holds a {type(doc).__name__}, not a document")
        return doc


def _not_json_number(token: str):
    raise ValueError(f"{token} is not a JSON number")


def digest_of(doc: Dict[str, Any]) -> str:
    return _digest(doc)


def record_or_warn(doc: Dict[str, Any], path: Optional[str] = None, store_path: Optional[str] = None,
                   identity: Optional[Dict[str, Optional[str]]] = None) -> Optional[str]:
    """For commands whose result is a file (sweep, scenario run, import): record the document too.

    A store failure is one line on stderr and the returned error text; it never raises, so the
    command's own result and exit code stand.
    """
    import sys

    try:
        with Store(store_path) as store:
            store.record(doc, path, identity)
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
    if doc.get("schema") == S.QUALIFICATION:
        inner = (doc.get("sweep") or {}).get("document")
        if not inner:
            raise UsageError(f"{path}: this qualification has no sweep (verdict {doc.get('verdict')})")
        doc = inner
    if doc.get("schema") != SWEEP_SCHEMA:
        raise UsageError(f"{path}: not a {SWEEP_SCHEMA} or {S.QUALIFICATION} document")
    return SweepResult.from_dict(doc, path)


def load_sweep_or_qualification(path: str) -> SweepResult:
    return sweep_of(load_json(path), path)


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

def read_documents(paths: Sequence[str]) -> List[Tuple[Dict[str, Any], str]]:
    """(document, path) for every document (or list of documents) in the files; anything that is not
    a slogqual result document, or a malformed sweep, is refused before anything is stored."""
    docs = []
    for path in paths:
        data = load_json(path)
        for doc in data if isinstance(data, list) else [data]:
            if not isinstance(doc, dict) or doc.get("schema") not in SCHEMA_KINDS:
                got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
                raise UsageError(f"{path}: not a slogqual result document (schema: {got!r}; "
                                 f"known: {', '.join(SCHEMA_KINDS)})")
            TYPED[SCHEMA_KINDS[doc["schema"]]](doc, path)  # a malformed document is refused here, not stored
            docs.append((doc, path))
    return docs


def record_documents(docs: Sequence[Tuple[Dict[str, Any], Optional[str]]],
                     store_path: Optional[str]) -> List[Optional[int]]:
    """Record (document, path) pairs in one store; the new ids (None: already stored)."""
    with Store(store_path) as store:
        return [store.record(doc, path) for doc, path in docs]


def record_results_or_warn(results: Sequence[SweepResult], paths: Sequence[Optional[str]],
                           store_path: Optional[str] = None) -> None:
    """Record sweeps (import diskinfo); a store failure is one line per result, never an exception."""
    for r, path in zip(results, paths):
        record_or_warn(r.to_dict(), path, store_path)
