#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "fuzz/ProgramModel.h"

namespace tessel::fuzz {

namespace {

// Awkward extents: 1, primes, just above powers of two.
constexpr int64_t kSizeValues[] = {1, 2, 3, 5, 7, 9, 13, 17, 31, 33, 65};
// Bounds that keep one program's interpretation and compilation quick.
constexpr int64_t kMaxElements = 20000;
constexpr int64_t kMaxWork = 200000;

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  ProgramModel run() {
    int nsizes = 1 + pick(4);
    for (int i = 0; i < nsizes; ++i) p_.sizes.push_back({"N" + std::to_string(i), kSizeValues[pick(11)]});
    int typeChoice = pick(20);
    type_ = typeChoice < 2 ? "double" : typeChoice < 4 ? "half" : typeChoice < 6 ? "int32" : "float";
    int ninputs = 1 + pick(3);
    for (int i = 0; i < ninputs; ++i) {
      TensorModel t;
      t.name = "I" + std::to_string(i);
      t.type = type_;
      t.input = true;
      t.dims = randomDims(i == 0 ? 1 + pick(3) : pick(4));
      p_.tensors.push_back(t);
      bound_.insert(t.dims.begin(), t.dims.end());
    }
    if (!isInteger() && chance(0.25)) addIndexInput();
    int nstatements = 1 + pick(8);
    for (int s = 0; s < nstatements; ++s) {
      bool accumulate = s > 0 && chance(0.12) && definedCount() > 0;
      bool castOut = s == nstatements - 1 && !isInteger() && chance(0.15);
      StatementModel st = accumulate ? accumulateStatement() : newStatement(castOut);
      p_.statements.push_back(st);
    }
    // The last definition and a few others are outputs; the rest are temporaries.
    p_.tensors[static_cast<size_t>(p_.statements.back().target)].output = true;
    for (auto& t : p_.tensors)
      if (!t.input && chance(0.3)) t.output = true;
    return p_;
  }

 private:
  int pick(int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng_)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  bool isInteger() const { return type_ == "int32"; }
  int64_t value(int size) const { return p_.sizes[static_cast<size_t>(size)].value; }
  const std::string& sizeName(int size) const { return p_.sizes[static_cast<size_t>(size)].name; }

  int definedCount() const {
    return static_cast<int>(std::count_if(p_.tensors.begin(), p_.tensors.end(), [this](const TensorModel& t) {
      return !t.input && t.type == type_;
    }));
  }

  // TC binds sizes through the inputs' shapes, so once the inputs exist,
  // other tensors only use sizes some input has.
  int randomSize() {
    if (bound_.empty()) return pick(static_cast<int>(p_.sizes.size()));
    auto it = bound_.begin();
    std::advance(it, pick(static_cast<int>(bound_.size())));
    return *it;
  }

  std::vector<int> randomDims(int rank) {
    std::vector<int> dims;
    int64_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      int s = randomSize();
      if (elements * value(s) > kMaxElements) break;
      elements *= value(s);
      dims.push_back(s);
    }
    return dims;
  }

  // Reads of the statement being built, and its reduction variables.
  struct Context {
    StatementModel st;
    std::vector<int> lhsDims;
    int reductions = 0;
    int64_t work = 1;
    int64_t reducedTerms = 1;  // terms each element of a reduction combines
  };

  // An int32 input read as an index of another tensor (T(J(i0), i1)): the
  // runner fills it with values inside the indexed dimension.
  void addIndexInput() {
    TensorModel t;
    t.name = "J";
    t.type = "int32";
    t.input = true;
    t.dims = randomDims(1 + pick(2));
    if (t.dims.empty()) return;
    index_ = static_cast<int>(p_.tensors.size());
    p_.tensors.push_back(t);
  }

