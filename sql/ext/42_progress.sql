#include "objects/run_progress_segments.sql"
#include "objects/run_progress.sql"
