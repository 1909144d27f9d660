"""YAML alias bombs: a few hundred bytes whose aliases expand to 9**levels values."""

from __future__ import annotations


def alias_chain(levels: int, leaf: str) -> str:
    """Top-level keys x0 … x{levels-1}: x0 holds nine `leaf`s, each next one nine of the last."""
    lines = [f"x0: &x0 [{', '.join([leaf] * 9)}]"]
    lines += [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"
