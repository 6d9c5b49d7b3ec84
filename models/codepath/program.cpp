#include "models/codepath/program.h"
#include "models/kernel/lock_kinds.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>

namespace vfssim::models {

std::string Program::chain(std::size_t pc) const {
  const Instr& in = code.at(pc);
  std::string s = symbols.at(in.symbol);
  for (int f = static_cast<int>(in.frame); f >= 0; f = frames[f].parent) {
    if (frames[f].name == s && f == static_cast<int>(in.frame)) continue;  // self time: no repeat
    if (frames[f].parent < 0 && frames[f].name == "loop") break;
    s += " <- " + frames[f].name;
  }
  return s;
}

namespace {

Instr make_instr(InstrKind kind, LockMode mode = LockMode::kExclusive, std::uint32_t slot = 0) {
  Instr in{};
  in.kind = kind;
  in.mode = mode;
  in.slot = slot;
  return in;
}

class Compiler {
 public:
  Compiler(const Strategy& s, const Params& params, std::size_t max) : s_(s), params_(params), max_(max) {}

  // One loop after the other, each ending in its end-of-iteration marker;
  // each role's loop has a root frame "loop" of its own.
  Program run(const std::vector<std::vector<std::string>>& loops) {
    p_.hz = s_.hz;
    for (const auto& loop : loops) {
      p_.entries.push_back(here());
      p_.frames.push_back({-1, "loop"});
      const auto root = static_cast<std::uint32_t>(p_.frames.size() - 1);
      for (const auto& op : loop) call(op, root, s_.ops.at(op).mark);
      emit(make_instr(InstrKind::kEndIteration), root, symbol("loop"), "", {});
    }
    return std::move(p_);
  }

 private:
  std::uint32_t symbol(const std::string& name) {
    auto [it, inserted] = symbol_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.symbols.size()));
    if (inserted) p_.symbols.push_back(name);
    return it->second;
  }

