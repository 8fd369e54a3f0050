"""What Temporal's visibility index knows of a thread, and how it is written.

A thread (and a user assistant) keeps these search attributes current, so that a
search, a count and a sort run in Temporal's visibility store, exact at any count,
instead of over a window of recent executions:

    GraphStatus     Keyword      running | interrupted | done | failed
    GraphName       Keyword      the registered graph name
    GraphCreatedAt  Datetime     when the thread was created (kept across continue-as-new)
    GraphUpdatedAt  Datetime     when the thread last changed (a run, an update, metadata)
    GraphMetadata   KeywordList  one entry per indexed metadata key (see metadata_entries)

They fit SQL visibility's per-type limits for custom search attributes (10 Keyword,
3 Datetime, 3 KeywordList on the dev server's SQLite and on PostgreSQL/MySQL).
Search attributes are not encrypted by a payload codec: an operator who keeps
secrets in thread metadata chooses the keys that are indexed (`index_metadata`).

The workflow imports the first half (what is written) through the sandbox; the second
(`page`, `count`: exact, sorted pages of threads from counts) runs in clients.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from temporalio.common import SearchAttributeKey
from xxhash import xxh3_64_hexdigest

if TYPE_CHECKING:
    from temporalio.client import Client, WorkflowExecution

GRAPH_STATUS = SearchAttributeKey.for_keyword("GraphStatus")
GRAPH_NAME = SearchAttributeKey.for_keyword("GraphName")
CREATED_AT = SearchAttributeKey.for_datetime("GraphCreatedAt")
UPDATED_AT = SearchAttributeKey.for_datetime("GraphUpdatedAt")
METADATA = SearchAttributeKey.for_keyword_list("GraphMetadata")

SEARCH_ATTRIBUTES: dict[str, str] = {
    "GraphStatus": "Keyword",
    "GraphName": "Keyword",
    "GraphCreatedAt": "Datetime",
    "GraphUpdatedAt": "Datetime",
    "GraphMetadata": "KeywordList",
}
"""Name -> kind of every search attribute graphrun writes (`graphrun setup` registers them)."""

# An entry longer than this is kept as a hash: equality still matches, and the list
# stays within the server's size limit for one value (2 KiB).
MAX_PLAIN_ENTRY = 64
MAX_ENTRIES_BYTES = 1_800
# Characters an entry never holds as text: SQL visibility fails a query on a double
# quote (SQLite: "unterminated string") and never matches a backslash; the others
# would make `path:value` ambiguous.
_UNSAFE_VALUE = frozenset('"\\')
_UNSAFE_PATH = frozenset('"\\:=#')


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def entry(path: str, value: Any) -> str:
    """The index entry of `path` (a top-level key, or `key.sub` for a nested one) equal
    to `value`, readable in the Web UI where it can be: `path:text` for a string,
    `path=<JSON>` for a number, a boolean or null; `path#<hash>` for the rest (lists,
    objects, long values, quotes), and `#<hash>` for a path with `:`, `=` or `#` in it.
    Two entries are equal exactly when path and value are (up to a hash collision)."""
    text = _canonical(value)
    if _UNSAFE_PATH & set(path):
        return "#" + xxh3_64_hexdigest(f"{path}\x00{text}".encode())
    plain = f"{path}:{value}" if isinstance(value, str) else f"{path}={text}"
    if len(plain) <= MAX_PLAIN_ENTRY and not _UNSAFE_VALUE & set(plain):
        return plain
    return f"{path}#{xxh3_64_hexdigest(text.encode())}"


def _leaves(prefix: str, value: Any) -> list[str]:
    """Entries for a value: the value itself, and each leaf of a dict by its dotted path,
    so a filter on a nested key ({"a": {"b": 1}}) matches by containment."""
    out = [entry(prefix, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(f"{prefix}.{k}", v)
    return out


def metadata_entries(metadata: Mapping[str, Any] | None,
                     keys: Sequence[str] | None = None) -> list[str]:
    """The GraphMetadata entries of a thread's metadata: every key, or only `keys`
    (an operator's choice: `None` indexes all). Entries past the size budget are left
    out (such keys cannot be searched on that thread)."""
    out: list[str] = []
    size = 2
    for k, v in (metadata or {}).items():
        if keys is not None and k not in keys:
            continue
        for e in _leaves(str(k), v):
            size += len(e.encode()) + 3
            if size > MAX_ENTRIES_BYTES:
                return out
            out.append(e)
    return out


def filter_entries(metadata: Mapping[str, Any]) -> list[str]:
    """The entries a metadata filter requires (JSON containment, by key): a dict value
    by each of its leaves, any other value as a whole (a list matches an equal list)."""
    out: list[str] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        else:
            out.append(entry(prefix, value))

    for k, v in metadata.items():
        walk(str(k), v)
    return out


# -- searching: exact, sorted pages from counts -----------------------------------------
# SQL visibility (the dev server's SQLite, PostgreSQL, MySQL) has no ORDER BY, so a page
# sorted by a time is found from counts: how many rows lie before a time is monotone in
# it, so a search for the times that bound the page (interpolating between counted
# times, halving when that stalls) ends with a window of a few rows, listed and sorted
# here. Up to WINDOW matches are simply listed and sorted (after one count). The first
# rows visibility lists are the most recently started, so the newest page is usually in
# them: one count confirms it. Elasticsearch (Temporal Cloud) takes the same queries.

THREADS = "WorkflowType IN ('GraphWorkflow', 'ThreadRecord') AND ExecutionStatus = 'Running'"
"""Every thread, once: its open workflow (closed runs are earlier runs, or threads from
before threads stayed open, which `graphrun migrate` reopens)."""

SortBy = Literal["created_at", "updated_at", "state_updated_at", "thread_id", "status"]
STATUS_ORDER = ("running", "failed", "done", "interrupted")
"""GraphStatus in the order of the API's names (busy, error, idle, interrupted)."""

WINDOW = 1_000  # matches listed and sorted here at once (one page of visibility)
SAMPLE = 64  # rows listed first, besides the page's own
_TIMES = {"created_at": CREATED_AT, "updated_at": UPDATED_AT, "state_updated_at": UPDATED_AT}
_MS_MAX = 2 ** 45  # past any Datetime a thread has (year 3084), in ms since 1970


def quote(value: str) -> str:
    """A string literal of Temporal's list filter."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def where(*, status: str | None = None, graph: str | None = None,
          metadata: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None,
          base: str = THREADS, auth: Mapping[str, Any] | None = None) -> str:
    """The visibility query of the threads that match: GraphStatus, GraphName, every
    GraphMetadata entry of a metadata filter (KeywordList `=` is "contains"), and
    workflow ids; and an authorization handler's filter, `auth` (see `auth_clause`)."""
    clauses = [base]
    if status is not None:
        clauses.append(f"GraphStatus = {quote(status)}")
    if graph is not None:
        clauses.append(f"GraphName = {quote(graph)}")
    clauses += [f"GraphMetadata = {quote(e)}" for e in filter_entries(metadata or {})]
    if ids is not None:
        clauses.append(f"WorkflowId IN ({', '.join(quote(i) for i in ids) or quote('')})")
    if auth:
        clauses.append(auth_clause(auth))
    return " AND ".join(clauses)


def auth_clause(filters: Mapping[str, Any]) -> str:
    """The visibility condition of an authorization handler's filter on metadata (the
    LangGraph Server API's custom auth): `{key: value}` and `{key: {"$eq": value}}` are
    the entry of the key equal to that whole value (any JSON value); keys are ANDed;
    `$or` / `$and` take lists of such filters. `$contains` (an element of a list) has no
    entry of its own: ValueError."""
    parts: list[str] = []
    for key, value in filters.items():
        if key in ("$or", "$and"):
            groups = [auth_clause(g) for g in value]
            parts.append("(" + (" OR " if key == "$or" else " AND ").join(groups) + ")")
            continue
        if isinstance(value, dict):
            op = next(iter(value), None)
            if op != "$eq":
                raise ValueError(f"filter on {key!r}: {op!r} cannot be searched by")
            value = value[op]
        parts.append(f"GraphMetadata = {quote(entry(str(key), value))}")
    return "(" + " AND ".join(parts) + ")" if parts else "(WorkflowId != '')"  # any


async def count(client: Client, query: str) -> int:
    """How many executions match, exact at any count."""
    return (await client.count_workflows(query)).count


async def page(client: Client, query: str, sort_by: SortBy, order: Literal["asc", "desc"],
               offset: int, limit: int) -> list[WorkflowExecution]:
    """The executions at [offset, offset + limit) of those `query` matches, sorted by
    `sort_by` (ties by workflow id; rows without the time last), exact at any depth.
    `status` orders by STATUS_ORDER, then by creation time."""
    if limit <= 0:
        return []
    asc = order == "asc"
    if sort_by == "status":
        return await _by_status(client, query, asc, offset, limit)
    attr = _TIMES.get(sort_by)
    if attr is None:  # thread_id: ids have no range to search by counts: listed
        return _sort(await _fetch(client, query, None), None, asc)[offset:offset + limit]
    if await count(client, query) <= WINDOW:  # few: listed and sorted here
        return _sort(await _fetch(client, query, None), attr, asc)[offset:offset + limit]
    # The first rows listed (the most recently started): the newest page, often, and
    # how far apart rows lie in time.
    first = await _fetch(client, query, SAMPLE + limit)
    return await _TimePage(client, query, attr).rows(asc, offset, offset + limit, first)


async def _fetch(client: Client, query: str, limit: int | None) -> list[WorkflowExecution]:
    return [r async for r in client.list_workflows(query, page_size=WINDOW, limit=limit)]


def stamp(t: datetime) -> datetime:
    """`t` to the millisecond, as graphrun writes GraphCreatedAt and GraphUpdatedAt: every
    visibility store then compares it with a millisecond literal alike."""
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def _ms(t: datetime) -> int:
    """A Datetime in whole milliseconds since 1970 (a naive one is UTC)."""
    aware = t if t.tzinfo else t.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(milliseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _at(ms: int) -> str:
    """The literal of the instant `ms` milliseconds after 1970 (UTC)."""
    t = _EPOCH + timedelta(milliseconds=ms)
    return quote(t.isoformat(timespec="milliseconds").replace("+00:00", "Z"))


def _key(attr: SearchAttributeKey[datetime] | None, run: WorkflowExecution) -> tuple[Any, ...]:
    value = run.typed_search_attributes.get(attr) if attr is not None else None
    return (0 if attr is None else _ms(value) if value is not None else _MS_MAX, run.id)


def _sort(rows: list[WorkflowExecution], attr: SearchAttributeKey[datetime] | None,
          asc: bool) -> list[WorkflowExecution]:
    """Ascending by (time, id), or its reverse; rows without the time last either way."""
    have = sorted((r for r in rows if attr is None
                   or r.typed_search_attributes.get(attr) is not None),
                  key=lambda r: _key(attr, r), reverse=not asc)
    return have + sorted((r for r in rows if attr is not None
                          and r.typed_search_attributes.get(attr) is None),
                         key=lambda r: r.id)


class _TimePage:
    """Rows of `query` by a Datetime attribute, found from counts."""

    def __init__(self, client: Client, query: str, attr: SearchAttributeKey[datetime]
                 ) -> None:
        self.client, self.query, self.attr, self.name = client, query, attr, attr.name

    async def _before(self, ms: int) -> int:
        """R(ms): the rows whose time is before `ms` (a millisecond)."""
        return await count(self.client, f"{self.query} AND {self.name} < {_at(ms)}")

    async def rows(self, asc: bool, start: int, end: int, first: list[WorkflowExecution]
                   ) -> list[WorkflowExecution]:
        timed = await count(self.client, f"{self.query} AND {self.name} IS NOT NULL")
        out: list[WorkflowExecution] = []
        # Descending is ascending read backwards: ranks [timed - end, timed - start).
        lo, hi = (start, min(end, timed)) if asc else (max(timed - end, 0), timed - start)
        if lo < hi:
            if not asc and start == 0:
                out = await self._newest(hi - lo, first, timed)
            if not out:
                out = await self._ranks(lo, hi, first, timed)
            out = out if asc else out[::-1]
        if end > timed:  # rows without the time come last, by id
            rest = await _fetch(self.client, f"{self.query} AND {self.name} IS NULL", None)
            out += sorted(rest, key=lambda r: r.id)[max(start - timed, 0):end - timed]
        return out

    async def _newest(self, n: int, first: list[WorkflowExecution], timed: int
                      ) -> list[WorkflowExecution]:
        """The newest `n` rows, when the first rows listed hold them (visibility lists
        the most recently started first): one count confirms it, else []."""
        have = _sort([r for r in first if r.typed_search_attributes.get(self.attr)], self.attr,
                     True)
        if len(have) < n:
            return []
        edge = _key(self.attr, have[-n])[0]
        in_hand = sum(_key(self.attr, r)[0] >= edge for r in have)
        # Every row from the edge's millisecond on is in hand: they are the newest.
        return have[-n:] if timed - await self._before(edge) == in_hand else []

    async def _ranks(self, lo: int, hi: int, first: list[WorkflowExecution], timed: int
                     ) -> list[WorkflowExecution]:
        """Rows at ascending ranks [lo, hi): the times a and b with R(a) <= lo and
        R(b) >= hi, then the rows between them, sorted here."""
        times = sorted(_key(self.attr, r)[0] for r in first
                       if r.typed_search_attributes.get(self.attr))
        # The rows listed first span a known stretch of time: two counts place it, and
        # their spacing guides the search outside it.
        known = [(0, 0), (_MS_MAX, timed)]
        if times:
            known += [(times[0], await self._before(times[0])),
                      (times[-1] + 1, await self._before(times[-1] + 1))]
        spacing = max(1.0, (times[-1] - times[0]) / max(len(times) - 1, 1)) if times else 1.0
        a, ra = await self._cut(lo, True, known, spacing)
        known.append((a, ra))
        b, _ = await self._cut(hi, False, known, spacing)
        window = await _fetch(self.client, f"{self.query} AND {self.name} >= {_at(a)} AND "
                                           f"{self.name} < {_at(b)}", None)
        return _sort(window, self.attr, True)[lo - ra:hi - ra]

    async def _cut(self, rank: int, below: bool, known: list[tuple[int, int]],
                   spacing: float) -> tuple[int, int]:
        """A millisecond m, and R(m), with R(m) <= rank (below) or R(m) >= rank (above),
        within WINDOW // 4 rows of it where the times allow."""
        a, ra = max((k for k in known if k[1] <= rank), default=(0, 0))
        b, rb = min((k for k in known if k[1] >= rank), default=known[1])
        step, halve = 1, False
        while b - a > 1:
            if (rank - ra if below else rb - rank) <= WINDOW // 4:
                break
            if a == 0 and b != _MS_MAX:  # below every time seen: gallop down
                m = b - round(spacing * (rb - rank) * step)
                step *= 2
            elif b == _MS_MAX and a != 0:  # above them: gallop up
                m = a + round(spacing * (rank - ra) * step)
                step *= 2
            elif halve or rb == ra:
                m = (a + b) // 2
            else:  # where the rank would be if times were spread evenly between a and b
                m = a + round((b - a) * (rank - ra) / (rb - ra))
            m = min(max(m, a + 1), b - 1)
            rm = await self._before(m)
            width = b - a
            if rm <= rank if below else rm < rank:
                a, ra = m, rm
            else:
                b, rb = m, rm
            halve = not halve and (b - a) * 2 > width  # interpolation stalled: halve next
        return (a, ra) if below else (b, rb)


async def _by_status(client: Client, query: str, asc: bool, offset: int, limit: int
                     ) -> list[WorkflowExecution]:
    """Status groups in STATUS_ORDER (reversed for desc), each by creation time: counts
    skip whole groups, a group's page is a time page."""
    out: list[WorkflowExecution] = []
    for status in STATUS_ORDER if asc else STATUS_ORDER[::-1]:
        if len(out) >= limit:
            break
        group = f"{query} AND GraphStatus = {quote(status)}"
        n = await count(client, group)
        if offset >= n:
            offset -= n
            continue
        out += await page(client, group, "created_at", "asc" if asc else "desc", offset,
                          limit - len(out))
        offset = 0
    return out
