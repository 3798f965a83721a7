#include "schedule/FlattenSchedule.h"

#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>

#include <optional>
#include <sstream>
#include <vector>

#include "tessel/error.h"

namespace tessel::schedule {

namespace {

// "[t0, ..., tn-1" (no closing bracket), for building maps between time vectors.
std::string vectorText(const char* prefix, size_t n) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << prefix << i;
  return os.str();
}

// Walks the tree top-down with the executions reaching each node.
class Flattener {
 public:
  explicit Flattener(isl::ctx ctx) : ctx_(ctx), result_(isl::union_map::empty(ctx)) {}

  isl::union_map run(const isl::schedule& schedule) {
    isl::schedule_node root = schedule.root();
    isl::union_set domain = root.as<isl::schedule_node_domain>().domain();
    isl::union_map start = isl::union_map::from_domain_and_range(domain, isl::union_set(ctx_, "{ [] }"));
    visit(root.child(0), start, {});
    return padded();
  }

 private:
  // One entry per time dimension: the sequence position it holds, or empty
  // for a band member. Extension nodes need it: their domain is the outer
  // band members only.
  using Layout = std::vector<std::optional<int>>;

  void visit(const isl::schedule_node& node, isl::union_map executed, Layout layout) {
    if (executed.is_empty()) return;
    if (node.isa<isl::schedule_node_leaf>()) {
      result_ = result_.unite(executed);
      return;
    }
    if (node.isa<isl::schedule_node_band>()) {
      auto band = node.as<isl::schedule_node_band>();
      if (band.n_member() > 0) {
        isl::union_map members = isl::union_map::from(band.partial_schedule());
        executed = isl::manage(isl_union_map_flat_range_product(executed.release(), members.release()));
        layout.insert(layout.end(), band.n_member(), std::nullopt);
      }
    } else if (node.isa<isl::schedule_node_filter>()) {
      executed = executed.intersect_domain(node.as<isl::schedule_node_filter>().filter());
    } else if (node.isa<isl::schedule_node_extension>()) {
      executed =
          executed.unite(extended(node.as<isl::schedule_node_extension>().extension(), executed, layout));
    } else if (node.isa<isl::schedule_node_sequence>() || node.isa<isl::schedule_node_set>()) {
      bool ordered = node.isa<isl::schedule_node_sequence>();
      for (int i = 0; i < static_cast<int>(node.n_children()); ++i) {
        Layout childLayout = layout;
        childLayout.push_back(ordered ? i : 0);
        visit(node.child(i), executed.apply_range(appendConstant(layout.size(), ordered ? i : 0)),
              childLayout);
      }
      return;
    } else if (node.isa<isl::schedule_node_guard>() || node.isa<isl::schedule_node_expansion>()) {
      throw InternalError("flatten-schedule", "guard and expansion nodes are not supported");
    }
    // Marks and contexts change no execution.
    for (int i = 0; i < static_cast<int>(node.n_children()); ++i) visit(node.child(i), executed, layout);
  }

  // { [t0..tn-1] -> [t0..tn-1, value] }
  isl::union_map appendConstant(size_t n, int value) const {
    std::string t = vectorText("t", n);
    return isl::union_map(ctx_, "{ " + t + "] -> " + t + (n ? ", " : "") + std::to_string(value) + "] }");
  }

  // The executions an extension node adds: each instance in the extension's
  // range runs at every executed outer time whose band members map to it.
  isl::union_map extended(const isl::union_map& extension, const isl::union_map& executed,
                          const Layout& layout) const {
    std::ostringstream os;
    size_t members = 0;
    for (const auto& entry : layout)
      if (!entry) ++members;
    os << "{ " << vectorText("p", members) << "] -> [";
    size_t member = 0;
    for (size_t i = 0; i < layout.size(); ++i) {
      os << (i ? ", " : "");
      if (layout[i])
        os << *layout[i];
      else
        os << "p" << member++;
    }
    os << "] }";
    isl::union_map bandsToTime(ctx_, os.str());
    return extension.reverse().apply_range(bandsToTime).intersect_range(executed.range());
  }

  // All time vectors extended with zeros to the longest one.
  isl::union_map padded() const {
    size_t longest = 0;
    result_.foreach_map([&](isl::map m) { longest = std::max<size_t>(longest, m.range_tuple_dim()); });
    isl::union_map out = isl::union_map::empty(ctx_);
    result_.foreach_map([&](isl::map m) {
      m = isl::manage(isl_map_reset_tuple_id(m.release(), isl_dim_out));
      size_t n = m.range_tuple_dim();
      std::string t = vectorText("t", n);
      std::string pad = t;
      for (size_t i = n; i < longest; ++i) pad += (i ? ", 0" : "0");
      out = out.unite(isl::union_map(m).apply_range(isl::union_map(ctx_, "{ " + t + "] -> " + pad + "] }")));
    });
    return out;
  }

  isl::ctx ctx_;
  isl::union_map result_;
};

}  // namespace

isl::union_map flattenSchedule(const isl::schedule& schedule) {
  return Flattener(schedule.ctx()).run(schedule);
}

}  // namespace tessel::schedule
