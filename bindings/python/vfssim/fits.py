"""Amdahl and Universal Scalability Law fits of a throughput curve X(N).

    USL:     X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1))
    Amdahl:  X(N) = lambda N / (1 + sigma (N-1))

sigma is contention (the serial fraction), kappa coherency (crosstalk, the
cost growing with pairs of CPUs that makes a curve turn down), lambda the
rate of one CPU. Fitted as Gunther does (Guerrilla Capacity Planning,
ch. 5-6) on the linearised form: with C(N) = X(N)/X(1),

    N/C(N) - 1 = sigma (N-1) + kappa N (N-1)

by least squares through the origin, with sigma, kappa >= 0. The fit is the
engine's own (models/experiment/fits.h, the one `vfssim run` prints), so
Python and the CLI agree. Without an N = 1 point, N/X(N) is fitted for
1/lambda too. The USL peak is at N* = sqrt((1 - sigma)/kappa): infinite
when kappa = 0.
"""
import math
from dataclasses import dataclass

from . import _vfssim

__all__ = ["UslFit", "AmdahlFit", "fit_usl", "fit_amdahl"]


@dataclass(frozen=True)
class UslFit:
    """A USL fit: sigma (contention), kappa (coherency), lambda_ (rate of one CPU),
    peak_cpus (N* = sqrt((1-sigma)/kappa), inf when kappa = 0). Call it with N
    (or an array) for the fitted throughput."""

    sigma: float
    kappa: float
    lambda_: float
    peak_cpus: float

    def __call__(self, n):
        """Fitted throughput at N CPUs (N may be a numpy array)."""
        return self.lambda_ * n / (1 + self.sigma * (n - 1) + self.kappa * n * (n - 1))

    @property
    def peak_throughput(self):
        """The fitted throughput at peak_cpus (the curve's maximum), or inf when it never turns down."""
        return self(self.peak_cpus) if math.isfinite(self.peak_cpus) else math.inf


@dataclass(frozen=True)
class AmdahlFit:
    """An Amdahl fit: sigma (serial fraction), lambda_ (rate of one CPU). Call it
    with N for the fitted throughput; ceiling = lambda_/sigma is the limit."""

    sigma: float
    lambda_: float

    def __call__(self, n):
        """Fitted throughput at N CPUs (N may be a numpy array)."""
        return self.lambda_ * n / (1 + self.sigma * (n - 1))

    @property
    def ceiling(self):
        """The throughput the curve tends to as N grows: lambda / sigma (inf when sigma = 0)."""
        return self.lambda_ / self.sigma if self.sigma > 0 else math.inf


def _lists(cpus, throughput):
    c = [float(x) for x in cpus]
    x = [float(v) for v in throughput]
    if len(c) != len(x):
        raise ValueError(f"cpus and throughput differ in length ({len(c)} and {len(x)})")
    if not c:
        raise ValueError("no points to fit")
    return c, x


def fit_usl(cpus, throughput):
    """Fits the USL to throughput X(N) measured at CPU counts N; returns a UslFit.

    Example: f = fit_usl([1, 2, 4, 8, 16], [100, 190, 340, 520, 600]) gives
    f.sigma, f.kappa, f.peak_cpus and f(32), the fitted throughput at 32 CPUs.
    """
    return UslFit(**{("lambda_" if k == "lambda" else k): v
                     for k, v in _vfssim.fit_usl(*_lists(cpus, throughput)).items()})


def fit_amdahl(cpus, throughput):
    """Fits Amdahl's law (USL with kappa = 0) to throughput X(N); returns an AmdahlFit."""
    d = _vfssim.fit_amdahl(*_lists(cpus, throughput))
    return AmdahlFit(sigma=d["sigma"], lambda_=d["lambda"])
