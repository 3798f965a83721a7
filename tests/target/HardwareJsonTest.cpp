// Hardware descriptions as JSON: round trips, defaults, and a located error
// (file:line:col and the JSON path) for every kind of bad file.
#include <gtest/gtest.h>

#include "target/DetectHost.h"
#include "target/HardwareJson.h"
#include "tessel/error.h"

namespace tessel::target {
namespace {

Hardware everyFieldSet() {
  Hardware hw;
  hw.name = "Test \"NPU\" v2";
  hw.kind = "npu";
  hw.isa = {"cube", "vector"};
  hw.cores = 32;
  hw.frequencyHz = 1.8e9;
  MemoryLevel l0;
  l0.name = "L0A";
  l0.capacityBytes = 65536;
  l0.lineBytes = 512;
  l0.sharedBy = 1;
  l0.bandwidthBytesPerS = 1.25e12;
  l0.managed = true;
  l0.source = "configured";
  l0.bandwidthSource = "configured";
  MemoryLevel dram;
  dram.name = "DRAM";
  dram.sharedBy = 32;
  dram.bandwidthBytesPerS = 1.2e12;
  dram.bandwidthPerCoreBytesPerS = 1.2e12 / 7;  // not exactly representable in decimal
  dram.source = "configured";
  hw.memory = {l0, dram};
  ComputeUnit cube;
  cube.name = "cube";
  cube.vectorBits = 16 * 16 * 16;
  cube.registers = 2;
  cube.fmaPerCycle = 4096;
  cube.dtypes = {"f16", "i8"};
  cube.matrix = true;
  ComputeUnit vector;
  vector.name = "vector";
  vector.vectorBits = 2048;
  vector.registers = 0;
  vector.fmaPerCycle = 1;
  vector.dtypes = {"f16", "f32"};
  hw.units = {cube, vector};
  hw.peakF32FlopsPerCore = 3.3e11 / 3;  // not exactly representable in decimal
  hw.peakF32Flops = hw.peakF32FlopsPerCore * 32;
  hw.peakSource = "configured";
  return hw;
}

TEST(HardwareJson, DetectedHostRoundTrips) {
  Hardware host = detectHost();
  EXPECT_EQ(hardwareFromJson(toJson(host), "host.json"), host) << toJson(host);
}

TEST(HardwareJson, EveryFieldRoundTrips) {
  Hardware hw = everyFieldSet();
  std::string json = toJson(hw);
  EXPECT_EQ(hardwareFromJson(json, "npu.json"), hw) << json;
  EXPECT_EQ(toJson(hardwareFromJson(json, "npu.json")), json);
}

TEST(HardwareJson, FieldsAreWrittenInDeclarationOrder) {
  std::string json = toJson(everyFieldSet());
  size_t previous = 0;
  for (const char* field : {"\"name\"", "\"kind\"", "\"isa\"", "\"cores\"", "\"frequencyHz\"", "\"memory\"",
                            "\"units\"", "\"peakF32FlopsPerCore\"", "\"peakF32Flops\"", "\"peakSource\""}) {
    size_t at = json.find(field);
    ASSERT_NE(at, std::string::npos) << field;
    EXPECT_GE(at, previous) << field;
    previous = at;
  }
}

TEST(HardwareJson, UnwrittenFieldsTakeTheDefaults) {
  Hardware hw = hardwareFromJson(R"({"name": "tiny", "cores": 4,
      "memory": [{"name": "L1", "capacityBytes": 32768}, {"name": "DRAM", "capacityBytes": 0}]})",
                                 "tiny.json");
  EXPECT_EQ(hw.kind, "cpu");
  EXPECT_EQ(hw.cores, 4);
  ASSERT_EQ(hw.memory.size(), 2u);
  EXPECT_EQ(hw.memory[0].lineBytes, 64);
  EXPECT_EQ(hw.memory[0].sharedBy, 1);
  EXPECT_EQ(hw.memory[1].capacityBytes, 0);
  EXPECT_TRUE(hw.units.empty());
  EXPECT_EQ(hw.bestVectorUnit().name, "scalar");
  EXPECT_EQ(hw.level("L1"), &hw.memory[0]);
  EXPECT_EQ(hw.level("L3"), nullptr);
}

