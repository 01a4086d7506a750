-- Model selection: architecture tables and model selection tables (the input of fit_multiple).

#include "objects/load_model_arch.sql"
#include "objects/delete_model_arch.sql"
#include "objects/load_model_selection_table.sql"
#include "objects/generate_model_configs.sql"
#include "objects/canonical_compile_params.sql"
#include "objects/canonical_fit_params.sql"
