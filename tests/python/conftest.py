import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("VFSSIM_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python"))
