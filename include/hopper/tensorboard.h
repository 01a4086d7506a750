// TensorBoard's event files, as Keras' TensorBoard callback writes them: a file of TFRecord records
// (u64 length, its masked CRC-32C, the data, the data's masked CRC-32C), each a tensorflow.Event
// protobuf message; the first says the file's version ("brain.Event:2"), the others hold one scalar
// each (Summary.Value: tag and simple_value) at a step and wall time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hopper::tensorboard {

uint32_t crc32c(std::string_view bytes);           // CRC-32C (Castagnoli), as TFRecord uses
std::string record(std::string_view data);         // one TFRecord record around data
std::string file_version_event(double wall_time);  // the Event a file starts with
std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value);

}  // namespace hopper::tensorboard
