"""Temporal workflows of graphrun, installed as graphrun.workflows."""
