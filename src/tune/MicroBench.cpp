#include "tune/MicroBench.h"

#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "microkernel/Contraction.h"
#include "runtime/Runner.h"
#include "tessel/builder.h"

namespace tessel::tune {

namespace {

constexpr int kColumns = 8;  // output columns per call: the register tile runs once per column
// The weights' block that the columns share stays within half of a 32 KiB L1,
// as the search's c tiles keep it: a kernel is measured on its registers and
// loads, not on how fast L2 refills a panel too wide for L1.
constexpr int64_t kWeightBlockBytes = 16 * 1024;
constexpr int64_t kRowPadding = 16;  // floats

}  // namespace

MicroKernelProblem microKernelProblem(const microkernel::MicroKernelFamily& family, int alpha, int beta,
                                      int lanes, int reduction) {
  using namespace te;
  int64_t r = family.unrollsR ? 3 : 1, s = family.unrollsS ? 3 : 1, k = int64_t{alpha} * lanes;
  builder::ProgramBuilder b("microkernel_" + family.name + "_" + std::to_string(alpha) + "x" +
                            std::to_string(beta));
  // I's rows padded by a cache line: rows a power of two apart (8 columns x
  // 512 floats) would all share one L1 set, and a kernel with more rows than
  // L1 has ways would measure conflict misses rather than its registers.
  auto I = b.input("I", DType::F32, {beta + r - 1, kColumns + s - 1, reduction + kRowPadding});
  auto W = b.input("Wt", DType::F32, {r, s, reduction, k});
  auto O = b.output("O", DType::F32, {beta, kColumns, k});
  auto h = b.index("h"), w = b.index("w"), kk = b.index("k"), rr = b.index("r"), ss = b.index("s"),
       c = b.index("c");
  b.define(O(h, w, kk), Reduction::Sum, true, I(h + rr, w + ss, c) * W(rr, ss, c, kk));
  MicroKernelProblem p{b.build(), "", 2.0 * beta * kColumns * static_cast<double>(k) * reduction * r * s};
  std::string unrolled =
      std::string(family.unrollsR ? "U_{3,r}, " : "") + (family.unrollsS ? "U_{3,s}, " : "");
  int64_t block = 1;
  for (int64_t d = 1; d <= reduction; ++d)
    if (reduction % d == 0 && d * r * s * k * 4 <= kWeightBlockBytes) block = d;
  p.scheme = "T_{" + std::to_string(reduction / block) + ",c}, R_w, " +
             std::string(family.unrollsR ? "" : "R_r, ") + (family.unrollsS ? "" : "R_s, ") + "T_{" +
             std::to_string(block) + ",c}, " + unrolled + "U_{" + std::to_string(beta) + ",h}, U_{" +
             std::to_string(alpha) + ",k}, V_k";
  return p;
}

microkernel::MicroKernelTable measureMicroKernels(const target::Hardware& hardware,
                                                  const MicroBenchOptions& options) {
  microkernel::VectorIsa isa = microkernel::vectorIsaNamed(target::vectorIsa(hardware));
  if (isa.name.empty()) userError("tessel microbench: this machine has neither AVX-512 nor AVX2 with FMA");
  microkernel::MicroKernelTable table;
  table.machine = hardware.name;
  table.isa = isa.name;
  table.source = "measured";
  int maxAlpha = options.maxAlpha > 0 ? options.maxAlpha : isa.registers;
  // Each kernel's scheme is given: the machine's own classes do not matter.
  driver::Machine machine = driver::modelledMachine(hardware);
  for (const auto& name : options.families) {
    const microkernel::MicroKernelFamily* family = microkernel::microKernelFamily(name);
    if (!family) userError("tessel microbench: no micro-kernel family '" + name + "' (A, B, C or D)");
    for (int alpha = 1; alpha <= maxAlpha; ++alpha)
      for (int beta = 1; beta <= options.maxBeta; ++beta) {
        MicroKernelProblem p = microKernelProblem(*family, alpha, beta, isa.lanes, options.reduction);
        microkernel::Recognition r = microkernel::recognizeContraction(p.program, 0);
        if (std::holds_alternative<UserError>(microkernel::tryBindScheme(
                *r.contraction, microkernel::parseScheme(p.scheme, "microbench"), isa)))
          continue;  // beyond the register file
        driver::CompileOptions o;
        o.scheme.text = p.scheme;
        driver::CompiledProgram compiled = driver::compile(p.program, o, machine);
        runtime::RunOptions ro;
        ro.time = true;
        ro.threads = 1;
        ro.minSeconds = options.minSeconds;
        runtime::RunReport report = runtime::runKernel(compiled.program, compiled.cSource,
                                                       backend::kernelEntries(compiled.kernel), ro);
        microkernel::MeasuredMicroKernel m{name, alpha, beta, p.flops / (report.medianMs * 1e-3) / 1e9, 0};
        if (hardware.peakF32FlopsPerCore > 0) m.peakShare = m.gflops * 1e9 / hardware.peakF32FlopsPerCore;
        table.kernels.push_back(m);
        if (options.progress) options.progress(m);
      }
  }
  table.classes = microkernel::classesFrom(table.kernels);
  return table;
}

microkernel::MicroKernelTable tableWithFamilies(const target::Hardware& hardware,
                                                const std::vector<std::string>& families,
                                                MicroBenchOptions options,
                                                std::vector<std::string>& measuredNow) {
  std::optional<microkernel::MicroKernelTable> stored = storedTable(hardware);
  measuredNow = stored ? microkernel::unmeasuredFamilies(*stored, families) : families;
  if (measuredNow.empty()) return *stored;
  options.families = measuredNow;
  microkernel::MicroKernelTable fresh = measureMicroKernels(hardware, options);
  microkernel::MicroKernelTable table = stored ? microkernel::mergedTable(*stored, fresh) : fresh;
  storeTable(table, defaultTablePath(hardware));
  return table;
}

}  // namespace tessel::tune
