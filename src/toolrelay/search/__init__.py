"""Tool indexes."""
