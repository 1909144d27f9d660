"""Placeholder: the registry is being written."""
