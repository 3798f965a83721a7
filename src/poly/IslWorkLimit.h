// Runs one isl computation under a bound on its work: an operation quota
// (deterministic) and a wall-clock deadline. isl counts an operation per
// tableau pivot, but a pivot on a large tableau with big numbers can take
// milliseconds, so the quota alone does not bound time (a fuzzed 8-statement
// program spent 11 s in 100k operations of one scheduling ILP).
#pragma once

#include <isl/cpp.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace tessel::poly {

struct IslWorkLimit {
  unsigned long maxOperations = 0;        // 0 = no quota
  std::chrono::milliseconds deadline{0};  // 0 = no deadline
};

// Why a bounded computation stopped early.
enum class IslStop { None, Quota, Deadline };

template <typename T>
struct Bounded {
  std::optional<T> value;  // empty when stopped
  IslStop stop = IslStop::None;
};

// Runs `work` on `ctx` under `limit`. The deadline is enforced with
// isl_ctx_abort from a watchdog thread (isl's documented way to interrupt a
// computation); the context is usable again afterwards either way.
Bounded<isl::schedule> runBounded(isl::ctx ctx, const IslWorkLimit& limit,
                                  const std::function<isl::schedule()>& work);

}  // namespace tessel::poly
