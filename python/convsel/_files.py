"""The package's one way to open a file: the C library's rule
(src/util/file.c) in Python. Only regular files, opened without blocking,
so a FIFO or a device where a file is expected is an error naming the path
and what it is, never a hang."""
import os
import stat


def kind(mode):
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(path):
    """Raises OSError (naming path) unless path is a regular file."""
    st = os.stat(path)  # follows links: a link to a FIFO is a FIFO
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path}: is {kind(st.st_mode)}, not a regular file")


def open_regular(path, newline=None):
    """A regular file, opened for reading as text; OSError naming path otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: is {kind(st.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r", newline=newline)
    except BaseException:
        os.close(fd)
        raise
