"""Griffe extension for the docs build: graphrun.workflows and graphrun.activities.

pyproject's [tool.setuptools.package-dir] installs the top-level workflows/ and
activities/ folders as graphrun.workflows and graphrun.activities. Griffe reads
source from folders, so this loads each folder as that submodule of graphrun.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = {"workflows": ROOT / "workflows", "activities": ROOT / "activities"}


class PackageDirs(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.name != "graphrun":
            return
        for name, folder in PACKAGE_DIRS.items():
            if name not in pkg.members:
                pkg.set_member(name, loader._load_module(name, folder / "__init__.py", parent=pkg))
