"""vfssim: a discrete-event simulator of Linux kernel VFS locking, in-process."""
import os
import pathlib
from typing import Any, Optional, Sequence, Union

import pandas as pd

from . import distributed as distributed, plot as plot, score as score
from ._vfssim import ScenarioError as ScenarioError
from .compare import compare as compare
from .fits import AmdahlFit as AmdahlFit, UslFit as UslFit, fit_amdahl as fit_amdahl, fit_usl as fit_usl
from .results import PointResult as PointResult, Sweep as Sweep
from .scenario import Scenario as Scenario

__version__: str
__all__: list[str]

_Source = Union[str, os.PathLike[str], Scenario]

def lock_kinds() -> list[str]: ...
def sweep(scenario: _Source, strategies: Optional[Union[str, Sequence[str]]] = None,
          cpus: Optional[Sequence[int]] = None, variants: Optional[Union[str, Sequence[str]]] = None, reps: int = 1,
          seed: int = 1, jobs: int = 0, progress: Any = False, executor: Any = None) -> Sweep: ...
def scenarios_dir() -> pathlib.Path: ...
def run_document(path: _Source, cpus: Sequence[int] = (), seed: int = 1, reps: int = 1,
                 strategies: Sequence[str] = (), jobs: int = 0, variants: Sequence[str] = ()) -> dict[str, Any]: ...
def run(path: _Source, cpus: Sequence[int] = (), seed: int = 1, reps: int = 1, strategies: Sequence[str] = (),
        jobs: int = 0, variants: Sequence[str] = ()) -> list[dict[str, Any]]: ...
def run_df(path: _Source, cpus: Sequence[int] = (), seed: int = 1, reps: int = 1, strategies: Sequence[str] = (),
           jobs: int = 0, variants: Sequence[str] = ()) -> pd.DataFrame: ...
