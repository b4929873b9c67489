// libFuzzer target: the routing histogram CSV reader, every layout (weights, index column, long
// table). Seed corpus: tests/data (routing_*.csv covers each layout).
#include "moe/routing_csv.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    moe::parseRoutingHistogramCsv(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "fuzz.csv");
    return 0;
}
