-- Using trained models: evaluation, prediction, looking into model states.

#include "objects/evaluation.sql"
#include "objects/evaluate.sql"
#include "objects/model_forward.sql"
#include "objects/argmax.sql"
#include "objects/predict.sql"
#include "objects/model_state_info.sql"
#include "objects/model_weights.sql"
