#include "moe/io/astra_sim.h"

#include "moe/format.h"
#include "moe/json_writer.h"

#include <nlohmann/json.hpp>

namespace moe::io {

AstraSimExport exportAstraSim(const Scenario& s) {
    AstraSimExport result;
    const ClusterSpec& c = s.cluster;
    const int per_domain = c.gpusPerScaleUpDomain();
    const int domains = c.gpuCount() / std::max(1, per_domain);

    // One dimension per tier with two or more NPUs (ASTRA-sim's NetworkParser refuses fewer).
    struct Dim {
        const char* topology;
        int npus;
        double bandwidth_gbps; ///< GB/s per NPU per direction
        double latency_ns;
        const char* what;
    };
    std::vector<Dim> dims;
    if (per_domain > 1)
        dims.push_back({"Switch", per_domain, c.gpu.scale_up_gbps, c.gpu.scale_up_latency_us * 1e3,
                        "NVLink domain"});
    if (domains > 1) {
        // Each GPU's share of its node's NICs, at the scenario's achievable rate.
        const double per_gpu = c.nic.bandwidth_gbps * c.nics_per_node / c.gpus_per_node;
        dims.push_back({"Switch", domains, per_gpu, c.nic.latency_us * 1e3, "scale-out fabric"});
    }
    if (dims.empty()) {
        Diagnostic d;
        d.field = "cluster.nodes";
        d.message = "a single GPU has no network for ASTRA-sim (each dimension needs at least "
                    "two NPUs)";
        result.diagnostics.push_back(std::move(d));
        return result;
    }

    AstraSimFiles files;
    std::vector<std::string>& notes = files.notes;
    notes.push_back("the workload is not exported: ASTRA-sim reads Chakra execution traces of "
                    "the training step (github.com/mlcommons/chakra), one per NPU");
    notes.push_back("bandwidths are the scenario's figures with no protocol efficiency: NVLink "
                    "at its peak " +
                    formatNumber(c.gpu.scale_up_gbps) +
                    " GB/s per direction (ASTRA-sim's own validated HGX-H100 network uses 400 "
                    "of 450), the NICs at their achievable " +
                    formatNumber(c.nic.bandwidth_gbps) + " GB/s");
    if (c.oversubscription > 1)
        notes.push_back("oversubscription " + formatNumber(c.oversubscription) +
                        ": ASTRA-sim's Switch dimension is non-blocking");
    if (c.fabric_topology == FabricTopology::fat_tree)
        notes.push_back("fat-tree: written as ASTRA-sim's dimensions (NVLink, then one switch "
                        "per GPU index across the domains); a fat tree's direct paths between "
                        "different GPU indices of two nodes are not modelled");
    if (c.nics_per_node != c.gpus_per_node)
        notes.push_back(std::to_string(c.nics_per_node) + " NICs for " +
                        std::to_string(c.gpus_per_node) +
                        " GPUs per node: each GPU gets its share of their bandwidth");
    notes.push_back("leaf and spine hops, rack power and reliability are not in ASTRA-sim's "
                    "analytical network");

    std::string yaml = "# ASTRA-sim 2.0 analytical network for the scenario \"" + s.name +
                       "\", written by moe-plan export astra-sim.\n";
    for (std::size_t i = 0; i < dims.size(); ++i)
        yaml += "# dimension " + std::to_string(i) + ": " + dims[i].what + ", " +
                std::to_string(dims[i].npus) + " NPUs\n";
    auto list = [&](auto field) {
        std::string text = "[ ";
        for (std::size_t i = 0; i < dims.size(); ++i)
            text += (i ? ", " : "") + field(dims[i]);
        return text + " ]";
    };
    yaml += "topology: " + list([](const Dim& d) { return std::string(d.topology); }) + "\n";
    yaml += "npus_count: " + list([](const Dim& d) { return std::to_string(d.npus); }) + "\n";
    yaml += "bandwidth: " + list([](const Dim& d) { return formatNumber(d.bandwidth_gbps); }) +
            "  # GB/s\n";
    yaml +=
        "latency: " + list([](const Dim& d) { return formatNumber(d.latency_ns); }) + "  # ns\n";

    // The system layer: collective algorithms per dimension, the GPU's roofline.
    nlohmann::ordered_json sys;
    const nlohmann::json rings(dims.size(), "ring");
    const nlohmann::json direct(dims.size(), "direct");
    sys["scheduling-policy"] = "LIFO";
    sys["endpoint-delay"] = 10;
    sys["active-chunks-per-dimension"] = 1;
    sys["preferred-dataset-splits"] = 4;
    sys["all-reduce-implementation"] = rings;
    sys["all-gather-implementation"] = rings;
    sys["reduce-scatter-implementation"] = rings;
    sys["all-to-all-implementation"] = direct;
    sys["collective-optimization"] = "localBWAware";
    sys["local-mem-bw"] = c.gpu.hbm_tbps * 1000; // GB/s
    sys["boost-mode"] = 0;
    sys["roofline-enabled"] = 1;
    sys["peak-perf"] =
        s.model.compute_precision == Precision::fp8 ? c.gpu.fp8_tflops : c.gpu.bf16_tflops;
    files.network_yaml = yaml;
    files.system_json = sys.dump(4) + "\n";
    files.remote_memory_json = "{\n    \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n";
    result.files = std::move(files);
    return result;
}

} // namespace moe::io
