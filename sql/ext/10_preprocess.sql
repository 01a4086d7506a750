-- Packing tables into minibatch buffers spread over segments.

#include "objects/preprocess.sql"
#include "objects/preprocess_validation.sql"
#include "objects/recipe_features.sql"
#include "objects/category_text.sql"
-- Buffers as the bytes Apache MADlib 2.x packs them in (hopper_madlib's packed tables).
#include "objects/float32_bytes.sql"
#include "objects/float32_array.sql"
#include "objects/int16_bytes.sql"
#include "objects/int16_array.sql"
