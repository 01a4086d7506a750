-- Adaptive model selection: hopper.fit_automl runs successive halving or Hyperband by model hopping,
-- and every decision it takes is a row here. The run itself is a row of hopper.runs (method
-- fit_automl), each configuration a row of hopper.trials (status pending, training, stopped,
-- completed or diverged), its learning curve in hopper.trial_metrics and its state at the end of
-- every rung it trained in a checkpoint (hopper.checkpoints_expanded). These tables add the plan
-- (brackets and rungs with their budgets) and the outcome of each trial at each rung (its searcher
-- value, rank and whether it survived). Rows belong to the owner of their run, as the registry's do.

#include "objects/searches.sql"
#include "objects/search_rungs.sql"
#include "objects/trial_rungs.sql"

-- Everyone reads; rows are written by the owner of their run (a trial's rows by the owner of its
-- task), and may point only at that run's trials and checkpoints.
#include "objects/search_brackets.sql"
#include "objects/search_trials.sql"
#include "objects/fit_automl.sql"
