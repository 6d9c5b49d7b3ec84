"""Plots of vfssim results on matplotlib."""
from typing import Any, Optional, Sequence

import matplotlib.axes
import pandas as pd

def curves(data: Any, reported: Optional[Sequence[dict[str, Any]]] = None,
           ax: Optional[matplotlib.axes.Axes] = None, *, metric: str = "ops_per_sec",
           scale: Optional[float] = None, title: Optional[str] = None, errorbars: bool = True,
           annotate: bool = False, implied: bool = True, logy: bool = False,
           figsize: tuple[float, float] = (7, 4.2)) -> matplotlib.axes.Axes: ...
def profile(result: Any, top: int = 10, ax: Optional[matplotlib.axes.Axes] = None, *, width: int = 60,
            title: Optional[str] = None, figsize: tuple[float, float] = (7, 3.8)) -> matplotlib.axes.Axes: ...
def lock_stat(result: Any, top: int = 8, ax: Optional[matplotlib.axes.Axes] = None, *,
              column: str = "waittime_total_us", title: Optional[str] = None,
              figsize: tuple[float, float] = (7, 3.2)) -> matplotlib.axes.Axes: ...
def score(table: pd.DataFrame, ax: Optional[matplotlib.axes.Axes] = None, *, title: Optional[str] = None,
          figsize: Optional[tuple[float, float]] = None) -> matplotlib.axes.Axes: ...
