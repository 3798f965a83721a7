// Loop IR (lir): what the isl AST becomes before the backends print it. Small
// plain nodes; post-polyhedral passes (vectorize, unroll, double-buffer) work
// here. Index arithmetic (loop variables, flattened offsets) is 64-bit and
// marked `index` (its `type` is then unused); values carry a te::DType.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::lir {

enum class ExprKind {
  IntImm,  // index or integer constant
  FloatImm,
  Var,   // loop variable or let-bound name
  Load,  // buffer[index]; type = the buffer's dtype
  Unary,
  Binary,
  Select,        // operands = {cond, then, else}; only the chosen branch is evaluated
  Cast,          // operands = {x}
  FloorDiv,      // index floor division, operands = {a, b}, b > 0
  CheckedIndex,  // operands = {x}; x if 0 <= x < extent, else flags a run-time error and gives 0
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  te::DType type = te::DType::I32;
  bool index = false;    // 64-bit index arithmetic
  int64_t intValue = 0;  // IntImm; CheckedIndex: the extent
  double floatValue = 0;
  std::string name;  // Var / Load buffer
  te::UnaryOp unaryOp = te::UnaryOp::Neg;
  te::BinaryOp binaryOp = te::BinaryOp::Add;
  std::vector<Expr> operands;  // Load: {index}
};

Expr indexImm(int64_t v);
Expr indexVar(const std::string& name);
Expr indexBinary(te::BinaryOp op, Expr a, Expr b);  // Add Sub Mul Div Mod Min Max, comparisons, And Or
Expr indexFloorDiv(Expr a, Expr b);
Expr indexSelect(Expr cond, Expr a, Expr b);
Expr indexNeg(Expr a);
Expr checkedIndex(Expr x, int64_t extent);
Expr imm(double v, te::DType t);
Expr load(const std::string& buffer, te::DType t, Expr index);
Expr unary(te::UnaryOp op, te::DType t, Expr x);
Expr binary(te::BinaryOp op, te::DType t, Expr a, Expr b);
Expr select(te::DType t, Expr c, Expr a, Expr b);
Expr cast(te::DType t, Expr x);  // value cast; from an index expression gives a value

// Alloc declares one of the kernel's local buffers (Kernel::locals) for the
// rest of its enclosing block: inside a parallel loop, each thread has its own.
// Call runs one of the kernel's helper functions (Kernel::helpers) on whole
// buffers; the first argument is read and written, the others only read. A
// helper returns nonzero when it could not allocate its scratch memory.
enum class StmtKind { Block, For, If, Let, Store, Alloc, Call };

// What the schedule proved about a loop's iterations, for the vectorizer.
enum class VectorHint {
  None,
  Independent,  // no dependence between iterations
  Reduction,    // only the chains of reductions into one element link iterations
};

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  StmtKind kind;
  std::vector<Stmt> body;  // Block
  std::string name;        // For: loop variable; Let: bound name; Store, Alloc: buffer; Call: function
  std::vector<std::string> arguments;    // Call: buffers
  Expr init, cond, step;                 // For: for (name = init; cond; name += step)
  bool parallel = false;                 // For: iterations may run concurrently
  VectorHint vector = VectorHint::None;  // For
  int vectorLanes = 0;     // For: emitted as SIMD code of this many lanes (set by the vectorizer)
  bool unrollJam = false;  // For: iterations independent; the register tiler may unroll and jam them
  // For: iterations independent, also of those of the parallel loop right
  // around it (a "collapsible" mark): the two may run as one OpenMP loop.
  bool collapsible = false;
  // For (vector): its body is a nest of sequential loops whose stores all
  // accumulate into elements that stay the same over that nest; the C
  // backend keeps them in registers (set by the register tiler).
  bool accumulatesInRegisters = false;
  // For: its iterations carry no dependence and a read in its inner vector
  // loop is contiguous along it (a "transpose_block" mark).
  bool transposeBlock = false;
  // For (transposeBlock): run in blocks of this many iterations around its
  // one vector loop, whose reads contiguous along this loop are loaded as
  // rows and transposed in registers (set by the vectorizer).
  int transposeLanes = 0;
  // Store in a vector loop: the backend may bypass the caches (lir/StreamStores.h).
  bool streaming = false;
  // Store: a read to start before it (a software prefetch, a hint only):
  // a packing copy's row several rows ahead, which the hardware
  // prefetchers do not fetch when rows lie pages apart. Empty: none.
  std::string prefetchBuffer;
  Expr prefetchIndex;
  Expr value;               // Let: bound index value; Store: stored value
  Expr index;               // Store: flat element index
  Stmt thenCase, elseCase;  // If (cond in `cond`)
};

Stmt block(std::vector<Stmt> stmts);
Stmt forLoop(const std::string& var, Expr init, Expr cond, Expr step, Stmt body, bool parallel,
             VectorHint vector = VectorHint::None);
Stmt ifThenElse(Expr cond, Stmt thenCase, Stmt elseCase);
Stmt let(const std::string& name, Expr value);  // index binding, visible to the rest of the enclosing block
Stmt store(const std::string& buffer, Expr index, Expr value);
Stmt alloc(const std::string& buffer);  // a buffer of Kernel::locals
Stmt call(const std::string& function, std::vector<std::string> buffers);

struct BufferDecl {
  std::string name;
  te::DType dtype;
  std::vector<int64_t> shape;
  int64_t numElements() const;
};

// An input the kernel's micro-kernels read in another layout: `function`
// (one of Kernel::helpers, `int f(float* to, const float* from)`) copies
// `input` into `buffer`. The kernel's prepare entry does that once; its
// prepared entry takes `buffer` as given (abi/KernelAbi.h).
struct PreparedInput {
  std::string input;
  BufferDecl buffer;
  std::string function;
  std::string layout;  // readable, for the header and --emit lir
};

// One kernel: parameters in ABI order (inputs, then outputs), scratch
// buffers it allocates itself, and its body.
struct Kernel {
  std::string name;
  std::vector<BufferDecl> inputs;
  std::vector<BufferDecl> outputs;
  std::vector<BufferDecl> temporaries;
  // Small scratch buffers (promoted tiles) the body declares where it uses
  // them with Alloc statements, on the stack of the thread that runs them.
  std::vector<BufferDecl> locals;
  // C functions the body calls (grafted micro-kernels, target/MicroKernelPlan.h):
  // their whole definitions, emitted before the kernel.
  std::vector<std::string> helpers;
  std::vector<PreparedInput> preparedInputs;
  Stmt body;
  bool checksIndices = false;  // body contains CheckedIndex: the kernel reports bad indices
  std::string vectorIsa;       // "avx512", "avx2" or "" (scalar): the ISA of vectorized loops
  bool streamsStores = false;  // some Store is `streaming`: the kernel fences them before returning
  double work = 0;             // poly::estimatedWork of the kernel's statements
  // The body reads kThreadCountVar (lir/ThreadVersions.h): the backend binds
  // it to OpenMP's thread count for the call.
  bool readsThreadCount = false;
};

// Whether some Load in `s` reads `buffer`; whether some Load or Store uses it.
bool readsBuffer(const Stmt& s, const std::string& buffer);
bool usesBuffer(const Stmt& s, const std::string& buffer);
// Whether some Store in `s` is `streaming`.
bool hasStreamingStore(const Stmt& s);

// Readable text of the loop IR (`--emit lir`).
std::string toString(const Kernel& k);

}  // namespace tessel::lir
