-- Training: the per-segment training aggregate, multi-model evaluation, fit and fit_multiple.

#include "objects/train_segment.sql"
#include "objects/evaluate_models.sql"
#include "objects/fit.sql"
#include "objects/fit_multiple.sql"
#include "objects/buffer_cache_stats.sql"
#include "objects/shared_buffer_cache_stats.sql"
#include "objects/shared_buffer_cache_reset.sql"
