"""``python -m gpuwhy ARGS``: runs the ``gpuwhy`` command installed with this package.

The wheel installs the command (a native binary) into the environment's scripts directory
(``bin/`` of a virtual environment); this finds it there, or on ``PATH``, and replaces the
Python process with it so that exit codes and signals pass through unchanged.
"""

import os
import shutil
import sys
import sysconfig

__all__ = ["find_gpuwhy_bin", "main"]


def find_gpuwhy_bin() -> str:
    """Returns the path of the ``gpuwhy`` command installed with this package.

    Looked up in the scripts directory of the running interpreter's install scheme (the
    virtual environment's, or the user scheme's for ``pip install --user``), then on
    ``PATH``. Raises FileNotFoundError, saying what to do, when there is none.
    """
    exe = "gpuwhy" + (sysconfig.get_config_var("EXE") or "")
    schemes = [sysconfig.get_default_scheme()] if hasattr(sysconfig, "get_default_scheme") else []
    user = sysconfig.get_preferred_scheme("user") if hasattr(sysconfig, "get_preferred_scheme") else None
    for scheme in schemes + ([user] if user else []):
        path = os.path.join(sysconfig.get_path("scripts", scheme=scheme), exe)
        if os.path.isfile(path):
            return path
    path = os.path.join(sysconfig.get_path("scripts"), exe)
    if os.path.isfile(path):
        return path
    found = shutil.which(exe)
    if found:
        return found
    raise FileNotFoundError(
        "the gpuwhy command is not installed beside this package; install the wheel "
        "(pip install gpuwhy) or build it with `cargo xtask wheel`")


def main() -> None:
    """Runs ``gpuwhy`` with this process's arguments; never returns."""
    try:
        path = find_gpuwhy_bin()
    except FileNotFoundError as e:
        sys.stderr.write("gpuwhy: %s\n" % e)
        sys.exit(2)
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
