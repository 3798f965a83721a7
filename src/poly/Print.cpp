#include "poly/Print.h"

#include <isl/printer.h>
#include <isl/schedule.h>

#include <cstdlib>

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

}  // namespace tessel::poly
