"""The kernel's file events for whole filesystems (fanotify), with the pid that caused each.

An audit hook sees what Python opens; it misses `torch.save` and `np.save`
(native writes), renames, and subprocesses. fanotify sees every read, write and
rename on a filesystem, by any process, and names the process: so the rehearsal
sees a write whatever makes it. It is reported by directory and name (the
kernel's "directory file handle" mode: renames need it), which
`open_by_handle_at` turns back into a path. Both need CAP_SYS_ADMIN and
CAP_DAC_READ_SEARCH: a root rehearsal, as on this project's machines and in a
container; elsewhere `Fanotify.open` says why it cannot, and the verdict says
what it did not check.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
from collections.abc import Iterable

WRITTEN = 0x08  # FAN_CLOSE_WRITE
READ = 0x10  # FAN_CLOSE_NOWRITE: closed, and it was open only to read
MOVED_IN = 0x80  # FAN_MOVED_TO
OVERFLOW = 0x4000  # FAN_Q_OVERFLOW
_INIT_FLAGS = 0x1 | 0x10 | 0x200 | 0x400 | 0x800  # CLOEXEC, UNLIMITED_QUEUE, FID, DIR_FID, NAME
_MARK_ADD_FILESYSTEM = 0x1 | 0x100
_AT_FDCWD = -100
_O_PATH = 0o10000000
_DFID_NAME = 2  # FAN_EVENT_INFO_TYPE_DFID_NAME
_META = struct.Struct("=IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid
_INFO = struct.Struct("=BBH")  # info_type, pad, len
_HANDLE = struct.Struct("=Ii")  # handle_bytes, handle_type


class Fanotify:
    """A fanotify group marking whole filesystems; `read()` gives (mask, pid, path) events."""

    def __init__(self, fd: int, libc: ctypes.CDLL, mounts: dict[bytes, int]) -> None:
        self._fd = fd
        self._libc = libc
        self._mounts = mounts  # fsid -> a descriptor on that filesystem, for its handles
        self.lost = False
        """Events were dropped (the kernel's queue overflowed)."""

    @classmethod
    def open(cls, paths: Iterable[str]) -> Fanotify | str:
        """Watch every filesystem that holds one of `paths`; or why this machine does not
        let us (a line for the verdict's ``not checked``)."""
        try:
            # The process's own symbols: libc is loaded; find_library would run ldconfig.
            libc = ctypes.CDLL(None, use_errno=True)
            init, mark = libc.fanotify_init, libc.fanotify_mark
        except (OSError, AttributeError):
            return "this system has no fanotify (it is Linux's)"
        mark.argtypes = [
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint64,
            ctypes.c_int,
            ctypes.c_char_p,
        ]
        fd = init(_INIT_FLAGS, os.O_RDONLY | os.O_CLOEXEC)
        if fd < 0:
            return f"fanotify is refused here ({os.strerror(ctypes.get_errno())}: it needs root)"
        mounts: dict[bytes, int] = {}
        try:
            for path in dict.fromkeys(paths):
                fsid = _fsid(libc, path)
                if fsid is None or fsid in mounts:
                    continue
                if (
                    mark(
                        fd,
                        _MARK_ADD_FILESYSTEM,
                        READ | WRITTEN | MOVED_IN,
                        _AT_FDCWD,
                        os.fsencode(path),
                    )
                    < 0
                ):
                    why = os.strerror(ctypes.get_errno())
                    raise OSError(f"fanotify cannot watch {path}'s filesystem ({why})")
                mounts[fsid] = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            os.close(fd)
            for mount in mounts.values():
                os.close(mount)
            return str(e)
        return cls(fd, libc, mounts)

    def fileno(self) -> int:
        return self._fd

    def read(self) -> list[tuple[int, int, bytes, bytes, bytes]]:
        """The events queued now: (mask, pid, fsid, folder handle, name); one read, which
        blocks when there is none. `folder` resolves a handle."""
        try:
            data = os.read(self._fd, 1 << 18)
        except BlockingIOError:
            return []
        found = []
        offset = 0
        while offset + _META.size <= len(data):
            length, _, _, meta, mask, _, pid = _META.unpack_from(data, offset)
            if length < _META.size:
                break
            if mask & OVERFLOW:
                self.lost = True
            at = offset + meta
            while at + _INFO.size <= offset + length:
                kind, _, size = _INFO.unpack_from(data, at)
                if size == 0:
                    break
                if kind == _DFID_NAME:
                    fsid = data[at + 4 : at + 12]
                    handle_bytes, _ = _HANDLE.unpack_from(data, at + 12)
                    end = at + 12 + _HANDLE.size + handle_bytes
                    name = data[end : at + size].split(b"\0", 1)[0]
                    found.append((mask, pid, fsid, data[at + 12 : end], name))
                at += size
            offset += length
        return found

    def folder(self, fsid: bytes, handle: bytes) -> str | None:
        """The path of the folder `handle` names, or None when it is gone. The caller
        remembers it: a folder renamed later keeps the name it had when first seen."""
        mount = self._mounts.get(fsid)
        if mount is None:
            return None
        buffer = ctypes.create_string_buffer(handle, len(handle))
        fd = self._libc.open_by_handle_at(mount, buffer, _O_PATH | os.O_CLOEXEC)
        if fd < 0:
            return None  # ESTALE: removed since
        try:
            found = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        finally:
            os.close(fd)
        return None if found.endswith(" (deleted)") else found

    def close(self) -> None:
        for fd in (self._fd, *self._mounts.values()):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._mounts = {}


def _fsid(libc: ctypes.CDLL, path: str) -> bytes | None:
    """The filesystem id fanotify reports for `path` (statfs's f_fsid)."""
    # struct statfs on 64-bit Linux: seven 8-byte fields, then f_fsid (two ints).
    buffer = ctypes.create_string_buffer(128)
    if libc.statfs(os.fsencode(path), buffer) != 0:
        return None
    return buffer.raw[56:64]
