"""What a YAML document's syntax error says, for a person: where, and the line itself.

PyYAML's own text spans several lines, says `<unicode string>` for a document
read from a string, and shows the line only through a caret drawing; shown as
one line, its newlines come out as a literal `\\n`.
"""

from __future__ import annotations

_SHOWN_CHARS = 80


def yaml_problem(error: BaseException, text: str) -> str:
    """`PROBLEM at line L, column C: THE LINE` for a marked PyYAML error; its first line else."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or getattr(error, "context", None)
    if mark is None or problem is None:
        return (str(error).splitlines() or [type(error).__name__])[0]
    lines = text.splitlines()
    line = lines[mark.line] if 0 <= mark.line < len(lines) else ""
    if len(line) > _SHOWN_CHARS:
        line = line[: _SHOWN_CHARS - 3] + "..."
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}: {line.strip()!r}"
