#include "poly/Print.h"

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/printer.h>
#include <isl/schedule.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>
#include <vector>

namespace tessel::poly {

std::string scheduleToYaml(const isl::schedule& schedule) {
  isl_printer* p = isl_printer_to_str(schedule.ctx().get());
  p = isl_printer_set_yaml_style(p, ISL_YAML_STYLE_BLOCK);
  p = isl_printer_print_schedule(p, schedule.get());
  char* s = isl_printer_get_str(p);
  isl_printer_free(p);
  std::string out = s ? s : "";
  free(s);
  return out;
}

namespace {

std::string statementNames(const isl::union_set& instances) {
  std::set<std::string> names;
  instances.foreach_set([&](const isl::set& s) {
    const char* name = isl_set_get_tuple_name(s.get());
    names.insert(name ? name : "(unnamed)");
  });
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

// One band member: per statement, its expression (`S0[i, j] -> i`).
std::string memberText(const isl::union_pw_aff& member) {
  std::vector<std::string> pieces;
  isl_union_pw_aff_foreach_pw_aff(
      member.get(),
      [](isl_pw_aff* piece, void* user) -> isl_stat {
        char* text = isl_pw_aff_to_str(piece);
        static_cast<std::vector<std::string>*>(user)->push_back(text ? text : "");
        free(text);
        isl_pw_aff_free(piece);
        return isl_stat_ok;
      },
      &pieces);
  std::sort(pieces.begin(), pieces.end());
  std::string out;
  for (std::string text : pieces) {  // { S0[i, j] -> [(i)] } or with pieces
    // The short form when the piece is one affine expression: "S0[i, j] -> i".
    auto open = text.find("{ "), arrow = text.find(" -> [("), close = text.rfind(")] }");
    if (open == 0 && arrow != std::string::npos && close != std::string::npos &&
        text.find(';') == std::string::npos && text.find(':') == std::string::npos)
      text = text.substr(2, arrow - 2) + " -> " + text.substr(arrow + 6, close - arrow - 6);
    out += (out.empty() ? "" : "; ") + text;
  }
  return out;
}

}  // namespace

std::string scheduleOutline(const isl::schedule& schedule, const std::string& indent) {
  std::ostringstream os;
  std::function<void(const isl::schedule_node&, std::string)> visit = [&](const isl::schedule_node& node,
                                                                          std::string at) {
    std::string next = at + "  ";
    if (node.isa<isl::schedule_node_band>()) {
      auto band = node.as<isl::schedule_node_band>();
      os << at << "band" << (band.permutable() ? " (permutable)" : "") << ":\n";
      isl::multi_union_pw_aff partial = band.get_partial_schedule();
      for (int m = 0; m < static_cast<int>(band.n_member()); ++m)
        os << next << (band.member_get_coincident(m) ? "parallel " : "") << memberText(partial.at(m)) << "\n";
    } else if (node.isa<isl::schedule_node_sequence>()) {
      os << at << "sequence\n";
    } else if (node.isa<isl::schedule_node_set>()) {
      os << at << "set\n";
    } else if (node.isa<isl::schedule_node_filter>()) {
      os << at << "filter " << statementNames(node.as<isl::schedule_node_filter>().filter()) << "\n";
    } else if (node.isa<isl::schedule_node_mark>()) {
      isl_id* id = isl_schedule_node_mark_get_id(node.get());
      os << at << "mark " << (id ? isl_id_get_name(id) : "") << "\n";
      isl_id_free(id);
    } else if (node.isa<isl::schedule_node_extension>()) {
      os << at << "extension " << node.as<isl::schedule_node_extension>().extension() << "\n";
    } else if (node.isa<isl::schedule_node_context>()) {
      os << at << "context\n";
    } else if (node.isa<isl::schedule_node_guard>()) {
      os << at << "guard\n";
    } else if (node.isa<isl::schedule_node_expansion>()) {
      os << at << "expansion\n";
    } else {
      next = at;  // the domain and leaves
    }
    for (int c = 0; c < static_cast<int>(node.n_children()); ++c) visit(node.child(c), next);
  };
  visit(schedule.root(), indent);
  return os.str();
}

}  // namespace tessel::poly
