"""Test harness: private real servers and a network block for the test suite."""
