"""Fenced code blocks of the documentation (docs/**/*.md and README.md), and their checks.

The rules are those of tests/docs/test_code_blocks.py's docstring; this module finds the
blocks and checks the ones that need no server (everything but running Python).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# `<!-- fragment: why -->` on the line before a python fence: compiled, not run.
FRAGMENT = re.compile(r"^<!-- fragment(?::\s*(.*?))?\s*-->$")
# `<!-- setup: NAME -->` anywhere on a page: tests/docs/env.py's NAME gives the page's
# blocks what they need (a service, variables) before they run, and ends it after.
SETUP = re.compile(r"^<!-- setup: ([A-Za-z_]\w*) -->$")

PYTHON = {"python", "py"}
SHELL = {"bash", "sh", "shell", "console"}
DATA = {"json", "yaml", "yml", "toml"}
TEXT = {"text"}
LANGUAGES = PYTHON | SHELL | DATA | TEXT

# Programs a shell block may run besides `graphrun` (whose command lines are parsed).
PROGRAMS = {
    ".", "source", "export", "cd", "make", "pip", "python", "python3", ".venv/bin/python",
    ".venv/bin/mkdocs", "mkdocs", "pytest", ".venv/bin/pytest", "docker", "kubectl",
    "temporal", "tcld", "curl", "grep",
}


def pages() -> list[Path]:
    """Every page the checker reads: docs/**/*.md and README.md."""
    return [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]


@dataclass
class Block:
    page: Path
    line: int          # the opening fence's line, 1-based
    lang: str
    source: str
    fragment: str | None  # `<!-- fragment: why -->` before the fence: why ("" if unsaid)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> Iterator[Block]:
    """The page's fenced blocks (``` fences at the start of a line), in order."""
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})\s*([\w+-]*)", lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        if j == len(lines):
            raise AssertionError(f"{page.relative_to(ROOT)}:{i + 1}: code block never closed")
        marker = FRAGMENT.match(lines[i - 1].strip()) if i else None
        reason = (marker.group(1) or "").strip() if marker else None
        yield Block(page, i + 1, lang, "\n".join(lines[i + 1:j]) + "\n", reason)
        i = j + 1


def setups(page: Path) -> list[str]:
    """The names of the page's `<!-- setup: NAME -->` lines, in order."""
    return [m.group(1) for line in page.read_text().splitlines()
            if (m := SETUP.match(line.strip()))]


def commands(source: str) -> Iterator[list[str]]:
    """The simple commands of a shell block: lines joined at a trailing backslash,
    comments dropped, split at |, ;, && and ||; a console block's lines after `$ `."""
    text = source.replace("\\\n", " ")
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in lexer:
            if token in {";", "&&", "||", "|", "&"}:
                if words:
                    yield words
                words = []
            else:
                words.append(token)
        if words:
            yield words


def check_shell(block: Block) -> list[str]:
    """Problems with a shell block: a `graphrun` line argparse refuses, an unknown program."""
    from graphrun.cli import build_parser

    source = block.source
    if block.lang == "console":
        source = "\n".join(line[2:] for line in source.splitlines() if line.startswith("$ "))
    problems = []
    for words in commands(source):
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]                     # VAR=value before the program
        if not words:
            continue
        program, args = words[0], words[1:]
        if program == "graphrun":
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    build_parser().parse_args(args)
            except SystemExit as exc:
                if exc.code:
                    problems.append(f"`{shlex.join(words)}`: {err.getvalue().strip()}")
        elif program not in PROGRAMS:
            problems.append(f"`{program}` is not a program the docs may run "
                            f"(tests/docs/blocks.py PROGRAMS)")
    return problems


def check_data(block: Block) -> list[str]:
    try:
        if block.lang == "json":
            json.loads(block.source)
        elif block.lang in {"yaml", "yml"}:
            yaml.safe_load(block.source)
        else:
            tomllib.loads(block.source)
    except Exception as exc:
        return [f"{block.lang} does not parse: {exc}"]
    return []