  // `J(v...)` when every dimension of J has a statement variable over the same size.
  std::string indexRead(Context& c) {
    if (index_ < 0) return "";
    const TensorModel& j = p_.tensors[static_cast<size_t>(index_)];
    std::string text = j.name + "(";
    for (size_t d = 0; d < j.dims.size(); ++d) {
      auto it = std::find(c.lhsDims.begin(), c.lhsDims.end(), j.dims[d]);
      if (it == c.lhsDims.end()) return "";
      text += (d ? ", " : "") + c.st.lhs[static_cast<size_t>(it - c.lhsDims.begin())];
    }
    c.st.reads.push_back(index_);
    return text + ")";
  }

  std::string newReduction(Context& c, const std::string& extentText, int64_t extent) {
    std::string r = "r" + std::to_string(c.reductions++);
    c.st.where.push_back(r + " in 0:" + extentText);
    c.work *= extent;
    c.reducedTerms *= extent;
    return r;
  }

  // A quasi-affine index of a dimension of extent `e` from variable `v` in
  // 0:d (upsampling `v / k`, periodic `v % k`, and numerators that go
  // negative, which truncate toward zero as in C), or "" when none stays in
  // 0:e for every v.
  std::string quotientIndex(const std::string& v, int64_t d, int64_t e) {
    int64_t k = 2 + pick(3);
    switch (pick(4)) {
      case 0:
        if ((d - 1) / k < e) return v + " / " + std::to_string(k);
        break;
      case 1:
        if (k <= e) return v + " % " + std::to_string(k);
        break;
      case 2:  // -1 / k is 0: the first two rows read the same element
        if ((d - 2) / k < e) return "(" + v + " - 1) / " + std::to_string(k);
        break;
      default:  // C's remainder of a negative numerator is negative: the offset keeps it in range
        if (2 * k - 2 < e) return "(" + v + " - 1) % " + std::to_string(k) + " + " + std::to_string(k - 1);
        break;
    }
    return "";
  }

  // One read of tensor `src`, indexed from the statement's variables.
  std::string read(Context& c, int src) {
    const TensorModel& t = p_.tensors[static_cast<size_t>(src)];
    c.st.reads.push_back(src);
    if (t.dims.empty()) return t.name;
    std::vector<std::string> idx;
    std::string guard;
    for (int e : t.dims) {
      std::vector<size_t> same;  // LHS variables over the same size
      for (size_t j = 0; j < c.lhsDims.size(); ++j)
        if (c.lhsDims[j] == e) same.push_back(j);
      int choice = pick(10);
      if (choice == 9 && chance(0.5)) {
        std::string viaIndex = indexRead(c);
        if (!viaIndex.empty()) {
          idx.push_back(viaIndex);
          continue;
        }
      }
      if (!same.empty() && choice < 5) {
        size_t j = same[static_cast<size_t>(pick(static_cast<int>(same.size())))];
        const std::string& v = c.st.lhs[j];
        if (choice == 0) {
          idx.push_back(sizeName(e) + " - 1 - " + v);  // reversed
        } else if (choice == 1 && value(e) > 1) {      // shifted stencil read, guarded
          idx.push_back(v + " + 1");
          guard += (guard.empty() ? "" : " && ") + v + " + 1 < " + sizeName(e);
        } else {
          idx.push_back(v);
        }
        continue;
      }
      if (!c.lhsDims.empty() && choice < 7) {
        size_t j = static_cast<size_t>(pick(static_cast<int>(c.lhsDims.size())));
        int d = c.lhsDims[j];
        const std::string& v = c.st.lhs[j];
        if (choice == 5 && value(e) >= value(d) && c.work * (value(e) - value(d) + 1) <= kMaxWork) {
          // Convolution-like window: v + r with r in 0:e-d+1.
          std::string r =
              newReduction(c, sizeName(e) + " - " + sizeName(d) + " + 1", value(e) - value(d) + 1);
          idx.push_back(v + " + " + r);
          continue;
        }
        if (choice == 6 && chance(0.5)) {
          std::string q = quotientIndex(v, value(d), value(e));
          if (!q.empty()) {
            idx.push_back(q);
            continue;
          }
        }
        if (choice == 6 && 2 * (value(d) - 1) < value(e)) {
          idx.push_back("2 * " + v);  // strided
          continue;
        }
      }
      if (choice < 9 && c.work * value(e) <= kMaxWork) {
        idx.push_back(newReduction(c, sizeName(e), value(e)));
        continue;
      }
      idx.push_back("0");  // a slice: broadcast of one element along this dimension
    }
    std::string text = t.name + "(";
    for (size_t d = 0; d < idx.size(); ++d) text += (d ? ", " : "") + idx[d];
    text += ")";
    return guard.empty() ? text : "((" + guard + ") ? " + text + " : 0)";
  }