  std::uint32_t lock_slot(const std::string& name) {
    auto [it, inserted] = lock_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.locks.size()));
    if (inserted) {
      p_.locks.push_back(s_.locks.at(name));
      resolve_objects(p_.locks.back());
    }
    return it->second;
  }

  std::uint32_t line_slot(const std::string& name) {
    auto [it, inserted] = line_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.lines.size()));
    if (inserted) {
      p_.lines.push_back(s_.lines.at(name));
      resolve_objects(p_.lines.back());
      if (!p_.lines.back().on.empty()) (void)lock_slot(p_.lines.back().on);  // the line is that lock's word
    }
    return it->second;
  }

  void emit(Instr in, std::uint32_t frame, std::uint32_t sym, const std::string& detail, const SourceMark& mark) {
    if (p_.code.size() >= max_)
      throw ScenarioError(mark, "the code path of strategy '" + s_.name + "' grows past " + std::to_string(max_) +
                                    " instructions once calls and repeats are expanded",
                          "smaller repeat counts");
    in.frame = frame;
    in.symbol = sym;
    p_.code.push_back(in);
    p_.detail.push_back(detail);
    p_.fast_symbol.push_back(Program::kNoSymbol);
  }

  void call(const std::string& op, std::uint32_t parent, const SourceMark&) {
    const OpDef& def = s_.ops.at(op);
    p_.frames.push_back({static_cast<int>(parent), def.fn.empty() ? op : def.fn});
    const auto frame = static_cast<std::uint32_t>(p_.frames.size() - 1);
    steps(def.steps, frame);
  }

  std::uint32_t here() const { return static_cast<std::uint32_t>(p_.code.size()); }

  std::uint32_t seq_slot(const std::string& name) {
    auto [it, inserted] = seq_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.seqcounts.size()));
    if (inserted) {
      p_.seqcounts.push_back(s_.seqcounts.at(name));
      resolve_objects(p_.seqcounts.back());
    }
    return it->second;
  }

  std::uint32_t pool_slot(const std::string& name) {
    auto [it, inserted] = pool_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.pools.size()));
    if (inserted) {
      PoolDecl d = s_.pools.at(name);
      for (NumberRef* v : {&d.low, &d.high, &d.refill}) {
        if (!v->param.empty()) {
          const ParamValue& pv = param(v->param, d.mark);
          v->value = pv.number;
          v->span = pv.span;
        }
        v->param.clear();
        if (!(low_end(*v) >= 0))
          throw ScenarioError(d.mark, "pool '" + name + "' has a negative watermark or refill rate" + span_text(v->span), "numbers >= 0");
      }
      if (low_end(d.high) < high_end(d.low))  // a sample of both ranges must keep low <= high
        throw ScenarioError(d.mark, "the high watermark of pool '" + name + "' is below its low watermark" +
                                        (d.high.span.ranged || d.low.span.ranged ? " at the ends of their ranges" : ""),
                            "low <= high (and the high range above the low range)");
      p_.pools.push_back(d);
    }
    return it->second;
  }

  // A frame for `fn` under `frame`, or `frame` itself when fn is empty.
  std::uint32_t sub_frame(std::uint32_t frame, const std::string& fn) {
    if (fn.empty()) return frame;
    p_.frames.push_back({static_cast<int>(frame), fn});
    return static_cast<std::uint32_t>(p_.frames.size() - 1);
  }

  // A cmpxchg loop's instruction: `count` its retries, `aux` its relax.
  Instr cmpxchg_instr(InstrKind kind, std::uint32_t slot, const Step& st) {
    Instr in = make_instr(kind, LockMode::kExclusive, slot);
    in.count = st.retries;
    in.aux = st.relax ? 1 : 0;
    return in;
  }

  // The acquisition just emitted on lock `slot`, when it finds the lock free:
  // the kind's fast-path symbol, if it has one.
  void mark_fast(std::uint32_t slot) {
    if (const LockKind* k = find_lock_kind(p_.locks[slot].kind); k && k->fast_symbol)
      p_.fast_symbol.back() = symbol(k->fast_symbol);
  }

  void lock_section(const std::string& lock, LockMode mode, std::uint32_t f, const Step& st,
                    const std::vector<Step>* body, const TimeDist* hold) {
    const auto slot = lock_slot(lock);
    emit(make_instr(InstrKind::kAcquire, mode, slot), f, symbol(wait_symbol(p_.locks[slot].kind, mode)), lock, st.mark);
    mark_fast(slot);
    if (body) {
      steps(*body, f);
    } else {
      Instr h = make_instr(InstrKind::kCompute);
      h.time = *hold;
      emit(h, f, symbol(p_.frames[f].name), lock, st.mark);
    }
    emit(make_instr(InstrKind::kRelease, mode, slot), f, symbol(release_symbol(p_.locks[slot].kind, mode)), lock, st.mark);
  }

  void steps(const std::vector<Step>& list, std::uint32_t frame) {
    const std::string self = p_.frames[frame].name;  // a copy: frames grow below
    for (const auto& original : list) {
      if (!present(original)) continue;
      Step st = original;
      st.time = resolve(st.time, st.mark);
      if (!st.probability_param.empty())
        st.probability = number_param(st.probability_param, st.mark, "a probability", "a number from 0 to 1", false,
                                      [](double p) { return p >= 0 && p <= 1; });
      if (!st.count_param.empty())
        st.count = static_cast<int>(number_param(st.count_param, st.mark, "a repeat count", "a whole number from 0", true,
                                                 [](double c) { return c >= 0 && c <= 1e6 && c == static_cast<int>(c); }));
      const std::uint32_t sym = symbol(st.fn.empty() ? self : st.fn);
      switch (st.kind) {
        case StepKind::kCompute:
        case StepKind::kSleep: {
          Instr in = make_instr(st.kind == StepKind::kCompute ? InstrKind::kCompute : InstrKind::kSleep);
          in.time = st.time;
          emit(in, frame, sym, "", st.mark);
          break;
        }
        case StepKind::kLock:
          // A lock step taken inside `fn` shows as a frame of its own.
          lock_section(st.target, st.mode, sub_frame(frame, st.fn), st, st.has_body ? &st.body : nullptr, &st.time);
          break;
        case StepKind::kAtomic:
        case StepKind::kRead:
        case StepKind::kWrite:
        case StepKind::kSumPerCpu: {
          const auto slot = line_slot(st.target);
          const InstrKind k = st.kind == StepKind::kAtomic ? InstrKind::kAtomic
                              : st.kind == StepKind::kRead ? InstrKind::kLoad
                              : st.kind == StepKind::kWrite ? InstrKind::kStore
                                                           : InstrKind::kSumPerCpu;
          if (k == InstrKind::kSumPerCpu) p_.uses_sum = true;
          emit(make_instr(k, LockMode::kExclusive, slot), frame, sym, st.target, st.mark);
          break;
        }
        case StepKind::kCall:
          call(st.target, frame, st.mark);
          break;
        case StepKind::kRepeat:
          for (int i = 0; i < st.count; ++i) {
            const std::uint32_t before = here();
            steps(st.body, frame);
            if (here() == before) break;  // the body is empty under these parameters: so is every repeat
          }
          break;
        case StepKind::kBranch: {
          const std::uint32_t at = here();
          Instr br = make_instr(InstrKind::kBranch);
          br.p = st.probability;
          emit(br, frame, sym, "", st.mark);
          steps(st.body, frame);
          const std::uint32_t jump_at = here();
          emit(make_instr(InstrKind::kJump), frame, sym, "", st.mark);
          p_.code[at].jump = here();
          steps(st.else_body, frame);
          p_.code[jump_at].jump = here();
          break;
        }
        case StepKind::kPercpuAdd: {
          // this_cpu_add on the CPU's part; every `batch` adds, fold it
          // into the shared count under its spinlock (percpu_counter_add).
          const std::uint32_t at = here();
          Instr c = make_instr(InstrKind::kPercpuCount);
          c.count = st.count;
          c.aux = p_.percpu_counters++;
          emit(c, frame, sym, st.target, st.mark);
          const std::uint32_t f = sub_frame(frame, "__percpu_counter_add");
          const auto slot = lock_slot(st.lock);
          emit(make_instr(InstrKind::kAcquire, LockMode::kExclusive, slot), f,
               symbol(wait_symbol(p_.locks[slot].kind, LockMode::kExclusive)), st.lock, st.mark);
          mark_fast(slot);
          emit(make_instr(InstrKind::kAtomic, LockMode::kExclusive, line_slot(st.target)), f, symbol(p_.frames[f].name),
               st.target, st.mark);
          emit(make_instr(InstrKind::kRelease, LockMode::kExclusive, slot), f,
               symbol(release_symbol(p_.locks[slot].kind, LockMode::kExclusive)), st.lock, st.mark);
          p_.code[at].jump = here();
          break;
        }
        case StepKind::kLockref: {
          // lockref_get: cmpxchg loop on the lock+count word while the lock
          // is free (lib/lockref.c CMPXCHG_LOOP); held, or the tries
          // exhausted: the spinlock.
          // `fn:` names both (lockref_get_not_dead, lockref_put_return...);
          // a slow path with a body runs it under the spinlock.
          const auto slot = lock_slot(st.target);
          const std::uint32_t at = here();
          emit(cmpxchg_instr(InstrKind::kLockrefFast, slot, st), frame, symbol(st.fn.empty() ? "lockref_get" : st.fn),
               st.target, st.mark);
          lock_section(st.target, LockMode::kExclusive, sub_frame(frame, st.fn), st, st.has_body ? &st.body : nullptr,
                       &st.time);
          p_.code[at].jump = here();
          break;
        }
        case StepKind::kCmpxchg: {
          // A cmpxchg loop on the line; tries exhausted: the fallback steps.
          const std::uint32_t at = here();
          emit(cmpxchg_instr(InstrKind::kCmpxchg, line_slot(st.target), st), frame, sym, st.target, st.mark);
          steps(st.body, frame);
          p_.code[at].jump = here();
          break;
        }
        case StepKind::kSeqRead: {
          const auto slot = seq_slot(st.target);
          const std::uint32_t begin = here();
          emit(make_instr(InstrKind::kSeqBegin, LockMode::kShared, slot), frame, symbol("read_seqbegin"), st.target,
               st.mark);
          steps(st.body, frame);
          const std::uint32_t retry = here();
          Instr r = make_instr(InstrKind::kSeqRetry, LockMode::kShared, slot);
          r.jump = begin;
          r.count = st.count;
          emit(r, frame, symbol("read_seqretry"), st.target, st.mark);
          if (!st.lock.empty()) {  // read_seqbegin_or_lock: the body again, under the lock
            p_.code[retry].jump2 = here();
            lock_section(st.lock, LockMode::kExclusive, frame, st, &st.body, nullptr);
          }
          p_.code[retry].aux = here();
          break;
        }
        case StepKind::kSeqWrite: {
          const auto slot = seq_slot(st.target);
          emit(make_instr(InstrKind::kSeqWriteBegin, LockMode::kExclusive, slot), frame, symbol("write_seqcount_begin"),
               st.target, st.mark);
          steps(st.body, frame);
          emit(make_instr(InstrKind::kSeqWriteEnd, LockMode::kExclusive, slot), frame, symbol("write_seqcount_end"),
               st.target, st.mark);
          break;
        }
        case StepKind::kRcuRead:
          emit(make_instr(InstrKind::kRcuReadLock), frame, symbol("rcu_read_lock"), "", st.mark);
          steps(st.body, frame);
          emit(make_instr(InstrKind::kRcuReadUnlock), frame, symbol("rcu_read_unlock"), "", st.mark);
          break;
        case StepKind::kWalk: {
          const std::uint32_t f = sub_frame(frame, st.fn.empty() ? "link_path_walk" : st.fn);
          for (const auto& [hook, list] : expand_walk(st)) steps(list, hook ? sub_frame(f, hook) : f);
          break;
        }
        case StepKind::kDecAndLock: {
          // The atomic decrement; on the last reference (probability
          // `last`), the spinlock for the 1 -> 0 work.
          Step dec;
          dec.kind = StepKind::kAtomic;
          dec.target = st.target;
          dec.mark = st.mark;
          Step locked;
          locked.kind = StepKind::kLock;
          locked.target = st.lock;
          locked.time = st.time;
          locked.mark = st.mark;
          Step br;
          br.kind = StepKind::kBranch;
          br.probability = st.probability;
          br.body = {locked};
          br.has_body = true;
          br.mark = st.mark;
          steps({dec, br}, sub_frame(frame, st.fn.empty() ? "atomic_dec_and_lock" : st.fn));
          break;
        }
        case StepKind::kAlloc: {
          // The fast path jumps over the direct reclaim code path; the slow
          // path runs it and ends by handing its pages back.
          const auto slot = pool_slot(st.target);
          const std::uint32_t at = here();
          Instr a = make_instr(InstrKind::kPoolAlloc, LockMode::kExclusive, slot);
          a.count = st.count;
          a.aux = static_cast<std::uint32_t>(st.reclaimed);
          emit(a, frame, symbol(st.fn.empty() ? "__alloc_pages_nodemask" : st.fn), st.target, st.mark);
          const std::uint32_t f = sub_frame(frame, st.fn.empty() ? "__alloc_pages_nodemask" : st.fn);
          steps(st.body, f);
          Instr done = make_instr(InstrKind::kPoolReclaimed, LockMode::kExclusive, slot);
          done.count = st.count;
          done.aux = static_cast<std::uint32_t>(st.reclaimed);
          emit(done, f, symbol("get_page_from_freelist"), st.target, st.mark);
          p_.code[at].jump = here();
          break;
        }
        case StepKind::kSynchronizeRcu:
          p_.uses_rcu_gp = true;
          emit(make_instr(InstrKind::kSynchronizeRcu), frame, symbol("synchronize_rcu"), "", st.mark);
          break;
        case StepKind::kCallRcu: {
          p_.uses_rcu_gp = true;
          const std::uint32_t at = here();
          Instr c = make_instr(InstrKind::kCallRcu);
          c.time = st.time;
          emit(c, frame, symbol("call_rcu"), "", st.mark);
          if (st.has_body) {
            // The callback's steps follow, jumped over; they run from the
            // softirq's frames: "X <- fn <- rcu_do_batch <- rcu_process_callbacks".
            p_.code[at].aux = 1;
            p_.code[at].jump2 = here();
            p_.frames.push_back({-1, "rcu_process_callbacks"});
            const auto f = sub_frame(sub_frame(static_cast<std::uint32_t>(p_.frames.size() - 1), "rcu_do_batch"), st.target);
            steps(st.body, f);
            emit(make_instr(InstrKind::kCallbackEnd), f, symbol(p_.frames[f].name), "", st.mark);
            p_.code[at].jump = here();
          }
          break;
        }
      }
    }
  }

  // What perf shows for time spent releasing / waiting on a lock of this kind.
  static const char* release_symbol(const std::string& kind, LockMode mode) {
    const LockKind& k = *find_lock_kind(kind);
    return mode == LockMode::kShared ? k.release_symbol_shared : k.release_symbol;
  }
  static const char* wait_symbol(const std::string& kind, LockMode mode) {
    const LockKind& k = *find_lock_kind(kind);
    return mode == LockMode::kShared ? k.wait_symbol_shared : k.wait_symbol;
  }

  const ParamValue& param(const std::string& name, const SourceMark& mark) const {
    auto it = params_.find(name);
    if (it == params_.end())
      throw ScenarioError(mark, "parameter '" + name + "' has no value", "a parameter declared under 'params:'");
    return it->second;
  }
  // A number parameter that `use`s (a probability, a count): its value,
  // which `ok` accepts, as do both ends of its range (a sample of
  // --uncertainty draws between them); a count takes no range at all.
  template <class Ok>
  double number_param(const std::string& name, const SourceMark& mark, const std::string& use, const std::string& expected,
                      bool count, Ok ok) const {
    const ParamValue& v = param(name, mark);
    if (!ok(v.number)) throw ScenarioError(mark, "parameter '" + name + "' is not " + use, expected);
    if (v.span.ranged && count)
      throw ScenarioError(mark, "parameter '" + name + "' has a range" + span_text(v.span) + " and is " + use,
                          expected + " without a range (counts are not sampled)");
    if (v.span.ranged && !(ok(v.span.lo) && ok(v.span.hi)))
      throw ScenarioError(mark, "parameter '" + name + "' has a range" + span_text(v.span) + " that reaches past " + use,
                          "a range within " + expected);
    return v.number;
  }
  static std::string span_text(const Span& s) {
    if (!s.ranged) return "";
    char buf[64];
    std::snprintf(buf, sizeof buf, " [%.6g, %.6g]", s.lo, s.hi);
    return buf;
  }
  static double low_end(const NumberRef& v) { return v.span.ranged ? v.span.lo : v.value; }
  static double high_end(const NumberRef& v) { return v.span.ranged ? v.span.hi : v.value; }
  // `objects: $param` of a scope: object declaration, as its number; and
  // the instances of every such declaration the program uses, bounded in
  // all: each is allocated when a point starts (issue 29 item 1).
  template <class Decl>
  void resolve_objects(Decl& d) {
    ObjectSet& o = d.objects;
    if (!o.objects.param.empty()) {
      o.objects.value = number_param(o.objects.param, d.mark, "an object count", "a whole number from 1 to 1000000", true,
                                     [](double v) { return v >= 1 && v <= 1e6 && v == static_cast<int>(v); });
      o.objects.param.clear();
    }
    if (d.scope != Scope::kObject) return;
    object_instances_ += o.objects.value;
    if (object_instances_ > kMaxObjectInstances)
      throw ScenarioError(d.mark, "strategy '" + s_.name + "' uses " + std::to_string(static_cast<long long>(object_instances_)) +
                                      " object instances in all, with those of '" + d.name + "'",
                          "at most " + std::to_string(static_cast<long long>(kMaxObjectInstances)) +
                              " in all: locks, lines and seqcounts of scope object, a dentry counting 3 "
                              "(docs/scenario-format.md, \"Limits\")");
  }
  // ~1.5 kB an instance, whatever its kind (a lock is an AnyLock, the size of
  // the largest kind; scripts/memory_ceiling.py measured 10^6 qspinlocks and
  // 10^6 ticket locks in 1.5 GB each): about 1.8 GB in all.
  static constexpr double kMaxObjectInstances = 1200000;
  double object_instances_ = 0;
  TimeDist resolve(TimeDist t, const SourceMark& mark) const {
    if (!t.param.empty()) t.a = param(t.param, mark).time;
    return t;
  }
  bool present(const Step& st) const {
    if (st.when.empty()) return true;
    return param(st.when, st.mark).flag != st.when_negated;
  }

  // A walk's steps in order, in parts: the walk's own steps, and each
  // hook's steps under a frame of its own (inode_permission, d_revalidate).
  struct WalkOut {
    std::vector<std::pair<const char*, std::vector<Step>>> parts;
    void push_back(Step x) {
      if (parts.empty() || parts.back().first) parts.push_back({nullptr, {}});
      parts.back().second.push_back(std::move(x));
    }
    void hook(const char* frame, std::vector<Step> steps) { parts.push_back({frame, std::move(steps)}); }
  };

  // fs/namei.c as steps. ref-walk: take a reference on each component
  // (d_lock + d_count, or a lockref) and drop the previous one. rcu-walk:
  // read each component's d_seq, store nothing, and legitimise only the
  // last dentry. A component whose permission check refuses RCU mode
  // either drops to ref-walk where it stands (unlazy: take references on
  // the current dentry and go on) or, as with LOOKUP_FIRST in the 2010 tree,
  // throws the rcu-walk away and starts the whole walk again in ref-walk.
  //
  // The hooks, per component i, in link_path_walk's order: lookup_fast
  // finds path[i] (the component time, its reference or d_seq read) and
  // revalidates it; may_lookup then checks permission on it as the
  // directory the walk leaves. In rcu-walk a hook with `rcu: refuse`
  // returns -ECHILD: at may_lookup, try_to_unlazy takes a reference on
  // path[i] and the permission runs again in ref-walk; at lookup_fast,
  // try_to_unlazy_next takes references on the parent and on path[i], the
  // revalidate runs again, and the parent's reference is dropped when the
  // walk steps onto path[i]. With `on_refuse: restart` either refusal
  // throws the rcu-walk away instead.
  std::vector<std::pair<const char*, std::vector<Step>>> expand_walk(const Step& st) const {
    const WalkSpec& w = st.walk;
    const bool refusing = w.refuse_if.empty() || param(w.refuse_if, st.mark).flag;
    auto make = [&](StepKind k) {
      Step x;
      x.kind = k;
      x.mark = st.mark;
      return x;
    };
    auto get = [&](const std::string& d, WalkOut& out) {
      if (w.lockref) {
        Step x = make(StepKind::kLockref);
        x.target = d + ".d_lock";
        x.retries = w.lockref_retries;
        x.relax = w.lockref_relax;
        x.time = TimeDist::fixed(Duration{0});
        out.push_back(x);
      } else {
        Step a = make(StepKind::kAtomic);
        a.target = d + ".d_count";
        Step l = make(StepKind::kLock);
        l.target = d + ".d_lock";
        l.has_body = true;
        l.body = {a};
        out.push_back(l);
      }
    };
    // 2.6.32's dget (BUG_ON(!atomic_read)) and dput (atomic_read == 1, then
    // atomic_dec_and_lock's atomic_add_unless) load the count first: on a
    // contended line, a transfer of its own before the RMW's.
    auto count_read = [&](const std::string& d, WalkOut& out) {
      if (!w.count_reads) return;
      Step rd = make(StepKind::kRead);
      rd.target = d + ".d_count";
      out.push_back(rd);
    };
    auto put = [&](const std::string& d, WalkOut& out) {
      if (w.lockref || w.locked_put) {
        get(d, out);  // lockref_put_return, or d_count-- under d_lock: the same cost as a get
      } else {
        count_read(d, out);
        Step a = make(StepKind::kAtomic);  // atomic_dec_and_lock, never 1 -> 0 here
        a.target = d + ".d_count";
        out.push_back(a);
      }
    };
    auto component = [&](WalkOut& out) {
      Step c = make(StepKind::kCompute);
      c.time = resolve(w.component, st.mark);
      out.push_back(c);
    };
    auto permission = [&](std::size_t i, WalkOut& out) {
      if (hook_runs_on(w, w.permission, i)) out.hook("inode_permission", hook_steps_at(w.permission, w.path[i]));
    };
    auto revalidate = [&](std::size_t i, WalkOut& out) {
      if (hook_runs_on(w, w.revalidate, i)) out.hook("d_revalidate", hook_steps_at(w.revalidate, w.path[i]));
    };
    // The starting point (the root, or cwd) is pinned with dget: a plain
    // atomic increment, unless d_count lives under d_lock (locked_put).
    auto get_start = [&](const std::string& d, WalkOut& out) {
      if (w.lockref || w.locked_put) {
        get(d, out);
      } else {
        count_read(d, out);
        Step a = make(StepKind::kAtomic);
        a.target = d + ".d_count";
        out.push_back(a);
      }
    };
    auto ref_walk = [&](std::size_t from, bool have_ref_on_from, WalkOut& out) {
      if (!have_ref_on_from) {
        if (from == 0) get_start(w.path[from], out);
        else get(w.path[from], out);
      }
      for (std::size_t i = from + 1; i < w.path.size(); ++i) {
        permission(i - 1, out);
        component(out);
        get(w.path[i], out);
        revalidate(i, out);
        put(w.path[i - 1], out);
      }
      if (!w.keep_last) put(w.path.back(), out);
    };
    WalkOut out;
    if (!w.rcu) {
      ref_walk(0, false, out);
      return std::move(out.parts);
    }
    for (std::size_t i = 0; i < w.path.size(); ++i) {
      if (i > 0) component(out);
      Step r = make(StepKind::kSeqRead);
      r.target = w.path[i] + ".d_seq";
      r.count = -1;
      out.push_back(r);
      if (hook_runs_on(w, w.revalidate, i)) {
        if (!w.revalidate.refuse_rcu) {
          revalidate(i, out);
        } else if (w.restart) {
          ref_walk(0, false, out);
          return std::move(out.parts);
        } else {  // try_to_unlazy_next
          get(w.path[i - 1], out);
          get(w.path[i], out);
          revalidate(i, out);
          put(w.path[i - 1], out);
          ref_walk(i, true, out);
          return std::move(out.parts);
        }
      }
      const bool perm_here = hook_runs_on(w, w.permission, i);
      const bool refused = (refusing && std::find(w.refuse.begin(), w.refuse.end(), w.path[i]) != w.refuse.end()) ||
                           (perm_here && w.permission.refuse_rcu);
      if (refused) {
        if (w.restart) {
          ref_walk(0, false, out);  // everything so far was wasted
        } else {
          ref_walk(i, false, out);  // unlazy: reference here, go on in ref-walk (whose first step is the permission)
        }
        return std::move(out.parts);
      }
      permission(i, out);
    }
    get(w.path.back(), out);  // complete_walk: legitimise the last dentry
    if (!w.keep_last) put(w.path.back(), out);
    return std::move(out.parts);
  }

  const Strategy& s_;
  const Params& params_;
  std::size_t max_;
  Program p_;
  std::map<std::string, std::uint32_t> symbol_ids_, lock_ids_, line_ids_, seq_ids_, pool_ids_;
};

}  // namespace

