"""The thread's *Current Details* for the Temporal Web UI: markdown in which data stays text.

The UI renders a workflow's current details as markdown. A thread's question,
error messages and refused answers come from users and nodes, so they may hold
anything, markdown fences and HTML included. Everything taken from data goes
into a CommonMark code block or code span whose fence is longer than any run of
backticks in it, so the data can never close it: it shows as literal text, and
the UI builds no element from it. The few words of our own around it (graph
name, status) are backslash-escaped.

Pure functions, no I/O: the workflow calls `current_details` whenever the
thread's status, questions or refusals change (setting details is not a
workflow command, so the text can change without affecting replay).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["code_block", "code_span", "current_details", "escape_text"]

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")   # every ASCII punctuation character
_NEWLINES = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def escape_text(text: str) -> str:
    """Markdown that shows `text` literally, on one line (CommonMark backslash escapes)."""
    return _PUNCTUATION.sub(r"\\\1", _NEWLINES.sub(" ", text))


def code_span(text: str) -> str:
    """An inline code span that shows `text` literally, on one line."""
    # Block structure is parsed before inline code, so a line break inside a span
    # could still start a new block: keep it on one line.
    text = _NEWLINES.sub(" ", text)
    if not text:
        return "` `"
    ticks = "`" * (_longest_backtick_run(text) + 1)
    # A span that starts or ends with a backtick needs a space of padding, which
    # CommonMark strips again (one on each side).
    if text.startswith("`") or text.endswith("`") or (
            text.startswith(" ") and text.endswith(" ") and text.strip(" ")):
        text = f" {text} "
    return f"{ticks}{text}{ticks}"


def code_block(text: str, info: str = "") -> str:
    """A fenced code block that shows `text` literally, whatever fences it holds.

    The fence is one backtick longer than the longest run of backticks in the
    text (at least three), and only a fence at least as long closes the block.
    """
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    info = re.sub(r"[^A-Za-z0-9_+-]", "", info)   # an info string may not hold backticks
    return f"{fence}{info}\n{text}\n{fence}"


def _error_text(error: Mapping[str, str] | str) -> str:
    if isinstance(error, Mapping):
        kind, message = error.get("type", ""), error.get("message", "")
        return f"{kind}: {message}" if kind else message
    return str(error)


def current_details(*, graph: str, thread_id: str, status: str,
                    questions: Iterable[tuple[str, str]] = (),
                    failures: Iterable[Mapping[str, str] | str] = (),
                    refused: str | None = None) -> str:
    """The markdown shown as a thread's Current Details.

    Args:
        graph: the graph's registered name.
        thread_id: the thread id.
        status: running, interrupted, done or failed.
        questions: (interrupt id, the question as JSON text) for each pending interrupt.
        failures: each failed node's error, ``{"type", "message"}`` or text.
        refused: the last refused resume, if any.
    """
    parts = [f"**{escape_text(graph)}** · thread {code_span(thread_id)} · "
             f"**{escape_text(status)}**"]
    for interrupt_id, question in questions:
        parts.append(f"**Waiting for an answer** (interrupt id {code_span(interrupt_id)}):")
        parts.append(code_block(question, "json"))
    for error in failures:
        parts.append("**Failed:**")
        parts.append(code_block(_error_text(error)))
    if refused is not None:
        parts.append("Last refused resume:")
        parts.append(code_block(refused))
    return "\n\n".join(parts)
