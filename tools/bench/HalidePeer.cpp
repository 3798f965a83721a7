#include "bench/HalidePeer.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/OperatorShapes.h"

#ifdef TESSEL_HAVE_HALIDE
#include <Halide.h>
#endif

namespace tessel::bench {

namespace {

// The suffix of the operators scheduled by hand; the others are autoscheduled.
constexpr std::string_view kManual = "_manual";

const std::vector<PeerOperator>& halideOperators() {
  static const std::vector<PeerOperator> ops = [] {
    const std::vector<std::pair<std::string, std::string>> algorithms = {
        {"blur3x3", "B(h,w) = 3-tap vertical mean of the 3-tap horizontal mean of I(H,W); (H-2) x (W-2)"},
        {"unsharp",
         "M(c,h,w): 5x5 binomial blur BY of I(C,H,W), M = |I - BY| < 0.001 ? I : 4 I - 3 BY; C x (H-4) x "
         "(W-4)"},
        {"harris", "R(h,w) = det - 0.04 trace^2 of 3x3 sums of Sobel products of I(H,W); (H-4) x (W-4)"},
        {"interpolate",
         "3-level pyramid of I(C>=4,H,W) premultiplied by alpha, upsampled and composited top-down"},
    };
    std::vector<PeerOperator> list;
    for (const auto& [name, what] : algorithms) {
      list.push_back({name, what + "  (Adams2019 autoscheduler, parallelism = threads)"});
      list.push_back({name + std::string(kManual), what + "  (hand schedule in the style of Halide's apps)"});
    }
    return list;
  }();
  return ops;
}

#ifdef TESSEL_HAVE_HALIDE

using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using Halide::Var;

// A TC image tensor's sizes: X(H, W) or X(C, H, W) (c = 1 for rank 2).
struct Shape {
  int c = 1, h = 0, w = 0;
};

// One pipeline built for one case: its input, its output Func, the output's
// sizes, and the hand schedule (applied only to the _manual operators).
struct Pipe {
  ImageParam input;
  Func output;
  Shape outShape;
  std::function<void(const Halide::Target&)> schedule;
};

// Every split stays within the extent it splits, so ShiftInwards tails never
// step outside the image on small cases: the largest power of two <= both
// the target's vector width and the extent.
int vectorFor(const Halide::Target& t, int extent) {
  int v = 1;
  while (v * 2 <= std::min(t.natural_vector_size<float>(), extent)) v *= 2;
  return v;
}
int rowsFor(int want, int extent) { return std::max(1, std::min(want, extent)); }

// The hand schedules share one shape, the one of the Halide apps' CPU
// schedules: a consumer's rows are split into strips of `rows` run in
// parallel (fused with the channels when there are some), its producers are
// stored per strip and computed per `row` (sliding windows: each producer row
// is computed once), everything is vectorized along x. Returns the strip
// variable to store producers at.
Var stripsInParallel(Func f, Var x, Var y, std::optional<Var> channel, int rows, int vector, Var row) {
  Var yo(f.name() + "_yo"), strip(f.name() + "_strip");
  f.split(y, yo, row, rows).vectorize(x, vector);
  if (!channel) {
    f.parallel(yo);
    return yo;
  }
  f.fuse(yo, *channel, strip).parallel(strip);
  return strip;
}

// The input as the pipelines read it: the image, its edges repeated outside.
// No point of an output reads outside the image (the programs cut their
// borders), but schedules may compute a little past the points they need:
// Halide 14's sliding windows start a strip early, and Adams2019's
// schedules do read there. The Halide apps guard their inputs the same way.
Func readable(const ImageParam& input) { return Halide::BoundaryConditions::repeat_edge(input); }

Pipe blur3x3(const Shape& image) {
  if (image.h < 3 || image.w < 3) throw PeerError("blur3x3 needs an input of at least 3 x 3");
  Var x("x"), y("y");
  ImageParam input(Halide::Float(32), 2, "input");
  Func in = readable(input), bx("blur_x"), out("blur_y");
  bx(x, y) = (in(x, y) + in(x + 1, y) + in(x + 2, y)) / 3.f;
  out(x, y) = (bx(x, y) + bx(x, y + 1) + bx(x, y + 2)) / 3.f;
  Shape o{1, image.h - 2, image.w - 2};
  auto schedule = [=](const Halide::Target& t) mutable {
    Var row("yi");
    int v = vectorFor(t, o.w);
    Var strip = stripsInParallel(out, x, y, std::nullopt, rowsFor(32, o.h), v, row);
    bx.store_at(out, strip).compute_at(out, row).vectorize(x, v);
  };
  return {input, out, o, schedule};
}

Pipe unsharp(const Shape& image) {
  if (image.h < 5 || image.w < 5) throw PeerError("unsharp needs an input of at least 5 x 5 per channel");
  Var x("x"), y("y"), c("c");
  ImageParam input(Halide::Float(32), 3, "input");
  Func in = readable(input), bx("blur_x"), by("blur_y"), sharp("sharpen"), out("masked");
  bx(x, y, c) = (in(x, y, c) + 4.f * in(x + 1, y, c) + 6.f * in(x + 2, y, c) + 4.f * in(x + 3, y, c) +
                 in(x + 4, y, c)) /
                16.f;
  by(x, y, c) = (bx(x, y, c) + 4.f * bx(x, y + 1, c) + 6.f * bx(x, y + 2, c) + 4.f * bx(x, y + 3, c) +
                 bx(x, y + 4, c)) /
                16.f;
  Expr center = in(x + 2, y + 2, c);
  sharp(x, y, c) = center * 4.f - by(x, y, c) * 3.f;
  out(x, y, c) = Halide::select(Halide::abs(center - by(x, y, c)) < 0.001f, center, sharp(x, y, c));
  Shape o{image.c, image.h - 4, image.w - 4};
  auto schedule = [=](const Halide::Target& t) mutable {
    Var row("yi");
    int v = vectorFor(t, o.w);
    Var strip = stripsInParallel(out, x, y, c, rowsFor(32, o.h), v, row);
    bx.store_at(out, strip).compute_at(out, row).vectorize(x, v);
    by.compute_at(out, row).vectorize(x, v);  // read twice per point: once per row
  };
  return {input, out, o, schedule};
}

// The 3x3 box sum of the TC program, in its order: dh outer, dw inner.
Expr boxSum(Func f, Var x, Var y) {
  Expr sum;
  for (int dh = 0; dh < 3; ++dh)
    for (int dw = 0; dw < 3; ++dw) sum = sum.defined() ? sum + f(x + dw, y + dh) : f(x + dw, y + dh);
  return sum;
}

Pipe harris(const Shape& image) {
  if (image.h < 5 || image.w < 5) throw PeerError("harris needs an input of at least 5 x 5");
  Var x("x"), y("y");
  ImageParam input(Halide::Float(32), 2, "input");
  Func in = readable(input), iy("Iy"), ix("Ix"), ixx("Ixx"), iyy("Iyy"), ixy("Ixy"), sxx("Sxx"), syy("Syy"),
       sxy("Sxy"), out("R");
  iy(x, y) = (in(x, y + 2) - in(x, y)) / 12.f + (in(x + 1, y + 2) - in(x + 1, y)) / 6.f +
             (in(x + 2, y + 2) - in(x + 2, y)) / 12.f;
  ix(x, y) = (in(x + 2, y) - in(x, y)) / 12.f + (in(x + 2, y + 1) - in(x, y + 1)) / 6.f +
             (in(x + 2, y + 2) - in(x, y + 2)) / 12.f;
  ixx(x, y) = ix(x, y) * ix(x, y);
  iyy(x, y) = iy(x, y) * iy(x, y);
  ixy(x, y) = ix(x, y) * iy(x, y);
  sxx(x, y) = boxSum(ixx, x, y);
  syy(x, y) = boxSum(iyy, x, y);
  sxy(x, y) = boxSum(ixy, x, y);
  out(x, y) = sxx(x, y) * syy(x, y) - sxy(x, y) * sxy(x, y) -
              0.04f * (sxx(x, y) + syy(x, y)) * (sxx(x, y) + syy(x, y));
  Shape o{1, image.h - 4, image.w - 4};
  auto schedule = [=](const Halide::Target& t) mutable {
    Var row("yi");
    int v = vectorFor(t, o.w);
    Var strip = stripsInParallel(out, x, y, std::nullopt, rowsFor(32, o.h), v, row);
    // The derivatives and their products each computed once per point; the
    // box sums (9 loads each) are inlined into the response.
    for (Func f : {ix, iy, ixx, iyy, ixy}) f.store_at(out, strip).compute_at(out, row).vectorize(x, v);
  };
  return {input, out, o, schedule};
}

Pipe interpolate(const Shape& image) {
  // The levels' sizes, as the TC program's range inference gives them.
  int w1 = (image.w - 1) / 2, w2 = (w1 - 1) / 2, h1 = (image.h - 1) / 2, h2 = (h1 - 1) / 2;
  if (image.c < 4) throw PeerError("interpolate needs RGBA channels (C >= 4): alpha is channel 3");
  if (w2 < 1 || h2 < 1) throw PeerError("interpolate needs an input of at least 7 x 7");
  Var x("x"), y("y"), c("c");
  ImageParam input(Halide::Float(32), 3, "input");
  Func in = readable(input), d0("premultiplied"), d0x("down0_x"), d1("down1"), d1x("down1_x"), d2("down2");
  Func u1x("up1_x"), u1("up1"), n1("interpolated1"), u0x("up0_x"), u0("up0"), out("interpolated0");
  d0(x, y, c) = Halide::select(c < 3, in(x, y, c) * in(x, y, 3), in(x, y, 3));
  d0x(x, y, c) = (d0(2 * x, y, c) + 2.f * d0(2 * x + 1, y, c) + d0(2 * x + 2, y, c)) / 4.f;
  d1(x, y, c) = (d0x(x, 2 * y, c) + 2.f * d0x(x, 2 * y + 1, c) + d0x(x, 2 * y + 2, c)) / 4.f;
  d1x(x, y, c) = (d1(2 * x, y, c) + 2.f * d1(2 * x + 1, y, c) + d1(2 * x + 2, y, c)) / 4.f;
  d2(x, y, c) = (d1x(x, 2 * y, c) + 2.f * d1x(x, 2 * y + 1, c) + d1x(x, 2 * y + 2, c)) / 4.f;
  u1x(x, y, c) = (d2(x / 2, y, c) + d2((x + 1) / 2, y, c)) / 2.f;
  u1(x, y, c) = (u1x(x, y / 2, c) + u1x(x, (y + 1) / 2, c)) / 2.f;
  n1(x, y, c) = d1(x, y, c) + (1.f - d1(x, y, 3)) * u1(x, y, c);
  u0x(x, y, c) = (n1(x / 2, y, c) + n1((x + 1) / 2, y, c)) / 2.f;
  u0(x, y, c) = (u0x(x, y / 2, c) + u0x(x, (y + 1) / 2, c)) / 2.f;
  out(x, y, c) = d0(x, y, c) + (1.f - d0(x, y, 3)) * u0(x, y, c);
  Shape o{image.c, 4 * h2 - 3, 4 * w2 - 3};
  auto schedule = [=](const Halide::Target& t) mutable {
    // Each level computed whole (the next one reads it with stride 2), its
    // horizontal pass row by row inside it; the upsamplings' vertical passes
    // and the premultiplication are inlined. The extents are the regions the
    // consumers read, which can be smaller than the levels.
    auto level = [&](Func f, Func perRow, int width, int height, int rows) {
      Var row(f.name() + "_yi");
      int v = vectorFor(t, width);
      f.compute_root();
      Var strip = stripsInParallel(f, x, y, c, rowsFor(rows, height), v, row);
      perRow.store_at(f, strip).compute_at(f, row).vectorize(x, v);
    };
    level(d1, d0x, 2 * w2 + 1, 2 * h2 + 1, 16);
    level(d2, d1x, w2, h2, 8);
    level(n1, u1x, 2 * w2 - 1, 2 * h2 - 1, 16);
    level(out, u0x, o.w, o.h, 32);
  };
  return {input, out, o, schedule};
}

struct Algorithm {
  const char* name;
  int rank;  // of the input and of the output
  Pipe (*build)(const Shape&);
};
constexpr Algorithm kAlgorithms[] = {
    {"blur3x3", 2, blur3x3},
    {"unsharp", 3, unsharp},
    {"harris", 2, harris},
    {"interpolate", 3, interpolate},
};

std::string shapeText(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s.empty() ? "a scalar" : s;
}

std::vector<int64_t> tcDims(const Shape& s, int rank) {
  return rank == 2 ? std::vector<int64_t>{s.h, s.w} : std::vector<int64_t>{s.c, s.h, s.w};
}

// Halide indexes with int32 and, without the large_buffers feature, sizes
// buffers in int32 bytes.
Shape shapeOf(const std::vector<int64_t>& dims, int rank, const std::string& what) {
  if (static_cast<int>(dims.size()) != rank)
    throw PeerError(what + " has rank " + std::to_string(dims.size()) + "; the operator's has rank " +
                    std::to_string(rank));
  int64_t bytes = 4;
  for (int64_t d : dims) bytes *= d;
  if (bytes >= std::numeric_limits<int32_t>::max())
    throw PeerError(what + " exceeds Halide's 2 GiB buffers (" + shapeText(dims) + ")");
  Shape s;
  if (rank == 3) s.c = static_cast<int>(dims[0]);
  s.h = static_cast<int>(dims[rank - 2]);
  s.w = static_cast<int>(dims[rank - 1]);
  return s;
}

// Halide's layout of a TC tensor X(C, H, W) or X(H, W): f(x = w, y = h, c).
std::vector<int> halideSizes(const Shape& s, int rank) {
  return rank == 2 ? std::vector<int>{s.w, s.h} : std::vector<int>{s.w, s.h, s.c};
}

// The bounds of the case, given to Halide as Tessel gets them (a static
// shape): exact bounds to compile for, and the estimates the autoscheduler
// plans with. Tessel's buffers are 64-byte aligned.
void fixBounds(Pipe& pipe, const Shape& in, int rank) {
  std::vector<int> inSizes = halideSizes(in, rank), outSizes = halideSizes(pipe.outShape, rank);
  Halide::Region estimates;
  for (int d = 0; d < rank; ++d) {
    pipe.input.dim(d).set_bounds(0, inSizes[d]).set_estimate(0, inSizes[d]);
    pipe.output.output_buffer().dim(d).set_bounds(0, outSizes[d]);
    estimates.push_back({0, outSizes[d]});
  }
  pipe.input.set_host_alignment(64);
  pipe.output.output_buffer().set_host_alignment(64);
  pipe.output.set_estimates(estimates);
}

// Adams2019 narrates its search on std::cerr at a level its Halide 14 build
// cannot turn off; the bench prints its progress there, so the narration is
// dropped while the search runs.
class QuietCerr {
 public:
  QuietCerr() : saved_(std::cerr.rdbuf(nullptr)) {}
  ~QuietCerr() { std::cerr.rdbuf(saved_); }  // rdbuf() also clears the badbit the silence set
  QuietCerr(const QuietCerr&) = delete;
  QuietCerr& operator=(const QuietCerr&) = delete;

