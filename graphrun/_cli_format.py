"""Pure helpers of the `graphrun` command (see graphrun.cli): JSON arguments in,
plain JSON and human-readable text out. No Temporal, no asyncio: everything here
works on values already fetched, so it can be tested and reused on its own.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class CLIError(Exception):
    """An error the CLI reports as one line on stderr, with an exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# -- JSON in and out --------------------------------------------------------------
def parse_json_arg(text: str, what: str, *, bare_string: bool = False,
                   allow_file: bool = False) -> Any:
    """JSON from an argument (or @file). A bare word is a string when `bare_string`."""
    if allow_file and text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CLIError(f"{what}: cannot read {str(path)!r}: {exc.strerror or exc}",
                           2) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        stripped = text.strip()
        if bare_string and stripped and not stripped.startswith(("{", "[", '"')):
            return text
        raise CLIError(f"{what} is not valid JSON ({exc.msg} at line {exc.lineno} "
                       f"column {exc.colno}): {text[:80]!r}", 2) from None


def untag(v: Any) -> Any:
    """graphrun's tagged JSON (serde) as plain JSON, without importing any class."""
    from graphrun.serde import TAG

    if isinstance(v, list):
        return [untag(x) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get(TAG)
    if tag is None:
        return {k: untag(x) for k, x in v.items()}
    if tag == "dict":
        return {str(untag(k)): untag(x) for k, x in v["items"]}
    if tag == "interrupt":
        return {"id": v["id"], "value": untag(v["value"])}
    if tag in ("tuple", "set", "namedtuple", "model", "dataclass", "enum", "datetime", "float",
               "date", "timedelta", "bytes", "uuid"):
        return untag(v["v"])
    if tag == "missing":
        return None
    return {k: untag(x) for k, x in v.items() if k != TAG}


def plain(v: Any) -> Any:
    """Python values (as returned by ainvoke) as plain JSON."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [plain(x) for x in v]
    if hasattr(v, "model_dump"):
        return v.model_dump(mode="json")
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, enum.Enum):
        return plain(v.value)
    if isinstance(v, (_dt.datetime, _dt.date)):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    return repr(v)


def dump_json(v: Any, indent: int | None = 2) -> str:
    return json.dumps(v, indent=indent, ensure_ascii=False, default=repr)


def one_line(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, default=repr)


# -- human output ---------------------------------------------------------------------
def format_values(values: Any) -> list[str]:
    if isinstance(values, dict):
        if not values:
            return ["  (empty)"]
        return [f"  {k}: {one_line(v)}" for k, v in values.items()]
    return [f"  {one_line(values)}"]


def format_questions(thread: str, interrupts: Sequence[Mapping[str, Any]]) -> list[str]:
    if not interrupts:
        return []
    lines = ["waiting for an answer:"]
    for i in interrupts:
        lines.append(f"  [{i['id']}] {one_line(i['value'])}")
    if len(interrupts) == 1:
        lines.append(f"answer with: graphrun resume {thread} '<json>' --id {interrupts[0]['id']}")
    else:
        lines.append(f"answer each with: graphrun resume {thread} '<json>' --id <interrupt id>")
    return lines


def format_state(thread: str, data: Mapping[str, Any]) -> list[str]:
    """`graphrun state`: a get_state query result as text."""
    meta = untag(data.get("metadata")) or {}
    ckpt = ((data.get("config") or {}).get("configurable") or {}).get("checkpoint_id")
    lines = [f"thread: {thread}", f"status: {data.get('status', '?')}"]
    if ckpt:
        lines.append(f"checkpoint: {ckpt} (step {meta.get('step', '?')}, "
                     f"{data.get('created_at') or '?'})")
    lines += ["values:", *format_values(untag(data.get("values")))]
    lines.append(f"next: {', '.join(data.get('next') or []) or '(none)'}")
    for t in data.get("tasks") or []:
        if t.get("error"):
            lines.append(f"failed: node {t['name']}: {t['error'].get('type')}: "
                         f"{t['error'].get('message')}")
    lines += format_questions(thread, [untag(i) for i in data.get("interrupts") or []])
    refused = data.get("refused") or []
    if refused:
        lines.append(f"last refused resume: {refused[-1]}")
    return lines


def format_history(thread: str, items: Sequence[Mapping[str, Any]]) -> list[str]:
    """`graphrun history`: one line per checkpoint of a get_state_history result."""
    lines = []
    for item in items:
        meta = untag(item.get("metadata")) or {}
        cid = ((item.get("config") or {}).get("configurable") or {}).get("checkpoint_id")
        nxt = ",".join(item.get("next") or []) or "-"
        lines.append(f"step {meta.get('step', '?'):>3}  {meta.get('source', '?')!s:<6}  "
                     f"next={nxt:<20}  {cid}")
    return lines or [f"thread {thread} has no checkpoints"]


def format_threads(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """`graphrun threads`: the rows as a left-aligned table under a header."""
    if not rows:
        return ["no threads"]
    headers = ["THREAD", "GRAPH", "STATUS", "WORKFLOW"]
    table = [[r["thread_id"], r["graph"] or "-", r["status"] or "-", r["workflow_status"]]
             for r in rows]
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(headers)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip()
            for row in [headers, *table]]


def print_lines(lines: Sequence[str]) -> None:
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