  // Bounded elementwise functions keep values near [-2, 2], so tolerances and
  // reductions (including products) stay meaningful.
  std::string unaryOf(const std::string& x) {
    if (isInteger()) {
      // Integer arithmetic wraps (two's complement) in kernels and interpreter alike.
      switch (pick(6)) {
        case 0:
          return "-" + x;
        case 1:
          return "(" + x + " > 0 ? " + x + " : 0)";
        case 2:
          return "(" + x + " / 3)";
        case 3:
          return "(" + x + " * 3)";
        default:
          return x;
      }
    }
    switch (pick(9)) {
      case 0:
        return "-" + x;
      case 1:
        return "tanh(" + x + ")";
      case 2:
        return "fmax(" + x + ", 0)";
      case 3:
        return "fabs(" + x + ")";
      case 4:
        return "sigmoid(" + x + ")";
      case 5:
        return "exp(tanh(" + x + "))";
      case 6:
        return "(" + x + " * 0.5)";
      default:
        return x;
    }
  }

  std::string combine(const std::string& a, const std::string& b) {
    if (isInteger()) {
      switch (pick(5)) {
        case 0:
          return "(" + a + " + " + b + ")";
        case 1:
          return "(" + a + " - " + b + ")";
        case 2:
          return "(" + a + " * " + b + ")";
        case 3:
          return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
        default:
          return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
      }
    }
    switch (pick(6)) {
      case 0:
        return "(" + a + " + " + b + ")";
      case 1:
        return "(" + a + " - " + b + ")";
      case 2:
        return "(" + a + " * " + b + ")";
      case 3:
        return "fmax(" + a + ", " + b + ")";
      case 4:
        return "fmin(" + a + ", " + b + ")";
      default:
        return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    }
  }

