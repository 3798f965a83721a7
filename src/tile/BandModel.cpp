#include "tile/BandModel.h"

#include <algorithm>
#include <sstream>

#include "schedule/TreeQueries.h"
#include "tessel/error.h"

namespace tessel::tile {

namespace {

constexpr const char* kPass = "tile";

int64_t toInt(const isl::val& v) {
  TESSEL_CHECK(v.is_int(), kPass, "unbounded band member");
  return v.get_num_si();
}

isl::union_map fromMultiUnionPwAff(const isl::multi_union_pw_aff& m) {
  return isl::manage(isl_union_map_from_multi_union_pw_aff(m.copy()));
}

// "{ [c0, c1, ...] : <constraints> }" over `dims` anonymous dimensions.
std::string anonymousTuple(int dims) {
  std::string s = "[";
  for (int d = 0; d < dims; ++d) s += (d ? ", c" : "c") + std::to_string(d);
  return s + "]";
}

}  // namespace

BandModel::BandModel(const poly::Scop& scop, const isl::schedule_node_band& band, int64_t lineBytes)
    : lineBytes_(std::max<int64_t>(lineBytes, 1)) {
  isl::union_set domain = schedule::nodeDomain(band);
  isl::union_map prefix = band.get_prefix_schedule_union_map().intersect_domain(domain);
  isl::union_map partial = fromMultiUnionPwAff(band.get_partial_schedule()).intersect_domain(domain);
  instanceToTime_ = isl::manage(isl_union_map_flat_range_product(prefix.copy(), partial.copy()));
  accesses_ = scop.reads.unite(scop.writes).intersect_domain(domain);

  isl::set times = instanceToTime_.range().as_set();
  int outer = static_cast<int>(times.tuple_dim()) - static_cast<int>(band.n_member());
  // The first iteration of the enclosing loops, then the members' ranges inside it.
  isl::set inner = times;
  for (int d = 0; d < outer; ++d) {
    int64_t v = toInt(inner.dim_min_val(d));
    outerPoint_.push_back(v);
    inner = isl::manage(
        isl_set_fix_si(inner.release(), isl_dim_set, static_cast<unsigned>(d), static_cast<int>(v)));
  }
  for (unsigned m = 0; m < band.n_member(); ++m) {
    int pos = outer + static_cast<int>(m);
    int64_t lo = toInt(times.dim_min_val(pos)), hi = toInt(times.dim_max_val(pos));
    lower_.push_back(lo);
    extent_.push_back(hi - lo + 1);
    coincident_.push_back(band.member_get_coincident(static_cast<int>(m)));
  }

  // Which variable of each statement every member runs over.
  partial.foreach_map([&](isl::map m) {
    std::string name = m.domain_tuple_id().name();
    const poly::Statement& st = scop.statement(name);
    statements_.push_back(name);
    std::vector<int>& dims = memberDims_[name];
    for (int member = 0; member < static_cast<int>(band.n_member()); ++member) {
      int found = -1;
      for (int j = 0; j < static_cast<int>(st.dims.size()) && found < 0; ++j) {
        std::string vars;
        for (size_t k = 0; k < st.dims.size(); ++k) vars += (k ? ", i" : "i") + std::to_string(k);
        std::string out;
        for (int k = 0; k < static_cast<int>(band.n_member()); ++k)
          out += (k ? ", " : "") + (k == member ? "i" + std::to_string(j) : "o" + std::to_string(k));
        // member == variable j, whatever the other members are.
        isl::map candidate(m.ctx(), "{ " + name + "[" + vars + "] -> [" + out + "] }");
        if (m.is_subset(candidate.intersect_domain(st.domain))) found = j;
      }
      dims.push_back(found);
    }
  });
  std::sort(statements_.begin(), statements_.end());

  for (const auto& t : scop.program->tensors) elementBytes_[t.name] = te::dtypeBytes(t.dtype);
}

int BandModel::statementDim(const std::string& statement, int member) const {
  auto it = memberDims_.find(statement);
  if (it == memberDims_.end()) return -1;
  return it->second[static_cast<size_t>(member)];
}

int64_t BandModel::narrowestElementBytes() const {
  int64_t narrowest = 0;
  accesses_.range().foreach_set([&](isl::set s) {
    auto bytes = elementBytes_.find(isl::manage(isl_set_get_tuple_id(s.get())).name());
    int64_t b = bytes == elementBytes_.end() ? 4 : bytes->second;
    narrowest = narrowest == 0 ? b : std::min(narrowest, b);
  });
  return std::max<int64_t>(narrowest, 1);
}

TileCost BandModel::cost(const std::vector<int64_t>& sizes) const {
  int outer = static_cast<int>(outerPoint_.size());
  std::ostringstream constraints;
  for (int d = 0; d < outer; ++d) constraints << (d ? " and " : "") << "c" << d << " = " << outerPoint_[d];
  for (int m = 0; m < members(); ++m) {
    int64_t lo = lower(m);
    constraints << (outer + m ? " and " : "") << lo << " <= c" << outer + m << " < "
                << lo + sizes[static_cast<size_t>(m)];
  }
  isl::set tile(instanceToTime_.ctx(),
                "{ " + anonymousTuple(outer + members()) + " : " + constraints.str() + " }");
  isl::union_set instances = instanceToTime_.intersect_range(isl::union_set(tile)).domain();

  TileCost c;
  auto boxExtents = [](const isl::set& s) {
    std::vector<int64_t> ext;
    for (unsigned d = 0; d < s.tuple_dim(); ++d)
      ext.push_back(toInt(s.dim_max_val(static_cast<int>(d))) - toInt(s.dim_min_val(static_cast<int>(d))) +
                    1);
    return ext;
  };
  instances.foreach_set([&](isl::set s) {
    double n = 1;
    for (int64_t e : boxExtents(s)) n *= static_cast<double>(e);
    c.instances += n;
  });
  accesses_.intersect_domain(instances).range().foreach_set([&](isl::set s) {
    std::string array = isl::manage(isl_set_get_tuple_id(s.get())).name();
    auto bytes = elementBytes_.find(array);
    int64_t elem = bytes == elementBytes_.end() ? 4 : bytes->second;
    std::vector<int64_t> ext = boxExtents(s);
    // Rows of the box along the innermost (contiguous) dimension, each a
    // whole number of lines.
    double rows = 1;
    for (size_t d = 0; d + 1 < ext.size(); ++d) rows *= static_cast<double>(ext[d]);
    int64_t rowBytes = ext.empty() ? elem : ext.back() * elem;
    if (!bypassing_.count(array))
      c.footprintBytes += rows * static_cast<double>((rowBytes + lineBytes_ - 1) / lineBytes_ * lineBytes_);
    ++c.arrays;
    c.elements[array] += rows * static_cast<double>(ext.empty() ? 1 : ext.back());
    TileCost::Rows& r = c.rows[array];
    r.count += rows;
    r.bytes = std::max(r.bytes, rowBytes);
  });
  return c;
}

}  // namespace tessel::tile
