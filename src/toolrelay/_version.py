"""The version of the installed toolrelay (as pyproject.toml gives it)."""

__version__ = "0.1.0"
