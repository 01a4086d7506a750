-- Packing tables into minibatch buffers spread over segments.

#include "objects/preprocess.sql"
#include "objects/preprocess_validation.sql"
#include "objects/recipe_features.sql"
