"""Test helpers shipped with the package (random program generators for property tests)."""
