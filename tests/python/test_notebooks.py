"""Every notebook under notebooks/ executes without a failing cell.

The kernel is Debian's /usr/bin/python3 (the interpreter running pytest),
through a kernelspec written for the test, so that a different `python3`
on PATH cannot be picked up.
"""
import json
import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import BUILD, ROOT
import sys

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    kdir = tmp_path_factory.mktemp("jupyter") / "kernels" / "vfssim-python3"
    kdir.mkdir(parents=True)
    (kdir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "vfssim (Debian python3)", "language": "python"}))
    old = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "PYTHONPATH", "MPLBACKEND")}
    os.environ["JUPYTER_PATH"] = str(kdir.parent.parent)
    os.environ["PYTHONPATH"] = str(BUILD / "python")
    os.environ["MPLBACKEND"] = "Agg"
    yield "vfssim-python3"
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, kernel_env, tmp_path):
    # Run from a directory of its own, as a notebook copied elsewhere is: it
    # finds the scenarios through vfssim.scenarios_dir(), not ../scenarios.
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name=kernel_env, timeout=600,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_has_no_relative_scenario_path(path):
    source = "".join("".join(c.source) for c in nbformat.read(path, as_version=4).cells)
    assert "../scenarios" not in source and 'Path("..")' not in source and "Path('..')" not in source


def test_there_are_notebooks():
    assert any(p.name == "tutorial.ipynb" for p in NOTEBOOKS)