 private:
  std::streambuf* saved_;
};

// The Adams2019 plugin, loaded once per process: loading registers the
// autoscheduler in Halide's process-wide table. "" when it loaded, else why not.
const std::string& adams2019LoadError() {
  static const std::string error = []() -> std::string {
    try {
      Halide::load_plugin(TESSEL_HALIDE_ADAMS2019);
      return "";
    } catch (const Halide::Error& e) {
      return std::string("cannot load the Adams2019 autoscheduler (") + TESSEL_HALIDE_ADAMS2019 +
             "): " + e.what();
    }
  }();
  return error;
}

// The thread count of Halide's JIT thread pool. The pool belongs to the JIT
// runtime that every JIT-compiled pipeline of the process shares, so the
// count is process-wide. halide_set_num_threads alone only ever grows the
// pool (workers already started keep taking tasks), so a lower count also
// shuts the pool down; it restarts, that size, at the next parallel loop.
// Before the first pipeline is compiled there is no runtime yet: prepare()
// calls this again after compiling.
void useThreads(const Halide::Target& target, int threads) {
  std::vector<Halide::Internal::JITModule> runtimes =
      Halide::Internal::JITSharedRuntime::get(nullptr, target, /*create=*/false);
  if (runtimes.empty()) return;
  const auto& exports = runtimes.front().exports();
  auto set = exports.find("halide_set_num_threads"), shutdown = exports.find("halide_shutdown_thread_pool");
  if (set == exports.end() || shutdown == exports.end())
    throw PeerError("Halide's JIT runtime exports no thread pool control");
  auto setNumThreads = reinterpret_cast<int (*)(int)>(set->second.address);
  auto shutdownPool = reinterpret_cast<void (*)()>(shutdown->second.address);
  if (setNumThreads(threads) > threads) shutdownPool();
}

class HalideRun : public PreparedPeer {
 public:
  HalideRun(Pipe pipe, const Halide::Target& target, int rank, runtime::Buffer input,
            const std::vector<int64_t>& outShape)
      : input_(std::move(input)),
        output_(te::DType::F32, outShape),
        target_(target),
        pipeline_(pipe.output),
        param_(pipe.input) {
    // Wrapped in place: Halide reads the input through its ImageParam and never writes it.
    Shape in = shapeOf(input_.shape(), rank, "the input");
    inView_ = Halide::Buffer<float>(static_cast<float*>(input_.data()), halideSizes(in, rank));
    outView_ = Halide::Buffer<float>(static_cast<float*>(output_.data()), halideSizes(pipe.outShape, rank));
    param_.set(inView_);
  }

