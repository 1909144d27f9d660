"""Whole-file writes that readers never see half done, and reads that never follow a symlink."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import os
import secrets
import stat
from collections.abc import Callable

from vtrain.errors import StorageError

# O_NOFOLLOW is POSIX; where it is missing the lstat check below still refuses a planted link.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# One random token per process plus a counter: temp names never collide, and no name
# needs a random draw per write.
_TOKEN = secrets.token_hex(4)
_COUNTER = itertools.count()
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# The file system or kernel cannot exchange, or there is nothing to exchange with: rename.
_NO_EXCHANGE = {errno.ENOENT, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EXDEV}


def _check_target(path: str) -> bool:
    """True when a regular file is at `path`, False when nothing is; StorageError otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise StorageError(
            "refusing to write through a symlink",
            source=path,
            value=os.readlink(path),
            expected="a regular file or no file at this path",
            hint="remove the link; something planted it where this file belongs",
        )
    if not stat.S_ISREG(mode):
        raise StorageError("not a regular file", source=path, expected="a file or nothing")
    return True


@functools.lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def _exchange(source: str, target: str) -> bool:
    """Swap two paths in one step (Linux); False where that is not possible here."""
    function = _renameat2()
    if function is None:
        return False
    if (
        function(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE)
        == 0
    ):
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), target)


PRIVATE = 0o600
"""The mode of a file that may hold a command line or an environment, so credentials."""


def write_atomic(path: str, data: bytes, *, private: bool = False) -> None:
    """Replace `path` with `data` in one step: a reader sees the old file or the new one.

    `private`: the file is this user's only (`PRIVATE`), whatever the umask.
    """
    directory, name = os.path.split(path)
    # The temp file sits beside the target: a rename is atomic only within one file system.
    temp = os.path.join(directory, f".{name}.{_TOKEN}-{next(_COUNTER)}.tmp")
    try:
        exists = _check_target(path)
        # O_EXCL|O_NOFOLLOW: never open anything planted at the temp name; 0o666 lets the
        # umask decide the mode, as a plain open() would. A private file is made private
        # before its first byte: no moment where another user could open it.
        mode = PRIVATE if private else 0o666
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        # Both ways put a new inode at `path` in one step and never modify the old one, so
        # a reader holding the old file keeps reading it whole. On ext4 a rename over an
        # existing file flushes the new file to disk first (auto_da_alloc), about 100 us;
        # an exchange followed by unlinking the old file skips that and costs about 15 us.
        # Neither fsyncs: the service reads the file on the running machine, and a
        # replica that crashes restarts and reports again.
        if exists and _exchange(temp, path):
            os.unlink(temp)
        else:
            os.replace(temp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(e, OSError):
            raise StorageError(f"cannot write the file: {e.strerror or e}", source=path) from e
        raise


def read_nofollow(path: str) -> bytes | None:
    """The bytes at `path`, None when there is no file; StorageError for a symlink."""
    if not _check_target(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        _check_target(path)
        raise StorageError(f"cannot read the file: {e.strerror or e}", source=path) from e
    with os.fdopen(fd, "rb") as f:
        return f.read()
