"""What to do about an `OSError`: a hint chosen by its errno, not guessed from the operation.

Every place that turns an `OSError` into a vtrain error asks here, so that a
full disk, a descriptor limit and a racing writer each get their own advice
(and "check the free space" is never the answer to "too many open files").
A permission error means something else for a file written and a program run,
so it has no entry: the caller's default says what to check.
"""

from __future__ import annotations

import errno

_RACE = (
    "another process changed the folder at the same time (a second job or writer on the "
    "same output folder?): give each its own folder"
)
_HINTS = {
    errno.ENOSPC: "the disk is full: free some space, or write elsewhere",
    errno.EDQUOT: "the disk quota is used up: free some space, or ask for a larger quota",
    errno.EFBIG: "the file is larger than this file system or `ulimit -f` allows",
    errno.EMFILE: "this process ran out of file descriptors: raise `ulimit -n`, or run fewer "
    "replicas or trials at once",
    errno.ENFILE: "the system ran out of file descriptors: stop other programs, or raise the "
    "system limit (fs.file-max)",
    errno.EROFS: "the file system is read-only: write elsewhere",
    errno.ENOTEMPTY: _RACE,
    errno.EEXIST: _RACE,
    errno.ENAMETOOLONG: "the path is too long: choose a shorter folder",
    errno.ELOOP: "a symbolic link on the path points to itself, or links point in a circle: "
    "fix or remove the link",
    errno.EIO: "the disk or network file system reported an I/O error: check its health",
    errno.ENOMEM: "the machine is out of memory: run fewer replicas or trials at once",
    errno.EAGAIN: "a process or memory limit was reached: run fewer replicas or trials at once",
    # The keeper's answer to an argument or variable that no process can be given.
    errno.EILSEQ: "an argument or a variable holds a NUL or a lone surrogate: remove it",
}

OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE})
"""The errnos of a descriptor limit: what was being opened does not matter, the limit does."""


def hint_for(error: OSError, default: str | None = None) -> str | None:
    """The hint for `error`'s errno; `default` for an errno with no advice of its own."""
    return _HINTS.get(error.errno or 0, default)