  Halide::Pipeline& pipeline() { return pipeline_; }

  void run() override {
    try {
      pipeline_.realize(outView_, target_);
    } catch (const Halide::Error& e) {
      throw PeerError(std::string("Halide: ") + e.what());
    }
  }
  std::vector<runtime::Buffer> outputs() override { return {output_}; }

 private:
  runtime::Buffer input_;   // shares the harness's storage, which inView_ wraps
  runtime::Buffer output_;  // outView_ wraps it
  Halide::Target target_;
  Halide::Pipeline pipeline_;
  ImageParam param_;
  Halide::Buffer<float> inView_, outView_;
};

class HalideFamily : public PeerFamily {
 public:
  // HL_JIT_TARGET may override the host's target, as for any Halide JIT user.
  HalideFamily() : target_(Halide::get_jit_target_from_environment()) {}

  std::string name() const override { return "halide"; }
  std::vector<PeerOperator> operators() const override { return halideOperators(); }
  bool available() const override { return true; }
  std::string version() const override {
    return std::string("Halide ") + TESSEL_HALIDE_VERSION + " (JIT for " + target_.to_string() +
           "; Adams2019 autoscheduler plugin)";
  }
  void setThreads(int threads) override {
    threads_ = threads;
    try {
      useThreads(target_, threads_);
    } catch (const Halide::Error& e) {
      throw PeerError(std::string("Halide: ") + e.what());
    }
  }

