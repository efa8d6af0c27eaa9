"""Deliberately defines no ``DoesNotExist``: loading the entry point fails."""
