"""Test helpers (not shipped in the wheel)."""
