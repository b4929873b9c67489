#include "test_support.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace moe::test {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::vector<std::string> sampleFiles() {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(MOE_SAMPLES_DIR)) {
        if (entry.is_regular_file() && entry.path().extension() == ".yaml")
            files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string samplePath(const std::string& name) {
    return std::string(MOE_SAMPLES_DIR) + "/" + name;
}

std::vector<int> divisorsOf(int n) {
    std::vector<int> out;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0)
            out.push_back(d);
    return out;
}

ClusterSpec h100Nodes(int nodes) {
    ClusterSpec c;
    c.gpu.name = "H100 SXM";
    c.gpu.scale_up_fabric = "NVLink";
    c.gpu.scale_up_gbps = 450;
    c.gpu.scale_up_latency_us = 3;
    c.nodes = nodes;
    c.gpus_per_node = 8;
    c.nics_per_node = 8;
    c.nic.bandwidth_gbps = 48;
    c.nic.latency_us = 4;
    c.fabric = Fabric::infiniband;
    return c;
}

Scenario h100Moe16Scenario() {
    Scenario s;
    s.cluster.gpu.preset = "h100-sxm";
    s.cluster.gpu.hbm_gb = 80;
    s.cluster.nodes = 8;
    s.cluster.gpus_per_node = 8;
    ModelSpec& m = s.model;
    m.layers = 24;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.seq_len = 4096;
    m.vocab = 32000;
    m.ffn_hidden = 14336;
    m.experts = 16;
    m.top_k = 2;
    m.expert_ffn_hidden = 8192;
    s.training.global_batch = 512;
    s.training.micro_batch = 1;
    s.layout.tp = 1;
    s.layout.pp = 1;
    s.layout.dp = 64;
    s.layout.ep = 8;
    return s;
}

const char* const kHandYaml = R"(name: hand-2x4
cluster:
  gpu: h100-sxm
  gpu_overrides:
    bf16_tflops: 1000
    fp8_tflops: 2000
    hbm_gb: 80
    hbm_tbps: 4
  nodes: 2
  gpus_per_node: 4
  nodes_per_rack: 2
  scale_up:
    domain: node
    bandwidth_gbps: 400
    latency_us: 2
  scale_out:
    nic: cx7-400g
    nics_per_node: 4
    bandwidth_gbps: 50
    latency_us: 4
model:
  name: tiny-moe
  layers: 2
  hidden: 1024
  heads: 8
  kv_heads: 8
  seq_len: 1024
  vocab: 1000
  ffn_hidden: 4096
  experts: 8
  top_k: 2
  expert_ffn_hidden: 1024
training:
  global_batch: 16
  micro_batch: 1
  total_tokens: 1.0e9
  zero_stage: 1
  recompute: none
layout:
  tp: 1
  cp: 1
  pp: 1
  dp: 8
  ep: 4
  order: tp-cp-ep-dp-pp
  schedule: 1f1b
routing:
  model: uniform
  balance: 1.0
  seed: 7
)";

double hand::handExpertGemm_s(double slots, double gemm) {
    const double rows = std::max(128.0, slots / 2 + 64);
    const double t = slots / 2;
    const auto grouped = [&](double n) {
        const double compute_s = 2.0 * 2 * rows * n * 1024 / gemm;
        const double bytes = 2.0 * (t * 1024 + 1024 * n + t * n) * 2;
        return std::max(compute_s, bytes / kHbm);
    };
    return grouped(2048) + grouped(1024) + slots * 1024 * 2 * 4 / kHbm;
}

} // namespace moe::test
