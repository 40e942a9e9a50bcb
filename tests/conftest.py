"""Settings shared by the whole test suite."""

from __future__ import annotations

import os

from hypothesis import settings

# Property tests check behaviour, never speed: no per-example deadline, so a busy CI machine
# cannot turn a slow example into a failure. HYPOTHESIS_PROFILE=thorough runs more examples.
settings.register_profile("default", deadline=None)
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
