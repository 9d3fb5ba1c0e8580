"""Tests of the speech part (own package: its module names cannot clash)."""
