"""The fault suite: generated faults, each case an invariant, every failure counted."""
