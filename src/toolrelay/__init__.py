"""toolrelay: tool calling for LLM agents with dozens to thousands of tools."""

__version__ = "0.1.0"
