"""The Neo4j driver's lifecycle, transactions and retries: the only module that touches the driver.

Every unit of work is one transaction function ``fn(tx) -> T`` over named statements. Writes are retried
by graphmem itself (tenacity) rather than by the driver's managed transactions, for three reasons:

* the driver backs off 1 s, 2 s, 4 s..., far too slow for the short write conflicts of concurrent
  updates on the bundled engine: graphmem retries them with jittered backoff for a time budget
  (``GRAPHMEM_WRITE_RETRY_BUDGET_S``; a count of attempts ran out under many writers while the time did not),
  and past it answers 503 (``Contended``): the server's contention, not the caller's conflict. A write that
  has lost once retries alone (``Turns``), so under contention one process's writers take turns instead of
  one of them losing every race until its budget ends. The time a write waits for its turn is not
  spent against the budget: queued behind other writers is not contended;
* the driver also retries ``ServiceUnavailable`` for its whole retry window, while a caller must hear
  "unavailable" within a few seconds when the database is down;
* the bundled engine reports a concurrent insert of the same unique key as ``ConstraintError``, which the
  driver does not retry. Our transaction functions always read before they write, so a retry after such a
  race finds the winner's node and answers as if the request had come second.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from cachetools import TTLCache
from neo4j.exceptions import (
    ConstraintError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from tenacity import RetryCallState, Retrying, wait_random_exponential

from graphmem.errors import Contended, GraphmemError, InvalidInput, Unavailable
from graphmem.store.dialect import Dialect
from graphmem.store.names import StatementName
from graphmem.store.queries import Statement, statements
from graphmem.store.statement_log import StatementLog
from graphmem.turns import Turns

log = logging.getLogger(__name__)

T = TypeVar("T")


STATEMENT_NOTE = "graphmem statement: "  # how a failed run marks its exception with the statement's name and text


class RetryTransaction(Exception):
    """Raised inside a transaction function when what it locked moved under it: run it again."""


class Tx:
    """A transaction that runs named statements only. Query text never comes from callers."""

    def __init__(self, tx: neo4j.ManagedTransaction | neo4j.Transaction, dialect: Dialect,
                 named: dict[str, Statement], memo: TTLCache[Any, Any], ran: StatementLog | None = None) -> None:
        self._tx = tx
        self._dialect = dialect
        self._named = named
        # The store's short-lived memo of derived values that may be a little stale (namespace sizes).
        self.memo = memo
        self._ran = ran

    def run(self, name: StatementName, /, **params: Any) -> list[dict[str, Any]]:
        statement = self._named[name]
        text = self._dialect.prepare(statement.text)
        try:
            return recorded(self._ran, name, lambda: record_dicts(self._tx.run(text, quiet(params))))
        except Neo4jError as exc:  # the operator's log names the statement; the server's message quotes it whole
            exc.add_note(f"{STATEMENT_NOTE}{name}\n{text}")
            raise

    def single(self, name: StatementName, /, **params: Any) -> dict[str, Any] | None:
        rows = self.run(name, **params)
        return rows[0] if rows else None

    def collected(self, name: StatementName, /, **params: Any) -> list[dict[str, Any]]:
        """The rows of a statement that returns them as one row, ``RETURN collect({...}) AS rows``. The
        bundled engine sends each record as a Bolt message of its own, which the driver reads with two socket
        reads: about 30 µs a record, half of an export level's time for its 600 rows (37 → 24 ms, the same
        rows in the same order). Statements that return hundreds of rows are written this way."""
        row = self.single(name, **params)
        return row["rows"] if row is not None else []

    def run_chunked(self, name: StatementName, /, key: str, rows: list[dict[str, Any]],
                    **params: Any) -> list[dict[str, Any]]:
        """Run an UNWIND statement over ``rows`` (the parameter ``key``) in parts whose encoded size stays
        under the dialect's write budget, all inside this transaction: one logical write may be far larger
        than one Bolt message may be (the bundled engine refuses a message over 16 MiB)."""
        results: list[dict[str, Any]] = []
        for part in chunks(rows, self._dialect.write_budget_bytes):
            results.extend(self.run(name, **{key: part}, **params))
        return results


def recorded(ran: StatementLog | None, name: str, run: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """``run()``'s rows, the statement ``name`` noted in the process's statement log, if it keeps one, as run
    or as refused."""
    if ran is None:
        return run()
    try:
        rows = run()
    except Neo4jError as exc:
        ran.failed(name, exc.code)
        raise
    ran.ran(name)
    return rows


_PLAIN = frozenset({str, int, float, bool, type(None), list, dict})


def record_dicts(result: neo4j.Result) -> list[dict[str, Any]]:
    """A result's records as dicts. ``Record.data()`` runs every value through the driver's exporter, which
    turns graph elements into plain values and recurses into every list and map to look for them: 2.4 µs a
    value, 18 ms for the properties of one 770-fact export page, six times this. Graph elements come only at
    the top level of a row (the Neo4j Browser guide's statements return nodes, relationships and paths, for
    Browser to draw; no statement puts one in a list or map), so a record goes through ``data()`` only when
    one of its values is not a plain scalar, list or map."""
    keys = result.keys()
    return [dict(zip(keys, record, strict=True)) if _PLAIN.issuperset(map(type, record)) else record.data()
            for record in result]


class QuietList(list[Any]):
    """A list parameter whose repr() is its length (``quiet``)."""

    def __repr__(self) -> str:
        return f"[{len(self)} items]"


class QuietMap(dict[str, Any]):
    """A map parameter whose repr() is its size (``quiet``)."""

    def __repr__(self) -> str:
        return f"{{{len(self)} entries}}"


def quiet(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each list and map wrapped so that repr() is short; PackStream sends the same bytes.
    The driver (neo4j 6.4, the ``run`` of every Bolt version) formats a statement's whole parameters with
    repr() for a debug log line before the logger decides whether to write it, so a write of 750 facts spent
    317 ms a statement turning 288,000 embedding floats into text nobody reads. Its debug log (off unless asked
    for) now shows the sizes of lists and maps, which also keeps the memories written and their vectors out of
    it (single strings, such as a search's query, are still shown)."""
    return {key: QuietList(value) if isinstance(value, list) else QuietMap(value) if isinstance(value, dict)
            else value for key, value in params.items()}


