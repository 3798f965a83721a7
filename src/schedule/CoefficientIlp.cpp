#include "schedule/CoefficientIlp.h"

#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/local_space.h>
#include <isl/mat.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <map>
#include <numeric>

#include "tessel/error.h"

namespace tessel::schedule {

bool AffineRow::isConstant() const {
  return std::all_of(coefficients.begin(), coefficients.end(), [](int64_t c) { return c == 0; });
}

RowVariables::RowVariables(const std::vector<int>& statementDims) : dims_(statementDims) {
  for (int d : dims_) {
    first_.push_back(count_);
    count_ += 1 + d;
  }
}

std::vector<AffineRow> RowVariables::rows(const std::vector<int64_t>& solution) const {
  std::vector<AffineRow> out(dims_.size());
  for (int s = 0; s < statements(); ++s) {
    out[s].constant = solution[constant(s)];
    for (int d = 0; d < dims_[s]; ++d) out[s].coefficients.push_back(solution[iterator(s, d)]);
  }
  return out;
}

LinearConstraint RowVariables::zero() const { return {std::vector<int64_t>(count_, 0), 0, false}; }

namespace {

int64_t valueOf(isl_val* v) {
  TESSEL_CHECK(isl_val_is_int(v) == isl_bool_true, "tessel-scheduler", "non-integer constraint coefficient");
  int64_t out = isl_val_get_num_si(v);
  isl_val_free(v);
  return out;
}

}  // namespace

std::vector<LinearConstraint> farkasConstraints(const isl::set& points) {
  TESSEL_CHECK(isl_set_dim(points.get(), isl_dim_param) == 0, "tessel-scheduler", "parametric dependences");
  // A form is non-negative on a set exactly when it is on the set's convex
  // hull, whose dual has far fewer constraints than the union of the
  // dependence's pieces (padded convolutions: thousands).
  // Existential variables (a dependence through i % 2) are dropped first:
  // isl's coefficients refuse them, and a form non-negative on the larger
  // set is so on the dependence (conservative, never wrong).
  isl_basic_set* hull = isl_set_convex_hull(isl_set_coalesce(isl_set_remove_divs(points.copy())));
  isl_basic_set* coefficients = isl_basic_set_flatten(isl_basic_set_coefficients(hull));
  // Never read a failure as "no constraint": that would let every row through.
  if (!coefficients) isl::exception::throw_last_error(points.ctx());
  std::vector<LinearConstraint> out;
  isl_basic_set_foreach_constraint(
      coefficients,
      [](isl_constraint* c, void* user) -> isl_stat {
        auto& rows = *static_cast<std::vector<LinearConstraint>*>(user);
        LinearConstraint row;
        row.equality = isl_constraint_is_equality(c) == isl_bool_true;
        row.constant = valueOf(isl_constraint_get_constant_val(c));
        isl_size n = isl_constraint_dim(c, isl_dim_set);
        for (int i = 0; i < n; ++i)
          row.coefficients.push_back(valueOf(isl_constraint_get_coefficient_val(c, isl_dim_set, i)));
        rows.push_back(std::move(row));
        isl_constraint_free(c);
        return isl_stat_ok;
      },
      &out);
  isl_basic_set_free(coefficients);
  return out;
}

std::vector<std::vector<int64_t>> flatDirections(const isl::set& domain) {
  isl_basic_set* hull = isl_set_affine_hull(domain.copy());
  if (!hull) isl::exception::throw_last_error(domain.ctx());
  std::vector<std::vector<int64_t>> out;
  isl_basic_set_foreach_constraint(
      hull,
      [](isl_constraint* c, void* user) -> isl_stat {
        auto& rows = *static_cast<std::vector<std::vector<int64_t>>*>(user);
        isl_size divs = isl_constraint_dim(c, isl_dim_div);
        // An equality through an existential (i = 2e) is a stride, not a flat direction.
        if (isl_constraint_is_equality(c) == isl_bool_true &&
            (divs == 0 || isl_constraint_involves_dims(c, isl_dim_div, 0, divs) == isl_bool_false)) {
          std::vector<int64_t> row;
          isl_size n = isl_constraint_dim(c, isl_dim_set);
          for (int i = 0; i < n; ++i)
            row.push_back(valueOf(isl_constraint_get_coefficient_val(c, isl_dim_set, i)));
          rows.push_back(std::move(row));
        }
        isl_constraint_free(c);
        return isl_stat_ok;
      },
      &out);
  isl_basic_set_free(hull);
  return out;
}

std::vector<LinearConstraint> substitute(const std::vector<LinearConstraint>& farkas,
                                         const AffineSubstitution& forms, int variables) {
  std::vector<LinearConstraint> out;
  for (const auto& row : farkas) {
    TESSEL_CHECK(row.coefficients.size() == forms.components.size(), "tessel-scheduler",
                 "coefficient space and substitution differ in size");
    LinearConstraint c{std::vector<int64_t>(variables, 0), row.constant, row.equality};
    for (size_t k = 0; k < forms.components.size(); ++k) {
      int64_t a = row.coefficients[k];
      if (a == 0) continue;
      const auto& form = forms.components[k];
      for (int v = 0; v < variables; ++v) c.coefficients[v] += a * form.coefficients[v];
      c.constant += a * form.constant;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<LinearConstraint> withoutRedundancy(const std::vector<LinearConstraint>& constraints) {
  // Farkas constraints of different dependences (and of one dependence's
  // vertices) often coincide once written in the row's few variables.
  std::map<std::vector<int64_t>, int64_t> tightest;  // normalized inequality -> smallest constant
  std::vector<LinearConstraint> out;
  for (const auto& c : constraints) {
    int64_t g = 0;
    for (int64_t a : c.coefficients) g = std::gcd(g, a);
    if (g == 0) {
      if (c.equality ? c.constant != 0 : c.constant < 0) return {c};  // infeasible: keep the witness
      continue;
    }
    if (c.equality) {
      out.push_back(c);
      continue;
    }
    std::vector<int64_t> key;
    for (int64_t a : c.coefficients) key.push_back(a / g);
    // a.x + b >= 0 with a = g a': a'.x >= ceil(-b / g), i.e. a'.x + floor(b / g) >= 0.
    int64_t b = c.constant >= 0 ? c.constant / g : -((-c.constant + g - 1) / g);
    auto [it, inserted] = tightest.emplace(key, b);
    if (!inserted) it->second = std::min(it->second, b);
  }
  for (const auto& [key, b] : tightest) out.push_back({key, b, false});
  return out;
}

IlpSolution lexicographicMinimum(isl::ctx ctx, int variables, const std::vector<LinearConstraint>& given,
                                 unsigned long operationBudget) {
  std::vector<LinearConstraint> constraints = withoutRedundancy(given);
  // One matrix per kind: adding constraints one by one costs isl a
  // duplicate check each, quadratic in the thousands of Farkas rows.
  int equalities = 0;
  for (const auto& row : constraints) equalities += row.equality ? 1 : 0;
  int inequalities = static_cast<int>(constraints.size()) - equalities;
  isl_mat* eq = isl_mat_alloc(ctx.get(), equalities, variables + 1);
  isl_mat* ineq = isl_mat_alloc(ctx.get(), inequalities, variables + 1);
  int e = 0, i = 0;
  for (const auto& row : constraints) {
    isl_mat*& m = row.equality ? eq : ineq;
    int r = row.equality ? e++ : i++;
    for (int v = 0; v < variables; ++v)
      m = isl_mat_set_element_si(m, r, v, static_cast<int>(row.coefficients[v]));
    m = isl_mat_set_element_si(m, r, variables, static_cast<int>(row.constant));
  }
  isl_basic_set* set =
      isl_basic_set_from_constraint_matrices(isl_space_set_alloc(ctx.get(), 0, variables), eq, ineq,
                                             isl_dim_set, isl_dim_div, isl_dim_param, isl_dim_cst);
  isl_ctx* c = ctx.get();
  unsigned long outerQuota = isl_ctx_get_max_operations(c);
  if (operationBudget > 0) {
    isl_ctx_reset_operations(c);
    isl_ctx_set_max_operations(c, operationBudget);
  }
  // A parametric lexmin over the given (universe, parameter-free) domain:
  // the plain lexmin first computes that domain by projecting every
  // variable out, which on max fusion's dozen statements took minutes of
  // pivots on huge numbers.
  isl_basic_set* everywhere = isl_basic_set_universe(isl_space_params_alloc(c, 0));
  isl_pw_multi_aff* minimum = isl_basic_set_partial_lexmin_pw_multi_aff(set, everywhere, nullptr);
  if (operationBudget > 0) {
    isl_ctx_set_max_operations(c, outerQuota);
    isl_ctx_reset_operations(c);
  }
  IlpSolution out;
  if (!minimum) {
    if (operationBudget > 0 && isl_ctx_last_error(c) == isl_error_quota && !isl_ctx_aborted(c)) {
      isl_ctx_reset_error(c);
      out.tooHard = true;
      return out;
    }
    isl::exception::throw_last_error(ctx);  // isl stopped: the outer quota or the deadline
  }
  if (isl_pw_multi_aff_n_piece(minimum) == 0) {
    isl_pw_multi_aff_free(minimum);
    return out;
  }
  isl_multi_aff* point = isl_pw_multi_aff_as_multi_aff(minimum);
  if (!point) isl::exception::throw_last_error(ctx);
  out.point.emplace();
  for (int v = 0; v < variables; ++v) {
    isl_aff* value = isl_multi_aff_get_at(point, v);
    out.point->push_back(valueOf(isl_aff_get_constant_val(value)));
    isl_aff_free(value);
  }
  isl_multi_aff_free(point);
  return out;
}

namespace {

// Exact rationals for the small matrices of the independence constraints
// (schedule coefficients are at most 2: no overflow in 64 bits).
struct Fraction {
  int64_t num = 0;
  int64_t den = 1;
  Fraction() = default;
  Fraction(int64_t n, int64_t d = 1) : num(n), den(d) { normalize(); }
  void normalize() {
    if (den < 0) num = -num, den = -den;
    int64_t a = num < 0 ? -num : num, b = den;
    while (b != 0) a %= b, std::swap(a, b);
    if (a > 1) num /= a, den /= a;
  }
  Fraction operator+(const Fraction& o) const { return {num * o.den + o.num * den, den * o.den}; }
  Fraction operator-(const Fraction& o) const { return {num * o.den - o.num * den, den * o.den}; }
  Fraction operator*(const Fraction& o) const { return {num * o.num, den * o.den}; }
  Fraction operator/(const Fraction& o) const { return {num * o.den, den * o.num}; }
  bool isZero() const { return num == 0; }
};
using Matrix = std::vector<std::vector<Fraction>>;

// The rows of `rows` that are linearly independent of the rows before them.
Matrix independentRows(const std::vector<std::vector<int64_t>>& rows, int columns) {
  Matrix basis, reduced;  // reduced: echelon copies of basis, to test membership
  std::vector<int> pivots;
  for (const auto& r : rows) {
    std::vector<Fraction> v(columns);
    for (int c = 0; c < columns; ++c) v[c] = Fraction(r[c]);
    std::vector<Fraction> e = v;
    for (size_t k = 0; k < reduced.size(); ++k) {
      Fraction f = e[pivots[k]] / reduced[k][pivots[k]];
      if (f.isZero()) continue;
      for (int c = 0; c < columns; ++c) e[c] = e[c] - f * reduced[k][c];
    }
    int pivot = -1;
    for (int c = 0; c < columns && pivot < 0; ++c)
      if (!e[c].isZero()) pivot = c;
    if (pivot < 0) continue;
    basis.push_back(v);
    reduced.push_back(e);
    pivots.push_back(pivot);
  }
  return basis;
}

Matrix inverse(Matrix m) {
  size_t n = m.size();
  Matrix inv(n, std::vector<Fraction>(n));
  for (size_t i = 0; i < n; ++i) inv[i][i] = Fraction(1);
  for (size_t col = 0; col < n; ++col) {
    size_t p = col;
    while (m[p][col].isZero()) ++p;  // B B^T is positive definite: a pivot exists
    std::swap(m[p], m[col]);
    std::swap(inv[p], inv[col]);
    Fraction d = m[col][col];
    for (size_t c = 0; c < n; ++c) m[col][c] = m[col][c] / d, inv[col][c] = inv[col][c] / d;
    for (size_t r = 0; r < n; ++r) {
      if (r == col || m[r][col].isZero()) continue;
      Fraction f = m[r][col];
      for (size_t c = 0; c < n; ++c)
        m[r][c] = m[r][c] - f * m[col][c], inv[r][c] = inv[r][c] - f * inv[col][c];
    }
  }
  return inv;
}

}  // namespace

int rank(const std::vector<std::vector<int64_t>>& rows, int columns) {
  return static_cast<int>(independentRows(rows, columns).size());
}

std::vector<std::vector<int64_t>> orthogonalComplement(const std::vector<std::vector<int64_t>>& rows,
                                                       int columns) {
  Matrix b = independentRows(rows, columns);
  size_t r = b.size();
  Matrix projection(columns, std::vector<Fraction>(columns));
  for (int i = 0; i < columns; ++i) projection[i][i] = Fraction(1);
  if (r > 0) {
    Matrix gram(r, std::vector<Fraction>(r));
    for (size_t i = 0; i < r; ++i)
      for (size_t j = 0; j < r; ++j)
        for (int c = 0; c < columns; ++c) gram[i][j] = gram[i][j] + b[i][c] * b[j][c];
    Matrix g = inverse(gram);
    // projection -= B^T G B
    for (int i = 0; i < columns; ++i)
      for (int j = 0; j < columns; ++j) {
        Fraction sum;
        for (size_t k = 0; k < r; ++k)
          for (size_t l = 0; l < r; ++l) sum = sum + b[k][i] * g[k][l] * b[l][j];
        projection[i][j] = projection[i][j] - sum;
      }
  }
  std::vector<std::vector<int64_t>> out;
  for (const auto& row : projection) {
    int64_t lcm = 1;
    bool zero = true;
    for (const auto& f : row) {
      if (f.isZero()) continue;
      zero = false;
      int64_t a = lcm, b2 = f.den;
      while (b2 != 0) a %= b2, std::swap(a, b2);
      lcm = lcm / a * f.den;
    }
    if (zero) continue;
    std::vector<int64_t> scaled;
    int64_t g = 0;
    for (const auto& f : row) {
      scaled.push_back(static_cast<int64_t>(f.num * (lcm / f.den)));
      g = std::gcd(g, scaled.back());
    }
    for (auto& v : scaled) v /= g;
    out.push_back(std::move(scaled));
  }
  return out;
}

}  // namespace tessel::schedule
