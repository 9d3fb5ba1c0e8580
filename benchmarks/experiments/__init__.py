"""Experiments behind RESULTS.md's proposals: they patch the product in memory to
measure a proposed change. They measure the proposal, never the product."""
