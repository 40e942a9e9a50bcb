"""Spans and metrics collected in memory by the OpenTelemetry SDK, fresh for every test."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the OpenTelemetry SDK (the dev extra)")

from ._signals import Signals


@pytest.fixture
def signals() -> Signals:
    """In-memory span exporter and metric reader behind their own providers."""
    return Signals.create()