  int randomSource() {
    // Prefer recent definitions (chains), but any earlier tensor may be read.
    std::vector<int> pool;
    for (size_t i = 0; i < p_.tensors.size(); ++i)
      if (p_.tensors[i].type == type_) pool.push_back(static_cast<int>(i));
    if (pool.size() > 1 && chance(0.5)) return pool.back();
    return pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))];
  }

  Context startStatement(int target, const std::vector<int>& dims) {
    Context c;
    c.st.target = target;
    c.lhsDims = dims;
    for (size_t j = 0; j < dims.size(); ++j) {
      c.st.lhs.push_back("i" + std::to_string(j));
      c.st.where.push_back(c.st.lhs.back() + " in 0:" + sizeName(dims[j]));
      c.work *= value(dims[j]);
    }
    return c;
  }

  std::string rhsOf(Context& c) {
    std::string rhs = unaryOf(read(c, randomSource()));
    int terms = pick(3);
    for (int k = 0; k < terms; ++k) rhs = combine(rhs, unaryOf(read(c, randomSource())));
    return rhs;
  }

  StatementModel newStatement(bool castOut) {
    TensorModel t;
    t.name = "T" + std::to_string(p_.tensors.size());
    t.type = type_;
    t.dims = randomDims(pick(4));
    int target = static_cast<int>(p_.tensors.size());
    Context c = startStatement(target, t.dims);
    // A plain product of two reads (with reductions, a contraction: matmul- or
    // convolution-like, which micro-kernels implement), else any expression.
    std::string rhs = type_ == "float" && !castOut && chance(0.2)
                          ? read(c, randomSource()) + " * " + read(c, randomSource())
                          : rhsOf(c);
    if (c.reductions > 0) {
      static const char* const kOps[] = {"+=!", "+=!", "max=!", "min=!", "*=!"};
      c.st.op = kOps[pick(5)];
      // A product of integers cast from floats is ill-conditioned: one factor
      // truncated one lower (an ulp of its float) changes the whole wrapped
      // product (fuzz seed 15153418990505569392).
      if (castOut && c.st.op == "*=!") c.st.op = "+=!";
      // Each factor within 1 +- 1/(8K) of 1, so a product of K of them stays within e^(+-1/8): an
      // unbounded product overflows f16/f32 where the interpreter's double does not, and such
      // ill-conditioned outputs say nothing about the compiler (fuzz seed 6031973878037822033).
      if (c.st.op == "*=!" && !isInteger())
        rhs = "(1 + tanh(" + rhs + ") / " + std::to_string(8 * c.reducedTerms) + ")";
    }
    if (castOut) {
      // A typed integer output of a quantized value.
      t.type = "int32";
      rhs = "int32(" + rhs + " * 8)";
    }
    c.st.rhs = rhs;
    p_.tensors.push_back(t);
    return c.st;
  }

  // `T(i) += ...` / `T(i) max= ...` onto a tensor an earlier statement wrote.
  StatementModel accumulateStatement() {
    std::vector<int> defined;
    for (size_t i = 0; i < p_.tensors.size(); ++i)
      if (!p_.tensors[i].input && p_.tensors[i].type == type_) defined.push_back(static_cast<int>(i));
    int target = defined[static_cast<size_t>(pick(static_cast<int>(defined.size())))];
    Context c = startStatement(target, p_.tensors[static_cast<size_t>(target)].dims);
    std::string rhs = rhsOf(c);
    // Reads of the target itself are only allowed at the written point.
    auto& reads = c.st.reads;
    if (std::find(reads.begin(), reads.end(), target) != reads.end()) {
      c.st.reads.clear();
      c.reductions = 0;
      c.st.where.resize(c.st.lhs.size());
      rhs = unaryOf(read(c, 0));
    }
    c.st.op = pick(2) ? "+=" : "max=";
    // Float literals promote half to float, and a float value does not narrow into half implicitly.
    c.st.rhs = type_ == "half" ? "half(" + rhs + ")" : rhs;
    return c.st;
  }

  std::mt19937_64 rng_;
  ProgramModel p_;
  std::string type_;
  std::set<int> bound_;  // sizes some input's shape binds
  int index_ = -1;       // the int32 index input, if any
};

}  // namespace

ProgramModel generateProgram(uint64_t seed) { return Generator(seed).run(); }

std::string render(const ProgramModel& p) {
  std::ostringstream os;
  os << "# sizes:";
  for (const auto& s : p.sizes) os << " " << s.name << "=" << s.value;
  os << "\ndef " << p.name << "(";
  auto shape = [&](const TensorModel& t) {
    std::string s = t.type;
    if (!t.dims.empty()) {
      s += "(";
      for (size_t d = 0; d < t.dims.size(); ++d)
        s += (d ? "," : "") + p.sizes[static_cast<size_t>(t.dims[d])].name;
      s += ")";
    }
    return s + " " + t.name;
  };
  bool first = true;
  for (const auto& t : p.tensors)
    if (t.input) {
      os << (first ? "" : ", ") << shape(t);
      first = false;
    }
  os << ") -> (";
  first = true;
  for (const auto& t : p.tensors)
    if (t.output) {
      // Float outputs take their type from their definition; others are typed.
      os << (first ? "" : ", ") << (t.type == "int32" ? shape(t) : t.name);
      first = false;
    }
  os << ") {\n";
  for (const auto& st : p.statements) {
    os << "  " << p.tensors[static_cast<size_t>(st.target)].name;
    if (!st.lhs.empty()) {
      os << "(";
      for (size_t j = 0; j < st.lhs.size(); ++j) os << (j ? ", " : "") << st.lhs[j];
      os << ")";
    }
    os << " " << st.op << " " << st.rhs;
    for (size_t w = 0; w < st.where.size(); ++w) os << (w ? ", " : " where ") << st.where[w];
    os << "\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace tessel::fuzz
