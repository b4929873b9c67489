#pragma once
// Text and JSON renderings of a layout search (moe-plan search). They only format what
// searchLayouts computed.

#include "moe/scenario.h"
#include "moe/search.h"

#include <string>

namespace moe::cli {

std::string searchText(const Scenario& s, const SearchResult& result);
std::string searchJson(const Scenario& s, const SearchResult& result);

} // namespace moe::cli
