"""Developer tools run from the repository root (not shipped in the wheel)."""
