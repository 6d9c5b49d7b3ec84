from typing import Any, Callable, Optional, Sequence

from ._vfssim import NativePoint, NativeScenario, PointTuple

LOST_WORKER_ERRORS: tuple[type[BaseException], ...]

def run_points(native: NativeScenario, points: Sequence[PointTuple], seed: int, executor: Any,
               progress: Optional[Callable[[int, int, dict[str, Any]], Any]] = None,
               retries: int = 3, uncertainty: int = 0) -> list[NativePoint]: ...
def sweep_curve(native: NativeScenario, strategies: Sequence[str], variants: Sequence[str], cpus: Sequence[int],
                reps: int, seed: int, executor: Any,
                progress: Optional[Callable[[int, int, dict[str, Any]], Any]] = None,
                uncertainty: int = 0) -> list[dict[str, Any]]: ...
def sweep_document(native: NativeScenario, strategies: Sequence[str], variants: Sequence[str], cpus: Sequence[int],
                   reps: int, seed: int, executor: Any,
                   progress: Optional[Callable[[int, int, dict[str, Any]], Any]] = None,
                   profile_top: Optional[int] = None, indent: int = -1, uncertainty: int = 0,
                   sensitivity: bool = False) -> str: ...
