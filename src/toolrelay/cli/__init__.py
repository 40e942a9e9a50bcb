"""The ``toolrelay`` command line (also ``python -m toolrelay``).

Commands:

- ``toolrelay tools CATALOG``: the tools of a catalog, their parameters, token sizes and
  naming problems;
- ``toolrelay search CATALOG QUERY``: rank a catalog's tools for a query with any index;
- ``toolrelay eval retrieval``: R@k, NDCG@10, MRR and Complete@5 of an index on a benchmark;
- ``toolrelay eval tokens``: tool-definition tokens per request, with and without tool search;
- ``toolrelay eval tasks``: a task suite run with a model in each mode (all tools, tool
  search): success with its interval, tokens, requests, latency, and a paired comparison;
- ``toolrelay demo``: the refund triage over the 78-tool refund desk through tool search, round
  by round, with a token table (a replay of the task's decisions unless ``--model`` names one);
- ``toolrelay chat``: an interactive chat whose model finds its tools through tool search.

Every command except ``chat`` and ``serve`` takes ``--json`` for machine-readable output on
stdout.

Needs the ``cli`` extra (``pip install -e '.[cli]'``: typer and rich); the library itself
does not.
"""

try:
    import rich as _rich  # noqa: F401 - only checks that the extra is installed
    import typer as _typer  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "the toolrelay command needs the cli extra: pip install -e '.[cli]'", name=exc.name
    ) from exc

from toolrelay.cli._app import app, main
from toolrelay.cli._catalogs import load_catalog

__all__ = ["app", "load_catalog", "main"]
