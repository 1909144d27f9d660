"""What a string read from a document must be to reach a process or an API: UTF-8 without NUL.

Every string of a job or study document ends up somewhere that takes bytes: an
argument or a variable of a replica (posix_spawn encodes them, and stops at a
NUL), or a field of an API request (JSON or protobuf, both UTF-8). A JSON or
YAML escape can still write what neither holds: `\\u0000`, or half of a
surrogate pair (`\\ud800`) alone. Refused when the document is read, by its
path, rather than when a replica starts or a request is sent.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from vtrain.errors import ConfigError

EXPECTED = "UTF-8 text without NUL: no command line, variable or API field can hold anything else"


def string_problem(text: str) -> str | None:
    """Why `text` cannot reach a process or an API, or None when it can."""
    if "\0" in text:
        return "a NUL character (\\0) in a string"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        # The only characters UTF-8 cannot write are the surrogates, U+D800 to U+DFFF.
        return (
            f"an unpaired surrogate (U+{ord(text[e.start]):04X}) at character {e.start + 1}"
            " of a string"
        )
    return None


def string_refused(problem: str, source: str, path: str) -> ConfigError:
    """The one-line refusal of a string `string_problem` found at `path` inside `source`."""
    # The string is not quoted: it may be an env value, a credential.
    surrogate = "surrogate" in problem
    return ConfigError(
        problem,
        source=source,
        path=path,
        expected=EXPECTED,
        hint="a \\uD800-\\uDFFF escape stands for half a character: write the character itself"
        if surrogate
        else None,
    )


def check_flags(values: Mapping[str, object], local: Collection[str] = ()) -> None:
    """Refuse the command line's values (argparse's, by dest) that no API can take, together;
    the dests in `local` name files on this machine, which may have any name.

    A byte of an argument that is not UTF-8 reaches Python as a surrogate
    (surrogateescape): a local process gets the byte back, a platform's API cannot.
    """
    from vtrain.errors import Problems, UsageError

    problems = Problems(kind=UsageError)
    for dest, value in values.items():
        if dest in local:
            continue
        flag = "COMMAND" if dest == "argv" else "--" + dest.replace("_", "-")
        items = value if isinstance(value, list) else [value]
        if dest == "argv" and items[:1] == ["--"]:
            items = items[1:]  # COMMAND[0] is the program, as a platform's job says it
        for i, item in enumerate(items):
            if not isinstance(item, str) or string_problem(item) is None:
                continue
            where = f"{flag}[{i}]" if isinstance(value, list) else flag
            # Not quoted: an --env value may be a credential.
            problems.bad(
                where, _flag_problem(item), expected="UTF-8 text: the job's API takes no other"
            )
    problems.raise_all()


def _flag_problem(text: str) -> str:
    if "\0" in text:  # only through the Python API: no shell passes one
        return "a NUL character (\\0)"
    at = next(i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff")
    code = ord(text[at])
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's image of the byte code - 0xDC00
        return f"a byte that is not UTF-8 ({code - 0xDC00:#04x}) at character {at + 1}"
    return f"an unpaired surrogate (U+{code:04X}) at character {at + 1}"
