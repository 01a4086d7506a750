// The model state format: what a model table stores and what hops between segments.
//
// Version 2, little-endian, all offsets in bytes:
//    0  magic "HOPPERMS"
//    8  u16 format version (2)        10  u16 flags (bit 0: diverged)
//   12  u32 configuration JSON length  16  u64 optimizer steps
//   24  u64 samples seen               32  u64 segment visits
//   40  f64 last visit loss sum        48  u64 last visit samples
//   56  u64 number of parameters P     64  u32 optimizer slots K
//   68  u32 training iterations completed (where model hopping's schedule resumes; version 1 had a
//       reserved 0 here, and version 1 states are still read, as states of 0 iterations)
//   72  configuration JSON (ModelConfig::to_json), then P floats of parameters, then K*T floats of
//       optimizer slots (T: the parameters of layers that are not frozen, P unless the
//       configuration freezes layers), then the training totals of the iteration in progress (f64 loss sum, f64
//       samples, one f64 sum per compile metric; version 1 has none), then u32 CRC-32 (zlib) of
//       every byte before it.
// The configuration travels with the weights, so a state is self-describing: predict, evaluate and
// warm start check it against what they are asked to do, and a state never meets the wrong model.
// Convolutional models use this layout unchanged: batch normalization's moving mean and variance
// are entries of the parameter vector (network.h), so they travel, restore and average with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hopper/trainer.h"

namespace hopper {

constexpr uint16_t kStateFormatVersion = 2;
constexpr uint16_t kOldestStateFormatVersion = 1;  // still read
constexpr std::size_t kStateHeaderSize = 72;

std::string serialize_state(const Trainer& trainer);

// Full restore (parameters and optimizer slots). Anything malformed, truncated, corrupted or
// inconsistent raises Error(Data) with a message that says what is wrong; never reads out of bounds.
Trainer deserialize_state(std::string_view bytes);

// Restores the parameters of `bytes` into a trainer for `config` (warm start / transfer learning):
// the architectures must be equal but perhaps for which layers are frozen (Error(InvalidParameter)
// naming both shapes otherwise); optimizer slots and counters are kept only if the optimizer kind
// and the frozen layers are unchanged.
Trainer restore_for_config(std::string_view bytes, const ModelConfig& config, bool* optimizer_kept = nullptr);

// Initial weights as an architecture table's model_weights holds them: a hopper model state
// (returned as is, for the callers' own checks), or Keras' flat weights as MADlib's
// load_keras_model stores them -- float32 little-endian, layer by layer, each layer's arrays in
// Keras' get_weights() order (Dense: kernel [in, out] in C order, then bias; Conv2D: kernel
// [kh, kw, in, out], bias; BatchNormalization: gamma, beta, moving mean, moving variance), which is
// hopper's parameter layout (network.h) -- as a fresh state of `config` with those parameters.
// Another byte count: InvalidParameter naming the expected and actual counts; a NaN or infinite
// weight: InvalidParameter.
std::string state_from_weights(std::string_view weights, const ModelConfig& config);
bool is_model_state(std::string_view bytes);  // starts as a hopper model state does

// Configuration and parameters only (evaluation and prediction need no optimizer slots).
struct FrozenModel {
    ModelConfig config;
    std::vector<float> params;
    uint32_t checksum = 0;  // the state's CRC, identifies the state in caches
};
FrozenModel load_frozen_model(std::string_view bytes);

// Cheap look at a state without copying parameters (validates header, size and checksum).
struct StateSummary {
    uint16_t format_version = 0;  // as stored (1 or 2)
    ModelConfig config;
    TrainCounters counters;
    uint64_t num_params = 0;
    uint32_t num_slots = 0;
    std::size_t bytes = 0;
};
StateSummary inspect_state(std::string_view bytes);

// Size in bytes of a state for this configuration (for limits checked before training).
std::size_t state_size(const ModelConfig& config);

uint32_t crc32_of(std::string_view bytes);

// The same state with its count of completed training iterations set and its training totals
// cleared for the next iteration (the driver has read them); parameters and optimizer slots are
// unchanged. Version 1 states come back as version 2.
std::string with_iterations(std::string_view bytes, uint32_t iterations);

}  // namespace hopper
