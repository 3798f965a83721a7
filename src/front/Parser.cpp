#include "front/Parser.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "front/Lexer.h"

namespace tessel::front {

bool isTypeName(const std::string& s) {
  static const std::set<std::string> kTypes = {
      "bool",  "uint8",   "uint16",  "uint32",  "uint64", "int8", "int16",    "int32", "int64",
      "float", "float16", "float32", "float64", "double", "half", "bfloat16", "byte",
  };
  return kTypes.count(s) > 0;
}

namespace {

using ast::ExprKind;
using ast::ExprPtr;

class Parser {
 public:
  explicit Parser(const Source& src) : src_(src), toks_(lex(src.file, src.text)) {}

  std::shared_ptr<const Module> run() {
    auto m = std::make_shared<Module>();
    m->source = src_;
    if (cur().kind == Tok::Eof) fail(cur(), "expected 'def' but the file has no definition");
    while (cur().kind != Tok::Eof) {
      ast::Def d = parseDef();
      if (m->find(d.name)) fail(d.loc, "def '" + d.name + "' is defined twice");
      m->defs.push_back(std::move(d));
    }
    return m;
  }

 private:
  // ---- token helpers ----
  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t k = 1) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token next() {
    Token t = cur();
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool accept(Tok k) {
    if (cur().kind != k) return false;
    next();
    return true;
  }
  Token expect(Tok k, const std::string& what = "") {
    if (cur().kind != k) {
      std::string hint;
      if (cur().text == "and" || cur().text == "or")
        hint = std::string(" (TC writes logical ") + cur().text + " as '" +
               (cur().text == "and" ? "&&" : "||") + "')";
      fail(cur(), "expected " + (what.empty() ? describe(k) : what) + " but found " + describe(cur()) + hint);
    }
    return next();
  }
  [[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) const {
    throw UserError(loc, msg, sourceLine(src_.text, loc.line));
  }
  [[noreturn]] void fail(const Token& t, const std::string& msg) const { fail(t.loc, msg); }

  // A name for a tensor, a def or an index: identifiers that are not type names.
  Token expectName(const std::string& what) {
    if (cur().kind == Tok::Ident && isTypeName(cur().text))
      fail(cur(), "'" + cur().text + "' is a type name and cannot be used as " + what);
    return expect(Tok::Ident, what);
  }

  ExprPtr make(ExprKind k, const SourceLoc& loc, std::vector<ExprPtr> args = {}) {
    auto e = std::make_shared<ast::Expr>();
    e->kind = k;
    e->loc = loc;
    e->args = std::move(args);
    return withDepth(e);
  }

  // Every later stage walks expressions recursively; bounding their height
  // here turns a pathological input into an error instead of a stack overflow.
  static constexpr int kMaxDepth = 1000;
  std::shared_ptr<ast::Expr> withDepth(std::shared_ptr<ast::Expr> e) const {
    for (const auto& a : e->args) e->depth = std::max(e->depth, a->depth + 1);
    if (e->depth > kMaxDepth)
      fail(e->loc, "expression nested more than " + std::to_string(kMaxDepth) +
                       " levels deep; split it into several statements");
    return e;
  }

  // Parenthesized and unary nesting recurses in the parser itself.
  struct NestingGuard {
    Parser& p;
    explicit NestingGuard(Parser& parser) : p(parser) {
      if (++p.nesting_ > kMaxDepth)
        p.fail(p.cur(), "expression nested more than " + std::to_string(kMaxDepth) +
                            " levels deep; split it into several statements");
    }
    ~NestingGuard() { --p.nesting_; }
  };
  int nesting_ = 0;

  // ---- definitions ----
  ast::Def parseDef() {
    expect(Tok::Def, "'def'");
    ast::Def d;
    Token name = expectName("a def name");
    d.name = name.text;
    d.loc = name.loc;
    expect(Tok::LParen);
    if (cur().kind != Tok::RParen) {
      do d.params.push_back(parseParam(true));
      while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "',' or ')'");
    expect(Tok::Arrow);
    // `-> (A, B)`; the parenthesis-free `-> A` of older TC documents also works.
    if (accept(Tok::LParen)) {
      do d.returns.push_back(parseParam(false));
      while (accept(Tok::Comma));
      expect(Tok::RParen, "',' or ')'");
    } else {
      d.returns.push_back(parseParam(false));
    }
    expect(Tok::LBrace);
    while (!accept(Tok::RBrace)) {
      if (cur().kind == Tok::Eof) fail(cur(), "expected '}' to close def '" + d.name + "'");
      d.stmts.push_back(parseStmt());
    }
    return d;
  }

  ast::Param parseParam(bool isInput) {
    ast::Param p;
    if (cur().kind == Tok::Ident && isTypeName(cur().text)) {
      p.type = parseType();
    } else if (cur().kind == Tok::Ident && peek().kind != Tok::Comma && peek().kind != Tok::RParen &&
               peek().kind != Tok::LBrace) {
      fail(cur(), "unknown type '" + cur().text + "'");
    }
    Token name = expectName(isInput ? "an input name" : "an output name");
    p.name = name.text;
    p.loc = name.loc;
    if (isInput && !p.type)
      fail(name, "input '" + p.name + "' needs a type, e.g. float(N) " + p.name + " or float " + p.name);
    return p;
  }

  ast::TypeSpec parseType() {
    ast::TypeSpec t;
    Token s = next();
    t.scalar = s.text;
    t.loc = s.loc;
    if (accept(Tok::LParen)) {
      do {
        ast::DimSpec d;
        d.loc = cur().loc;
        if (cur().kind == Tok::Number) {
          d.value = parseIntLiteral(next(), "a dimension");
        } else {
          d.name = expectName("a size name").text;
        }
        t.dims.push_back(std::move(d));
      } while (accept(Tok::Comma));
      expect(Tok::RParen, "',' or ')'");
    }
    return t;
  }

  // ---- statements ----
  ast::Stmt parseStmt() {
    ast::Stmt s;
    Token name = expectName("a tensor name to start a statement");
    if (cur().kind == Tok::Comma) rejectCall(name);
    s.tensor = name.text;
    s.loc = name.loc;
    if (cur().kind == Tok::LParen) {
      s.hasIndexList = true;
      s.indices = parseExpList();
    }
    Token op = next();
    s.opLoc = op.loc;
    switch (op.kind) {
      case Tok::Assign:
        s.op = ast::AssignOp::Assign;
        break;
      case Tok::PlusEq:
        s.op = ast::AssignOp::Sum;
        break;
      case Tok::TimesEq:
        s.op = ast::AssignOp::Prod;
        break;
      case Tok::MinEq:
        s.op = ast::AssignOp::Min;
        break;
      case Tok::MaxEq:
        s.op = ast::AssignOp::Max;
        break;
      case Tok::PlusEqB:
        s.op = ast::AssignOp::Sum, s.init = true;
        break;
      case Tok::TimesEqB:
        s.op = ast::AssignOp::Prod, s.init = true;
        break;
      case Tok::MinEqB:
        s.op = ast::AssignOp::Min, s.init = true;
        break;
      case Tok::MaxEqB:
        s.op = ast::AssignOp::Max, s.init = true;
        break;
      default:
        fail(op,
             "expected '=' or a reduction operator (+=, *=, min=, max=, optionally followed by '!') but "
             "found " +
                 describe(op));
    }
    s.rhs = parseExp();
    if (cur().kind == Tok::Equivalent)
      fail(cur(), "unsupported: '<=>' equivalence annotations are not supported by Tessel");
    if (accept(Tok::Where)) {
      do s.where.push_back(parseWhereClause());
      while (accept(Tok::Comma));
    }
    return s;
  }

  // TC's `A, B = other(X, Y)` form calls another def.
  [[noreturn]] void rejectCall(const Token& first) {
    while (accept(Tok::Comma)) expectName("an output name");
    expect(Tok::Assign);
    Token callee = expectName("the name of a def");
    fail(callee, "unsupported: calling a def ('" + callee.text + "'); Tessel compiles each def on its own");
  }

  ast::WhereClause parseWhereClause() {
    ast::WhereClause w;
    if (cur().kind == Tok::Exists) {
      // TC: `where exists A(i)` bounds i as if A(i) were read, without reading it.
      w.kind = ast::WhereClause::Kind::Exists;
      w.loc = next().loc;
      w.value = parseExp();
      return w;
    }
    Token var = expectName("an index name after 'where'");
    w.var = var.text;
    w.loc = var.loc;
    if (accept(Tok::Assign)) {
      w.kind = ast::WhereClause::Kind::Let;
      w.value = parseExp();
      return w;
    }
    expect(Tok::In, "'in' or '='");
    w.lo = parseExp();
    expect(Tok::Colon, "':' (ranges are written lo:hi)");
    w.hi = parseExp();
    return w;
  }

  // ---- expressions ----
  static int binaryPrec(Tok k) {
    switch (k) {
      case Tok::Question:
        return 1;
      case Tok::OrOr:
        return 2;
      case Tok::AndAnd:
        return 3;
      case Tok::Lt:
      case Tok::Gt:
      case Tok::Le:
      case Tok::Ge:
      case Tok::EqEq:
      case Tok::Ne:
        return 4;
      case Tok::Plus:
      case Tok::Minus:
        return 5;
      case Tok::Star:
      case Tok::Slash:
      case Tok::Percent:
        return 6;
      default:
        return 0;
    }
  }
  static constexpr int kUnaryPrec = 7;

  // Parses the longest expression whose binary operators bind tighter than `prec`.
  ExprPtr parseExp(int prec = 0) {
    NestingGuard guard(*this);
    ExprPtr lhs;
    if (cur().kind == Tok::Minus || cur().kind == Tok::Bang) {
      Token op = next();
      auto e = std::make_shared<ast::Expr>();
      e->kind = ExprKind::Unary;
      e->loc = op.loc;
      e->op = op.text;
      e->args = {parseExp(kUnaryPrec)};
      lhs = withDepth(e);
    } else {
      lhs = parseBase();
    }
    for (;;) {
      int p = binaryPrec(cur().kind);
      if (p == 0 || p <= prec) return lhs;
      Token op = next();
      if (op.kind == Tok::Question) {
        ExprPtr a = parseExp();
        expect(Tok::Colon, "':' of the '?:' operator");
        ExprPtr b = parseExp(p - 1);  // right associative
        lhs = make(ExprKind::Ternary, op.loc, {lhs, a, b});
        continue;
      }
      auto e = std::make_shared<ast::Expr>();
      e->kind = ExprKind::Binary;
      e->loc = op.loc;
      e->op = op.text;
      e->args = {lhs, parseExp(p)};
      lhs = withDepth(e);
    }
  }

  ExprPtr parseBase() {
    const Token& t = cur();
    switch (t.kind) {
      case Tok::Number: {
        Token n = next();
        auto e = std::make_shared<ast::Expr>();
        e->loc = n.loc;
        if (n.isFloat) {
          e->kind = ExprKind::Float;
          e->floatValue = std::strtod(n.text.c_str(), nullptr);
        } else {
          e->kind = ExprKind::Int;
          e->intValue = parseIntLiteral(n, "an integer literal");
        }
        return e;
      }
      case Tok::LParen: {
        next();
        ExprPtr e = parseExp();
        expect(Tok::RParen);
        return e;
      }
      case Tok::Min:
      case Tok::Max: {
        Token op = next();
        auto args = parseExpList();
        if (args.size() != 2)
          fail(op, "'" + op.text + "' takes 2 arguments but is given " + std::to_string(args.size()));
        auto e = std::make_shared<ast::Expr>();
        e->kind = ExprKind::MinMax;
        e->loc = op.loc;
        e->op = op.text;
        e->args = std::move(args);
        return withDepth(e);
      }
      case Tok::Ident: {
        Token id = next();
        auto e = std::make_shared<ast::Expr>();
        e->loc = id.loc;
        e->name = id.text;
        if (isTypeName(id.text)) {
          if (cur().kind != Tok::LParen)
            fail(cur(),
                 "expected '(' after type name '" + id.text + "' (a cast is written " + id.text + "(x))");
          auto args = parseExpList();
          if (args.size() != 1)
            fail(id,
                 "a cast to '" + id.text + "' takes 1 argument but is given " + std::to_string(args.size()));
          e->kind = ExprKind::Cast;
          e->args = std::move(args);
          return withDepth(e);
        }
        if (cur().kind == Tok::LParen) {
          e->kind = ExprKind::Apply;
          e->args = parseExpList();
          return withDepth(e);
        }
        if (accept(Tok::Dot)) {
          Token n = expect(Tok::Number, "a dimension number after '.'");
          if (n.isFloat) fail(n, "expected a dimension number after '.' but found " + describe(n));
          e->kind = ExprKind::Dim;
          e->dim = static_cast<int>(parseIntLiteral(n, "a dimension number"));
          return e;
        }
        e->kind = ExprKind::Ident;
        return e;
      }
      default:
        fail(t, "expected an expression but found " + describe(t));
    }
  }

  std::vector<ExprPtr> parseExpList() {
    expect(Tok::LParen);
    std::vector<ExprPtr> out;
    if (accept(Tok::RParen)) return out;
    do out.push_back(parseExp());
    while (accept(Tok::Comma));
    expect(Tok::RParen, "',' or ')'");
    return out;
  }

  int64_t parseIntLiteral(const Token& t, const std::string& what) {
    if (t.isFloat) fail(t, "expected " + what + " but found the floating-point number " + t.text);
    errno = 0;
    long long v = std::strtoll(t.text.c_str(), nullptr, 10);
    if (errno == ERANGE || v > 2147483647LL) fail(t, "integer literal " + t.text + " does not fit in int32");
    return v;
  }

  const Source& src_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
};

}  // namespace

std::shared_ptr<const Module> parseModule(const Source& src) { return Parser(src).run(); }

}  // namespace tessel::front
