// Where a machine's micro-kernel table lives between runs: `tessel
// microbench` stores it in Tessel's cache directory, named after the machine
// and its ISA; the edge (the CLI, the benchmark harness) loads it once into
// the driver::Machine a compilation gets.
#pragma once

#include <optional>
#include <string>

#include "driver/Machine.h"
#include "microkernel/MicroKernelTable.h"
#include "target/Hardware.h"

namespace tessel::tune {

// Where `tessel microbench` keeps the table of this machine: in Tessel's
// cache directory, named after the machine and its ISA.
std::string defaultTablePath(const target::Hardware& hardware);
// The machine's measured table if one is stored (for its ISA), else none.
std::optional<microkernel::MicroKernelTable> storedTable(const target::Hardware& hardware);
// Writes the table to `path` whole or not at all (a temporary file renamed:
// a search on another core never reads half a table); UserError if it cannot.
void storeTable(const microkernel::MicroKernelTable& table, const std::string& path);
// `hardware` with its stored table, else the register model's classes.
driver::Machine machineFor(target::Hardware hardware);

}  // namespace tessel::tune
