"""judgelab: measure how far an LLM judge can be trusted."""

# A constant, not importlib.metadata (that import alone costs ~0.1 s of every CLI start);
# tests/contract/test_environment.py checks it against pyproject.toml.
__version__ = "0.1.0"
