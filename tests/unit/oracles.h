// Mathematical oracles for the lock models: closed queueing systems whose
// throughput is known exactly, so that the simulator can be held to them.
//
// Every oracle describes the same closed loop as the scenario `lock_loop`
// of the tests: N customers (CPUs), each thinking an exponential time of
// mean Z, then queueing FIFO for one server (the lock) whose service is the
// time the lock is not available to anybody else. This is the classical
// machine-repairman (finite-source, M/G/1//N) model. Times are plain
// doubles in any one unit; throughputs come back in customers per unit.
//
//   mva_throughput            M/M/1//N, exact Mean Value Analysis
//                             (Reiser & Lavenberg, J. ACM 27(2), 1980).
//   birth_death_stationary    stationary law of a finite birth-death chain.
//   mm1n_direct_throughput    M/M/1//N from its birth-death chain (a check
//                             of the MVA recursion by a second route).
//   finite_source_throughput  M/G/1//N, exact, by the embedded Markov chain
//                             at departure epochs; service laws may depend
//                             on the queue length at the start of service
//                             (mixtures of fixed and exponential times).
//   md1n_throughput           M/D/1//N, the deterministic-service case.
//   erlang_md1n_throughput    M/E_k/1//N as a CTMC (a brute-force check of
//                             the M/D/1//N solution: E_k -> D as k grows).
//   ticket_markov_throughput  the ticket-lock Markov model of Boyd-Wickizer,
//                             Kaashoek, Morris & Zeldovich, "Non-scalable
//                             locks are dangerous", Linux Symposium 2012.
//
// Header-only; Eigen does the linear algebra.
#pragma once

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