  std::unique_ptr<PreparedPeer> prepare(const std::string& op, const te::Program& p,
                                        const std::vector<runtime::Buffer>& inputs) override {
    bool manual = op.size() > kManual.size() && op.ends_with(kManual);
    std::string base = manual ? op.substr(0, op.size() - kManual.size()) : op;
    const Algorithm* alg = nullptr;
    for (const Algorithm& a : kAlgorithms)
      if (base == a.name) alg = &a;
    if (!alg) throw PeerError("Halide has no operator '" + op + "'");
    requireF32Signature(p, 1, 1);
    if (inputs.size() != 1 || inputs[0].shape() != p.inputs()[0]->shape)
      throw PeerError("the input buffer does not have the program's input shape");
    const std::vector<int64_t>& outDims = p.outputs()[0]->shape;
    try {
      Shape in = shapeOf(p.inputs()[0]->shape, alg->rank, p.inputs()[0]->name);
      Pipe pipe = alg->build(in);
      std::vector<int64_t> want = tcDims(pipe.outShape, alg->rank);
      if (outDims != want)
        throw PeerError(std::string(alg->name) + " of a " + shapeText(p.inputs()[0]->shape) + " input is " +
                        shapeText(want) + "; the program's output is " + shapeText(outDims));
      fixBounds(pipe, in, alg->rank);
      if (manual) pipe.schedule(target_);
      auto run = std::make_unique<HalideRun>(pipe, target_, alg->rank, inputs[0], outDims);
      if (manual) {
        run->notes.push_back(
            "hand schedule: row strips in parallel, producers computed per row (sliding windows), "
            "vectorized by up to " +
            std::to_string(target_.natural_vector_size<float>()) + " floats");
      } else {
        if (!adams2019LoadError().empty()) throw PeerError(adams2019LoadError());
        // Adams2019 reads only the parallelism of the machine parameters.
        Halide::MachineParams params = Halide::MachineParams::generic();
        params.parallelism = threads_;
        QuietCerr quiet;
        run->pipeline().auto_schedule("Adams2019", target_, params);
        run->notes.push_back("Adams2019 autoscheduler (parallelism " + std::to_string(threads_) +
                             "), run in prepare, outside the timed region");
      }
      run->pipeline().compile_jit(target_);
      run->notes.push_back(
          "JIT-compiled for the case's exact sizes outside the timed region; input wrapped in "
          "place (read through a repeat-edge boundary), output preallocated");
      useThreads(target_, threads_);
      return run;
    } catch (const Halide::Error& e) {
      throw PeerError(std::string("Halide: ") + e.what());
    }
  }

 private:
  Halide::Target target_;
  int threads_ = 1;
};

#else

class HalideFamily : public PeerFamily {
 public:
  std::string name() const override { return "halide"; }
  std::vector<PeerOperator> operators() const override { return halideOperators(); }
  bool available() const override { return false; }
  std::string version() const override { return ""; }
  void setThreads(int) override {}
  std::unique_ptr<PreparedPeer> prepare(const std::string&, const te::Program&,
                                        const std::vector<runtime::Buffer>&) override {
    throw PeerError("Tessel was built without Halide (install libhalide14-0-dev and reconfigure)");
  }
};

#endif

}  // namespace

std::unique_ptr<PeerFamily> makeHalidePeer() { return std::make_unique<HalideFamily>(); }

}  // namespace tessel::bench
