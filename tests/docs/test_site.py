"""The documentation site builds with `mkdocs build --strict` (mkdocs.yml, docs/): every
page in the nav, no broken link or anchor, the API reference resolves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.docs.blocks import ROOT


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=110,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "index.html").is_file()
    assert (site / "reference" / "workflows" / "index.html").is_file()
    for page in ("operations/workers", "operations/connections", "operations/versioning",
                 "deploy"):
        assert (site / page / "index.html").is_file(), page


def test_broken_examples_are_found() -> None:
    """The checker itself: a bad `graphrun` flag, an unknown program, bad JSON."""
    from tests.docs.blocks import Block, check_data, check_shell

    page = ROOT / "docs" / "index.md"
    assert check_shell(Block(page, 1, "bash", "graphrun invoke purchase --no-such-flag\n", False))
    assert check_shell(Block(page, 1, "bash", "rm -rf /\n", False))
    assert not check_shell(Block(page, 1, "bash",
                                 "graphrun state order-42 --json  # a comment\n", False))
    assert check_data(Block(page, 1, "json", '{"a": }\n', False))