namespace vfssim::oracles {

// ---------------------------------------------------------------------------
// M/M/1//N by exact MVA.
//
// One FCFS queueing station with exponential service of mean S and one
// delay (think) station of mean Z, N customers. With Q(0) = 0:
//   R(n) = S (1 + Q(n-1))        arrival theorem: an arriving customer sees
//                                the queue of the network with n-1 customers
//   X(n) = n / (Z + R(n))        Little's law on the whole loop
//   Q(n) = X(n) R(n)             Little's law on the queue
// Returns X(1..N) (index n-1).
inline std::vector<double> mva_curve(int n_max, double S, double Z) {
  if (n_max < 1 || S <= 0 || Z < 0) throw std::invalid_argument("mva: need N >= 1, S > 0, Z >= 0");
  std::vector<double> x(n_max);
  double q = 0;
  for (int n = 1; n <= n_max; ++n) {
    const double r = S * (1 + q);
    x[n - 1] = n / (Z + r);
    q = x[n - 1] * r;
  }
  return x;
}

inline double mva_throughput(int N, double S, double Z) { return mva_curve(N, S, Z).back(); }

// ---------------------------------------------------------------------------
// A birth-death chain on 0..n: up[k] is the rate k -> k+1 (k < n), down[k]
// the rate k -> k-1 (k >= 1; down[0] is ignored). Detailed balance gives
// P(k+1) / P(k) = up[k] / down[k+1]; the products are kept in log space so
// that 128 states of strongly unbalanced rates neither overflow nor vanish.
inline std::vector<double> birth_death_stationary(const std::vector<double>& up, const std::vector<double>& down) {
  const std::size_t n = up.size();
  if (n == 0 || down.size() != n) throw std::invalid_argument("birth_death: rates of n+1 states expected");
  std::vector<double> logp(n, 0.0);
  for (std::size_t k = 0; k + 1 < n; ++k) {
    if (up[k] <= 0 || down[k + 1] <= 0) throw std::invalid_argument("birth_death: rates must be positive");
    logp[k + 1] = logp[k] + std::log(up[k]) - std::log(down[k + 1]);
  }
  const double top = *std::max_element(logp.begin(), logp.end());
  std::vector<double> p(n);
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += p[k] = std::exp(logp[k] - top);
  for (auto& v : p) v /= sum;
  return p;
}

// M/M/1//N directly: state k = customers at the server (queued or served),
// up rate (N-k)/Z, down rate 1/S; X = P(busy) / S.
inline double mm1n_direct_throughput(int N, double S, double Z) {
  std::vector<double> up(N + 1), down(N + 1);
  for (int k = 0; k <= N; ++k) {
    up[k] = (N - k) / Z;
    down[k] = 1 / S;
  }
  const auto p = birth_death_stationary(up, down);
  return (1 - p[0]) / S;
}

// ---------------------------------------------------------------------------
// M/G/1//N, exact, by the embedded Markov chain at departure epochs.
//
// The classical analysis of the finite-source M/G/1 queue (Kleinrock,
// "Queueing Systems, Vol. 1", 1975, the M/G/1 imbedded chain; Takagi,
// "Queueing Analysis, Vol. 2: Finite Systems", 1993, ch. 2, M/G/1/K with
// finite population):
//
//  * X_j = number of customers left in the system by the j-th departure,
//    0 <= X_j <= N-1, is a Markov chain. If X_j = i >= 1 the next service
//    starts at once with m = i customers in the system; if X_j = 0 the
//    server idles until the first of the N thinking customers arrives, and
//    the service starts with m = 1.
//  * During a service started with m in the system, the N-m others think.
//    Think times are exponential, hence memoryless: each of them ends its
//    think before the service ends with probability 1 - exp(-t/Z) given the
//    service time t, independently. For a fixed time t the number A of
//    arrivals is Binomial(N-m, 1-exp(-t/Z)); for an exponential service of
//    mean S it is the outcome of a race (see arrival_pmf_exponential).
//    The next state is X_{j+1} = m - 1 + A.
//  * Solve pi P = pi, sum pi = 1 (Eigen, LU).
//  * Renewal-reward: the time between two departures is the service time,
//    plus, after a departure that left the system empty, the idle period,
//    the minimum of N exponential thinks: mean Z/N. The long-run departure
//    rate (the throughput) is the inverse of the mean inter-departure time:
//        X = 1 / ( sum_i pi_i E[S | i] + pi_0 Z / N ).
//    For a constant service S this is X = (1 - P0_time) / S with
//    P0_time = pi_0 (Z/N) X, the fraction of time the server is idle.
//
// The service law is given per start state so that models whose service
// depends on the queue (the ticket lock's handoff) are exact too: a mixture
// of phases, each a fixed time plus an exponential time of a given mean.

struct ServicePhase {
  double prob = 1;      // weight in the mixture
  double fixed = 0;     // a fixed part of the service time
  double exp_mean = 0;  // plus an exponential part of this mean (0: none)
  double mean() const { return fixed + exp_mean; }
};
using ServiceLaw = std::vector<ServicePhase>;
// (customers in the system when the service starts, whether the server was
// idle just before) -> the law of this service.
using ServiceLawFn = std::function<ServiceLaw(int in_system, bool from_idle)>;

// pmf of Binomial(r, p) with p = 1 - exp(-t/Z): the arrivals among r
// thinkers during a fixed time t. In log space (stable for p near 0 or 1).
inline std::vector<double> arrival_pmf_fixed(int r, double t, double Z) {
  std::vector<double> pmf(r + 1, 0.0);
  if (r == 0 || t <= 0) {
    pmf[0] = 1;
    return pmf;
  }
  const double log_q = -t / Z;                         // log(1 - p)
  const double log_p = std::log(-std::expm1(-t / Z));  // log p
  for (int a = 0; a <= r; ++a)
    pmf[a] = std::exp(std::lgamma(r + 1.0) - std::lgamma(a + 1.0) - std::lgamma(r - a + 1.0) + a * log_p +
                      (r - a) * log_q);
  return pmf;
}

// r thinkers (rate 1/Z each) race an exponential time of mean E: with i
// arrivals so far the next event is an arrival with probability
// q_i = (r-i)/Z / ((r-i)/Z + 1/E). P(A = a) = q_0 ... q_{a-1} (1 - q_a).
inline std::vector<double> arrival_pmf_exponential(int r, double E, double Z) {
  std::vector<double> pmf(r + 1, 0.0);
  if (E <= 0) {
    pmf[0] = 1;
    return pmf;
  }
  double reach = 1;  // probability of reaching a arrivals
  for (int a = 0; a <= r; ++a) {
    const double lam = (r - a) / Z, mu = 1 / E;
    const double q = a == r ? 0.0 : lam / (lam + mu);
    pmf[a] = reach * (1 - q);
    reach *= q;
  }
  return pmf;
}

// Arrivals during fixed + exponential: given the total time t the count is
// Binomial(r, 1 - exp(-t/Z)) whatever the order of the parts, so take the
// fixed part first, then the race of the r - a1 still thinking.
inline std::vector<double> arrival_pmf(int r, const ServicePhase& ph, double Z) {
  const auto first = arrival_pmf_fixed(r, ph.fixed, Z);
  if (ph.exp_mean <= 0) return first;
  std::vector<double> pmf(r + 1, 0.0);
  for (int a1 = 0; a1 <= r; ++a1) {
    if (first[a1] == 0) continue;
    const auto second = arrival_pmf_exponential(r - a1, ph.exp_mean, Z);
    for (int a2 = 0; a2 <= r - a1; ++a2) pmf[a1 + a2] += first[a1] * second[a2];
  }
  return pmf;
}

inline double finite_source_throughput(int N, double Z, const ServiceLawFn& law) {
  if (N < 1 || Z <= 0) throw std::invalid_argument("finite_source: need N >= 1 and Z > 0");
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(N, N);
  Eigen::VectorXd mean_service(N);
  for (int i = 0; i < N; ++i) {
    const int m = std::max(i, 1);
    const ServiceLaw phases = law(m, i == 0);
    double mean = 0, total = 0;
    for (const auto& ph : phases) {
      const auto pmf = arrival_pmf(N - m, ph, Z);
      for (int a = 0; a <= N - m; ++a) P(i, m - 1 + a) += ph.prob * pmf[a];
      mean += ph.prob * ph.mean();
      total += ph.prob;
    }
    if (std::abs(total - 1) > 1e-12) throw std::invalid_argument("finite_source: service mixture weights must sum to 1");
    mean_service(i) = mean;
  }
  // pi (P - I) = 0 with one balance equation replaced by sum pi = 1.
  Eigen::MatrixXd A = P.transpose() - Eigen::MatrixXd::Identity(N, N);
  A.row(N - 1).setOnes();
  Eigen::VectorXd b = Eigen::VectorXd::Zero(N);
  b(N - 1) = 1;
  const Eigen::VectorXd pi = A.fullPivLu().solve(b);
  const double cycle = pi.dot(mean_service) + pi(0) * Z / N;
  return 1 / cycle;
}

// M/D/1//N: every service lasts exactly S.
inline double md1n_throughput(int N, double S, double Z) {
  return finite_source_throughput(N, Z, [S](int, bool) { return ServiceLaw{{1.0, S, 0.0}}; });
}

// The same solver with exponential service: must reproduce MVA exactly.
inline double mm1n_embedded_throughput(int N, double S, double Z) {
  return finite_source_throughput(N, Z, [S](int, bool) { return ServiceLaw{{1.0, 0.0, S}}; });
}

// ---------------------------------------------------------------------------
// M/E_k/1//N as a continuous-time Markov chain, a brute-force check of the
// embedded-chain solution: the service is k exponential phases of mean S/k
// each (Erlang-k, mean S, variance S^2/k), which tends to the fixed time S
// as k grows; the throughput is a continuous function of the service law, so
// X(E_k) -> X(D), with an error O(1/k) that Richardson extrapolation
// (2 X(E_2k) - X(E_k)) removes to first order.
// States: 0 (idle) and (n, phase) for n = 1..N customers, phase 1..k of the
// one in service.
inline double erlang_md1n_throughput(int N, double S, double Z, int k) {
  const int states = 1 + N * k;
  auto id = [k](int n, int ph) { return 1 + (n - 1) * k + (ph - 1); };
  std::vector<Eigen::Triplet<double>> t;  // generator Q, transposed: rows are "into"
  std::vector<double> out(states, 0.0);
  auto rate = [&](int from, int to, double r) {
    t.emplace_back(to, from, r);
    out[from] += r;
  };
  const double phase_rate = k / S;
  rate(0, id(1, 1), N / Z);
  for (int n = 1; n <= N; ++n)
    for (int ph = 1; ph <= k; ++ph) {
      const int s = id(n, ph);
      if (n < N) rate(s, id(n + 1, ph), (N - n) / Z);
      if (ph < k) rate(s, id(n, ph + 1), phase_rate);
      else rate(s, n == 1 ? 0 : id(n - 1, 1), phase_rate);
    }
  for (int s = 0; s < states; ++s) t.emplace_back(s, s, -out[s]);
  // Replace the balance equation of state 0 by the normalisation.
  std::vector<Eigen::Triplet<double>> t2;
  for (const auto& e : t)
    if (e.row() != 0) t2.push_back(e);
  for (int s = 0; s < states; ++s) t2.emplace_back(0, s, 1.0);
  Eigen::SparseMatrix<double> Q(states, states);
  Q.setFromTriplets(t2.begin(), t2.end());
  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu;
  lu.compute(Q);
  if (lu.info() != Eigen::Success) throw std::runtime_error("erlang_md1n: factorisation failed");
  Eigen::VectorXd b = Eigen::VectorXd::Zero(states);
  b(0) = 1;
  const Eigen::VectorXd p = lu.solve(b);
  double x = 0;
  for (int n = 1; n <= N; ++n) x += p(id(n, k)) * phase_rate;
  return x;
}

// ---------------------------------------------------------------------------
// The ticket-lock Markov model of Boyd-Wickizer, Kaashoek, Morris and
// Zeldovich, "Non-scalable locks are dangerous", Proceedings of the Linux
// Symposium, Ottawa, 2012, section 3 (Figure: "Markov model for a ticket
// spin lock for n cores").
//
// The definitions, as found with the search tool (the paper's own text is
// not in the reference corpus; these are close summaries of its section 3):
//  - dengguang2012/paper-Reading-Report, non_scalableLocksAreDangerous.md,
//    a section-by-section Chinese rendering of the paper: "the arrival
//    rate from k to k+1 waiting, a_k"; "if k cores are already waiting for
//    the lock, a_k = (n-k)/a"; "the service rate from k+1 to k, s_k"; "with
//    k requests for the lock's line from different cores, the time until
//    the winner gets the line is on average c*k/2 ... s_k = 1/(s+ck/2)";
//    "the steady state balances the transitions: P_k a_k = P_(k+1) s_k";
//    and the paper's validation: serial section 400 cycles, non-serial
//    section 12.5K to 200K cycles;
//  - a reading report whose figures come from LY-Dora/Dora_AOS2019_homework,
//    quoting the caption: "state i represents i cores holding or waiting
//    for the lock; a_i is the arrival rate of new cores when i cores are
//    already contending; s_i is the service rate when i+1 cores contend";
//  - course notes quoting "S_k = 1/(s + ck/2)" (several).
// So:
//   * n cores each loop: a non-critical section (exponential, mean a), then
//     the lock, then a serial section of length s;
//   * state k = 0..n: the number of cores holding or waiting for the lock;
//   * arrival rate in state k: a_k = (n - k) / a;
//   * service rate s_k = 1 / (s + c k / 2) is the rate from state k+1 down
//     to state k, k = the cores *waiting* (the holder not counted): the
//     holder's serial section s, then the handoff: at the release the k
//     waiters re-read the lock's line, its home directory answers them one
//     at a time (c each) and the next ticket holder is answered on average
//     after c k/2. With a holder and nobody waiting, s_0 = 1/s.
// It is a birth-death chain: P_{k+1} s_k = P_k a_k. The throughput (lock
// acquisitions per unit time) is the flow through the service transitions,
//   X = sum_{k=1..n} P_k s_{k-1}   ( = sum_k P_k a_k, the arrival flow),
// and the paper's "speedup" is the expected number of cores outside the
// lock, sum_k P_k (n - k) = a X.
// (Counting the holder in k, i.e. the rate 1/(s + c k/2) out of state k,
// would contradict the balance equation and the caption above, and give
// one core 1/(a + s + c/2) instead of 1/(a + s).)
inline std::vector<double> ticket_markov_stationary(int n, double a, double s, double c) {
  std::vector<double> up(n + 1), down(n + 1, 0.0);
  for (int k = 0; k <= n; ++k) {
    up[k] = (n - k) / a;
    if (k >= 1) down[k] = 1 / (s + c * (k - 1) / 2);
  }
  return birth_death_stationary(up, down);
}

inline double ticket_markov_throughput(int n, double a, double s, double c) {
  if (n < 1 || a <= 0 || s <= 0 || c < 0) throw std::invalid_argument("ticket_markov: need n >= 1, a > 0, s > 0, c >= 0");
  const auto p = ticket_markov_stationary(n, a, s, c);
  double x = 0;
  for (int k = 1; k <= n; ++k) x += p[k] / (s + c * (k - 1) / 2);
  return x;
}

// Largest relative error |sim/oracle - 1| bookkeeping for the tests.
struct WorstError {
  double err = 0;
  int at = 0;
  void add(double sim, double oracle, int n) {
    const double e = std::abs(sim / oracle - 1);
    if (e > err) {
      err = e;
      at = n;
    }
  }
};

}  // namespace vfssim::oracles
