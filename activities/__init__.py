"""Temporal activities of graphrun, installed as graphrun.activities."""
