"""`python -m flashfuse` lists the kernels the artifacts provide."""

import sys

from . import _kernels
from . import _runtime as rt
from .errors import ManifestError


def main():
    dirs = _kernels.artifact_dirs()
    if not dirs:
        print("no kernel artifacts found (set FLASHFUSE_KERNEL_DIR)")
        return 1
    for d in dirs:
        try:
            m = rt.Manifest.open(d)
        except ManifestError as e:
            # Say why and go on: the other artifacts are still usable.
            print(f"{d}: unreadable: {e}")
            continue
        print(f"{d} (sm_{m.arch})")
        for info in m.kernels():
            print(f"  {info.name.decode()}: {info.variant.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
