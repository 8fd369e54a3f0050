"""LangGraph's JS SDK against the API: a node script (sdk_check.mjs) and a browser page."""