Program compile_program(const Strategy& strategy, const std::vector<std::string>& loop, const Params& params,
                        std::size_t max_instructions) {
  return Compiler(strategy, params, max_instructions).run({loop});
}

Program compile_program(const Strategy& strategy, const Workload& workload, const Params& params,
                        std::size_t max_instructions) {
  return Compiler(strategy, params, max_instructions).run(workload.loops());
}

double zero_time_probability(const Program& program, const std::vector<std::string>& free_locks, std::size_t role) {
  // q[pc]: the probability that from `pc` the iteration reaches its end
  // with no time spent. Timed steps are 0, kEndIteration 1; the rest take
  // their successors' values. Start at 1 everywhere and iterate: jumps are
  // mostly forward (repeats are unrolled), so a pass in reverse order
  // settles them; a backward zero-time edge converges geometrically.
  const std::vector<Instr>& code = program.code;
  const std::size_t n = code.size();
  auto lock_is_free = [&](const Instr& in) {
    const std::string& name = program.locks.at(in.slot).name;
    return std::find(free_locks.begin(), free_locks.end(), name) != free_locks.end();
  };
  std::vector<double> q(n + 1, 1.0);
  auto at = [&](std::size_t pc) { return pc < n ? q[pc] : 1.0; };
  for (int pass = 0; pass < 1000; ++pass) {
    double change = 0;
    for (std::size_t i = n; i-- > 0;) {
      const Instr& in = code[i];
      double v = 0;
      switch (in.kind) {
        case InstrKind::kCompute:
        case InstrKind::kSleep:
          // A parameter's time was resolved at compile time into `a` (and `b`).
          v = (in.time.a > Duration{0} || in.time.b > Duration{0}) ? 0.0 : at(i + 1);
          break;
        case InstrKind::kBranch: v = in.p * at(i + 1) + (1 - in.p) * at(in.jump); break;
        case InstrKind::kJump: v = at(in.jump); break;
        case InstrKind::kEndIteration: v = 1; break;
        case InstrKind::kAcquire:
        case InstrKind::kRelease: v = lock_is_free(in) ? at(i + 1) : 0.0; break;
        case InstrKind::kRcuReadLock:
        case InstrKind::kRcuReadUnlock:
        // Shared steps that cost nothing themselves: call_rcu's callback runs
        // only after a grace period (a loop of call_rcu alone would queue
        // callbacks at one instant forever), and the pool's bookkeeping.
        case InstrKind::kPoolReclaimed: v = at(i + 1); break;
        case InstrKind::kCallRcu: v = at(in.aux ? in.jump : i + 1); break;  // over the callback's code
        case InstrKind::kPoolAlloc: v = std::max(at(i + 1), at(in.jump)); break;
        default: v = 0; break;  // a shared step: it costs the machine's time, and yields to the engine
      }
      change = std::max(change, std::abs(q[i] - v));
      q[i] = v;
    }
    if (change < 1e-12) break;
  }
  return n == 0 ? 1.0 : q[program.entries.at(role)];  // each role's loop ends at its own kEndIteration
}

}  // namespace vfssim::models
