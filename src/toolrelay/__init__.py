"""toolrelay: tool calling for LLM agents with dozens to thousands of tools."""

import logging

__version__ = "0.1.0"

# A library logs, the application decides where to: without logging configured, nothing of
# toolrelay's (a failing tool's traceback, say) reaches stderr through logging's last resort.
logging.getLogger("toolrelay").addHandler(logging.NullHandler())