// The UserError that reading `text` as "bad.json" raises.
UserError errorOf(const std::string& text) {
  try {
    hardwareFromJson(text, "bad.json");
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return UserError({}, "");
}

// A valid description to break one field at a time: `memory` and `extra` are
// spliced in.
std::string description(const std::string& memory, const std::string& extra = "") {
  return "{\n"
         "  \"name\": \"m\",\n"
         "  \"cores\": 2,\n" +
         extra + "  \"memory\": [\n" + memory +
         "  ]\n"
         "}\n";
}

const std::string kL1 = "    {\"name\": \"L1\", \"capacityBytes\": 49152},\n";
const std::string kDram = "    {\"name\": \"DRAM\", \"capacityBytes\": 0}\n";

TEST(HardwareJson, SyntaxErrorsAreLocated) {
  UserError e = errorOf("{\n  \"name\": \"m\",\n  \"cores\": 2,,\n}\n");
  EXPECT_EQ(e.loc().file, "bad.json");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_EQ(e.loc().col, 14);
  EXPECT_NE(std::string(e.what()).find("bad.json:3:14: error: invalid JSON: syntax error"), std::string::npos)
      << e.what();
  EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();

  UserError empty = errorOf("");
  EXPECT_EQ(empty.loc().line, 1);
  EXPECT_NE(empty.reason().find("invalid JSON"), std::string::npos);

  UserError overflow = errorOf("{\"name\": \"m\",\n \"frequencyHz\": 1e999}");
  EXPECT_EQ(overflow.loc().line, 2);
  EXPECT_EQ(overflow.loc().col, 17);
  EXPECT_EQ(overflow.reason(), "invalid JSON: number overflow parsing '1e999'");

  UserError unterminated = errorOf("{\"name\": \"m");
  EXPECT_EQ(unterminated.loc().line, 1);
  EXPECT_GT(unterminated.loc().col, 1);
}

TEST(HardwareJson, WrongTypesNameTheirPath) {
  UserError e = errorOf(description("    {\"name\": \"L1\", \"capacityBytes\": \"48K\"},\n" + kDram));
  EXPECT_EQ(e.reason(), "memory[0].capacityBytes: must be an integer, not string");
  EXPECT_EQ(e.loc().line, 5);
  EXPECT_EQ(e.loc().col, 37);  // the value "48K"

  UserError fraction =
      errorOf(description(kL1 + "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"sharedBy\": 1.5}\n"));
  EXPECT_EQ(fraction.reason(), "memory[1].sharedBy: must be an integer (got 1.5)");
  EXPECT_EQ(fraction.loc().line, 6);

  UserError cores = errorOf("{\"name\": \"m\", \"cores\": [2], \"memory\": []}");
  EXPECT_EQ(cores.reason(), "cores: must be an integer, not array");
  EXPECT_EQ(cores.loc().col, 24);

  UserError isa = errorOf(description(kDram, "  \"isa\": [\"avx2\", 512],\n"));
  EXPECT_EQ(isa.reason(), "isa[1]: must be a string, not number");
  EXPECT_EQ(isa.loc().line, 4);
  EXPECT_EQ(isa.loc().col, 19);

  UserError top = errorOf("[1, 2]");
  EXPECT_EQ(top.reason(), "the top level: must be an object, not array");
  EXPECT_EQ(top.loc().line, 1);
  EXPECT_EQ(top.loc().col, 1);
}

TEST(HardwareJson, UnknownFieldsAreErrors) {
  UserError e =
      errorOf(description(kL1 + "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"bandwith\": 1e10}\n"));
  EXPECT_EQ(e.reason().rfind("memory[1].bandwith: unknown field (expected one of: name, capacityBytes", 0),
            0u)
      << e.reason();
  EXPECT_EQ(e.loc().line, 6);
  EXPECT_EQ(e.loc().col, 42);  // the key

  UserError top = errorOf(description(kDram, "  \"frequency\": 3e9,\n"));
  EXPECT_EQ(top.reason().rfind("frequency: unknown field", 0), 0u) << top.reason();
  EXPECT_EQ(top.loc().line, 4);
  EXPECT_EQ(top.loc().col, 3);

  UserError unit =
      errorOf(description(kDram, "  \"units\": [{\"name\": \"avx2\", \"vectorBits\": 256, \"fma\": 2}],\n"));
  EXPECT_EQ(unit.reason().rfind("units[0].fma: unknown field", 0), 0u) << unit.reason();
}

TEST(HardwareJson, MissingRequiredFields) {
  UserError e = errorOf(description("    {\"name\": \"L1\"},\n" + kDram));
  EXPECT_EQ(e.reason(), "memory[0]: missing required field 'capacityBytes'");
  EXPECT_EQ(e.loc().line, 5);
  EXPECT_EQ(e.loc().col, 5);  // the object

  UserError noMemory = errorOf("{\"name\": \"m\", \"cores\": 2}");
  EXPECT_EQ(noMemory.reason(), "the top level: missing required field 'memory'");

  UserError noBits = errorOf(description(kDram, "  \"units\": [{\"name\": \"avx2\"}],\n"));
  EXPECT_EQ(noBits.reason(), "units[0]: missing required field 'vectorBits'");
}

TEST(HardwareJson, LevelsMustNotShrinkTowardsDram) {
  UserError e =
      errorOf(description("    {\"name\": \"L1\", \"capacityBytes\": 49152},\n"
                          "    {\"name\": \"L2\", \"capacityBytes\": 2097152},\n"
                          "    {\"name\": \"L3\", \"capacityBytes\": 1048576},\n" +
                          kDram));
  EXPECT_EQ(e.reason().rfind("memory[2].capacityBytes: level 'L3' (1048576 bytes) is smaller than 'L2'", 0),
            0u)
      << e.reason();
  EXPECT_EQ(e.loc().line, 7);

  UserError unbounded = errorOf(description("    {\"name\": \"DRAM\", \"capacityBytes\": 0},\n" +
                                            kL1.substr(0, kL1.size() - 2) + "\n"));
  EXPECT_EQ(
      unbounded.reason().rfind("memory[0].capacityBytes: 0 (unbounded) is only allowed for the last", 0), 0u)
      << unbounded.reason();

  UserError twice = errorOf(description(kL1 + kL1 + kDram));
  EXPECT_EQ(twice.reason(), "memory[1].name: level 'L1' is listed twice");
}

TEST(HardwareJson, NegativeAndOutOfRangeValues) {
  UserError size = errorOf(description("    {\"name\": \"L1\", \"capacityBytes\": -5},\n" + kDram));
  EXPECT_EQ(size.reason(), "memory[0].capacityBytes: must not be negative (got -5)");
  EXPECT_EQ(size.loc().line, 5);

  UserError line =
      errorOf(description("    {\"name\": \"L1\", \"capacityBytes\": 64, \"lineBytes\": 0},\n" + kDram));
  EXPECT_EQ(line.reason(), "memory[0].lineBytes: must be at least 1 (got 0)");

  UserError bandwidth = errorOf(
      description(kL1 + "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"bandwidthBytesPerS\": -1e9}\n"));
  EXPECT_EQ(bandwidth.reason().rfind("memory[1].bandwidthBytesPerS: must not be negative", 0), 0u)
      << bandwidth.reason();

  UserError cores = errorOf("{\"name\": \"m\", \"cores\": 0, \"memory\": []}");
  EXPECT_EQ(cores.reason(), "cores: must be at least 1 (got 0)");

  UserError huge = errorOf("{\"name\": \"m\", \"cores\": 99999999999, \"memory\": []}");
  EXPECT_EQ(huge.reason().rfind("cores: is too large", 0), 0u) << huge.reason();

  UserError empty = errorOf("{\"name\": \"m\", \"cores\": 1, \"memory\": []}");
  EXPECT_EQ(empty.reason(), "memory: must list at least one level (DRAM)");
}

TEST(HardwareJson, UnknownNamesInClosedLists) {
  UserError kind = errorOf(description(kDram, "  \"kind\": \"gpu\",\n"));
  EXPECT_EQ(kind.reason(), "kind: unknown kind 'gpu' (expected cpu, cuda or npu)");
  EXPECT_EQ(kind.loc().line, 4);
  EXPECT_EQ(kind.loc().col, 11);

  UserError dtype = errorOf(description(
      kDram, "  \"units\": [{\"name\": \"v\", \"vectorBits\": 128, \"dtypes\": [\"float\"]}],\n"));
  EXPECT_EQ(dtype.reason().rfind("units[0].dtypes[0]: unknown element type 'float'", 0), 0u)
      << dtype.reason();

  UserError peak = errorOf(description(kDram, "  \"peakSource\": \"guessed\",\n"));
  EXPECT_EQ(peak.reason().rfind("peakSource: unknown peak source 'guessed'", 0), 0u) << peak.reason();
}

TEST(HardwareJson, PerCoreBandwidthRoundTrips) {
  Hardware hw = everyFieldSet();
  std::string json = toJson(hw);
  EXPECT_NE(json.find("\"bandwidthPerCoreBytesPerS\""), std::string::npos) << json;
  Hardware back = hardwareFromJson(json, "npu.json");
  EXPECT_EQ(back.memory[1].bandwidthPerCoreBytesPerS, hw.memory[1].bandwidthPerCoreBytesPerS);
  EXPECT_EQ(back.memory[0].bandwidthPerCoreBytesPerS, 0);  // unknown stays unknown

  // Written next to the all-core figure; absent reads as unknown.
  size_t level = json.find("\"DRAM\"");
  EXPECT_LT(json.find("\"bandwidthBytesPerS\"", level), json.find("\"bandwidthPerCoreBytesPerS\"", level));
  Hardware old = hardwareFromJson(description(kDram), "old.json");
  EXPECT_EQ(old.memory[0].bandwidthPerCoreBytesPerS, 0);
}

TEST(HardwareJson, PerCoreBandwidthIsChecked) {
  UserError negative = errorOf(description(
      kL1 + "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"bandwidthPerCoreBytesPerS\": -1e9}\n"));
  EXPECT_EQ(negative.reason().rfind("memory[1].bandwidthPerCoreBytesPerS: must not be negative", 0), 0u)
      << negative.reason();
  EXPECT_EQ(negative.loc().line, 6);
  EXPECT_EQ(negative.loc().col, 71);  // the value

  UserError text = errorOf(description(
      kL1 + "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"bandwidthPerCoreBytesPerS\": \"fast\"}\n"));
  EXPECT_EQ(text.reason(), "memory[1].bandwidthPerCoreBytesPerS: must be a number, not string");

  UserError aboveAll =
      errorOf(description(kL1 + "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"bandwidthBytesPerS\": "
                                "2e10, \"bandwidthPerCoreBytesPerS\": 3e10}\n"));
  EXPECT_EQ(aboveAll.reason().rfind("memory[1].bandwidthPerCoreBytesPerS: one core's bandwidth", 0), 0u)
      << aboveAll.reason();
  EXPECT_EQ(aboveAll.loc().line, 6);

  // Per core alone (the all-core figure unknown) is fine.
  Hardware perCoreOnly = hardwareFromJson(
      description(kL1 +
                  "    {\"name\": \"DRAM\", \"capacityBytes\": 0, \"bandwidthPerCoreBytesPerS\": 1e10}\n"),
      "ok.json");
  EXPECT_EQ(perCoreOnly.memory[1].bandwidthPerCoreBytesPerS, 1e10);
}

}  // namespace
}  // namespace tessel::target
