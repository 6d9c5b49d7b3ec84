"""Expected figures against the model, as `vfssim validate` scores them."""
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import pandas as pd

NO_DIRECTION: float

def score(scenario: Any, seed: int = 1, reps: int = 1, jobs: int = 0,
          progress: Union[bool, None, Callable[[int, int, dict[str, Any]], Any]] = False,
          figures: Optional[Sequence[Mapping[str, Any]]] = None) -> pd.DataFrame: ...
def format_value(kind: str, metric: str, v: Optional[float]) -> str: ...
def summary(table: pd.DataFrame) -> str: ...
