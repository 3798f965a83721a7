#include "microkernel/SchemeRanking.h"

#include <algorithm>
#include <set>

#include "microkernel/Composition.h"
#include "microkernel/SchemeCodegen.h"

namespace tessel::microkernel {

namespace {

// Of the enumerated schemes, the share with the longest accumulation loops kept (paper 002 §2.4).
constexpr double kAccumulationShare = 0.4;
// Coverings of the unrolled dimension tried per class, and tile sizes per dimension.
constexpr size_t kCoveringsPerClass = 3;
// Shares of their family's best that a measured table's kernels are taken
// from, in turn, when its classes cover none of the contraction.
constexpr double kWiderClassShares[] = {0.7, 0.5, 0};
// A register tile's panel of the vector operand read in place from rows this
// long or longer (the weights Wt(r, s, c, k) of an NHWC convolution with K >=
// 256) is pieces of one or two vectors a row apart: a kilobyte or more, a
// multiple of 4 KiB at K = 1024, so they crowd into few sets of L1 and touch
// a page each. The byte counts of the model do not see it; measured on the
// Zen 5 VM, laying the panel out (L_Wt(k/32, ...)) was 1.2-1.7x faster (yolo_18
// 30 -> 17 ms, resnet_12 2.3 -> 1.5, yolo_12 18 -> 16), so such candidates
// rank as if they moved this much more.
constexpr int64_t kLongPanelRowBytes = 1024;
constexpr double kStridedPanelPenalty = 1.5;
// Rows of the unrolled dimension per packed block (BLIS's mc), at least and at most.
constexpr int64_t kMinBlockRows = 48;
constexpr int64_t kMaxBlockRows = 256;

std::vector<microkernel::CacheLevel> cacheLevels(const target::Hardware& hardware) {
  std::vector<microkernel::CacheLevel> levels;
  const auto& memory = hardware.memory;
  for (size_t i = 0; i < memory.size(); ++i) {
    if (memory[i].managed || memory[i].capacityBytes <= 0 || memory[i].name == "DRAM") continue;
    // Filling a level costs the inverse of the bandwidth of the one behind it;
    // unknown bandwidths count 4x per level outwards.
    double next = i + 1 < memory.size() ? memory[i + 1].bandwidthPerCoreBytesPerS : 0;
    double cost = next > 0 ? 1e9 / next : static_cast<double>(1 << (2 * levels.size()));
    levels.push_back({memory[i].name, static_cast<double>(memory[i].capacityBytes), cost});
  }
  if (levels.empty()) levels.push_back({"L1", 32 * 1024, 1});
  return levels;
}

// FMAs in flight that keep both FMA ports busy: latency (4 cycles on Zen 4/5
// and on Intel since Skylake-X) times the 2 ports. Fewer accumulators leave
// the ports idle while each waits for its previous result.
constexpr double kIndependentFmasNeeded = 8;

// One step of the register tile issues an FMA per accumulator and a load
// per distinct operand value (vectors and broadcasts); both go through two
// ports on the AVX-512 cores Tessel targets (Zen 4/5, Ice Lake and later),
// so a tile with more loads than FMAs runs at FMAs / loads of the FMA rate
// (8 rows x 1 vector: 8 FMAs, 9 loads), and one with fewer than
// kIndependentFmasNeeded accumulators at accumulators / that (a short
// dimension's one tile: 7 rows x 1 vector). The mean over the lambda bindings.
double fmaShareOfIssue(const microkernel::BoundScheme& b) {
  double sum = 0;
  std::vector<microkernel::Bindings> bindings = b.allBindings();
  for (const auto& binding : bindings) {
    microkernel::RegisterTileShape tile = b.registerTile(binding);
    microkernel::Extents first = tile.steps.empty() ? microkernel::Extents{} : tile.steps.front();
    auto fmas = static_cast<double>(tile.accumulators.size());
    auto loads = static_cast<double>(microkernel::distinctOffsets(b.contraction->lhs, tile, first).size() +
                                     microkernel::distinctOffsets(b.contraction->rhs, tile, first).size());
    sum += fmas / std::max({fmas, loads, 1.0}) * std::min(1.0, fmas / kIndependentFmasNeeded);
  }
  return bindings.empty() ? 1 : sum / static_cast<double>(bindings.size());
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// The largest divisor of n that is at most `bound` (1 if none).
int64_t divisorAtMost(int64_t n, int64_t bound) {
  int64_t best = 1;
  for (int64_t d : divisors(n))
    if (d <= bound) best = d;
  return best;
}

std::string loop(const char* kind, int64_t trips, const std::string& dim) {
  return std::string(kind) + "_{" + std::to_string(trips) + "," + dim + "}";
}

struct Roles {
  std::string vector, unrolled;      // unrolled: "" when the contraction has one output dimension
  std::vector<std::string> windows;  // reduction dimensions of extent 3 (r, s), at most two
  std::string channel;               // the longest other reduction dimension ("" if none)
  std::vector<std::string> outerOutputs, outerReductions;
};

class Enumerator {
 public:
  Enumerator(const Contraction& c, const MicroKernelTable& table, const microkernel::VectorIsa& isa,
             std::vector<microkernel::CacheLevel> levels)
      : c_(c), table_(table), isa_(isa), levels_(std::move(levels)) {}

  std::vector<SchemeCandidate> run(std::string& whyNone) {
    std::vector<std::string> vectorDims = c_.vectorizableDims(isa_.lanes);
    int64_t contiguousExtent = 0;  // the longest output dimension the output is contiguous along
    for (const auto& d : c_.dims)
      if (!d.reduction && c_.output.stride(d.name) == 1)
        contiguousExtent = std::max(contiguousExtent, d.extent);
    for (const auto& d : c_.dims) {
      if (std::find(vectorDims.begin(), vectorDims.end(), d.name) != vectorDims.end()) continue;
      // A whole number of vectors, or (AVX-512) partial vectors at the end.
      if (d.extent % isa_.lanes != 0 && isa_.name != "avx512") continue;
      int strided = stridedOperands(d);
      if (d.reduction || strided < 0) continue;
      // Writing the output laid out pays for a copy: only when the output's
      // rows are too short to fill two vectors (w = 7..28 in NCHW), or the
      // contraction slides a window along them (a convolution's w: its
      // vectors along w are unaligned loads, one per row of its register
      // tile, where vectors along k are aligned weights shared by every
      // row), for a dimension with whole vectors at least as long (k; never
      // a batch of 1). A matmul's longer rows vectorize well as they are (N
      // = 700).
      if (c_.output.stride(d.name) != 1 && ((contiguousExtent >= 2 * isa_.lanes && !slidesWindow()) ||
                                            d.extent < isa_.lanes || d.extent < contiguousExtent))
        continue;
      vectorDims.push_back(d.name);
      if (strided > 0) layoutToVectorize_.insert(d.name);
    }
    if (vectorDims.empty()) {
      whyNone =
          "no output dimension along which the output is contiguous and the operands contiguous or invariant "
          "(or one of them could be laid out so)" +
          (isa_.name == "avx512" ? std::string()
                                 : ", and whose extent is a multiple of " + std::to_string(isa_.lanes));
      return {};
    }
    for (const auto& v : vectorDims) {
      outputLayout_ = outputLayoutFor(v);
      std::vector<std::string> unrolled;
      for (const auto& d : c_.dims)
        if (!d.reduction && d.name != v && d.extent > 1) unrolled.push_back(d.name);
      if (unrolled.empty()) unrolled.push_back("");
      for (const auto& u : unrolled) enumerateRoles(rolesFor(v, u));
    }
    if (candidates_.empty()) whyNone = "no micro-kernel class of this machine fits the contraction's extents";
    // The longest accumulation loops first; keep that share, then sort it by modelled movement.
    std::stable_sort(candidates_.begin(), candidates_.end(),
                     [](const SchemeCandidate& a, const SchemeCandidate& b) {
                       double la = a.model.accumulationLength, lb = b.model.accumulationLength;
                       // Among equally long ones, the cut keeps the least modelled movement.
                       return la != lb ? la > lb : rankedBefore(a, b);
                     });
    size_t keep = std::max<size_t>(
        1, static_cast<size_t>(kAccumulationShare * static_cast<double>(candidates_.size())));
    if (candidates_.size() > keep) candidates_.resize(keep);
    std::stable_sort(candidates_.begin(), candidates_.end(), rankedBefore);
    return candidates_;
  }

 private:
  Roles rolesFor(const std::string& v, const std::string& u) const {
    Roles r{v, u, {}, "", {}, {}};
    int64_t longest = 0;
    for (const auto& d : c_.dims) {
      if (!d.reduction) {
        if (d.name != v && d.name != u) r.outerOutputs.push_back(d.name);
        continue;
      }
      if (d.extent == 3 && r.windows.size() < 2) {
        r.windows.push_back(d.name);
      } else if (d.extent > longest) {
        if (!r.channel.empty()) r.outerReductions.push_back(r.channel);
        r.channel = d.name;
        longest = d.extent;
      } else {
        r.outerReductions.push_back(d.name);
      }
    }
    return r;
  }

  void enumerateRoles(const Roles& roles) {
    int64_t vExtent = c_.dim(roles.vector)->extent;
    int64_t uExtent = roles.unrolled.empty() ? 1 : c_.dim(roles.unrolled)->extent;
    for (const auto& cls : table_.classes) {
      const MicroKernelFamily* family = microKernelFamily(cls.family);
      if (!family) continue;
      // Window loops to unroll: family C unrolls the first (r), B the second (s), D both.
      std::vector<std::string> unrolledWindows;
      if (family->unrollsR) {
        if (roles.windows.empty()) continue;
        unrolledWindows.push_back(roles.windows[0]);
      }
      if (family->unrollsS) {
        if (roles.windows.size() < (family->unrollsR ? 2u : 1u)) continue;
        unrolledWindows.push_back(roles.windows[family->unrollsR ? 1 : 0]);
      }
      int64_t block = int64_t{cls.alpha} * isa_.lanes;
      // Not a whole number of tiles: alpha vectors of fewer lanes cover the end (AVX-512 masks).
      std::string vectorLambda;
      laneShare_ = 1;
      if (vExtent % block != 0) {
        if (isa_.name != "avx512" || vExtent % cls.alpha != 0) continue;
        int64_t lanes = vExtent / cls.alpha, whole = lanes / isa_.lanes, tail = lanes % isa_.lanes;
        laneShare_ = static_cast<double>(lanes) / static_cast<double>((whole + (tail > 0)) * isa_.lanes);
        vectorLambda = whole == 0 ? std::to_string(tail)
                                  : "lambda_" + roles.vector + " v.[(" + std::to_string(whole) + "," +
                                        std::to_string(isa_.lanes) + "),(1," + std::to_string(tail) + ")]";
      }
      std::vector<microkernel::Covering> covers;
      if (roles.unrolled.empty()) {
        covers.push_back({1, 1, 1, 0, 0});
      } else {
        covers = microkernel::coverings(uExtent, cls.betaMin, cls.betaMax, kCoveringsPerClass);
        // Blocks of the unrolled dimension whose packed rows stay in L2 (BLIS's
        // mc): the covering with the fewest tiles for each such block count.
        for (int64_t blocks = 2; blocks <= uExtent; ++blocks) {
          if (uExtent % blocks != 0 || uExtent / blocks > kMaxBlockRows || uExtent / blocks < kMinBlockRows)
            continue;
          std::vector<microkernel::Covering> inBlock =
              microkernel::coverings(uExtent / blocks, cls.betaMin, cls.betaMax, 1);
          if (inBlock.empty()) continue;
          microkernel::Covering blocked = inBlock.front();
          blocked.outer *= blocks;
          covers.push_back(blocked);
        }
        // A dimension shorter than the class: one tile of its whole extent (paper 002 §4's fallback).
        if (covers.empty() && uExtent < cls.betaMin) covers.push_back({1, uExtent, 1, 0, 0});
      }
      for (const auto& cover : covers)
        enumerateTiles(roles, cls.alpha, cover, unrolledWindows, vectorLambda.empty() ? vExtent / block : 1,
                       vectorLambda);
    }
  }

  // `partial`: "" (whole vectors, vTiles tiles of them), the lane count of
  // the one tile, or a lambda over the vector dimension binding v, the lanes
  // of each tile's vectors.
  void enumerateTiles(const Roles& roles, int alpha, const microkernel::Covering& cover,
                      const std::vector<std::string>& unrolledWindows, int64_t vTiles,
                      const std::string& partial) {
    panelOperand_ = vectorOperand(roles);
    panelRowsLong_ = longRows(roles);
    unrolledOutputStride_ = roles.unrolled.empty() ? 0 : c_.output.stride(roles.unrolled);
    // The register tile, innermost.
    std::string tile;
    for (const auto& w : unrolledWindows) tile += loop("U", 3, w) + ", ";
    if (!roles.unrolled.empty())
      tile +=
          cover.composed() ? "U_{b," + roles.unrolled + "}, " : loop("U", cover.size1, roles.unrolled) + ", ";
    bool lambda = partial.rfind("lambda", 0) == 0;
    tile +=
        loop("U", alpha, roles.vector) + ", " +
        (partial.empty() ? "V_" + roles.vector : "V_{" + (lambda ? "v" : partial) + "," + roles.vector + "}");
    // Window loops not unrolled.
    std::string windows;
    for (const auto& w : roles.windows)
      if (std::find(unrolledWindows.begin(), unrolledWindows.end(), w) == unrolledWindows.end())
        windows += loop("T", 3, w) + ", ";
    std::string others;
    for (const auto& d : roles.outerOutputs) others += "R_" + d + ", ";
    for (const auto& d : roles.outerReductions) others += "R_" + d + ", ";
    // The unrolled dimension: the covering's repetitions outside, its tiles inside.
    std::string uOuter, uInner;
    if (!roles.unrolled.empty()) {
      int64_t inner = cover.composed() ? 0 : cover.count1;
      if (cover.composed()) {
        uOuter = cover.outer > 1 ? loop("T", cover.outer, roles.unrolled) + ", " : "";
        microkernel::Covering one = cover;
        one.outer = 1;
        uInner = microkernel::coveringScheme(one, roles.unrolled, "b") + ", ";
      } else {
        uOuter = loop("T", cover.outer, roles.unrolled) + ", ";
        uInner = loop("T", inner, roles.unrolled) + ", ";
      }
    }
    int64_t cExtent = roles.channel.empty() ? 1 : c_.dim(roles.channel)->extent;
    std::set<int64_t> cInner = {cExtent, divisorAtMost(cExtent, 256), divisorAtMost(cExtent, 64)};
    std::set<int64_t> vInner = {vTiles, divisorAtMost(vTiles, 4), 1};
    for (int64_t ci : cInner)
      for (int64_t vi : vInner) {
        std::string cOut = roles.channel.empty() ? "" : loop("T", cExtent / ci, roles.channel) + ", ";
        std::string cIn = roles.channel.empty() ? "" : loop("T", ci, roles.channel) + ", ";
        std::string vOut = loop("T", vTiles / vi, roles.vector) + ", ",
                    vIn = lambda ? partial + ", " : loop("T", vi, roles.vector) + ", ";
        std::string tail = windows + cIn + tile;
        const std::vector<std::string> orders = {
            others + vOut + uOuter + vIn + uInner + cOut + tail,
            others + uOuter + vOut + uInner + vIn + cOut + tail,
            others + vOut + uOuter + cOut + vIn + uInner + tail,
            others + uOuter + vOut + cOut + uInner + vIn + tail,
            vOut + others + uOuter + vIn + uInner + cOut + tail,
            cOut + others + vOut + uOuter + vIn + uInner + tail,
        };
        bool required = layoutToVectorize_.count(roles.vector) > 0;
        std::string layout = blockedLayout(roles, alpha, required);
        for (const auto& text : orders) {
          if (!required) consider(text);
          if (!layout.empty()) consider(layout + text);
        }
        // BLIS's order with packing (paper 002 §4's future work): a panel of
        // the vector operand packed under the vector and channel blocks, a
        // block of the broadcast one under the unrolled dimension's blocks.
        // A panel of the vector operand packed under the vector tiles and
        // the channel blocks, then read by every tile of the unrolled
        // dimension (a short M over a wide strided B: each panel's rows lie
        // a whole row of B apart).
        if (!roles.unrolled.empty()) {
          std::string pack = "P_" + vectorOperand(roles) + ", ";
          consider(others + cOut + vOut + vIn + pack + uOuter + uInner + tail);
          consider(others + vOut + cOut + vIn + pack + uOuter + uInner + tail);  // parallel over vOut
        }
        if (!uOuter.empty()) {
          std::string packVector = "P_" + vectorOperand(roles) + ", ";
          std::string packBroadcast = "P_" + broadcastOperand(roles) + ", ";
          consider(others + vOut + cOut + packVector + uOuter + packBroadcast + vIn + uInner + tail);
          consider(others + vOut + cOut + packVector + uOuter + vIn + uInner + tail);
          consider(others + vOut + packVector + uOuter + vIn + uInner + cOut + tail);
        }
      }
  }

  // "L_X(v/b, ..., v%b), " with X the vector operand and b the register
  // tile's extent along v, when X's rows are longer than b: then each tile's
  // panel of X, over all reduction steps, is contiguous (oneDNN's blocked
  // weights, BLIS's packed panels), made once outside the kernel proper. ""
  // when X is not laid out that way.
  // With `required` (X is strided along v in the program), also when X's
  // rows are not longer than b: then v is simply moved innermost.
  std::string blockedLayout(const Roles& roles, int alpha, bool required) const {
    const microkernel::TensorAccess& x = c_.lhs.stride(roles.vector) != 0 ? c_.lhs : c_.rhs;
    int64_t block = int64_t{alpha} * isa_.lanes;
    std::string inner, middle;
    bool blocked = true;
    for (size_t k = 0; k < x.subscripts.size(); ++k) {
      std::string name = microkernel::loneVariable(x.subscripts[k]);
      if (name.empty()) name = "#" + std::to_string(k);
      if (name == roles.vector) {
        blocked = x.shape[k] > block;
        inner = name;
        continue;
      }
      middle += (middle.empty() ? "" : ", ") + name;
    }
    if (inner.empty() || (!blocked && !required)) return "";
    if (!blocked) return "L_" + x.tensor + "(" + middle + (middle.empty() ? "" : ", ") + inner + "), ";
    std::string b = std::to_string(block);
    return "L_" + x.tensor + "(" + inner + "/" + b + (middle.empty() ? "" : ", " + middle) + ", " + inner +
           "%" + b + "), ";
  }

  // An output dimension the output and both operands are contiguous or invariant along.
  // How many operands must be laid out to vectorize along output dimension
  // d (0 or 1), or -1 when that cannot be done: each operand contiguous or
  // invariant along d, or at most one strided but able to be laid out
  // contiguous (d alone makes one of its subscripts): B in C(m,n) += A(m,k) *
  // B(n,k). The output itself is laid out when it is strided along d.
  int stridedOperands(const microkernel::ContractionDim& d) const {
    int strided = 0;
    for (const microkernel::TensorAccess* a : {&c_.lhs, &c_.rhs}) {
      int64_t stride = a->stride(d.name);
      if (stride == 0 || stride == 1) continue;
      bool lone = std::any_of(a->subscripts.begin(), a->subscripts.end(), [&](const te::AffineExpr& e) {
        return microkernel::loneVariable(e) == d.name;
      });
      if (!lone) return -1;
      ++strided;
    }
    return strided <= 1 ? strided : -1;
  }

  // Whether an operand subscript moves with an output and a reduction
  // dimension at once (h + r in a convolution).
  bool slidesWindow() const {
    for (const microkernel::TensorAccess* access : {&c_.lhs, &c_.rhs})
      for (const te::AffineExpr& subscript : access->subscripts) {
        bool output = false, reduction = false;
        for (const auto& [name, coeff] : subscript.coeffs)
          if (const microkernel::ContractionDim* d = coeff != 0 ? c_.dim(name) : nullptr)
            (d->reduction ? reduction : output) = true;
        if (output && reduction) return true;
      }
    return false;
  }

  // "L_O(n, h, w, k), " when the output is strided along the vector
  // dimension v: the kernel writes it with v innermost (NCHW written as
  // NHWC), copied back after each call. "" otherwise.
  std::string outputLayoutFor(const std::string& v) const {
    if (c_.output.stride(v) == 1) return "";
    std::string others;
    for (const auto& subscript : c_.output.subscripts) {
      std::string name = microkernel::loneVariable(subscript);
      if (name != v) others += name + ", ";
    }
    return "L_" + c_.output.tensor + "(" + others + v + "), ";
  }

  // Whether the vector operand is contiguous along the vector dimension with
  // rows of at least kLongPanelRowBytes: then, read in place, one register
  // tile's panel is short pieces a row apart.
  bool longRows(const Roles& roles) const {
    const microkernel::TensorAccess& x = c_.lhs.stride(roles.vector) != 0 ? c_.lhs : c_.rhs;
    int64_t stride = x.stride(roles.vector);
    if (stride != 1 || x.subscripts.empty()) return false;
    return microkernel::loneVariable(x.subscripts.back()) == roles.vector &&
           x.shape.back() * 4 >= kLongPanelRowBytes;
  }

  // The operand read as vectors along the vector dimension, and the other one.
  std::string vectorOperand(const Roles& roles) const {
    return c_.lhs.stride(roles.vector) != 0 ? c_.lhs.tensor : c_.rhs.tensor;
  }
  std::string broadcastOperand(const Roles& roles) const {
    return c_.lhs.stride(roles.vector) != 0 ? c_.rhs.tensor : c_.lhs.tensor;
  }

  void consider(const std::string& loops) {
    std::string text = outputLayout_ + loops;
    if (!seen_.insert(text).second) return;
    std::variant<microkernel::BoundScheme, UserError> bound =
        microkernel::tryBindScheme(c_, microkernel::parseScheme(text, "search"), isa_);
    // Beyond the register file or not covering: not a candidate.
    const auto* b = std::get_if<microkernel::BoundScheme>(&bound);
    if (!b) return;
    // Its panel read in place (neither laid out nor packed) from rows a
    // kilobyte or more apart: see kStridedPanelPenalty.
    bool inPlace = text.find("L_" + panelOperand_ + "(") == std::string::npos &&
                   text.find("P_" + panelOperand_ + ",") == std::string::npos;
    candidates_.push_back({text, microkernel::estimateDataMovement(*b, levels_), laneShare_,
                           fmaShareOfIssue(*b), panelRowsLong_ && inPlace ? kStridedPanelPenalty : 1.0,
                           unrolledOutputStride_, 0});
  }

  const Contraction& c_;
  const MicroKernelTable& table_;
  microkernel::VectorIsa isa_;
  std::vector<microkernel::CacheLevel> levels_;
  std::set<std::string> seen_;
  std::set<std::string> layoutToVectorize_;  // vector dimensions that need an operand laid out
  std::string outputLayout_;                 // the output's L specifier for the vector dimension enumerated
  double laneShare_ = 1;                     // of the class enumerated: SchemeCandidate::laneShare
  std::string panelOperand_;                 // of the roles enumerated: the vector operand
  bool panelRowsLong_ = false;               // and whether its rows are long (longRows)
  int64_t unrolledOutputStride_ = 0;         // of the roles enumerated: SchemeCandidate's
  std::vector<SchemeCandidate> candidates_;
};

}  // namespace

// On several threads, the schemes whose parallel loop gives each thread
// work come first (the model counts one core's data movement).
void preferParallel(std::vector<SchemeCandidate>& ranked, const Contraction& contraction,
                    const target::Hardware& host, int threads) {
  if (threads <= 1) return;
  microkernel::VectorIsa isa = microkernel::vectorIsaNamed(target::vectorIsa(host));
  std::stable_partition(ranked.begin(), ranked.end(), [&](const SchemeCandidate& c) {
    microkernel::BoundScheme b =
        microkernel::bindScheme(contraction, microkernel::parseScheme(c.scheme, "search"), isa);
    return microkernel::parallelLoopsOf(b).iterations >= threads;
  });
}

// A convolution as TTILE's micro-kernels take it, either
// - windowed: a reduction dimension of extent 3 moves an operand's
//   subscript together with an output dimension (r, s), and another
//   reduction dimension slides nothing (the input channels c, which the
//   micro-kernel accumulates over); a one-channel stencil (a blur, Fig. 1 of
//   paper 001) or a depthwise convolution has none; or
// - pointwise (1x1): an operand, the weights, is indexed by the reduction
//   and by output dimensions only one of which it shares with the output's
//   others, so that at least two output dimensions longer than 1 (h, w)
//   reuse it. A matmul's B is reused along m alone, a batched one's along i
//   alone.
bool isConvolution(const Contraction& contraction) {
  bool window = false;
  std::set<std::string> sliding;
  for (const microkernel::TensorAccess* access : {&contraction.lhs, &contraction.rhs})
    for (const te::AffineExpr& subscript : access->subscripts) {
      bool output = false, windowOfThree = false;
      std::vector<std::string> reductions;
      for (const auto& [name, coeff] : subscript.coeffs)
        if (const microkernel::ContractionDim* d = coeff != 0 ? contraction.dim(name) : nullptr) {
          if (!d->reduction) output = true;
          if (d->reduction && d->extent > 1)
            reductions.push_back(name);  // r, s of a 1x1 window slide nothing
          if (d->reduction && d->extent == 3) windowOfThree = true;
        }
      if (output) sliding.insert(reductions.begin(), reductions.end());
      window = window || (output && windowOfThree);
    }
  bool channels = std::any_of(contraction.dims.begin(), contraction.dims.end(),
                              [&](const auto& d) { return d.reduction && !sliding.count(d.name); });
  if (window) return channels;
  if (!sliding.empty()) return false;  // a window of another extent (ResNet's 7x7 stem): not measured to win
  for (const microkernel::TensorAccess* weights : {&contraction.lhs, &contraction.rhs}) {
    int reusedAlong = 0;
    for (const auto& d : contraction.dims)
      if (!d.reduction && d.extent > 1 && weights->stride(d.name) == 0) ++reusedAlong;
    if (reusedAlong >= 2) return true;
  }
  return false;
}

bool rankedBefore(const SchemeCandidate& a, const SchemeCandidate& b) {
  // Costs equal in single precision tie (the model's symmetric cases, h and w
  // of a window, differ only by rounding); a key per candidate keeps the
  // order a strict weak one, as the sort needs.
  auto key = [](const SchemeCandidate& c) {
    return std::pair(static_cast<float>(c.rankCost()), c.unrolledOutputStride);
  };
  return key(a) < key(b);
}

std::vector<SchemeCandidate> rankedSchemes(const Contraction& contraction, const target::Hardware& hardware,
                                           const MicroKernelTable& table, std::string& whyNone,
                                           std::string* classesUsed) {
  microkernel::VectorIsa isa = microkernel::vectorIsaNamed(target::vectorIsa(hardware));
  if (isa.name.empty()) {
    whyNone = "this machine has neither AVX-512 nor AVX2 with FMA";
    return {};
  }
  std::vector<SchemeCandidate> ranked =
      Enumerator(contraction, table, isa, cacheLevels(hardware)).run(whyNone);
  std::string used = table.source + " classes";
  for (double share : kWiderClassShares) {
    if (!ranked.empty() || table.kernels.empty()) break;
    MicroKernelTable wider = table;
    wider.classes = classesFrom(table.kernels, share);
    ranked = Enumerator(contraction, wider, isa, cacheLevels(hardware)).run(whyNone);
    used = share > 0 ? table.source + " kernels within " + std::to_string(static_cast<int>(share * 100)) +
                           "% of their family's best (the classes within 85% cover none of its extents)"
                     : "every " + table.source + " kernel (the classes within 85% cover none of its extents)";
  }
  if (classesUsed) *classesUsed = used;
  return ranked;
}

std::vector<std::string> familiesFor(const Contraction& contraction) {
  size_t windows = 0;
  for (const auto& d : contraction.dims)
    if (d.reduction && d.extent == 3) ++windows;
  std::vector<std::string> families = {"A"};
  for (const auto& f : microKernelFamilies())
    if (f.name != "A" && windows >= static_cast<size_t>(f.unrollsR) + static_cast<size_t>(f.unrollsS))
      families.push_back(f.name);
  return families;
}

}  // namespace tessel::microkernel
