#include "moe/catalog.h"

#include "embedded.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>

namespace moe {

namespace {

// The catalog is our own embedded file, so a malformed entry is a build defect: test_catalog
// parses it, and a failure here names the entry instead of yielding zeros.
[[noreturn]] void catalogDefect(const std::string& what) {
    throw std::logic_error("built-in catalog: " + what);
}

template <typename T> T required(const YAML::Node& entry, const char* key, const std::string& id) {
    const YAML::Node value = entry[key];
    if (!value)
        catalogDefect("entry '" + id + "' lacks '" + key + "'");
    return value.as<T>();
}

/// The datasheet an entry's figures come from; every entry must name one.
std::string requiredSource(const YAML::Node& entry, const std::string& id) {
    std::string source = required<std::string>(entry, "source", id);
    if (source.find_first_not_of(" \t\n") == std::string::npos)
        catalogDefect("entry '" + id + "' has an empty 'source'");
    return source;
}

GpuSpec parseGpu(const YAML::Node& entry) {
    GpuSpec gpu;
    gpu.preset = required<std::string>(entry, "id", "?");
    const std::string& id = gpu.preset;
    gpu.name = required<std::string>(entry, "name", id);
    gpu.bf16_tflops = required<double>(entry, "bf16_tflops", id);
    // 0 or absent: no FP8 tensor cores (A100); validation refuses FP8 compute on such a GPU.
    gpu.fp8_tflops = entry["fp8_tflops"] ? entry["fp8_tflops"].as<double>() : 0.0;
    if (!(gpu.fp8_tflops >= 0))
        catalogDefect("entry '" + id + "' has a negative 'fp8_tflops'");
    gpu.hbm_gb = required<double>(entry, "hbm_gb", id);
    gpu.hbm_tbps = required<double>(entry, "hbm_tbps", id);
    gpu.sm_count = required<int>(entry, "sm_count", id);
    if (gpu.sm_count <= 0)
        catalogDefect("entry '" + id + "' has a non-positive 'sm_count'");
    gpu.scale_up_gbps = required<double>(entry, "scale_up_gbps", id);
    gpu.scale_up_latency_us = required<double>(entry, "scale_up_latency_us", id);
    gpu.scale_up_fabric = required<std::string>(entry, "scale_up_fabric", id);
    gpu.power_w = required<double>(entry, "power_w", id);
    gpu.price_usd = required<double>(entry, "price_usd", id);
    // Absent: no hardware MX block scaling (everything before Blackwell).
    gpu.mxfp8 = entry["mxfp8"] ? entry["mxfp8"].as<bool>() : false;
    return gpu;
}

Catalog::NodeShape parseNodeShape(const YAML::Node& entry, const std::string& id) {
    const YAML::Node node = entry["node"];
    if (!node)
        catalogDefect("entry '" + id + "' lacks 'node'");
    Catalog::NodeShape shape;
    shape.gpu_preset = id;
    shape.gpus_per_node = required<int>(node, "gpus_per_node", id);
    shape.nodes_per_rack = required<int>(node, "nodes_per_rack", id);
    const auto domain = parseScaleUpDomain(required<std::string>(node, "scale_up_domain", id));
    if (!domain)
        catalogDefect("entry '" + id + "' has an unknown scale_up_domain");
    shape.scale_up_domain = *domain;
    shape.server_usd = required<double>(node, "server_usd", id);
    shape.rack_usd = required<double>(node, "rack_usd", id);
    shape.node_overhead_w = required<double>(node, "node_overhead_w", id);
    shape.rack_overhead_w = required<double>(node, "rack_overhead_w", id);
    return shape;
}

NicSpec parseNic(const YAML::Node& entry) {
    NicSpec nic;
    nic.preset = required<std::string>(entry, "id", "?");
    const std::string& id = nic.preset;
    nic.name = required<std::string>(entry, "name", id);
    nic.speed_gbit = required<double>(entry, "speed_gbit", id);
    nic.bandwidth_gbps = required<double>(entry, "bandwidth_gbps", id);
    nic.latency_us = required<double>(entry, "latency_us", id);
    nic.power_w = required<double>(entry, "power_w", id);
    nic.price_usd = required<double>(entry, "price_usd", id);
    nic.switch_usd = required<double>(entry, "switch_usd", id);
    nic.switch_w = required<double>(entry, "switch_w", id);
    nic.cable_usd = required<double>(entry, "cable_usd", id);
    return nic;
}

template <typename Spec>
const Spec* findPreset(const std::vector<Spec>& specs, const std::string& preset) {
    for (const Spec& spec : specs) {
        if (spec.preset == preset)
            return &spec;
    }
    return nullptr;
}

} // namespace

Catalog parseCatalog(const std::string& yaml) {
    const YAML::Node root = YAML::Load(yaml);
    Catalog catalog;
    catalog.sources = root["sources"].as<std::string>("");
    for (const YAML::Node& entry : root["gpus"]) {
        catalog.gpus.push_back(parseGpu(entry));
        const std::string& id = catalog.gpus.back().preset;
        catalog.node_shapes.push_back(parseNodeShape(entry, id));
        catalog.entry_sources.push_back({id, requiredSource(entry, id)});
    }
    for (const YAML::Node& entry : root["nics"]) {
        catalog.nics.push_back(parseNic(entry));
        const std::string& id = catalog.nics.back().preset;
        catalog.entry_sources.push_back({id, requiredSource(entry, id)});
    }
    if (catalog.gpus.empty() || catalog.nics.empty())
        catalogDefect("no GPUs or no NICs");
    return catalog;
}

const GpuSpec* Catalog::findGpu(const std::string& preset) const {
    return findPreset(gpus, preset);
}

const NicSpec* Catalog::findNic(const std::string& preset) const {
    return findPreset(nics, preset);
}

const Catalog::NodeShape* Catalog::findNodeShape(const std::string& gpu_preset) const {
    for (const NodeShape& shape : node_shapes) {
        if (shape.gpu_preset == gpu_preset)
            return &shape;
    }
    return nullptr;
}

const std::string* Catalog::sourceOf(const std::string& preset) const {
    for (const EntrySource& entry : entry_sources) {
        if (entry.preset == preset)
            return &entry.source;
    }
    return nullptr;
}

const Catalog& builtinCatalog() {
    static const Catalog catalog = parseCatalog(embedded::kCatalogYaml);
    return catalog;
}

const char* builtinCatalogYaml() {
    return embedded::kCatalogYaml;
}

} // namespace moe
