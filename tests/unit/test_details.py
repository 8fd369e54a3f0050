"""graphrun.details: data in the thread's Current Details can never close its code fence
or turn into markup (the Web UI renders the details as markdown)."""

from __future__ import annotations

import json
import re

import pytest

from graphrun.details import code_block, code_span, current_details, escape_text

NASTY = ("```\n</code></pre><b>bold</b>\n```\n<img src=x onerror=\"window.__pwned=1\">\n"
         "<script>window.__pwned=1</script>\n~~~\n    ```` four\n`single` ``double``")


def _fenced(block: str) -> tuple[str, str, str]:
    """(opening fence with info, content, closing fence) of a block made by code_block."""
    first, rest = block.split("\n", 1)
    content, last = rest.rsplit("\n", 1)
    return first, content, last


@pytest.mark.parametrize("text", ["plain", "", "```", "````", "a ``` b", NASTY,
                                  "`" * 10, "line\n```json\n{}\n```"])
def test_code_block_fence_is_longer_than_any_backtick_run(text: str) -> None:
    block = code_block(text, "json")
    first, content, last = _fenced(block)
    assert content == text                       # the data, unchanged
    fence = re.match(r"`+", first).group(0)
    assert first == fence + "json" and last == fence and len(fence) >= 3
    # CommonMark: only a line of >= len(fence) backticks (up to 3 spaces of indent,
    # trailing spaces) closes the block; no line of the content is one.
    closing = re.compile(rf"^ {{0,3}}`{{{len(fence)},}}[ \t]*$")
    assert not any(closing.match(line) for line in text.split("\n"))
    assert max((len(r) for r in re.findall(r"`+", text)), default=0) < len(fence)


def test_code_block_info_string_cannot_carry_a_fence() -> None:
    assert code_block("x", "js`on<>").split("\n")[0] == "```json"


@pytest.mark.parametrize("text, expected", [
    ("order-42", "`order-42`"),
    ("a`b", "``a`b``"),
    ("`start", "`` `start ``"),
    ("x``y`", "``` x``y` ```"),
    ("two\nlines", "`two lines`"),
    ("\r\n\n# heading", "`  # heading`"),
    ("", "` `"),
])
def test_code_span(text: str, expected: str) -> None:
    assert code_span(text) == expected


def test_escape_text_escapes_every_punctuation_and_stays_on_one_line() -> None:
    assert escape_text("purchase") == "purchase"
    assert escape_text("<b>x</b>") == r"\<b\>x\<\/b\>"
    assert escape_text("**a** _b_ [c](d) `e` &lt; #") == \
        r"\*\*a\*\* \_b\_ \[c\]\(d\) \`e\` \&lt\; \#"
    assert "\n" not in escape_text("a\n\n<script>")


def test_current_details_layout() -> None:
    question = json.dumps({"question": "Approve?"}, indent=2)
    text = current_details(graph="purchase", thread_id="order-42", status="interrupted",
                           questions=[("abc123", question)])
    assert text == ("**purchase** · thread `order-42` · **interrupted**\n\n"
                    "**Waiting for an answer** (interrupt id `abc123`):\n\n"
                    f"```json\n{question}\n```")


def test_current_details_keeps_all_data_inside_code() -> None:
    question = json.dumps({"question": NASTY}, indent=2, ensure_ascii=False)
    text = current_details(
        graph="g<i>x</i>", thread_id="t`<b>`\n# h", status="failed",
        questions=[("id1", question), ("id2", NASTY)],
        failures=[{"type": "ValueError", "message": NASTY}, "plain <b>text</b>"],
        refused=f"resume signal needs {{'resume': ...}}, got {NASTY!r}")
    # Walk the text as a CommonMark block parser would: outside fenced blocks, no
    # line may start HTML or carry unescaped markup from the data.
    outside: list[str] = []
    fence: str | None = None
    blocks = 0
    for line in text.split("\n"):
        if fence is None:
            m = re.match(r"^(`{3,})([A-Za-z0-9_+-]*)$", line)
            if m:
                fence, blocks = m.group(1), blocks + 1
            else:
                outside.append(line)
        elif re.match(rf"^ {{0,3}}`{{{len(fence)},}}[ \t]*$", line):
            fence = None
    assert fence is None and blocks == 5              # 2 questions, 2 failures, 1 refusal
    for line in outside:
        # Drop code spans (a run of n backticks up to the next run of exactly n), then
        # backslash escapes: what is left is what a renderer would read as markup.
        no_spans = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line)
        unescaped = re.sub(r"\\.", "", no_spans)
        assert "<" not in unescaped and ">" not in unescaped, line
    assert "ValueError: ```" in text and "plain <b>text</b>" in text


def test_nothing_pending() -> None:
    assert current_details(graph="g", thread_id="t", status="done") == \
        "**g** · thread `t` · **done**"
