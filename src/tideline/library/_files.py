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
import ctypes
import errno
import functools
import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tideline.errors import FileChanged, LinkOutside, UnreadableFile

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


@dataclass(frozen=True)
class Seen:
    """What a writer read of a file (inode, mtime, size, content hash): the file must still be
    exactly this when the new version replaces it."""

    ino: int
    mtime_ns: int
    size: int
    sha256: bytes

    @classmethod
    def of(cls, data: bytes, st: os.stat_result) -> Seen:
        return cls(st.st_ino, st.st_mtime_ns, st.st_size, hashlib.sha256(data).digest())


def write_inside(root: Path, path: Path, data: bytes, expect: Seen | None = None) -> bool:
    """Write `data` as the file `path` inside `root`, atomically; True when it was created.

    The same no-follow walk as reading, from a descriptor of the root: every folder on the way is
    opened with `O_NOFOLLOW` (missing ones are made), the bytes go to a temp file beside the
    target (`O_EXCL`), are flushed with `fsync`, and `rename` puts them in place, so a reader sees
    the old note or the new one, never half, and no link — even one swapped in meanwhile — can
    lead the write out of the root. An existing target must be a regular file, not a link.

    Compare and swap, so a hand edit made meanwhile is never overwritten: with `expect` None the
    file must not exist (it is linked into place, which fails if it appeared); else it must
    still be what `expect` saw — inode, mtime, size and the hash of its bytes, checked just
    before the rename — or `FileChanged` is raised and nothing is written.
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
            _unchanged(fd, parts[-1], shown, expect)
            out = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=fd
            )
            try:
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                if expect is None:
                    _link_new(fd, tmp, parts[-1], shown)
                else:
                    _swap_in(fd, tmp, parts[-1], shown, expect, hashlib.sha256(data).digest())
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
            os.fsync(fd)  # the rename itself survives a crash
            return expect is None
        finally:
            os.close(fd)
    except FileChanged:
        raise
    except OSError as exc:
        if exc.errno not in _LINK_ERRNOS:
            raise UnreadableFile(shown, f"cannot be written ({exc.strerror})") from None
        if not _inside(root, os.path.realpath(root.joinpath(*parts))):
            raise LinkOutside(shown) from None
        raise UnreadableFile(
            shown, "has a linked folder on its path; write to the real path"
        ) from None


def _unchanged(folder: int, name: str, shown: str, expect: Seen | None) -> None:
    """Raise `FileChanged` unless `folder/name` is still what `expect` saw (None: absent). The
    bytes are compared first, the stat last: an edit landing after the read of the bytes
    changes the inode or the mtime, which the stat then sees."""
    try:
        if expect is not None and _digest(folder, name, expect.size) != expect.sha256:
            raise FileChanged(shown)  # same size, same mtime (`touch -r`), other bytes
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        if expect is not None:
            raise FileChanged(shown) from None
        return
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableFile(shown, "is a link or not a regular file; not written")
    if expect is None or (st.st_ino, st.st_mtime_ns, st.st_size) != (
        expect.ino,
        expect.mtime_ns,
        expect.size,
    ):
        raise FileChanged(shown)


def _digest(folder: int, name: str, size: int) -> bytes:
    fd = os.open(name, _FILE_FLAGS, dir_fd=folder)
    with os.fdopen(fd, "rb") as fh:
        return hashlib.sha256(fh.read(size + 1)).digest()


def _swap_in(folder: int, tmp: str, name: str, shown: str, expect: Seen, ours: bytes) -> None:
    """Replace `name` by `tmp` only if `name` is still what `expect` saw.

    Checked, then exchanged atomically (`renameat2(RENAME_EXCHANGE)`): `tmp` then names the file
    that was replaced, which must be the one that was read; if a save slipped in between the
    check and the exchange, the exchange is undone, so that save is never lost. Where the
    exchange is missing (not Linux, a filesystem without it) the check comes microseconds before
    a plain rename. A third writer replacing this write's version during the undo (three saves
    within microseconds) has its version kept beside the note as `<name>.conflict-<n>.md`.
    """
    _unchanged(folder, name, shown, expect)
    if not _exchange(folder, tmp, name):
        os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        return
    try:
        _unchanged(folder, tmp, shown, expect)
    except FileChanged:
        _exchange(folder, tmp, name)
        if _digest(folder, tmp, 1 << 30) != ours:
            os.rename(tmp, _conflict_name(folder, name), src_dir_fd=folder, dst_dir_fd=folder)
        raise


def _conflict_name(folder: int, name: str) -> str:
    stem = name.removesuffix(".md")
    for n in range(1, 10_000):
        kept = f"{stem}.conflict-{n}.md"
        try:
            os.stat(kept, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return kept
    raise UnreadableFile(name, "has 9,999 conflict copies beside it; clear them away")


_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """libc's `renameat2`, or None (not glibc ≥ 2.28)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


def _exchange(folder: int, a: str, b: str) -> bool:
    """Swap the names `a` and `b` in `folder` atomically; False where that cannot be done."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(folder, os.fsencode(a), folder, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    if code == errno.ENOENT:
        raise FileChanged(b)  # the note was deleted meanwhile
    raise OSError(code, os.strerror(code))


def _link_new(folder: int, tmp: str, name: str, shown: str) -> None:
    """Put `tmp` in place as `name` only if no `name` exists (a rename would replace one)."""
    try:
        os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        raise FileChanged(shown) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        _unchanged(folder, name, shown, None)  # no hard links here: check, then rename
        os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
