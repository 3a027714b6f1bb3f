"""Copies libconvsel.so into the package, so an installed convsel finds its
library beside itself. The library is built by CMake, not here (make in
the repository's root first): $CONVSEL_LIBRARY names it, else ../build/."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class build_py_with_library(build_py):
    def run(self):
        super().run()
        src = os.environ.get("CONVSEL_LIBRARY") or os.path.join(HERE, "..", "build",
                                                                  "libconvsel.so")
        if not os.path.exists(src):
            raise SystemExit(f"convsel: {src} does not exist: build the library first (run "
                             f"'make' in the repository's root) or set CONVSEL_LIBRARY to it")
        dst = os.path.join(self.build_lib, "convsel", "libconvsel.so")
        shutil.copyfile(os.path.realpath(src), dst)  # the file, not the symlink
        os.chmod(dst, 0o755)


setup(cmdclass={"build_py": build_py_with_library})
