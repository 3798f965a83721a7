// Lexer for the Tensor Comprehensions language: turns source text into tokens
// with 1-based line/column locations. `#` starts a comment to end of line.
#pragma once

#include <string>
#include <vector>

#include "tessel/error.h"

namespace tessel::front {

enum class Tok {
  Eof,
  Ident,
  Number,
  // keywords
  Def,
  Where,
  In,
  Exists,
  Min,
  Max,
  // assignment and reduction operators
  Assign,
  PlusEq,
  TimesEq,
  MinEq,
  MaxEq,
  PlusEqB,
  TimesEqB,
  MinEqB,
  MaxEqB,
  // operators and punctuation
  Arrow,
  Equivalent,
  Le,
  Ge,
  EqEq,
  Ne,
  AndAnd,
  OrOr,
  Lt,
  Gt,
  Bang,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Question,
  Colon,
  Comma,
  Dot,
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;  // spelling as written ("" at end of file)
  SourceLoc loc;
  bool isFloat = false;  // Number: has '.' or an exponent
};

// How a token kind is named in messages, e.g. "')'" or "an identifier".
std::string describe(Tok kind);
// How a token is named in messages: its spelling, or "the end of the file".
std::string describe(const Token& t);

// Throws UserError (with the source line) on characters that start no token.
std::vector<Token> lex(const std::string& file, const std::string& text);

// Line `line` (1-based) of `text` without its newline; "" when out of range.
std::string sourceLine(const std::string& text, int line);

}  // namespace tessel::front
