"""Fixtures for the `graphrun` command tests (see helpers.py)."""

from tests.cli.helpers import cli_worker  # noqa: F401  (a pytest fixture)
