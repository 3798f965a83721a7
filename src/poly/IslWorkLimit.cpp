#include "poly/IslWorkLimit.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace tessel::poly {

namespace {

// Calls isl_ctx_abort(ctx) once the deadline passes unless cancelled first.
class Watchdog {
 public:
  Watchdog(isl_ctx* ctx, std::chrono::milliseconds deadline) {
    if (deadline.count() <= 0) return;
    thread_ = std::thread([this, ctx, deadline] {
      std::unique_lock lock(mutex_);
      if (!cv_.wait_for(lock, deadline, [this] { return cancelled_; })) isl_ctx_abort(ctx);
    });
  }
  ~Watchdog() { cancel(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void cancel() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool cancelled_ = false;
  std::thread thread_;
};

}  // namespace

Bounded<isl::schedule> runBounded(isl::ctx ctx, const IslWorkLimit& limit,
                                  const std::function<isl::schedule()>& work) {
  isl_ctx* c = ctx.get();
  isl_ctx_reset_error(c);  // a stale quota error would relabel a later one
  isl_ctx_reset_operations(c);
  isl_ctx_set_max_operations(c, limit.maxOperations);
  Bounded<isl::schedule> result;
  {
    Watchdog watchdog(c, limit.deadline);
    try {
      result.value = work();
    } catch (const isl::exception_quota&) {
      result.stop = IslStop::Quota;
    } catch (const isl::exception&) {
      if (isl_ctx_last_error(c) == isl_error_quota) {
        // A C call that ran out of operations returns NULL, which the C++
        // bindings report as an invalid input.
        result.stop = IslStop::Quota;
      } else if (!isl_ctx_aborted(c)) {
        // Not the abort: an interrupted computation may report a follow-on
        // error, anything else is a real error.
        isl_ctx_set_max_operations(c, 0);
        throw;
      } else {
        result.stop = IslStop::Deadline;
      }
    }
    watchdog.cancel();
  }
  // The watchdog may have fired just after the work finished: the result
  // stands, but the context must not stay aborted.
  if (isl_ctx_aborted(c)) isl_ctx_resume(c);
  if (result.stop != IslStop::None) isl_ctx_reset_error(c);
  isl_ctx_set_max_operations(c, 0);
  return result;
}

}  // namespace tessel::poly
