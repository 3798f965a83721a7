// The compile options as a list of KEY=VALUE items (`tessel bench --options`,
// `--versus`; what CompileOptions::toString prints), separated by spaces or commas. The keys and
// values are the command line's (--KEY VALUE), from driver/OptionTable.h; a
// value that holds spaces and commas itself (a tiling policy, a scheme) runs
// to the next KEY= item, e.g.
// "fusion=min tiles=S_1: 64@L2/32@L1, 64@L2/32@L1, 16@L1 tiling=off".
// Every mistake is a UserError at --options:LINE:COL with the text shown,
// a bad policy included (and the policy's positions, for errors the
// compiler finds later, point into the text too).
#pragma once

#include <string>

#include "driver/Options.h"

namespace tessel::driver {

// `origin` names the option in messages ("--options", "--versus").
CompileOptions parseOptionList(const std::string& text, const std::string& origin = "--options");

// `e` shown with its line of `text` when it is located in the --options text
// without one (the compiler's errors about the policy); else `e` unchanged.
UserError withOptionListLine(const UserError& e, const std::string& text);

}  // namespace tessel::driver
