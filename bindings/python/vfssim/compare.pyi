"""vfssim.compare: two strategies side by side, LKP-style."""
import os
from typing import Any, Optional, Sequence, Union

import pandas as pd

from .scenario import Scenario

TOP_PROFILE: int
TOP_LOCKS: int
COLUMNS: list[str]

def profile_metric(chain: str) -> str: ...
def group_bottleneck(points: Sequence[Any]) -> Optional[dict[str, Any]]: ...
def compare(scenario: Union[Scenario, str, os.PathLike[str]], base: str, new: str, cpus: Optional[int] = None,
            reps: int = 3, variant: str = "default", seed: int = 1, jobs: int = 0, top_profile: int = 8,
            top_locks: int = 5) -> pd.DataFrame: ...
