"""The BFCL-derived suite: BFCL's dev queries with their ground-truth calls, scored as BFCL does.

Built only from ``benchmarks/data/bfcl`` (``calls.dev.jsonl``, the dev split's ground truth,
and ``tools.jsonl``, the pooled catalog; see its ``SOURCE.md``), by
:func:`toolrelay.evaluation._bfcl.bfcl_suite`: one task per query, whose calls must pass BFCL's AST
checker rules (:class:`toolrelay.evaluation._bfcl.BfclCalls`: single, multiple and parallel calls,
parallel ones in any order). Every tool answers any call with ``{"status": "ok"}``.

- ``build_suite()`` (``--tasks bfcl``): every usable dev query over the whole catalog of
  2,566 tools. Sent whole, the catalog is more than any model's context window holds, so
  only tool search can run it; the all-tools runs fail with the provider's or model's error.
- ``small()`` (``--tasks bfcl:small``): the first 80 queries (a fixed shuffled order mixes
  the categories) over 120 tools, their 78 functions and others: within OpenAI's 128 tools
  per request and a 32k context, so both modes run and can be compared.
"""

from __future__ import annotations

from pathlib import Path

from toolrelay.evaluation import TaskSuite
from toolrelay.evaluation._bfcl import bfcl_suite

DATA = Path(__file__).resolve().parents[1] / "data" / "bfcl"


def build_suite() -> TaskSuite:
    return bfcl_suite(DATA)


def small() -> TaskSuite:
    return bfcl_suite(DATA, limit=80, catalog_size=120, name="bfcl_small")
