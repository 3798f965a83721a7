// Owns one isl context. Each compilation has its own, so isl's context-wide
// scheduler options never leak between compilations (no global state).
#pragma once

#include <isl/cpp.h>

namespace tessel::poly {

class IslContext {
 public:
  IslContext();
  ~IslContext();
  IslContext(const IslContext&) = delete;
  IslContext& operator=(const IslContext&) = delete;
  isl::ctx ctx() const { return ctx_; }

 private:
  isl::ctx ctx_;
};

}  // namespace tessel::poly
