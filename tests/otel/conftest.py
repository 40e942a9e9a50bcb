"""Spans and metrics collected in memory by the OpenTelemetry SDK, fresh for every test."""

from __future__ import annotations

import pytest

from tests.extras import needs_extra

pytest.importorskip("opentelemetry.sdk", reason=needs_extra("dev"))


from ._signals import Signals


@pytest.fixture
def signals() -> Signals:
    """In-memory span exporter and metric reader behind their own providers."""
    return Signals.create()
