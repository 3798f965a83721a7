#include "bench/OpenBlasPeer.h"

#include <algorithm>
#include <limits>

#include "bench/OperatorShapes.h"

#ifdef TESSEL_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace tessel::bench {

namespace {

const std::vector<PeerOperator>& openBlasOperators() {
  static const std::vector<PeerOperator> ops = {
      {"sgemm", "C(m,n) +=! A(m,k) * B(k,n)  (A or B may be read transposed)"},
      {"sgemm_batched", "C(b,m,n) +=! A(b,m,k) * B(b,k,n), one sgemm per batch entry"},
  };
  return ops;
}

#ifdef TESSEL_HAVE_OPENBLAS

class SgemmRun : public PreparedPeer {
 public:
  SgemmRun(const te::Program& p, const std::vector<runtime::Buffer>& in, bool batched)
      : shape_(matmulShape(p)), a_(in[shape_.aInput]), b_(in[shape_.bInput]) {
    if (shape_.batched != batched)
      throw PeerError(batched ? "sgemm_batched needs a batch dimension; use sgemm"
                              : "batched; use sgemm_batched");
    if (std::max({shape_.m, shape_.n, shape_.k}) > std::numeric_limits<int>::max())
      throw PeerError("a dimension exceeds cblas_sgemm's int");
    c_ = runtime::Buffer(te::DType::F32, p.outputs()[0]->shape);
    if (batched) notes.push_back("one cblas_sgemm call per batch entry");
  }

  void run() override {
    const MatmulShape& s = shape_;
    int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    // Leading dimensions of the operands as stored (row-major).
    int lda = s.transA ? m : k, ldb = s.transB ? k : n;
    const float* a = static_cast<const float*>(a_.data());
    const float* b = static_cast<const float*>(b_.data());
    float* c = static_cast<float*>(c_.data());
    for (int64_t i = 0; i < s.batch; ++i)
      cblas_sgemm(CblasRowMajor, s.transA ? CblasTrans : CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans,
                  m, n, k, 1.0f, a + i * s.m * s.k, lda, b + i * s.k * s.n, ldb, 0.0f, c + i * s.m * s.n, n);
  }
  std::vector<runtime::Buffer> outputs() override { return {c_}; }

 private:
  MatmulShape shape_;
  runtime::Buffer a_, b_, c_;
};

class OpenBlasFamily : public PeerFamily {
 public:
  std::string name() const override { return "openblas"; }
  std::vector<PeerOperator> operators() const override { return openBlasOperators(); }
  bool available() const override { return true; }
  std::string version() const override {
    const char* config = openblas_get_config();
    return std::string("OpenBLAS (") + (config ? config : "?") + ")";
  }
  void setThreads(int threads) override { openblas_set_num_threads(threads); }
  std::unique_ptr<PreparedPeer> prepare(const std::string& op, const te::Program& p,
                                        const std::vector<runtime::Buffer>& in) override {
    if (op == "sgemm" || op == "sgemm_batched")
      return std::make_unique<SgemmRun>(p, in, op == "sgemm_batched");
    throw PeerError("OpenBLAS has no operator '" + op + "'");
  }
};

#else

class OpenBlasFamily : public PeerFamily {
 public:
  std::string name() const override { return "openblas"; }
  std::vector<PeerOperator> operators() const override { return openBlasOperators(); }
  bool available() const override { return false; }
  std::string version() const override { return ""; }
  void setThreads(int) override {}
  std::unique_ptr<PreparedPeer> prepare(const std::string&, const te::Program&,
                                        const std::vector<runtime::Buffer>&) override {
    throw PeerError("Tessel was built without OpenBLAS (install libopenblas-dev and reconfigure)");
  }
};

#endif

}  // namespace

std::unique_ptr<PeerFamily> makeOpenBlasPeer() { return std::make_unique<OpenBlasFamily>(); }

}  // namespace tessel::bench
