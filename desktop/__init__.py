"""Custodia's window: PySide6 only. Observes the backends; never works on the GUI thread."""
