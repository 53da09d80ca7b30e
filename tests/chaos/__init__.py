"""Chaos tests: faults, bad input and attacks against a cluster of real processes."""
