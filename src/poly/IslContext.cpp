#include "poly/IslContext.h"

#include <isl/options.h>

namespace tessel::poly {

IslContext::IslContext() : ctx_(isl_ctx_alloc()) {
  // The C++ bindings turn isl errors into exceptions; keep isl itself quiet.
  isl_options_set_on_error(ctx_.get(), ISL_ON_ERROR_CONTINUE);
}

IslContext::~IslContext() { isl_ctx_free(ctx_.release()); }

}  // namespace tessel::poly
