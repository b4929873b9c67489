#include "cluster_resize.h"

#include "moe/scenario_io.h"

#include <cstdint>

namespace moe::live {

namespace {

std::string shapeLabel(const ClusterSpec& from, int nodes, int gpus_per_node) {
    const std::string n = std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
    const std::string g = std::to_string(gpus_per_node) + (gpus_per_node == 1 ? " GPU" : " GPUs");
    if (gpus_per_node == from.gpus_per_node)
        return n;
    if (nodes == from.nodes)
        return g + " per node";
    return n + " of " + g;
}

} // namespace

ClusterResize resizeCluster(const Scenario& s, int nodes, int gpus_per_node,
                            const std::string& base_dir) {
    ClusterResize out;
    out.summary = shapeLabel(s.cluster, nodes, gpus_per_node);
    const auto refuse = [&](const std::string& field, const std::string& message) {
        Diagnostic d;
        d.field = field;
        d.message = message;
        out.edit.diagnostics.push_back(std::move(d));
        return out;
    };
    const int64_t have = s.cluster.gpuCount();
    const int64_t gpus = int64_t{nodes} * gpus_per_node;
    if (nodes < 1 || gpus_per_node < 1 || have < 1 || s.layout.dp < 1)
        return refuse("cluster.nodes", "nodes, GPUs per node and dp must be positive");
    const int64_t dp_scaled = int64_t{s.layout.dp} * gpus;
    if (dp_scaled % have != 0)
        return refuse("layout.dp", "dp " + std::to_string(s.layout.dp) + " does not scale to " +
                                       std::to_string(gpus) + " GPUs: " +
                                       std::to_string(s.layout.dp) + " x " + std::to_string(gpus) +
                                       " / " + std::to_string(have) + " is not a whole number");
    const int64_t dp = dp_scaled / have;
    // The batch per DP rank is held, so the batch scales exactly when it divides by dp.
    const int64_t batch_scaled = s.training.global_batch * dp;
    if (batch_scaled % s.layout.dp != 0)
        return refuse("training.global_batch",
                      "global batch " + std::to_string(s.training.global_batch) +
                          " does not scale with dp " + std::to_string(s.layout.dp) + " -> " +
                          std::to_string(dp) + " to a whole number");
    const int64_t batch = batch_scaled / s.layout.dp;

    if (nodes != s.cluster.nodes)
        out.overrides.push_back("cluster.nodes=" + std::to_string(nodes));
    if (gpus_per_node != s.cluster.gpus_per_node)
        out.overrides.push_back("cluster.gpus_per_node=" + std::to_string(gpus_per_node));
    out.overrides.push_back("layout.dp=" + std::to_string(dp));
    out.overrides.push_back("training.global_batch=" + std::to_string(batch));
    out.summary += ": dp " + std::to_string(s.layout.dp) + " -> " + std::to_string(dp) +
                   ", global batch " + std::to_string(s.training.global_batch) + " -> " +
                   std::to_string(batch);
    // The per-rack list describes the old nodes (the validator refuses one that places more
    // nodes than the cluster has); empty, racks fill in turn.
    if (nodes != s.cluster.nodes && !s.cluster.rack_nodes.empty()) {
        out.overrides.push_back("cluster.rack_nodes=[]");
        out.summary += ", racks refilled";
    }

    LoadResult loaded = loadScenarioTextWithOverrides(toYaml(s), "", base_dir, out.overrides);
    // Lines and columns point into the generated text, which the user never sees.
    for (Diagnostic& d : loaded.diagnostics) {
        d.file.clear();
        d.line = 0;
        d.column = 0;
    }
    out.edit.scenario = std::move(loaded.scenario);
    out.edit.diagnostics = std::move(loaded.diagnostics);
    return out;
}

} // namespace moe::live
