"""Runs a gateway: ``python run_gateway.py CONFIG [stdio|http PORT]``."""

from __future__ import annotations

import sys

from toolrelay.gateway import serve

if __name__ == "__main__":
    config, transport = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "stdio")
    if transport == "http":
        serve(config, "http", port=int(sys.argv[3]))
    else:
        serve(config)
