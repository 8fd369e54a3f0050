"""Seed examples run verbatim, only their imports changed, and print what LangGraph prints.

The files in seed_verbatim/ are copied from the seed text as they are: no
`from __future__ import annotations`, so `-> Command[Literal["proceed", "cancel"]]`
is evaluated at import, as in the seed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "seed_verbatim"
IDS = re.compile(r"id='[0-9a-f-]+'")


def _run(path: Path) -> str:
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=120, cwd=path.parent)
    assert out.returncode == 0, out.stderr
    return IDS.sub("id=<id>", out.stdout)


@pytest.mark.parametrize("name", ["approval"])
def test_seed_example_prints_what_langgraph_prints(name: str) -> None:
    ours = (HERE / f"{name}_graphrun.py").read_text()
    theirs = (HERE / f"{name}_langgraph.py").read_text()
    assert "__future__" not in ours
    # Only the import lines differ.
    changed = [(a, b) for a, b in zip(ours.splitlines(), theirs.splitlines(), strict=True)
               if a != b]
    assert all(a.startswith("from graphrun import") or a.startswith('"""') for a, _ in changed)
    expected = _run(HERE / f"{name}_langgraph.py")
    assert _run(HERE / f"{name}_graphrun.py") == expected
    assert expected.splitlines()[-1] == "approved"