def encoded_size(value: Any) -> int:
    """An upper estimate of ``value``'s PackStream size in bytes (markers and length headers included)."""
    if isinstance(value, str):
        return 5 + len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, dict):
        return 5 + sum(encoded_size(k) + encoded_size(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        if value and isinstance(value[0], float):  # an embedding: 9 bytes a float
            return 5 + 9 * len(value)
        return 5 + sum(encoded_size(item) for item in value)
    return 9  # None, booleans, integers, floats: at most 9 bytes


def chunks(rows: list[dict[str, Any]], budget: int) -> list[list[dict[str, Any]]]:
    """``rows`` in order, cut into parts of at most ``budget`` estimated bytes (a row larger than the budget
    on its own is a part of its own); no part is empty."""
    parts: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        row_size = encoded_size(row)
        if current and size + row_size > budget:
            parts.append(current)
            current, size = [], 0
        current.append(row)
        size += row_size
    if current:
        parts.append(current)
    return parts


@dataclass(frozen=True)
class ServerInfo:
    agent: str
    address: str
    protocol_version: str


_CONNECTION_ERRORS = (ServiceUnavailable, SessionExpired, OSError)
MEMO_TTL_S = 30.0  # how stale a memoised namespace size may be (it only picks exact scan or index)
CONNECTION_ATTEMPTS = 2  # a pooled connection may be stale after a server restart: one fresh try


# A record another transaction deleted while this one read it: the bundled engine reports that race as
# EntityNotFound (seen with concurrent hard deletes of one memory). A retry reads again and finds the winner's
# state (our transaction functions read before they write), as after a write conflict.
_RACE_CODES = {"Neo.ClientError.Statement.EntityNotFound"}
# The bundled engine (ArcadeDB 26.10) has also failed a read of a record that concurrent transactions were writing
# with a general DatabaseError saying its multi-page chunk chain is broken (once in about 700 remembers from twelve
# concurrent writers; never reproduced alone). It is retried like a conflict, and logged: a read of a record caught
# mid-write succeeds the next time, and a record that really is broken fails until the budget ends (503).
_RACE_MESSAGES = ("broken chunk chain", "was modified during read")
# The same torn read has also come without its cause: the engine's message is then only "Error executing Cypher
# command: <the statement>" (seen once under twelve writers, its log naming the broken chunk chain). Such an
# error says nothing either way, so it is tried again a little, not for the whole budget: a torn read passes the
# next time, and a statement that really fails is still the caller's 500 after OPAQUE_ATTEMPTS.
_OPAQUE_PREFIX = "Error executing Cypher command:"
OPAQUE_ATTEMPTS = 3


def _is_race(exc: Neo4jError) -> bool:
    """A record another transaction changed or deleted while this one read it (``_RACE_CODES``,
    ``_RACE_MESSAGES``)."""
    return exc.code in _RACE_CODES or any(said in (exc.message or "") for said in _RACE_MESSAGES)


def _is_opaque(exc: BaseException) -> bool:
    """The bundled engine's general error that names no cause (``_OPAQUE_PREFIX``)."""
    return (isinstance(exc, Neo4jError) and exc.code == "Neo.DatabaseError.General.UnknownError"
            and (exc.message or "").startswith(_OPAQUE_PREFIX) and "Caused by" not in (exc.message or ""))


def _retry(state: RetryCallState) -> bool:
    """Retry what ``_is_retryable`` says, and an opaque engine error up to ``OPAQUE_ATTEMPTS`` tries."""
    exc = state.outcome.exception() if state.outcome is not None and state.outcome.failed else None
    if exc is None:
        return False
    if _is_opaque(exc) and state.attempt_number < OPAQUE_ATTEMPTS:
        log.warning("the graph database failed a statement without saying why; trying it again")
        return True
    return _is_retryable(exc)


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, (RetryTransaction, ConstraintError, *_CONNECTION_ERRORS)):
        return True
    if not isinstance(exc, Neo4jError) or not (exc.is_retryable() or _is_race(exc)):
        return False
    if exc.code not in _RACE_CODES and not exc.is_retryable():  # a torn read: worth a line in the log
        log.warning("the graph database could not read a record being written; retrying: %s",
                    (exc.message or "")[-300:])
    return True


def _stop(budget_s: float, queued: list[float]) -> Callable[[RetryCallState], bool]:
    """Conflicts retry until ``budget_s`` have passed since the first attempt, leaving out the ``queued[0]``
    seconds spent waiting for a turn (the last wait may pass it by up to a second); a lost connection only once,
    so "unavailable" is fast."""

    def stop(state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _CONNECTION_ERRORS):
            return state.attempt_number >= CONNECTION_ATTEMPTS
        return (state.seconds_since_start or 0.0) - queued[0] >= budget_s

    return stop


# Server errors a caller's values cause (a value of a type or size the server refuses): invalid input, with
# the kind of problem as the reason. Everything else is graphmem's fault and is logged with a reference.
_CALLER_ERRORS = {
    "Neo.ClientError.Statement.TypeError": "a value has a type the graph database does not store",
    "Neo.ClientError.Statement.ArgumentError": "a value is outside what the graph database accepts",
    "Neo.ClientError.Request.Invalid": "the request is larger or more deeply nested than the graph database accepts",
    "Neo.ClientError.Request.InvalidFormat": "a value could not be encoded for the graph database",
}


def _contended() -> Contended:
    """Out of time against concurrent writers (a conflict, a lock, a record deleted meanwhile)."""
    return Contended("the graph database is busy with concurrent changes to the same records; retry shortly "
                     "(with the same request_id, if the request had one)", retry_after=1)


def _refused_value(exc: Neo4jError) -> InvalidInput | None:
    reason = _CALLER_ERRORS.get(exc.code or "")
    return InvalidInput(f"the graph database refused this request: {reason}", reason=exc.code) if reason else None


def _rejected(exc: BaseException) -> GraphmemError:
    """An internal failure: the operator's log line and the caller's error carry the same reference. The log
    line names the statement instead of quoting it (the bundled engine's message holds the whole query, and no
    log line carries Cypher); the caller gets no query and no internals."""
    ref = uuid.uuid4().hex[:12]
    words = str(exc)
    for note in getattr(exc, "__notes__", []):
        if note.startswith(STATEMENT_NOTE):
            name, _, text = note[len(STATEMENT_NOTE):].partition("\n")
            words = f"statement {name}: {words.replace(text, f'<{name}>')}"
    log.error("transaction failed (ref %s): %s: %s", ref, type(exc).__name__, words)
    return GraphmemError("the graph database rejected the operation", ref=ref)


def _unavailable(exc: BaseException) -> Unavailable:
    return Unavailable("the graph database is unreachable; try again shortly", reason=type(exc).__name__)


class GraphStore:
    """One driver per process, bound to one database and one dialect."""

    _sleep = staticmethod(time.sleep)  # between retries (a test may make the waits instant)

    def __init__(self, driver: neo4j.Driver, database: str, dialect: Dialect, *,
                 transaction_timeout_s: float, retry_budget_s: float, ran: StatementLog | None = None) -> None:
        self._driver = driver
        self._ran = ran  # the statements this process runs, where the tests ask (``statement_log.py``)
        self.database = database
        self.dialect = dialect
        self._named = statements()
        self._timeout = transaction_timeout_s
        self._retry_budget_s = retry_budget_s
        self.memo: TTLCache[Any, Any] = TTLCache(maxsize=4096, ttl=MEMO_TTL_S)
        self._turns = Turns()

    @staticmethod
    def open_driver(uri: str, user: str, password: str, connect_timeout_s: float) -> neo4j.Driver:
        return neo4j.GraphDatabase.driver(
            uri,
            auth=(user, password),
            connection_timeout=connect_timeout_s,
            connection_acquisition_timeout=connect_timeout_s * 2,
            max_connection_lifetime=600,
            liveness_check_timeout=30,
            user_agent="graphmem",
            # graphmem retries itself (see the module docstring); keep the driver's own loop short.
            max_transaction_retry_time=0.0,
            # Neo4j warns of each property no node has yet (every statement, on a new database), and the
            # driver logs each warning quoting the whole statement; no log line carries Cypher. Deprecated
            # syntax is caught by Neo4j's own parser in the Cypher gate instead.
            notifications_min_severity="OFF",
        )

    def server_info(self) -> ServerInfo:
        try:
            info = self._driver.get_server_info()
        except (DriverError, Neo4jError, OSError) as exc:
            raise _unavailable(exc) from None
        return ServerInfo(info.agent, str(info.address), ".".join(map(str, info.protocol_version)))

    def read(self, fn: Callable[[Tx], T]) -> T:
        """Run ``fn`` in one read transaction (transient errors retried like writes)."""
        return self._transaction(fn, neo4j.READ_ACCESS)

    def write(self, fn: Callable[[Tx], T]) -> T:
        """Run ``fn`` in one write transaction: all of it commits, or none of it."""
        return self._transaction(fn, neo4j.WRITE_ACCESS)

    def _transaction(self, fn: Callable[[Tx], T], mode: str) -> T:
        queued = [0.0]  # seconds this write has waited for its turn (``Turns``), which the budget leaves out
        attempts = Retrying(
            retry=_retry,
            stop=_stop(self._retry_budget_s, queued),
            wait=wait_random_exponential(multiplier=0.02, max=1.0),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            for attempt in attempts:
                with attempt:
                    if mode == neo4j.READ_ACCESS:
                        return self._once(fn, mode)
                    retrying = attempt.retry_state.attempt_number > 1
                    asked = time.monotonic()
                    with self._turns.alone() if retrying else self._turns.together():
                        queued[0] += time.monotonic() - asked
                        return self._once(fn, mode)
        except _CONNECTION_ERRORS as exc:
            raise _unavailable(exc) from None
        except GraphmemError:
            raise
        except (RetryTransaction, ConstraintError, TransientError):
            raise _contended() from None
        except Neo4jError as exc:
            if _is_race(exc):
                raise _contended() from None
            refused = _refused_value(exc)
            if refused is not None:
                raise refused from None
            raise _rejected(exc) from exc
        except DriverError as exc:
            raise _rejected(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover - Retrying either returns or raises

    def _once(self, fn: Callable[[Tx], T], mode: str) -> T:
        with self._driver.session(database=self.database, default_access_mode=mode) as session, \
                session.begin_transaction(timeout=self._timeout) as tx:
            result = fn(Tx(tx, self.dialect, self._named, self.memo, self._ran))
            tx.commit()
            return result

    def run_autocommit(self, name: StatementName, **params: Any) -> list[dict[str, Any]]:
        """Schema statements (DDL and ``SHOW``) run outside explicit transactions on Neo4j."""
        statement = self._named[name]
        try:
            with self._driver.session(database=self.database) as session:
                return recorded(self._ran, name,
                                lambda: record_dicts(session.run(self.dialect.prepare(statement.text), params)))
        except _CONNECTION_ERRORS as exc:
            raise _unavailable(exc) from None

    def close(self) -> None:
        self._driver.close()
