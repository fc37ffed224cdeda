"""The testing surface for pytest-qt testers (DC6): see docs/TESTING.md."""
