// hopper's settings (GUCs), defined in module.cpp.
#pragma once

namespace hopper::pg {
extern int setting_parallel_segments;    // hopper.parallel_segments
extern bool setting_debug_hops;          // hopper.debug_hops
extern bool setting_overlap_evaluation;  // hopper.overlap_evaluation
extern bool setting_restoring;           // hopper.restoring (read by the registry's triggers)
extern int setting_max_state_mb;         // hopper.max_model_state_mb
extern int setting_segment_cache_mb;     // hopper.segment_cache_mb
extern int setting_shuffle_window_mb;    // hopper.shuffle_window_mb
extern int setting_buffer_cache_mb;      // hopper.buffer_cache_mb
extern int setting_read_ahead_min_mb;    // hopper.read_ahead_min_mb (-1: never read ahead)
extern int setting_max_memory_mb;        // hopper.max_memory_mb (0: a quarter of physical memory)
extern int setting_max_packed_table_mb;  // hopper.max_packed_table_mb (0: a quarter of free disk)
extern int setting_model_cache_mb;       // hopper.model_cache_mb
// hopper.training_metrics: where training loss and metrics come from.
enum TrainingMetricsSource { kTrainingMetricsRunning = 0, kTrainingMetricsExact = 1 };
extern int setting_training_metrics;
}  // namespace hopper::pg
