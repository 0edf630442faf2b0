"""Reading (and writing) a file of the library without ever touching one outside it.

Listing a folder and then opening a name is a race: between the two, a note can be swapped for a
symlink to `~/.ssh/id_rsa`, and a plain `open()` follows it. So the check is made on what is
opened, not on what was listed: the path is opened one component at a time from a descriptor of
the root, each with `O_NOFOLLOW` (`openat`), so no link anywhere on the way is followed; the
result must be a regular file (`fstat`), and its size is taken from that same descriptor.

A note that is itself a symlink to another file inside the root is still read: the link is
resolved, the target must lie inside the root, and the target is then opened the same way — if it
is swapped meanwhile, the no-follow walk refuses it. Opening uses `O_NONBLOCK`, so a FIFO named
`x.md` is refused instead of blocking the indexer forever.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from tideline.library._errors import LinkOutside, UnreadableFile

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_DIRECTORY", 0)
_LINK_ERRNOS = {errno.ELOOP, errno.EMLINK, errno.ENOTDIR}
_WALK = os.open in os.supports_dir_fd and bool(_NOFOLLOW)


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    rel = os.path.relpath(path, root)
    parts = Path(rel).parts
    if not parts or rel == "." or any(p in ("..", ".") for p in parts):
        raise LinkOutside(str(path))  # only a resolved link leads here from a listing
    return parts


def _walk_open(root: Path, parts: tuple[str, ...]) -> int:
    """Open `root/parts...` following no link; raises OSError(ELOOP) at the first link."""
    fd = os.open(root, os.O_RDONLY | _CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    try:
        for name in parts[:-1]:
            nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def _inside(root: Path, target: str) -> bool:
    return target.startswith(str(root) + os.sep)


def open_inside(root: Path, path: Path) -> int:
    """A read-only descriptor of `path`, guaranteed to be a file inside `root` (resolved).

    Raises `LinkOutside` when `path` or a folder on the way is a link that leads out
    (or was swapped for one), `UnreadableFile` when it is not a regular file or cannot be opened.
    """
    parts = _parts(root, path)
    shown = "/".join(parts)
    try:
        if _WALK:
            try:
                fd = _walk_open(root, parts)
            except OSError as exc:
                if exc.errno not in _LINK_ERRNOS:
                    raise
                # A link somewhere on the way: allowed only when it resolves inside the root,
                # and then the resolved path is walked again without following anything.
                target = os.path.realpath(root.joinpath(*parts))
                if not _inside(root, target):
                    raise LinkOutside(shown) from None
                try:
                    fd = _walk_open(root, _parts(root, Path(target)))
                except OSError as again:
                    if again.errno in _LINK_ERRNOS:
                        raise LinkOutside(shown) from None
                    raise
        else:  # no openat: resolve, check, open, and make sure the opened file is the checked one
            target = os.path.realpath(root.joinpath(*parts))
            if not _inside(root, target):
                raise LinkOutside(shown)
            fd = os.open(target, _FILE_FLAGS)
            st, want = os.fstat(fd), os.stat(target)
            if (st.st_dev, st.st_ino) != (want.st_dev, want.st_ino):
                os.close(fd)
                raise LinkOutside(shown)
    except OSError as exc:
        raise UnreadableFile(shown, f"cannot be read ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnreadableFile(shown, "not a regular file")
    return fd


def read_inside(root: Path, path: Path, *, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of `path` (at most `limit`) and the `fstat` of exactly what was read.

    The stat comes from the open descriptor, so what the index records always describes the
    bytes it indexed, even when the file was replaced between listing and reading.
    """
    fd = open_inside(root, path)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        data = fh.read(limit + 1) if st.st_size <= limit else b""
    if st.st_size > limit or len(data) > limit:
        raise UnreadableFile("/".join(_parts(root, path)), f"larger than {limit} bytes; split it")
    return data, st


def write_inside(root: Path, path: Path, data: bytes) -> bool:
    """Write `data` as the file `path` inside `root`, atomically; True when it was created.

    The same no-follow walk as reading, from a descriptor of the root: every folder on the way is
    opened with `O_NOFOLLOW` (missing ones are made), the bytes go to a temp file beside the
    target (`O_EXCL`), are flushed with `fsync`, and `rename` puts them in place, so a reader sees
    the old note or the new one, never half, and no link — even one swapped in meanwhile — can
    lead the write out of the root. An existing target must be a regular file, not a link.
    """
    parts = _parts(root, path)
    shown = "/".join(parts)
    if not _WALK:
        raise UnreadableFile(shown, "cannot be written safely on this system (no openat)")
    tmp = f".{parts[-1]}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(root, os.O_RDONLY | _CLOEXEC | getattr(os, "O_DIRECTORY", 0))
        try:
            for name in parts[:-1]:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nxt
            try:
                st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                created = True
            else:
                if not stat.S_ISREG(st.st_mode):
                    raise UnreadableFile(shown, "is a link or not a regular file; not written")
                created = False
            out = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=fd
            )
            try:
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.rename(tmp, parts[-1], src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
                raise
            os.fsync(fd)  # the rename itself survives a crash
            return created
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.errno not in _LINK_ERRNOS:
            raise UnreadableFile(shown, f"cannot be written ({exc.strerror})") from None
        if not _inside(root, os.path.realpath(root.joinpath(*parts))):
            raise LinkOutside(shown) from None
        raise UnreadableFile(
            shown, "has a linked folder on its path; write to the real path"
        ) from None
